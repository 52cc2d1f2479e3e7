// What calibration remembers about one tensor: exact min/max and a signed histogram that
// grows its range by doubling (adjacent bins merge), so one pass over the calibration set
// suffices and counts stay exact, only coarser.
#pragma once

#include <cstdint>
#include <vector>

namespace edgec::quant {

class Histogram {
 public:
  // `bins` must be a multiple of 4 (so that doubling the range merges whole bin pairs).
  explicit Histogram(int bins = 4096);

  void Add(const float* data, int64_t n);  // NaN and ±inf are ignored (counted in skipped)

  // Signed bins over [-range, range]; bin i covers [-range + i·w, -range + (i+1)·w).
  int bins() const { return static_cast<int>(counts_.size()); }
  double range() const { return range_; }
  double bin_width() const { return 2 * range_ / bins(); }
  const std::vector<double>& counts() const { return counts_; }
  double min() const { return min_; }
  double max() const { return max_; }
  double abs_max() const;
  int64_t count() const { return count_; }
  int64_t skipped() const { return skipped_; }

  // Histogram of |x|: bins()/2 bins over [0, range].
  std::vector<double> AbsCounts() const;
  // Builds a histogram directly (tests): counts over [-range, range].
  static Histogram FromCounts(std::vector<double> counts, double range, double min, double max);

 private:
  void GrowTo(double abs_value);
  std::vector<double> counts_;
  double range_ = 0;
  double min_ = 0, max_ = 0;
  int64_t count_ = 0, skipped_ = 0;
};

}  // namespace edgec::quant
