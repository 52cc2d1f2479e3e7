// Integer-only requantization against the float formula of the ONNX QLinear ops:
// within one step everywhere, exact outside the stated tie band, over seeded accumulators
// and multipliers spanning the range real models use (1e-6 .. 4).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "quant/fixed_point.h"

namespace edgec::quant {
namespace {

TEST(FixedPoint, QuantizeMultiplierRepresentsTheValue) {
  for (double m : {1.0, 0.5, 0.75, 0.001234, 3.9, 1e-7, 0.9999999999}) {
    auto q = QuantizeMultiplier(m);
    ASSERT_TRUE(q.ok()) << m;
    EXPECT_GE(q->multiplier, 1 << 30) << m;
    EXPECT_NEAR(q->Real() / m, 1.0, 1e-9) << m;
  }
  auto one = *QuantizeMultiplier(1.0);
  EXPECT_EQ(one.multiplier, 1 << 30);
  EXPECT_EQ(one.shift, 1);
  EXPECT_EQ(QuantizeMultiplier(0.0)->multiplier, 0);
  EXPECT_FALSE(QuantizeMultiplier(-1.0).ok());
  EXPECT_FALSE(QuantizeMultiplier(std::nan("")).ok());
  EXPECT_FALSE(QuantizeMultiplier(std::ldexp(1.0, 32)).ok());
}

TEST(FixedPoint, PrimitivesRoundAsDocumented) {
  EXPECT_EQ(RoundingRightShift(5, 1), 3);    // 2.5 -> 3
  EXPECT_EQ(RoundingRightShift(-5, 1), -3);  // -2.5 -> -3
  EXPECT_EQ(RoundingRightShift(7, 2), 2);    // 1.75 -> 2
  EXPECT_EQ(RoundingRightShift(-7, 2), -2);
  EXPECT_EQ(RoundingRightShift(-6, 2), -2);  // -1.5 -> -2
  EXPECT_EQ(RoundingRightShift(6, 2), 2);
  EXPECT_EQ(RoundingRightShift(1, 31), 0);
  const int32_t half = 1 << 30;  // 0.5 in Q0.31
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(3, half), 2);    // 1.5 -> 2
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(-3, half), -1);  // -1.5 -> -1 (toward +inf)
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(-5, half), -2);  // -2.5 -> -2
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(std::numeric_limits<int32_t>::min(),
                                              std::numeric_limits<int32_t>::min()),
            std::numeric_limits<int32_t>::max());
}

TEST(FixedPoint, HandComputedRequantization) {
  auto m = *QuantizeMultiplier(0.25);
  EXPECT_EQ(Requantize(100, m, 0, -128, 127), 25);
  EXPECT_EQ(Requantize(-100, m, 3, -128, 127), -22);
  EXPECT_EQ(Requantize(10000, m, 0, -128, 127), 127);   // saturates
  EXPECT_EQ(Requantize(-10000, m, 10, 0, 255), 0);
  auto big = *QuantizeMultiplier(3.0);                  // a left shift
  EXPECT_EQ(Requantize(20, big, 128, 0, 255), 188);
  EXPECT_EQ(Requantize(std::numeric_limits<int32_t>::max(), big, 0, -128, 127), 127);
}

// The float formula: what QLinearConv's reference kernel computes (f32 multiplier).
int32_t FloatFormula(int32_t acc, float multiplier, int32_t zp, int32_t qmin, int32_t qmax) {
  float r = std::nearbyint(static_cast<float>(acc) * multiplier) + static_cast<float>(zp);
  return static_cast<int32_t>(std::clamp(r, static_cast<float>(qmin), static_cast<float>(qmax)));
}

TEST(FixedPoint, AgreesWithTheFloatFormulaOverSeededValues) {
  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<double> log_m(std::log(1e-6), std::log(4.0));
  std::uniform_int_distribution<int32_t> zp_dist(-20, 20);
  int64_t total = 0, exact_vs_double = 0, exact_vs_float = 0, outside_band = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const double real = std::exp(log_m(rng));
    const auto m = *QuantizeMultiplier(real);
    const int32_t zp = zp_dist(rng);
    // Accumulators whose product lands mostly inside the int8 range, plus the extremes.
    const double span = std::min(300.0 / real, 2.0e9);
    std::uniform_int_distribution<int64_t> acc_dist(static_cast<int64_t>(-span),
                                                    static_cast<int64_t>(span));
    const bool u8 = trial % 2;
    const int32_t qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
    for (int i = 0; i < 500; ++i) {
      int32_t acc = static_cast<int32_t>(acc_dist(rng));
      if (i == 0) acc = std::numeric_limits<int32_t>::max();
      if (i == 1) acc = std::numeric_limits<int32_t>::min();
      if (i == 2) acc = 0;
      const int32_t got = Requantize(acc, m, zp, qmin, qmax);
      const double exact = static_cast<double>(acc) * real;
      const int32_t want_double = static_cast<int32_t>(
          std::clamp(std::nearbyint(exact) + zp, static_cast<double>(qmin), static_cast<double>(qmax)));
      const int32_t want_float = FloatFormula(acc, static_cast<float>(real), zp, qmin, qmax);
      ++total;
      ASSERT_LE(std::abs(got - want_double), 1) << "acc " << acc << " M " << real;
      ASSERT_LE(std::abs(got - want_float), 1) << "acc " << acc << " M " << real;
      exact_vs_double += got == want_double;
      exact_vs_float += got == want_float;
      const double frac = exact - std::floor(exact);
      if (std::abs(frac - 0.5) > TieBand(m)) {
        ++outside_band;
        ASSERT_EQ(got, want_double) << "acc " << acc << " M " << real << " frac " << frac;
      }
    }
  }
  // Off-by-one results are confined to the tie band, which covers a small share of values.
  EXPECT_GT(outside_band, total * 8 / 10);
  EXPECT_GT(exact_vs_double, total * 98 / 100);
  EXPECT_GT(exact_vs_float, total * 98 / 100);
  std::printf("fixed point vs float formula: %lld cases, %.3f%% exact (double), %.3f%% exact "
              "(f32), %.1f%% outside the tie band\n", static_cast<long long>(total),
              100.0 * exact_vs_double / total, 100.0 * exact_vs_float / total,
              100.0 * outside_band / total);
}

TEST(FixedPoint, TiesRoundAwayFromZeroWhereTheFloatFormulaRoundsToEven) {
  auto m = *QuantizeMultiplier(0.5);
  EXPECT_EQ(Requantize(5, m, 0, -128, 127), 3);    // 2.5: float formula gives 2
  EXPECT_EQ(FloatFormula(5, 0.5f, 0, -128, 127), 2);
  EXPECT_EQ(Requantize(7, m, 0, -128, 127), 4);    // 3.5: both give 4
  EXPECT_EQ(FloatFormula(7, 0.5f, 0, -128, 127), 4);
}

TEST(FixedPoint, QuantizedAddAgreesWithTheFloatFormula) {
  // y = saturate(round((s_a (a - z_a) + s_b (b - z_b)) / s_y) + z_y) in exact arithmetic,
  // against the integer-only QuantizedAdd: within one step on every pair of 8-bit values,
  // over seeded scales (ratios up to 20x between the operands) and zero points.
  std::mt19937_64 rng(20261203);
  std::uniform_real_distribution<double> log_s(std::log(1e-3), std::log(2e-2));
  std::uniform_int_distribution<int32_t> zp(-128, 127);
  int64_t total = 0, exact = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const double sa = std::exp(log_s(rng)), sb = std::exp(log_s(rng)), sy = std::exp(log_s(rng)) * 2;
    const int32_t za = zp(rng), zb = zp(rng), zy = zp(rng);
    const int32_t qmin = trial % 3 == 0 ? zy : -128;  // a fused ReLU clamps at the zero point
    auto p = MakeQuantizedAdd(sa, za, sb, zb, sy, zy, qmin, 127);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    for (int32_t a = -128; a <= 127; a += 3) {
      for (int32_t b = -128; b <= 127; b += 5) {
        const double real = (sa * (a - za) + sb * (b - zb)) / sy;
        const int32_t want = static_cast<int32_t>(std::clamp(std::nearbyint(real) + zy, double(qmin), 127.0));
        const int32_t got = QuantizedAdd(a, b, *p);
        ASSERT_LE(std::abs(got - want), 1) << "a " << a << " b " << b << " trial " << trial;
        ASSERT_GE(got, qmin);
        exact += got == want;
        ++total;
      }
    }
  }
  EXPECT_GT(exact, total * 97 / 100);
  // Impossible parameters are errors, not garbage.
  EXPECT_FALSE(MakeQuantizedAdd(0, 0, 0.1, 0, 0.1, 0, -128, 127).ok());
  EXPECT_FALSE(MakeQuantizedAdd(0.1, 0, 0.1, 0, 0.1, 0, 5, 4).ok());
}

}  // namespace
}  // namespace edgec::quant
