#include "quant/calibrator.h"

#include "quant/exact_scale.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edgec::quant {

StatusOr<CalibrationMethod> ParseCalibrationMethod(std::string_view name) {
  if (name == "minmax") return CalibrationMethod::kMinMax;
  if (name == "percentile") return CalibrationMethod::kPercentile;
  if (name == "entropy") return CalibrationMethod::kEntropy;
  if (name == "mse") return CalibrationMethod::kMse;
  return InvalidArgument("unknown calibration method '{}' (minmax, percentile, entropy, mse)", name);
}

std::string_view CalibrationMethodName(CalibrationMethod m) {
  switch (m) {
    case CalibrationMethod::kMinMax: return "minmax";
    case CalibrationMethod::kPercentile: return "percentile";
    case CalibrationMethod::kEntropy: return "entropy";
    case CalibrationMethod::kMse: return "mse";
  }
  return "?";
}

namespace {

bool OneSided(const Histogram& h) { return h.min() >= 0; }

// The |x| histogram without its empty tail (at least one bin).
std::vector<double> TrimmedAbs(const Histogram& h) {
  std::vector<double> a = h.AbsCounts();
  size_t last = a.size();
  while (last > 1 && a[last - 1] == 0) --last;
  a.resize(last);
  return a;
}

}  // namespace

int LevelsFor(const Histogram& h, const CalibrationOptions& o) {
  return OneSided(h) && !o.symmetric ? 256 : 128;
}

double EntropyKl(const std::vector<double>& counts, int i, int levels) {
  EDGEC_CHECK(i >= levels && i <= static_cast<int>(counts.size()));
  std::vector<double> p(counts.begin(), counts.begin() + i);
  for (size_t b = i; b < counts.size(); ++b) p[i - 1] += counts[b];
  std::vector<double> q(i, 0.0);
  for (int g = 0; g < levels; ++g) {
    const int start = static_cast<int>(static_cast<int64_t>(g) * i / levels);
    const int stop = static_cast<int>(static_cast<int64_t>(g + 1) * i / levels);
    double sum = 0;
    int nonzero = 0;
    for (int b = start; b < stop; ++b) {
      sum += counts[b];
      nonzero += p[b] != 0;
    }
    for (int b = start; b < stop; ++b) q[b] = p[b] != 0 ? sum / nonzero : 0;
  }
  double p_total = 0, q_total = 0;
  for (int b = 0; b < i; ++b) p_total += p[b], q_total += q[b];
  if (p_total == 0) return 0;
  // A bin P holds that Q lost entirely (outlier mass only) gets a tiny share instead of 0.
  const double eps = 1e-12;
  double kl = 0;
  for (int b = 0; b < i; ++b) {
    if (p[b] == 0) continue;
    const double pb = p[b] / p_total;
    const double qb = q_total > 0 && q[b] > 0 ? q[b] / q_total : eps;
    kl += pb * std::log(pb / qb);
  }
  return kl;
}

int EntropyBestBins(const std::vector<double>& counts, int levels, double min_keep) {
  const int n = static_cast<int>(counts.size());
  if (n <= levels) return n;
  double total = 0;
  for (double c : counts) total += c;
  int first = levels;
  double kept = 0;
  for (int b = 0; b < n; ++b) {
    kept += counts[b];
    if (kept >= min_keep * total) {
      first = std::max(first, b + 1);
      break;
    }
  }
  int best = n;
  double best_kl = std::numeric_limits<double>::infinity();
  for (int i = first; i <= n; ++i) {
    const double kl = EntropyKl(counts, i, levels);
    if (kl < best_kl) best_kl = kl, best = i;
  }
  return best;
}

double PercentileThreshold(const std::vector<double>& counts, double w, double p) {
  double total = 0;
  for (double c : counts) total += c;
  const double want = total * std::clamp(p, 0.0, 100.0) / 100.0;
  double cum = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    cum += counts[b];
    if (cum >= want) return (b + 1) * w;
  }
  return counts.size() * w;
}

double QuantizationMse(const std::vector<double>& counts, double w, double t, int levels) {
  const double step = t / (levels - 1);
  double err = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0) continue;
    const double c = (b + 0.5) * w;
    err += counts[b] * (c > t ? (c - t) * (c - t) : step * step / 12);
  }
  return err;
}

double MseThreshold(const std::vector<double>& counts, double w, int levels) {
  double best_t = counts.size() * w, best = std::numeric_limits<double>::infinity();
  for (size_t i = 1; i <= counts.size(); ++i) {
    const double t = i * w;
    const double e = QuantizationMse(counts, w, t, levels);
    if (e < best) best = e, best_t = t;
  }
  return best_t;
}

Range ChooseRange(const Histogram& h, const CalibrationOptions& o) {
  if (h.count() == 0) return {0, 0};
  const bool one_sided = OneSided(h);
  Range r;
  auto from_threshold = [&](double t) {
    t = std::min(t, h.abs_max());
    if (one_sided) return Range{0, t};
    if (o.symmetric) return Range{-t, t};
    return Range{std::max(h.min(), -t), std::min(h.max(), t)};
  };
  const double w = h.range() / (h.bins() / 2);  // width of a bin of |x|
  switch (o.method) {
    case CalibrationMethod::kMinMax:
      r = o.symmetric || one_sided ? from_threshold(h.abs_max()) : Range{h.min(), h.max()};
      break;
    case CalibrationMethod::kPercentile:
      if (o.symmetric || one_sided) {
        r = from_threshold(PercentileThreshold(TrimmedAbs(h), w, o.percentile));
      } else {
        // Two tails of the signed histogram.
        const std::vector<double>& c = h.counts();
        std::vector<double> rev(c.rbegin(), c.rend());
        const double bw = h.bin_width();
        const double hi = -h.range() + PercentileThreshold(c, bw, o.percentile);
        const double lo = h.range() - PercentileThreshold(rev, bw, o.percentile);
        r = {std::max(h.min(), std::min(lo, 0.0)), std::min(h.max(), std::max(hi, 0.0))};
      }
      break;
    case CalibrationMethod::kEntropy: {
      const std::vector<double> a = TrimmedAbs(h);
      r = from_threshold(EntropyBestBins(a, LevelsFor(h, o), o.entropy_min_keep) * w);
      break;
    }
    case CalibrationMethod::kMse: {
      const std::vector<double> a = TrimmedAbs(h);
      r = from_threshold(MseThreshold(a, w, LevelsFor(h, o)));
      break;
    }
  }
  r.lo *= o.clip_ratio, r.hi *= o.clip_ratio;
  return r;
}

ScaleZeroPoint ParamsFromRange(Range r, DType storage, bool symmetric) {
  const double lo = std::min(r.lo, 0.0), hi = std::max(r.hi, 0.0);
  const bool u8 = storage == DType::kU8;
  const int32_t qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
  ScaleZeroPoint p;
  if (symmetric) {
    const double a = std::max(-lo, hi);
    p.scale = a > 0 ? RoundScaleForExactDequantization(a / 127.0) : 1.0f;
    p.zero_point = u8 ? 128 : 0;
    return p;
  }
  if (hi - lo <= 0) return {1.0f, u8 ? 0 : 0};
  p.scale = RoundScaleForExactDequantization((hi - lo) / (qmax - qmin));
  const double zp = std::nearbyint(qmin - lo / p.scale);
  p.zero_point = static_cast<int32_t>(std::clamp<double>(zp, qmin, qmax));
  return p;
}

}  // namespace edgec::quant
