// Calibrators: choose the real range [lo, hi] an activation is quantized over, from what
// its observer saw (quant/histogram.h), and turn a range into a scale and zero point.
//
//   minmax      the observed [min, max] (symmetric: ±max|x|).
//   percentile  clips to the p-th percentile (default 99.99): of |x| when symmetric or the
//               data are one-sided, else the two tails of x separately.
//   entropy     TensorRT's procedure over the histogram of |x|: for each candidate
//               threshold (the first i bins, i ≥ levels), the reference distribution P is
//               those bins with every count beyond them added to the last one; the
//               candidate Q is the same bins merged into `levels` groups and spread back
//               evenly over the bins of each group that P holds; the threshold i·width with
//               the smallest KL(P‖Q) wins. KL ignores how far clipped values move, so on
//               data with no mass near 0 (a pooled, strictly positive tensor) it happily
//               clips everything to one bin (P and Q both a spike: KL 0); candidates are
//               therefore limited to thresholds that keep `entropy_min_keep` (99.99%) of
//               the values.
//   mse         the threshold T minimizing the expected squared error of quantizing the
//               histogram: (x − T)² for clipped values, step²/12 for the others.
// Every method except minmax is an outlier clip; `clip_ratio` (< 1) additionally shrinks
// any chosen range, for a user who wants to clip harder. One-sided data (min ≥ 0, e.g.
// after ReLU) are calibrated over [0, T].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "ir/dtype.h"
#include "quant/histogram.h"

namespace edgec::quant {

enum class CalibrationMethod { kMinMax, kPercentile, kEntropy, kMse };
StatusOr<CalibrationMethod> ParseCalibrationMethod(std::string_view name);
std::string_view CalibrationMethodName(CalibrationMethod m);

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kEntropy;
  double percentile = 99.99;
  double entropy_min_keep = 0.9999;
  bool symmetric = false;      // activations: symmetric around 0 (zero point 0 / 128)
  DType storage = DType::kU8;  // activations: u8 or i8
  double clip_ratio = 1.0;
};

struct Range {
  double lo = 0, hi = 0;
};

// The number of quantization levels over [0, T] that calibrating one tensor assumes:
// 256 for one-sided data on an asymmetric grid, 128 otherwise (one side of a signed grid).
int LevelsFor(const Histogram& h, const CalibrationOptions& o);

Range ChooseRange(const Histogram& h, const CalibrationOptions& o);

// The pieces, over a histogram of |x| (bin b covers [b·w, (b+1)·w)); exposed for tests.
// The KL divergence of candidate "keep the first i bins" (see the file comment).
double EntropyKl(const std::vector<double>& abs_counts, int i, int levels);
// The i (number of bins kept) with the smallest KL among those keeping at least `min_keep`
// of the mass; ties go to the smaller i.
int EntropyBestBins(const std::vector<double>& abs_counts, int levels, double min_keep = 0);
// The upper edge of the bin where the cumulative share reaches p percent.
double PercentileThreshold(const std::vector<double>& abs_counts, double bin_width, double p);
// The expected squared error of quantizing with threshold t and `levels` levels.
double QuantizationMse(const std::vector<double>& abs_counts, double bin_width, double t, int levels);
double MseThreshold(const std::vector<double>& abs_counts, double bin_width, int levels);

// Scale and zero point for [lo, hi] (widened to hold 0) on `storage` (u8 or i8), ONNX
// QuantizeLinear semantics. Symmetric: zero point 0 (i8) or 128 (u8), scale max|x| / 127.
// Asymmetric: scale (hi − lo) / 255, zero point round(qmin − lo / scale). The scale is
// rounded up to 16 significant bits, so that every dequantized value is exact in f32
// (quant/exact_scale.h). A zero range gives scale 1.
struct ScaleZeroPoint {
  float scale = 1;
  int32_t zero_point = 0;
};
ScaleZeroPoint ParamsFromRange(Range r, DType storage, bool symmetric);

}  // namespace edgec::quant
