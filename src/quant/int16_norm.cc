#include "quant/int16_norm.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "quant/int_norm.h"

namespace edgec::quant {
namespace {


int BitWidth128(__int128 x) {
  const auto u = static_cast<unsigned __int128>(x);
  const uint64_t hi = static_cast<uint64_t>(u >> 64);
  return hi ? 64 + static_cast<int>(std::bit_width(hi)) : static_cast<int>(std::bit_width(static_cast<uint64_t>(u)));
}

// Round(x / 2^s), ties toward +∞; x when s ≤ 0.
__int128 RoundShift128(__int128 x, int s) {
  if (s <= 0) return x;
  if (s >= 126) return 0;
  return (x + (static_cast<__int128>(1) << (s - 1))) >> s;
}

// ⌊√x⌋ exactly, 0 ≤ x < 2^62.
int64_t IntSqrt(int64_t x) {
  int64_t s = static_cast<int64_t>(std::sqrt(static_cast<double>(x)));
  while (s > 0 && s * s > x) --s;
  while ((s + 1) * (s + 1) <= x) ++s;
  return s;
}

int32_t ExpEntry(double x_scale, int j) {
  return static_cast<int32_t>(std::nearbyint(std::ldexp(std::exp(-x_scale * j), 23)));
}

}  // namespace

StatusOr<WideNormParams> MakeWideNormParams(float x_scale, int32_t x_zero_point, const std::vector<float>& gamma,
                                            const std::vector<float>& beta, float y_scale, int32_t y_zero_point,
                                            int32_t qmin, int32_t qmax, int64_t count, float epsilon) {
  ASSIGN_OR_RETURN(NormAffine a, MakeNormAffine(x_scale, gamma, beta, y_scale, count, epsilon, 100, 43, 40));
  WideNormParams p{.count = count, .x_zero_point = x_zero_point, .y_zero_point = y_zero_point, .qmin = qmin, .qmax = qmax};
  p.eps_term = static_cast<__int128>(a.eps_term);
  p.mult = std::move(a.mult);
  p.shift = std::move(a.shift);
  p.bias = std::move(a.bias);
  return p;
}

void FinishGroup(WideNormGroup& g, const WideNormParams& p) {
  __int128 v = static_cast<__int128>(p.count) * g.sumsq - static_cast<__int128>(g.sum) * g.sum + p.eps_term;
  v = std::max<__int128>(1, v);
  g.j = std::max(0, (BitWidth128(v) - 62 + 1) / 2);
  const int64_t reduced = std::max<int64_t>(1, static_cast<int64_t>(v >> (2 * g.j)));
  g.k = (62 - static_cast<int>(std::bit_width(static_cast<uint64_t>(reduced)))) / 2;
  const int64_t s = IntSqrt(reduced << (2 * g.k));
  g.recip = ((int64_t{1} << 62) + s / 2) / s;
}

int32_t NormOutput(const WideNormGroup& g, const WideNormParams& p, int32_t q, int64_t c) {
  const int64_t centered = p.count * (q - p.x_zero_point) - g.sum;
  const __int128 t = RoundShift128(static_cast<__int128>(centered) * g.recip, 42 - g.k + g.j);
  const __int128 scaled = RoundShift128(t * p.mult[c], 43 - p.shift[c]) + p.bias[c];
  const __int128 y = p.y_zero_point + RoundShift128(scaled, 8);
  return static_cast<int32_t>(std::clamp<__int128>(y, p.qmin, p.qmax));
}

StatusOr<WideSoftmaxParams> MakeWideSoftmaxParams(float x_scale, float y_scale, int32_t y_zero_point, int32_t qmin,
                                                  int32_t qmax) {
  WideSoftmaxParams p;
  ASSIGN_OR_RETURN(static_cast<SoftmaxOutput&>(p), MakeSoftmaxOutput(x_scale, y_scale, y_zero_point, qmin, qmax, 55));
  for (int j = 0; j < 256; ++j) {
    p.exp_hi[j] = ExpEntry(x_scale, 256 * j);
    p.exp_lo[j] = ExpEntry(x_scale, j);
  }
  return p;
}

void SoftmaxRow(const int32_t* q, int64_t n, const WideSoftmaxParams& p, int32_t* out) {
  if (n <= 0) return;
  const int32_t mx = *std::max_element(q, q + n);
  auto exp_of = [&](int32_t v) {
    const int32_t d = std::min(65535, mx - v);
    return RoundShift64(int64_t{p.exp_hi[d >> 8]} * p.exp_lo[d & 255], 23);
  };
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += exp_of(q[i]);
  const int a = 31 - static_cast<int>(std::bit_width(static_cast<uint64_t>(sum)));
  const int64_t s = a >= 0 ? sum << a : sum >> -a;
  const int64_t recip = ((int64_t{1} << 61) + s / 2) / s;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t prob = RoundShift64(exp_of(q[i]) * recip, 37 - a);
    const int64_t y = p.y_zero_point + RoundShift64(prob * p.inv_y.multiplier, 55 - p.inv_y.shift);
    out[i] = static_cast<int32_t>(std::clamp<int64_t>(y, p.qmin, p.qmax));
  }
}

}  // namespace edgec::quant
