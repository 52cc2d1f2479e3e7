// Integer-only requantization: the arithmetic an NPU (or any integer pipeline) uses to
// turn an int32 accumulator into an int8/uint8 value without floating point.
//
// A positive real multiplier M (typically in_scale * w_scale / out_scale) is represented as
//   M ≈ multiplier · 2^(shift − 31),   multiplier ∈ [2^30, 2^31)   (Q0.31 mantissa)
// and applied as
//   y = saturate(RoundingRightShift(DoublingHighMul(acc · 2^max(shift,0), multiplier),
//                                   max(−shift, 0)) + zero_point).
// DoublingHighMul(a, b) = round(a·b / 2^31) with ties toward +∞ (gemmlowp's definition;
// it saturates the one overflow case a = b = INT32_MIN); RoundingRightShift(x, e) =
// round(x / 2^e) with ties away from zero.
//
// Agreement with the float formula of ONNX QLinear ops,
//   y_float = saturate(round_half_to_even(acc · M) + zero_point),
// is within one step on every input, and exact unless acc·M lies within
//   TieBand(m) = (e > 0 ? 2^−(e+1) : 0) + 2^−20   (e = the right shift)
// of a rounding tie (x.5): with e > 0 the value is rounded twice (to 1/2^e, then to an
// integer), which can carry it across the tie; ties themselves round away from zero here
// but to even in the float formula; 2^−20 covers the mantissa's relative error (2^−31)
// for results inside the 8-bit range. Measured: ~99% of seeded cases are exact.
// tests/quant/fixed_point_test.cc asserts both statements over seeded accumulators and
// multipliers.
#pragma once

#include <cstdint>

#include "support/status.h"

namespace edgec::quant {

struct FixedPointMultiplier {
  int32_t multiplier = 0;  // Q0.31 mantissa in [2^30, 2^31), or 0 for M = 0
  int shift = 0;           // M ≈ multiplier · 2^(shift − 31); < 0 is a right shift
  double Real() const;     // the value represented
};

// Fails for a negative, non-finite or too large (≥ 2^31) multiplier; M below 2^−31·2^−31
// (no representable right shift) becomes 0.
StatusOr<FixedPointMultiplier> QuantizeMultiplier(double real_multiplier);

// round(a·b / 2^31), ties toward +∞; saturates INT32_MIN·INT32_MIN to INT32_MAX.
int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b);

// round(x / 2^exponent), ties away from zero; exponent in [0, 31].
int32_t RoundingRightShift(int32_t x, int exponent);

// acc · M in integers (before the zero point), with saturation on a left shift.
int32_t MultiplyByQuantizedMultiplier(int32_t acc, const FixedPointMultiplier& m);

// The full requantization: saturate(acc · M + zero_point) to [qmin, qmax].
int32_t Requantize(int32_t acc, const FixedPointMultiplier& m, int32_t zero_point, int32_t qmin,
                   int32_t qmax);

// Integer-only addition of two quantized tensors, y = Q_y(DQ_a(a) + DQ_b(b)) (TFLite's
// scheme): both operands, minus their zero points, are lifted by 2^kAddLeftShift and scaled
// to a common domain (a by s_a / (2·max(s_a, s_b)), b likewise, each multiplier ≤ 1/2), summed
// in int32 and requantized by 2·max(s_a, s_b) / (2^kAddLeftShift · s_y). With 8-bit operands
// (|x − z| ≤ 255) nothing overflows. The NPU's VEC add and the CPU's fixed-point QLinearAdd
// both call QuantizedAdd, so they agree bit for bit.
// An int16 operand (the mixed precision's int16 points, |x − z| ≤ 65535) is lifted by
// 2^kWideAddLeftShift instead: 65535 · 2^15 < 2^31, and each scaled term is at most half of
// that, so the sum fits int32 too (tests/quant/fixed_point_test.cc: WideAddNearFloat).
inline constexpr int kAddLeftShift = 20;
inline constexpr int kWideAddLeftShift = 15;
struct QuantizedAddParams {
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  FixedPointMultiplier a, b, y;
  int32_t qmin = -128, qmax = 127;  // the output clamp (the type's range or a fused ReLU)
  int left_shift = kAddLeftShift;
};
StatusOr<QuantizedAddParams> MakeQuantizedAdd(double a_scale, int32_t a_zero_point, double b_scale,
                                              int32_t b_zero_point, double y_scale, int32_t y_zero_point,
                                              int32_t qmin, int32_t qmax, int left_shift = kAddLeftShift);
int32_t QuantizedAdd(int32_t a, int32_t b, const QuantizedAddParams& p);

// Integer-only multiplication of two quantized tensors, y = Q_y(DQ_a(a) · DQ_b(b)): the product
// of the operands minus their zero points (|·| ≤ 255², exact in int32) requantized by
// s_a · s_b / s_y. The CPU's fixed-point QLinearMul (reference and fast kernel) calls it.
struct QuantizedMulParams {
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  FixedPointMultiplier y;
  int32_t qmin = -128, qmax = 127;  // the output clamp
};
StatusOr<QuantizedMulParams> MakeQuantizedMul(double a_scale, int32_t a_zero_point, double b_scale,
                                              int32_t b_zero_point, double y_scale, int32_t y_zero_point,
                                              int32_t qmin, int32_t qmax);
inline int32_t QuantizedMul(int32_t a, int32_t b, const QuantizedMulParams& p) {
  return Requantize((a - p.a_zero_point) * (b - p.b_zero_point), p.y, p.y_zero_point, p.qmin, p.qmax);
}

// Width of the band around a rounding tie inside which Requantize may differ from the
// float formula (see the file comment).
double TieBand(const FixedPointMultiplier& m);

}  // namespace edgec::quant
