// Integer Resize of 8-bit NCHW tensors over H and W, modes nearest and linear: the reference
// kernel's arithmetic for u8/i8 tensors (kernels/ref/resize.cc) and the NPU's VEC resize
// (npu/isa.h), one definition for both.
//
// Each axis's taps (ir/resize_geometry.h) become fixed-point weights of kResizeWeightBits
// fraction bits: output coordinate o reads lo[o] with weight 2^B − w[o] and hi[o] with w[o]
// (nearest: lo = hi, w = 0). Both axes' weights sum to 2^B exactly, so the bilinear sum of
// the stored values is 2^2B times a convex combination of them: the zero point cancels, the
// output keeps the input's scale and zero point, and an u8 tensor shifted by −128 (the NPU's
// i8 form) gives the shifted result. The sum is rounded half up by an arithmetic shift. With
// B = 10 the sum of 8-bit values stays below 2^28 (no overflow in int32).
//
// Guarded by tests/quant/int_resize_test.cc (against the float resize) and the NPU's
// differential tests (tests/lower/npu_resize_test.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "ir/resize_geometry.h"
#include "ir/types.h"

namespace edgec::quant {

inline constexpr int kResizeWeightBits = 10;
inline constexpr int32_t kResizeOne = 1 << kResizeWeightBits;

struct IntResizeAxis {
  std::vector<int32_t> lo, hi, w;  // per output coordinate
};

// The H and W axes of a resize that has an integer form.
struct IntResizePlan {
  IntResizeAxis h, w;
};

// The integer form of a resize of `in` to `out` (NCHW) with the given scales (empty: out / in)
// and roi (empty: the whole axis), or why there is none (cubic, tf_crop_and_resize, a resized
// N or C axis, not 4-d).
StatusOr<IntResizePlan> PlanIntResize(const ResizeRules& r, const Dims& in, const Dims& out,
                                      const std::vector<double>& scales, const std::vector<double>& roi);

// A Resize (nearest or linear, not tf_crop_and_resize) whose outputs are convex combinations
// of its inputs: it keeps its input's quantization like MaxPool (the quantizer gives its output
// the input's scale and runs it on the 8-bit values, in the integer form above).
bool KeepsQuantization(const Node& n);

// One output value from its four taps (x_yx: row tap y, column tap x).
inline int32_t IntResizeValue(int32_t x00, int32_t x01, int32_t x10, int32_t x11, int32_t wy, int32_t wx) {
  const int32_t top = (kResizeOne - wx) * x00 + wx * x01;
  const int32_t bottom = (kResizeOne - wx) * x10 + wx * x11;
  const int32_t acc = (kResizeOne - wy) * top + wy * bottom;
  return (acc + (1 << (2 * kResizeWeightBits - 1))) >> (2 * kResizeWeightBits);
}

}  // namespace edgec::quant
