// The row of the own image convolution (kernels/cpu/image_conv.cc) in the vector layer.
// Plain types only.
#pragma once

#include <cstdint>

namespace edgec::cpu::vec {

// One output row: y[ox * oc + o] = bias[o] + sum over t < count, kx < kw with
// 0 <= ox * stride - pad + kx < iw of rows[t][ox * stride - pad + kx] * weights[t][kx * oc + o].
// `rows` are the input rows (one per input channel and kernel row in range), `weights` the
// packed taps of each; oc is 16, 32, 48 or 64.
struct ImageConvRow {
  const float* const* rows;
  const float* const* weights;
  int count;
  int kw;
  int64_t iw, ow, oc;
  int64_t stride, pad;
  const float* bias;  // nullptr: zeros
};

// AVX-512F: the caller asks cpu::OwnAvx512 first.
void ImageConvRowAvx512(const ImageConvRow& r, float* y);

}  // namespace edgec::cpu::vec
