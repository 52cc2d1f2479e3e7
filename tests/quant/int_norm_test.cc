// quant/int_norm.h: hand-computed cases of the integer normalization and softmax, and seeded
// groups against the float formulas (within one output step).
#include "quant/int_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace edgec::quant {
namespace {

std::vector<int32_t> Normalize(const std::vector<int32_t>& q, const NormParams& p) {
  NormGroup g;
  for (int32_t v : q) Accumulate(g, v, p.x_zero_point);
  FinishGroup(g, p);
  std::vector<int32_t> out;
  for (size_t i = 0; i < q.size(); ++i) out.push_back(NormOutput(g, p, q[i], static_cast<int64_t>(i % p.mult.size())));
  return out;
}

TEST(IntNormTest, HandComputedLayerNorm) {
  // x = {-3, -1, 1, 3}: mean 0, variance 5; x / √5 = {-1.342, -0.447, 0.447, 1.342}; / (1/64).
  auto p = MakeNormParams(1.f, 0, {1, 1, 1, 1}, {}, 1.f / 64, 0, -128, 127, 4, 1e-5f);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->eps_term, 0);  // round(16 · 1e-5)
  EXPECT_EQ(Normalize({-3, -1, 1, 3}, *p), (std::vector<int32_t>{-86, -29, 29, 86}));
  // The zero point cancels; gamma 2 and beta 0.5 (32 steps) apply per channel.
  auto q = MakeNormParams(1.f, 10, {2, 2, 2, 2}, {0.5f, 0.5f, 0.5f, 0.5f}, 1.f / 64, 5, -128, 127, 4, 1e-5f);
  ASSERT_TRUE(q.ok());
  // 5 + 32 + 2·64·{-1.342, -0.447, 0.447, 1.342} = 37 + {-171.7, -57.2, 57.2, 171.7}.
  EXPECT_EQ(Normalize({7, 9, 11, 13}, *q), (std::vector<int32_t>{-128, -20, 94, 127}));
  // A constant group: variance 0, the output is beta (epsilon keeps the root finite).
  EXPECT_EQ(Normalize({4, 4, 4, 4}, *q), (std::vector<int32_t>{37, 37, 37, 37}));
}

TEST(IntNormTest, HandComputedSoftmax) {
  auto p = MakeSoftmaxParams(0.1f, 1.f / 256, -128, -128, 127);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->exp_table[0], 1 << 23);
  std::vector<int32_t> q = {5, 5}, out(2);
  SoftmaxRow(q.data(), 2, *p, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{0, 0}));  // 0.5 · 256 - 128
  q = {100, -100};
  SoftmaxRow(q.data(), 2, *p, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{127, -128}));  // 1 → 128 saturates; e^-20 → 0
  // exp(-0.1·j) for j = 0, 10: 1 / (1 + e^-1) = 0.7311 → 187.2 - 128; 0.2689 → 68.8 - 128.
  q = {20, 10};
  SoftmaxRow(q.data(), 2, *p, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{59, -59}));
}

TEST(IntNormTest, SeededGroupsWithinOneStepOfFloat) {
  std::mt19937 rng(5);
  int exact = 0, total = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 1 + rng() % 300;
    const float sx = 0.005f + (rng() % 1000) * 1e-4f, sy = 0.01f + (rng() % 1000) * 1e-4f;
    const int32_t zx = static_cast<int32_t>(rng() % 60) - 30, zy = static_cast<int32_t>(rng() % 40) - 20;
    std::vector<float> gamma(n), beta(n);
    std::uniform_real_distribution<float> u(-1.5f, 1.5f);
    for (int64_t c = 0; c < n; ++c) gamma[c] = u(rng), beta[c] = u(rng) * 0.3f;
    auto p = MakeNormParams(sx, zx, gamma, beta, sy, zy, -128, 127, n, 1e-5f);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    std::vector<int32_t> q(n);
    const int spread = 1 + static_cast<int>(rng() % 127);
    for (int32_t& v : q) v = std::clamp(static_cast<int32_t>(rng() % (2 * spread + 1)) - spread + zx / 2, -128, 127);
    const std::vector<int32_t> got = Normalize(q, *p);
    double mean = 0, var = 0;
    for (int32_t v : q) mean += sx * (v - zx);
    mean /= n;
    for (int32_t v : q) var += (sx * (v - zx) - mean) * (sx * (v - zx) - mean);
    var /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double y = (sx * (q[i] - zx) - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i];
      const double want = std::clamp(std::nearbyint(y / sy) + zy, -128.0, 127.0);
      ASSERT_LE(std::abs(got[i] - want), 1) << "trial " << trial << " value " << i;
      exact += got[i] == want;
      ++total;
    }
    // Softmax of the same row.
    auto sp = MakeSoftmaxParams(sx, 1.f / 255, -128, -128, 127);
    ASSERT_TRUE(sp.ok());
    std::vector<int32_t> out(n);
    SoftmaxRow(q.data(), n, *sp, out.data());
    const int32_t mx = *std::max_element(q.begin(), q.end());
    double sum = 0;
    for (int32_t v : q) sum += std::exp(static_cast<double>(sx) * (v - mx));
    for (int64_t i = 0; i < n; ++i) {
      const double prob = std::exp(static_cast<double>(sx) * (q[i] - mx)) / sum;
      const double want = std::clamp(std::nearbyint(prob * 255) - 128, -128.0, 127.0);
      ASSERT_LE(std::abs(out[i] - want), 1) << "softmax trial " << trial << " value " << i;
    }
  }
  EXPECT_GT(exact, total * 9 / 10);  // one step off only near rounding ties
}

TEST(IntNormTest, LimitsAreErrors) {
  EXPECT_FALSE(MakeNormParams(0.f, 0, {1}, {}, 1.f, 0, -128, 127, 4, 1e-5f).ok());
  EXPECT_FALSE(MakeNormParams(1.f, 0, {1}, {}, 1.f, 0, -128, 127, int64_t{1} << 21, 1e-5f).ok());
  EXPECT_FALSE(MakeNormParams(1.f, 0, {1}, {1, 2}, 1.f, 0, -128, 127, 4, 1e-5f).ok());
  EXPECT_FALSE(MakeSoftmaxParams(1.f, 0.f, 0, -128, 127).ok());
  EXPECT_EQ(RoundShift64(5, 1), 3);   // 2.5 → 3 (ties up)
  EXPECT_EQ(RoundShift64(-5, 1), -2);  // -2.5 → -2
  EXPECT_EQ(RoundShift64(int64_t{1} << 40, 63), 0);
}

}  // namespace
}  // namespace edgec::quant
