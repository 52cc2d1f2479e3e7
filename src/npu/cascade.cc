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

std::vector<std::vector<StripeRows>> CascadeStripes(const std::vector<CascadeLayer>& layers, int height) {
  std::vector<std::vector<StripeRows>> out;
  if (layers.empty() || height <= 0) return out;
  const int n = static_cast<int>(layers.size());
  for (int a = 0; a < layers.back().rows.out_h; a += height) {
    std::vector<StripeRows> s(n);
    std::vector<int> lo(n, 1 << 30), hi(n, -1);  // rows of each layer's output its readers need
    lo[n - 1] = a;
    hi[n - 1] = std::min(a + height, layers.back().rows.out_h);
    for (int j = n - 1; j >= 0; --j) {
      if (hi[j] < 0) lo[j] = hi[j] = 0;  // read by no layer of the stripe
      s[j] = RowsFor(layers[j].rows, lo[j], std::max(lo[j], hi[j]));
      for (int r : layers[j].reads) {
        lo[r] = std::min(lo[r], s[j].in0);
        hi[r] = std::max(hi[r], s[j].in1);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::vector<StripeRows>> CascadeStripes(const std::vector<WindowRows>& chain, int height) {
  std::vector<CascadeLayer> layers(chain.size());
  for (size_t j = 0; j < chain.size(); ++j) {
    layers[j].rows = chain[j];
    if (j > 0) layers[j].reads = {static_cast<int>(j) - 1};
  }
  return CascadeStripes(layers, height);
}

int64_t StripePeakBytes(const std::vector<std::vector<StripeRows>>& stripes, const std::vector<int64_t>& row_bytes) {
  int64_t peak = 0;
  for (const auto& s : stripes) {
    int64_t held = 0;
    for (size_t j = 0; j + 1 < s.size(); ++j) held += int64_t{s[j].out_rows()} * row_bytes[j];
    peak = std::max(peak, held);
  }
  return peak;
}

double RecomputedCost(const std::vector<std::vector<StripeRows>>& stripes, const std::vector<int>& out_h,
                      const std::vector<double>& row_cost) {
  double extra = 0;
  for (size_t j = 0; j < out_h.size(); ++j) {
    int64_t rows = 0;
    for (const auto& s : stripes) rows += s[j].out_rows();
    extra += static_cast<double>(rows - out_h[j]) * row_cost[j];
  }
  return extra;
}

}  // namespace edgec::npu
