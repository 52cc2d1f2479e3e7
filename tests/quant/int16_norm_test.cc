// quant/int16_norm.h: the wide integer normalization and softmax against the float formulas on
// seeded random groups and rows (int16 and 8-bit inputs, int16 outputs): every output within
// one int16 step; groups large enough that n·Σd² passes 2^62 (the 128-bit path).
#include "quant/int16_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "quant/int_norm.h"

namespace edgec::quant {
namespace {

std::vector<int32_t> Normalize(const std::vector<int32_t>& q, const WideNormParams& p) {
  WideNormGroup g;
  for (int32_t v : q) Accumulate(g, v, p.x_zero_point);
  FinishGroup(g, p);
  std::vector<int32_t> out;
  for (size_t i = 0; i < q.size(); ++i) out.push_back(NormOutput(g, p, q[i], static_cast<int64_t>(i % p.mult.size())));
  return out;
}

TEST(Int16Norm, SeededGroupsWithinOneStepOfFloat) {
  std::mt19937 rng(11);
  int exact = 0, total = 0;
  bool wide_seen = false;
  for (int trial = 0; trial < 120; ++trial) {
    const bool int8_in = trial % 4 == 0;
    // Trial 1: 2^18 values over the whole int16 range, so n·Σd² passes 2^62.
    const int64_t n = trial == 1 ? int64_t{1} << 18 : trial % 5 == 0 ? 2000 + rng() % 6000 : 1 + rng() % 400;
    const float sx = int8_in ? 0.02f : 2e-4f + (rng() % 1000) * 1e-6f, sy = 1e-4f + (rng() % 1000) * 1e-6f;
    const int32_t zx = int8_in ? static_cast<int32_t>(rng() % 40) - 20 : 0;
    const int32_t lo = int8_in ? -128 : -32768, hi = int8_in ? 127 : 32767;
    std::vector<float> gamma(n), beta(n);
    std::uniform_real_distribution<float> u(-1.5f, 1.5f);
    for (int64_t c = 0; c < n; ++c) gamma[c] = u(rng), beta[c] = u(rng) * 0.3f;
    auto p = MakeWideNormParams(sx, zx, gamma, beta, sy, 0, -32768, 32767, n, 1e-5f);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    std::vector<int32_t> q(n);
    const int spread = trial == 1 ? hi : 1 + static_cast<int>(rng() % static_cast<uint32_t>(hi));
    for (int32_t& v : q) v = std::clamp(static_cast<int32_t>(rng() % (2 * spread + 1)) - spread, lo, hi);
    WideNormGroup g;
    for (int32_t v : q) Accumulate(g, v, zx);
    FinishGroup(g, *p);
    wide_seen |= g.j > 0;
    const std::vector<int32_t> got = Normalize(q, *p);
    double mean = 0, var = 0;
    for (int32_t v : q) mean += static_cast<double>(sx) * (v - zx);
    mean /= n;
    for (int32_t v : q) var += (sx * (v - zx) - mean) * (sx * (v - zx) - mean);
    var /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double y = (sx * (q[i] - zx) - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i];
      const double want = std::clamp(std::nearbyint(y / sy), -32768.0, 32767.0);
      ASSERT_LE(std::abs(got[i] - want), 1) << "trial " << trial << " value " << i << " n " << n;
      exact += got[i] == want;
      ++total;
    }
  }
  EXPECT_TRUE(wide_seen) << "no group took the 128-bit reduction";
  EXPECT_GT(exact, total * 9 / 10) << exact << " of " << total;
}

TEST(Int16Norm, SoftmaxRowsWithinOneStepOfFloat) {
  std::mt19937 rng(12);
  int exact = 0, total = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const bool int8_in = trial % 3 == 0;
    const int64_t n = 1 + rng() % 500;
    const float sx = int8_in ? 0.05f + (rng() % 100) * 1e-3f : 1e-4f + (rng() % 1000) * 1e-5f;
    const float sy = 1.f / 32767;
    auto p = MakeWideSoftmaxParams(sx, sy, 0, -32768, 32767);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const int32_t lo = int8_in ? -128 : -32768, hi = int8_in ? 127 : 32767;
    std::vector<int32_t> q(n), out(n);
    for (int32_t& v : q) v = lo + static_cast<int32_t>(rng() % static_cast<uint32_t>(hi - lo + 1));
    SoftmaxRow(q.data(), n, *p, out.data());
    const int32_t mx = *std::max_element(q.begin(), q.end());
    double sum = 0;
    for (int32_t v : q) sum += std::exp(static_cast<double>(sx) * (v - mx));
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::clamp(std::nearbyint(std::exp(static_cast<double>(sx) * (q[i] - mx)) / sum / sy),
                                      -32768.0, 32767.0);
      ASSERT_LE(std::abs(out[i] - want), 1) << "trial " << trial << " value " << i;
      exact += out[i] == want;
      ++total;
    }
  }
  EXPECT_GT(exact, total * 9 / 10) << exact << " of " << total;
}

// For 8-bit inputs the two exp tables give the int8 softmax's table (H[0] = 2^23).
TEST(Int16Norm, EightBitInputsReadTheInt8ExpTable) {
  auto wide = MakeWideSoftmaxParams(0.07f, 1.f / 32767, 0, -32768, 32767);
  auto narrow = MakeSoftmaxParams(0.07f, 1.f / 255, -128, -128, 127);
  ASSERT_TRUE(wide.ok() && narrow.ok());
  EXPECT_EQ(wide->exp_hi[0], 1 << 23);
  EXPECT_EQ(wide->exp_lo, narrow->exp_table);
}

}  // namespace
}  // namespace edgec::quant
