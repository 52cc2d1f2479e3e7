// The pieces of the fast QLinearConv (int8_conv.cc) that live in their own files.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/common.h"

namespace edgec::cpu {

// int8_interleave.cc: channel planes of a row-major image interleaved into NHWC,
// dst[p * channels + c] = src[c * pixels + p] ...
void InterleavePlanes(const uint8_t* src, int64_t channels, int64_t pixels, uint8_t* dst);
// ... and the same for pixels [p0, p1) of an f32 image, quantized on the way:
// dst[p * channels + c] = saturate(round_half_to_even(src[c * pixels + p] / scale) + zp).
void QuantizeInterleave(const float* src, int64_t channels, int64_t pixels, int64_t p0, int64_t p1, float scale,
                        int32_t zp, bool u8, uint8_t* dst);

// int8_gemv.cc: the own AVX-512 VNNI kernel of a QLinearConv of one pixel through a 1x1
// kernel, or nullptr when `req` is not such a convolution or the CPU (within the vector ISA
// cap) has no VNNI.
StatusOr<std::unique_ptr<Kernel>> MaybeInt8Gemv(const KernelRequest& req, const Tensor& wt, float x_scale,
                                                int32_t x_zp, const std::vector<float>& w_scale, float y_scale,
                                                int32_t y_zp, const int32_t* bias);

}  // namespace edgec::cpu
