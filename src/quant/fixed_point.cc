#include "quant/fixed_point.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgec::quant {

double FixedPointMultiplier::Real() const {
  return std::ldexp(static_cast<double>(multiplier), shift - 31);
}

StatusOr<FixedPointMultiplier> QuantizeMultiplier(double real) {
  if (!std::isfinite(real) || real < 0)
    return InvalidArgument("requantization multiplier {} must be finite and >= 0", real);
  if (real == 0) return FixedPointMultiplier{};
  int exponent = 0;
  const double mantissa = std::frexp(real, &exponent);  // real = mantissa · 2^exponent, [0.5, 1)
  int64_t q = std::llround(mantissa * (1ll << 31));
  if (q == (1ll << 31)) {  // the mantissa rounded up to 1.0
    q /= 2;
    ++exponent;
  }
  if (exponent > 31)
    return InvalidArgument("requantization multiplier {} is too large (>= 2^31)", real);
  if (exponent < -31) return FixedPointMultiplier{};  // below every representable value
  return FixedPointMultiplier{static_cast<int32_t>(q), exponent};
}

int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == std::numeric_limits<int32_t>::min() && b == std::numeric_limits<int32_t>::min())
    return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * b;
  const int64_t nudge = ab >= 0 ? (1ll << 30) : 1 - (1ll << 30);
  // Division truncates toward zero; with the nudge this rounds half toward +∞.
  return static_cast<int32_t>((ab + nudge) / (1ll << 31));
}

int32_t RoundingRightShift(int32_t x, int exponent) {
  EDGEC_CHECK(exponent >= 0 && exponent <= 31);
  if (exponent == 0) return x;
  const int32_t mask = static_cast<int32_t>((1ll << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t MultiplyByQuantizedMultiplier(int32_t acc, const FixedPointMultiplier& m) {
  const int left = std::max(m.shift, 0), right = std::max(-m.shift, 0);
  int64_t shifted = static_cast<int64_t>(acc) * (1ll << left);
  shifted = std::clamp<int64_t>(shifted, std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max());
  const int32_t high = SaturatingRoundingDoublingHighMul(static_cast<int32_t>(shifted), m.multiplier);
  return RoundingRightShift(high, std::min(right, 31));
}

int32_t Requantize(int32_t acc, const FixedPointMultiplier& m, int32_t zero_point, int32_t qmin,
                   int32_t qmax) {
  const int64_t v = static_cast<int64_t>(MultiplyByQuantizedMultiplier(acc, m)) + zero_point;
  return static_cast<int32_t>(std::clamp<int64_t>(v, qmin, qmax));
}

namespace {

Status CheckBinaryParams(const char* what, double a_scale, double b_scale, double y_scale, int32_t qmin,
                         int32_t qmax) {
  if (!(a_scale > 0) || !(b_scale > 0) || !(y_scale > 0) || !std::isfinite(a_scale) || !std::isfinite(b_scale) ||
      !std::isfinite(y_scale))
    return InvalidArgument("quantized {}: scales {}, {}, {} must be finite and > 0", what, a_scale, b_scale, y_scale);
  if (qmin > qmax) return InvalidArgument("quantized {}: clamp [{}, {}] is empty", what, qmin, qmax);
  return Status::Ok();
}

}  // namespace

StatusOr<QuantizedAddParams> MakeQuantizedAdd(double a_scale, int32_t a_zero_point, double b_scale,
                                              int32_t b_zero_point, double y_scale, int32_t y_zero_point,
                                              int32_t qmin, int32_t qmax, int left_shift) {
  RETURN_IF_ERROR(CheckBinaryParams("add", a_scale, b_scale, y_scale, qmin, qmax));
  if (left_shift != kAddLeftShift && left_shift != kWideAddLeftShift)
    return InvalidArgument("quantized add: left shift {} (expected {} or {})", left_shift, kAddLeftShift,
                           kWideAddLeftShift);
  const double twice_max = 2 * std::max(a_scale, b_scale);
  QuantizedAddParams p{.a_zero_point = a_zero_point, .b_zero_point = b_zero_point, .y_zero_point = y_zero_point,
                       .qmin = qmin, .qmax = qmax, .left_shift = left_shift};
  ASSIGN_OR_RETURN(p.a, QuantizeMultiplier(a_scale / twice_max));
  ASSIGN_OR_RETURN(p.b, QuantizeMultiplier(b_scale / twice_max));
  ASSIGN_OR_RETURN(p.y, QuantizeMultiplier(twice_max / (std::ldexp(1.0, left_shift) * y_scale)));
  return p;
}

int32_t QuantizedAdd(int32_t a, int32_t b, const QuantizedAddParams& p) {
  const int32_t sa = MultiplyByQuantizedMultiplier((a - p.a_zero_point) * (1 << p.left_shift), p.a);
  const int32_t sb = MultiplyByQuantizedMultiplier((b - p.b_zero_point) * (1 << p.left_shift), p.b);
  return Requantize(sa + sb, p.y, p.y_zero_point, p.qmin, p.qmax);
}

StatusOr<QuantizedMulParams> MakeQuantizedMul(double a_scale, int32_t a_zero_point, double b_scale,
                                              int32_t b_zero_point, double y_scale, int32_t y_zero_point,
                                              int32_t qmin, int32_t qmax) {
  RETURN_IF_ERROR(CheckBinaryParams("mul", a_scale, b_scale, y_scale, qmin, qmax));
  QuantizedMulParams p{.a_zero_point = a_zero_point, .b_zero_point = b_zero_point, .y_zero_point = y_zero_point,
                       .qmin = qmin, .qmax = qmax};
  ASSIGN_OR_RETURN(p.y, QuantizeMultiplier(a_scale * b_scale / y_scale));
  return p;
}

double TieBand(const FixedPointMultiplier& m) {
  const int right = std::max(-m.shift, 0);
  return (right > 0 ? std::ldexp(1.0, -(right + 1)) : 0.0) + std::ldexp(1.0, -20);
}

}  // namespace edgec::quant
