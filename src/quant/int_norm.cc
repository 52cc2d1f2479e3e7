#include "quant/int_norm.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace edgec::quant {
namespace {

constexpr int64_t kMaxCount = int64_t{1} << 20;

// ⌊√x⌋ exactly, x < 2^62.
int64_t IntSqrt(int64_t x) {
  int64_t s = static_cast<int64_t>(std::sqrt(static_cast<double>(x)));
  while (s > 0 && s * s > x) --s;
  while ((s + 1) * (s + 1) <= x) ++s;
  return s;
}

int BitWidth(int64_t x) { return static_cast<int>(std::bit_width(static_cast<uint64_t>(x))); }

}  // namespace

int64_t RoundShift64(int64_t x, int s) {
  if (s <= 0) return x;
  if (s >= 63) return 0;
  return (x + (int64_t{1} << (s - 1))) >> s;
}

StatusOr<NormAffine> MakeNormAffine(float x_scale, const std::vector<float>& gamma, const std::vector<float>& beta,
                                    float y_scale, int64_t count, float epsilon, int eps_bits, int max_shift,
                                    int bias_bits) {
  if (!(x_scale > 0) || !(y_scale > 0) || !std::isfinite(x_scale) || !std::isfinite(y_scale))
    return InvalidArgument("scales {} and {} must be positive and finite", x_scale, y_scale);
  if (count < 1 || count > kMaxCount) return InvalidArgument("{} values per group (at most 2^20)", count);
  if (!beta.empty() && beta.size() != gamma.size())
    return InvalidArgument("{} scale values and {} bias values", gamma.size(), beta.size());
  NormAffine a;
  const double sx = x_scale, eps = std::max(0.0, static_cast<double>(epsilon));
  a.eps_term = std::nearbyint(static_cast<double>(count) * static_cast<double>(count) * eps / (sx * sx));
  if (!(a.eps_term < std::ldexp(1.0, eps_bits)))
    return InvalidArgument("epsilon {} is too large for x_scale {}", epsilon, x_scale);
  for (size_t c = 0; c < gamma.size(); ++c) {
    const double g = static_cast<double>(gamma[c]) / y_scale;
    int32_t m = 0, sh = 0;
    if (g != 0) {
      ASSIGN_OR_RETURN(FixedPointMultiplier fm, QuantizeMultiplier(std::abs(g)));
      if (fm.shift > max_shift) return InvalidArgument("scale {} / y_scale {} is too large", gamma[c], y_scale);
      m = g < 0 ? -fm.multiplier : fm.multiplier;
      sh = fm.shift;
    }
    const double b = beta.empty() ? 0.0 : std::nearbyint(256.0 * beta[c] / y_scale);
    if (!(std::abs(b) < std::ldexp(1.0, bias_bits)))
      return InvalidArgument("bias {} / y_scale {} is too large", beta[c], y_scale);
    a.mult.push_back(m);
    a.shift.push_back(sh);
    a.bias.push_back(static_cast<int64_t>(b));
  }
  return a;
}

StatusOr<NormParams> MakeNormParams(float x_scale, int32_t x_zero_point, const std::vector<float>& gamma,
                                    const std::vector<float>& beta, float y_scale, int32_t y_zero_point,
                                    int32_t qmin, int32_t qmax, int64_t count, float epsilon) {
  ASSIGN_OR_RETURN(NormAffine a, MakeNormAffine(x_scale, gamma, beta, y_scale, count, epsilon, 58, 39, 30));
  NormParams p{.count = count, .x_zero_point = x_zero_point, .y_zero_point = y_zero_point, .qmin = qmin, .qmax = qmax};
  p.eps_term = static_cast<int64_t>(a.eps_term);
  p.mult = std::move(a.mult);
  p.shift = std::move(a.shift);
  p.bias.assign(a.bias.begin(), a.bias.end());
  return p;
}

void FinishGroup(NormGroup& g, const NormParams& p) {
  const int64_t v = std::max<int64_t>(1, p.count * g.sumsq - g.sum * g.sum + p.eps_term);
  g.k = (62 - BitWidth(v)) / 2;
  const int64_t s = IntSqrt(v << (2 * g.k));
  g.recip = ((int64_t{1} << 62) + s / 2) / s;
}

int32_t NormOutput(const NormGroup& g, const NormParams& p, int32_t q, int64_t c) {
  const int64_t centered = p.count * (q - p.x_zero_point) - g.sum;
  const int64_t t = RoundShift64(centered * g.recip, 46 - g.k);
  const int64_t scaled = RoundShift64(t * p.mult[c], 39 - p.shift[c]) + p.bias[c];
  const int64_t y = p.y_zero_point + RoundShift64(scaled, 8);
  return static_cast<int32_t>(std::clamp<int64_t>(y, p.qmin, p.qmax));
}

StatusOr<SoftmaxParams> MakeSoftmaxParams(float x_scale, float y_scale, int32_t y_zero_point, int32_t qmin,
                                          int32_t qmax) {
  SoftmaxParams p;
  ASSIGN_OR_RETURN(static_cast<SoftmaxOutput&>(p), MakeSoftmaxOutput(x_scale, y_scale, y_zero_point, qmin, qmax, 47));
  for (int j = 0; j < 256; ++j)
    p.exp_table[j] = static_cast<int32_t>(std::nearbyint(std::ldexp(std::exp(-static_cast<double>(x_scale) * j), 23)));
  return p;
}

StatusOr<SoftmaxOutput> MakeSoftmaxOutput(float x_scale, float y_scale, int32_t y_zero_point, int32_t qmin,
                                          int32_t qmax, int max_shift) {
  if (!(x_scale > 0) || !(y_scale > 0) || !std::isfinite(x_scale) || !std::isfinite(y_scale))
    return InvalidArgument("scales {} and {} must be positive and finite", x_scale, y_scale);
  SoftmaxOutput o;
  ASSIGN_OR_RETURN(o.inv_y, QuantizeMultiplier(1.0 / static_cast<double>(y_scale)));
  if (o.inv_y.shift > max_shift) return InvalidArgument("y_scale {} is too small", y_scale);
  o.y_zero_point = y_zero_point;
  o.qmin = qmin;
  o.qmax = qmax;
  return o;
}

void SoftmaxRow(const int32_t* q, int64_t n, const SoftmaxParams& p, int32_t* out) {
  if (n <= 0) return;
  const int32_t mx = *std::max_element(q, q + n);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += p.exp_table[std::min(255, mx - q[i])];
  const int a = 31 - BitWidth(sum);
  const int64_t s = a >= 0 ? sum << a : sum >> -a;
  const int64_t recip = ((int64_t{1} << 61) + s / 2) / s;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t prob = RoundShift64(p.exp_table[std::min(255, mx - q[i])] * recip, 45 - a);
    const int64_t y = p.y_zero_point + RoundShift64(prob * p.inv_y.multiplier, 47 - p.inv_y.shift);
    out[i] = static_cast<int32_t>(std::clamp<int64_t>(y, p.qmin, p.qmax));
  }
}

}  // namespace edgec::quant
