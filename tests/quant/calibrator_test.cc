// Calibrators against hand-computed histograms: the bins a value lands in (with range
// doubling), percentile thresholds, KL divergences of the entropy procedure, the MSE
// threshold, and the scale/zero point of a range.
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "quant/calibrator.h"
#include "quant/exact_scale.h"

namespace edgec::quant {
namespace {

TEST(Histogram, BinsAndRangeDoubling) {
  Histogram h(8);
  const float first[] = {1.0f, 0.1f, -0.6f};
  h.Add(first, 3);  // range 1, width 0.25: bins 7 (clamped edge), 4, 1
  EXPECT_DOUBLE_EQ(h.range(), 1.0);
  EXPECT_EQ(h.counts(), (std::vector<double>{0, 1, 0, 0, 1, 0, 0, 1}));
  const float second[] = {3.0f, NAN};
  h.Add(second, 2);  // range 1 -> 2 -> 4 (width 1): 7->5->4, 4->4->4, 1->2->3; 3.0 in bin 7
  EXPECT_DOUBLE_EQ(h.range(), 4.0);
  EXPECT_EQ(h.counts(), (std::vector<double>{0, 0, 0, 1, 2, 0, 0, 1}));
  EXPECT_EQ(h.count(), 4);
  EXPECT_EQ(h.skipped(), 1);
  EXPECT_FLOAT_EQ(h.min(), -0.6f);
  EXPECT_FLOAT_EQ(h.max(), 3.0f);
  // |x|: bins of width 1 over [0, 4]: a[i] = c[4+i] + c[3-i].
  EXPECT_EQ(h.AbsCounts(), (std::vector<double>{3, 0, 0, 1}));
}

TEST(Calibrator, Percentile) {
  const std::vector<double> a = {50, 30, 15, 4, 1};  // cumulative 50, 80, 95, 99, 100
  EXPECT_DOUBLE_EQ(PercentileThreshold(a, 1.0, 90), 3.0);
  EXPECT_DOUBLE_EQ(PercentileThreshold(a, 1.0, 99), 4.0);
  EXPECT_DOUBLE_EQ(PercentileThreshold(a, 0.5, 100), 2.5);
  EXPECT_DOUBLE_EQ(PercentileThreshold(a, 1.0, 50), 1.0);
}

TEST(Calibrator, EntropyKlHandComputed) {
  // counts [4, 4, 0, 2], 2 levels.
  // i=2: P = [4, 6] -> [.4, .6]; Q = [4, 4] -> [.5, .5]; KL = .4 ln .8 + .6 ln 1.2.
  const std::vector<double> c = {4, 4, 0, 2};
  EXPECT_NEAR(EntropyKl(c, 2, 2), 0.4 * std::log(0.8) + 0.6 * std::log(1.2), 1e-12);
  // i=3: P = [4, 4, 2] -> [.4, .4, .2]; groups [0,1) and [1,3): Q = [4, 2, 2] -> [.5, .25, .25].
  EXPECT_NEAR(EntropyKl(c, 3, 2),
              0.4 * std::log(0.8) + 0.4 * std::log(1.6) + 0.2 * std::log(0.8), 1e-12);
  // i=4 keeps everything and the group [2,4) spreads its 2 onto the one bin P holds: KL 0.
  EXPECT_NEAR(EntropyKl(c, 4, 2), 0.0, 1e-12);
  EXPECT_EQ(EntropyBestBins(c, 2), 4);
}

TEST(Calibrator, EntropyClipsALoneOutlier) {
  // Ten in bin 0, one in bin 1, one outlier in bin 7; 2 levels.
  const std::vector<double> c = {10, 1, 0, 0, 0, 0, 0, 1};
  // i=2: P = [10, 2]/12, Q = [10, 1]/11.
  const double kl2 = 10.0 / 12 * std::log((10.0 / 12) / (10.0 / 11)) +
                     2.0 / 12 * std::log((2.0 / 12) / (1.0 / 11));
  EXPECT_NEAR(EntropyKl(c, 2, 2), kl2, 1e-12);
  // i=8: groups [0,4) (11 over two bins: 5.5, 5.5) and [4,8) (1 on bin 7).
  const double kl8 = 10.0 / 12 * std::log(10.0 / 5.5) + 1.0 / 12 * std::log(1.0 / 5.5);
  EXPECT_NEAR(EntropyKl(c, 8, 2), kl8, 1e-12);
  // i=3 ties with i=2 (same KL); i=4..7 put outlier mass where Q is 0. Smallest wins.
  EXPECT_NEAR(EntropyKl(c, 3, 2), kl2, 1e-12);
  EXPECT_GT(EntropyKl(c, 4, 2), kl8);
  EXPECT_EQ(EntropyBestBins(c, 2), 2);
  // Keeping at least 95% of the 12 values rules out i < 8 (bins 0..6 hold 11/12).
  EXPECT_EQ(EntropyBestBins(c, 2, 0.95), 8);
}

TEST(Calibrator, EntropyDoesNotCollapseDataFarFromZero) {
  // All mass in bins 50..99 (a pooled, strictly positive tensor): without the keep rule,
  // i = 51 makes P and Q the same spike (KL 0) and clips everything to one value.
  std::vector<double> c(100, 0.0);
  for (int b = 50; b < 100; ++b) c[b] = 10;
  EXPECT_NEAR(EntropyKl(c, 51, 4), 0.0, 1e-12);
  EXPECT_EQ(EntropyBestBins(c, 4), 51);
  EXPECT_GE(EntropyBestBins(c, 4, 0.99), 100);
}

TEST(Calibrator, MseThreshold) {
  const std::vector<double> a = {100, 0, 0, 1};  // centres 0.5 and 3.5
  // 2 levels (step = t): t=1 -> 100/12 + 2.5^2 = 14.58; t=2 -> 400/12 + 1.5^2; ...
  EXPECT_NEAR(QuantizationMse(a, 1.0, 1.0, 2), 100.0 / 12 + 6.25, 1e-9);
  EXPECT_NEAR(QuantizationMse(a, 1.0, 2.0, 2), 400.0 / 12 + 2.25, 1e-9);
  EXPECT_DOUBLE_EQ(MseThreshold(a, 1.0, 2), 1.0);
  // With 256 levels the rounding error is tiny and clipping the outlier costs more.
  EXPECT_DOUBLE_EQ(MseThreshold(a, 1.0, 256), 4.0);
}

TEST(Calibrator, ChooseRangeByMethod) {
  // Signed data in [-1, 3]: 8 bins over [-4, 4] (|x| bins of width 1).
  Histogram h = Histogram::FromCounts({0, 0, 0, 10, 80, 5, 4, 1}, 4.0, -1.0, 3.0);
  CalibrationOptions o;
  o.method = CalibrationMethod::kMinMax;
  Range r = ChooseRange(h, o);
  EXPECT_DOUBLE_EQ(r.lo, -1.0);
  EXPECT_DOUBLE_EQ(r.hi, 3.0);
  o.symmetric = true;
  r = ChooseRange(h, o);
  EXPECT_DOUBLE_EQ(r.lo, -3.0);
  EXPECT_DOUBLE_EQ(r.hi, 3.0);
  // Percentile 90 of |x| (|x| counts 90, 5, 4, 1): reached in bin 0 -> 1.
  o.method = CalibrationMethod::kPercentile;
  o.percentile = 90;
  r = ChooseRange(h, o);
  EXPECT_DOUBLE_EQ(r.hi, 1.0);
  EXPECT_DOUBLE_EQ(r.lo, -1.0);
  // Asymmetric percentile takes the tails separately. Upper: cumulative 10, 90 reaches 90%
  // in bin 4 ([0, 1)) -> 1. Lower, counting from the top: 1, 5, 10, 90 reaches 90% in bin 4
  // as well, whose lower edge is 0: the 10 values in [-1, 0) are clipped to 0.
  o.symmetric = false;
  r = ChooseRange(h, o);
  EXPECT_DOUBLE_EQ(r.hi, 1.0);
  EXPECT_DOUBLE_EQ(r.lo, 0.0);
  o.clip_ratio = 0.5;
  r = ChooseRange(h, o);
  EXPECT_DOUBLE_EQ(r.hi, 0.5);
}

TEST(Calibrator, OneSidedDataUseTheWholeUnsignedGrid) {
  Histogram h = Histogram::FromCounts({0, 0, 0, 0, 50, 30, 15, 5}, 4.0, 0.0, 3.9);
  CalibrationOptions o;
  EXPECT_EQ(LevelsFor(h, o), 256);
  o.symmetric = true;
  EXPECT_EQ(LevelsFor(h, o), 128);
  o.method = CalibrationMethod::kMinMax;
  const Range r = ChooseRange(h, o);
  EXPECT_DOUBLE_EQ(r.lo, 0.0);
  EXPECT_DOUBLE_EQ(r.hi, 3.9);
}

TEST(Calibrator, ParamsFromRange) {
  // The formula's scale rounded up to 16 significant bits (quant/exact_scale.h): never
  // smaller, at most 2^-15 larger, every dequantized value exact in f32.
  auto expect_scale = [](float got, double formula) {
    EXPECT_GE(got, formula);
    EXPECT_LT(got, formula * (1 + 0x1p-15)) << formula;
    EXPECT_TRUE(DequantizesExactly(got)) << got;
    EXPECT_EQ(got, RoundScaleForExactDequantization(formula));
  };
  ScaleZeroPoint p = ParamsFromRange({0, 2.55}, DType::kU8, false);
  expect_scale(p.scale, 0.01);
  EXPECT_EQ(p.zero_point, 0);
  p = ParamsFromRange({-1, 1.55}, DType::kU8, false);  // zp = round(0 + 1 / 0.01)
  expect_scale(p.scale, 0.01);
  EXPECT_EQ(p.zero_point, 100);
  p = ParamsFromRange({-1, 3}, DType::kI8, false);  // zp = round(-128 + 63.75) = -64
  expect_scale(p.scale, 4.0 / 255);
  EXPECT_EQ(p.zero_point, -64);
  p = ParamsFromRange({-2, 1}, DType::kI8, true);
  expect_scale(p.scale, 2.0 / 127);
  EXPECT_EQ(p.zero_point, 0);
  p = ParamsFromRange({0.5, 2}, DType::kU8, false);  // widened to hold 0
  expect_scale(p.scale, 2.0 / 255);
  EXPECT_EQ(p.zero_point, 0);
  p = ParamsFromRange({0, 0}, DType::kU8, false);
  EXPECT_FLOAT_EQ(p.scale, 1.0f);
}

TEST(Calibrator, ExactDequantizationScales) {
  // Rounded scales keep every (q - zp) * s exact in f32; others do not, and the check says so.
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> log_scale(-20, 5);
  int inexact_seen = 0;
  for (int i = 0; i < 2000; ++i) {
    const double s = std::exp2(log_scale(rng));
    const float r = RoundScaleForExactDequantization(s);
    ASSERT_GE(r, s);
    ASSERT_LT(r, s * (1 + 0x1p-15));
    ASSERT_TRUE(DequantizesExactly(r)) << r;
    EXPECT_EQ(RoundScaleForExactDequantization(r), r);  // idempotent
    for (int k = -255; k <= 255; k += 7) {
      const float f = static_cast<float>(k) * r;
      ASSERT_EQ(static_cast<double>(f), static_cast<double>(k) * static_cast<double>(r)) << k << " * " << r;
    }
    // The plain f32 scale: its products are exact only by chance, and the check must not
    // claim it when they are not.
    const float plain = static_cast<float>(s);
    bool all_exact = true;
    for (int k = -255; k <= 255; ++k)
      all_exact &= static_cast<double>(static_cast<float>(k) * plain) == static_cast<double>(k) * plain;
    if (DequantizesExactly(plain)) EXPECT_TRUE(all_exact) << plain;
    inexact_seen += !all_exact;
  }
  EXPECT_GT(inexact_seen, 1900);  // a random f32 scale almost never dequantizes exactly
  EXPECT_FALSE(DequantizesExactly(0.0f));
  EXPECT_FALSE(DequantizesExactly(std::numeric_limits<float>::infinity()));
}

}  // namespace
}  // namespace edgec::quant
