// Row stripes of a cascade (see cascade.h).
#include "npu/cascade.h"

#include <algorithm>

#include "support/status.h"

namespace edgec::npu {

StripeRows RowsFor(const WindowRows& w, int out0, int out1) {
  StripeRows r;
  r.out0 = out0;
  r.out1 = out1;
  const int lo = out0 * w.stride_h - w.pad_top;                         // first row the window reads
  const int hi = (out1 - 1) * w.stride_h - w.pad_top + w.kernel_h;      // one past the last
  r.in0 = std::clamp(lo, 0, w.in_h);
  r.in1 = std::clamp(hi, r.in0, w.in_h);
  r.pad_top = r.in0 - lo;
  r.pad_bottom = hi - r.in1;
  return r;
}

std::vector<std::vector<StripeRows>> CascadeStripes(const std::vector<WindowRows>& chain, int height) {
  std::vector<std::vector<StripeRows>> out;
  if (chain.empty() || height <= 0) return out;
  const int n = static_cast<int>(chain.size());
  for (int a = 0; a < chain.back().out_h; a += height) {
    std::vector<StripeRows> s(n);
    int o0 = a, o1 = std::min(a + height, chain.back().out_h);
    for (int j = n - 1; j >= 0; --j) {
      s[j] = RowsFor(chain[j], o0, o1);
      o0 = s[j].in0;
      o1 = s[j].in1;
    }
    out.push_back(std::move(s));
  }
  return out;
}

int64_t StripePeakBytes(const std::vector<std::vector<StripeRows>>& stripes, const std::vector<int64_t>& row_bytes) {
  int64_t peak = 0;
  for (const auto& s : stripes) {
    const int n = static_cast<int>(s.size());
    for (int j = 0; j < n; ++j) {
      int64_t held = 0;
      if (j > 0) held += int64_t{s[j - 1].out_rows()} * row_bytes[j - 1];  // its input band
      if (j + 1 < n) held += int64_t{s[j].out_rows()} * row_bytes[j];      // its output band
      peak = std::max(peak, held);
    }
  }
  return peak;
}

double RecomputedCost(const std::vector<std::vector<StripeRows>>& stripes, const std::vector<WindowRows>& chain,
                      const std::vector<double>& row_cost) {
  double extra = 0;
  for (size_t j = 0; j < chain.size(); ++j) {
    int64_t rows = 0;
    for (const auto& s : stripes) rows += s[j].out_rows();
    extra += static_cast<double>(rows - chain[j].out_h) * row_cost[j];
  }
  return extra;
}

}  // namespace edgec::npu
