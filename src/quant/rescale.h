// Integer requantization of a value from one quantization to another, y = Q_y(DQ_x(x)), with
// x and y each 8 or 16 bits: the int16 points of the quantizer's mixed precision meet their
// int8 neighbours through it (QLinearRequantize in ir/ops.def, the NPU's VEC rescale).
//
//   y = clamp(zy + MultiplyByQuantizedMultiplier((x − zx) · 2^kRescaleLeftShift, M), lo, hi)
//   M ≈ x_scale / (y_scale · 2^kRescaleLeftShift)
//
// |x − zx| ≤ 65535 < 2^16, so the lifted difference fits int32; the lift keeps 15 bits of
// the product below the rounding point when M is small (16 → 8 bits). The reference kernel in
// its fixed-point mode and the functional simulator both call Rescale, so they agree bit for
// bit (tests/quant/rescale_test.cc: within one step of the float formula).
#pragma once

#include <cstdint>

#include "quant/fixed_point.h"
#include "support/status.h"

namespace edgec::quant {

inline constexpr int kRescaleLeftShift = 15;

struct RescaleParams {
  int32_t x_zero_point = 0, y_zero_point = 0;
  FixedPointMultiplier m;
  int32_t qmin = -128, qmax = 127;  // the output type's range (or narrower)
};

// Fails for scales that are not finite and > 0, or a multiplier too large to represent.
StatusOr<RescaleParams> MakeRescale(double x_scale, int32_t x_zero_point, double y_scale, int32_t y_zero_point,
                                    int32_t qmin, int32_t qmax);

int32_t Rescale(int32_t x, const RescaleParams& p);

}  // namespace edgec::quant
