#include "quant/histogram.h"

#include <algorithm>
#include <cmath>

#include "support/status.h"

namespace edgec::quant {

Histogram::Histogram(int bins) : counts_(bins, 0.0) { EDGEC_CHECK(bins > 0 && bins % 4 == 0); }

double Histogram::abs_max() const { return std::max(std::abs(min_), std::abs(max_)); }

void Histogram::GrowTo(double a) {
  if (range_ == 0) {
    range_ = a > 0 ? a : 1e-8;
    return;
  }
  const int n = bins();
  while (range_ < a) {
    // Old bin j covers [-R + j·w, ...) = [-2R + (j + n/2)·w, ...): new bin (j + n/2) / 2.
    std::vector<double> merged(n, 0.0);
    for (int j = 0; j < n; ++j) merged[(j + n / 2) / 2] += counts_[j];
    counts_ = std::move(merged);
    range_ *= 2;
  }
}

void Histogram::Add(const float* data, int64_t n) {
  float lo = 0, hi = 0;
  bool any = false;
  for (int64_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) continue;
    if (!any) lo = hi = v, any = true;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!any) {
    skipped_ += n;
    return;
  }
  if (count_ == 0) min_ = lo, max_ = hi;
  min_ = std::min<double>(min_, lo), max_ = std::max<double>(max_, hi);
  GrowTo(std::max(std::abs(lo), std::abs(hi)));
  const int nb = bins();
  const double inv_w = nb / (2 * range_);
  for (int64_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) {
      ++skipped_;
      continue;
    }
    const int b = std::clamp(static_cast<int>((v + range_) * inv_w), 0, nb - 1);
    counts_[b] += 1;
    ++count_;
  }
}

std::vector<double> Histogram::AbsCounts() const {
  const int half = bins() / 2;
  std::vector<double> a(half, 0.0);
  for (int i = 0; i < half; ++i) a[i] = counts_[half + i] + counts_[half - 1 - i];
  return a;
}

Histogram Histogram::FromCounts(std::vector<double> counts, double range, double min, double max) {
  Histogram h(static_cast<int>(counts.size()));
  h.counts_ = std::move(counts);
  h.range_ = range;
  h.min_ = min, h.max_ = max;
  double total = 0;
  for (double c : h.counts_) total += c;
  h.count_ = static_cast<int64_t>(total);
  return h;
}

}  // namespace edgec::quant
