// Row stripes of a cascade: a chain of windowed layers (convolutions, depthwise convolutions,
// pools; NHWC, batch 1) whose inner tensors do not fit the SRAM runs stripe by stripe. Stripe
// s of the last layer is a band of its output rows; walking the chain backwards, each layer's
// stripe computes the rows the next one's window reads (the halo: kernel rows beyond the
// stride, clamped to the image), so a stripe's inner tensors are bands of a few rows that stay
// on chip from producer to consumer. Neighbouring stripes recompute the halo rows they share:
// the DMAs address plain row bands (no ring buffer), and every stripe is a layer of its own
// lowered like the whole one with its own image height and padding, which is what keeps the
// numbers bit for bit (the padding is filled on load exactly where the image ends).
// Guarded by tests/npu/cascade_test.cc (halos at stride 1/2, kernel 3/5/7).
#pragma once

#include <cstdint>
#include <vector>

namespace edgec::npu {

// A layer's geometry along H: the window is `kernel_h` rows (dilation included).
struct WindowRows {
  int in_h = 1, out_h = 1, kernel_h = 1, stride_h = 1, pad_top = 0;
};

// One layer's part of a stripe: output rows [out0, out1) read input rows [in0, in1) of the
// image, with pad_top / pad_bottom rows of padding beyond it.
struct StripeRows {
  int out0 = 0, out1 = 0, in0 = 0, in1 = 0, pad_top = 0, pad_bottom = 0;
  int out_rows() const { return out1 - out0; }
  int in_rows() const { return in1 - in0; }
};

// The input rows output rows [out0, out1) of `w` read.
StripeRows RowsFor(const WindowRows& w, int out0, int out1);

// A layer of a cascade: its rows (an elementwise layer: a 1-row window at stride 1) and the
// cascade layers whose outputs it reads (indices before its own; its other inputs come from
// outside the cascade). The last layer's output is the cascade's output; every other
// layer's output is read by a later layer.
struct CascadeLayer {
  WindowRows rows;
  std::vector<int> reads;
};

// Stripes of a cascade: stripe s has `height` rows of the last layer's output (the last
// stripe the rest); result[s][j] = layer j's rows: its output rows are the hull of the rows
// its readers' windows need, its input rows (all its inputs alike) what its window reads.
std::vector<std::vector<StripeRows>> CascadeStripes(const std::vector<CascadeLayer>& layers, int height);
// A chain: layer j reads layer j - 1.
std::vector<std::vector<StripeRows>> CascadeStripes(const std::vector<WindowRows>& chain, int height);

// Bytes of the inner bands of a stripe (every layer's output but the last), the widest
// stripe's; `row_bytes[j]` = bytes per row of layer j's output.
int64_t StripePeakBytes(const std::vector<std::vector<StripeRows>>& stripes, const std::vector<int64_t>& row_bytes);

// Output rows that the stripes compute beyond the unstriped layers (the recomputed halo),
// summed over the chain weighted by `row_cost[j]` (e.g. MACs per output row of layer j).
double RecomputedCost(const std::vector<std::vector<StripeRows>>& stripes, const std::vector<int>& out_h,
                      const std::vector<double>& row_cost);

}  // namespace edgec::npu
