// A 3-channel (or 1-channel) row-major image interleaved into NHWC as the int8 convolution
// reads it, optionally quantizing the f32 values on the way (QuantizeLinear's arithmetic):
// AVX-512 VBMI byte permutes for three planes, plain loops elsewhere.
#include <cmath>

#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_conv_util.h"
#include "kernels/cpu/vec/int8.h"

namespace edgec::cpu {

void InterleavePlanes(const uint8_t* src, int64_t channels, int64_t pixels, uint8_t* dst) {
  int64_t p = 0;
  if (channels == 3 && OwnAvx512(Avx512Ext::kVbmi)) p = vec::InterleaveRgbVbmi(src, pixels, dst);
  for (; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) dst[p * channels + c] = src[c * pixels + p];
}

// QuantizeLinear's arithmetic (the reference's and the fast kernel's): x / scale in f32,
// NaN -> 0, rounded half to even, + zp, saturated to the type.
namespace {

inline uint8_t QuantizeOne(float x, float scale, float zp, float lo, float hi) {
  float v = x / scale;
  if (std::isnan(v)) v = 0;
  const float r = std::min(std::max(std::nearbyint(v) + zp, lo), hi);
  return static_cast<uint8_t>(static_cast<int32_t>(r));  // the low byte: u8 or i8
}

}  // namespace

// Pixels [p0, p1) of a row-major f32 image of `channels` planes, quantized and interleaved
// into NHWC: dst[p * channels + c] = Q(src[c * pixels + p]).
void QuantizeInterleave(const float* src, int64_t channels, int64_t pixels, int64_t p0, int64_t p1, float scale,
                        int32_t zp, bool u8, uint8_t* dst) {
  const float z = static_cast<float>(zp), lo = u8 ? 0.f : -128.f, hi = u8 ? 255.f : 127.f;
  int64_t p = p0;
  if (channels == 3 && OwnAvx512(Avx512Ext::kVbmi)) p = vec::QuantizeRgbVbmi(src, pixels, p, p1, scale, z, lo, hi, dst);
  if (channels == 1 && OwnAvx512(Avx512Ext::kBw)) p = vec::QuantizeFlatAvx512(src, p, p1, scale, z, lo, hi, dst);
  for (; p < p1; ++p)
    for (int64_t c = 0; c < channels; ++c) dst[p * channels + c] = QuantizeOne(src[c * pixels + p], scale, z, lo, hi);
}

}  // namespace edgec::cpu
