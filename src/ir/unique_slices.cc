#include "ir/unique_slices.h"

#include <algorithm>
#include <numeric>

namespace edgec {

UniqueSlices FindUniqueSlices(const Tensor& x, std::optional<int> axis, bool sorted) {
  const std::vector<double> v = x.ToDoubleVector();
  int64_t outer = 1, n = x.numel(), inner = 1;
  if (axis) {
    n = x.dim(*axis);
    for (int d = 0; d < *axis; ++d) outer *= x.dim(d);
    for (int d = *axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  // Slice s read in row-major order: element (o, k) is v[(o * n + s) * inner + k].
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < inner; ++k) {
        const double x1 = v[(o * n + a) * inner + k], x2 = v[(o * n + b) * inner + k];
        if (x1 != x2) return x1 < x2;
      }
    }
    return false;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);  // equal slices keep X's order
  UniqueSlices u;
  u.slice_count = n;
  u.inverse.assign(static_cast<size_t>(n), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || less(order[i - 1], order[i])) {
      u.first.push_back(order[i]);
      u.counts.push_back(0);
    }
    u.inverse[order[i]] = static_cast<int64_t>(u.first.size()) - 1;
    ++u.counts.back();
  }
  if (!sorted) {
    // Renumber the groups by first occurrence.
    std::vector<int64_t> by_first(u.first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return u.first[a] < u.first[b]; });
    std::vector<int64_t> rank(by_first.size());
    for (size_t r = 0; r < by_first.size(); ++r) rank[by_first[r]] = static_cast<int64_t>(r);
    UniqueSlices s;
    s.slice_count = n;
    for (int64_t g : by_first) {
      s.first.push_back(u.first[g]);
      s.counts.push_back(u.counts[g]);
    }
    for (int64_t g : u.inverse) s.inverse.push_back(rank[g]);
    return s;
  }
  return u;
}

}  // namespace edgec
