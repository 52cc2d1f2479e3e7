// Row stripes of a cascade: every stripe of every layer reads exactly the input rows its
// output rows' windows touch (the halo), with padding counted where the window leaves the
// image; consecutive layers agree (a layer's input band is the previous one's output band);
// the last layer's stripes tile its output. Checked against a brute-force walk of the
// windows for kernels 3, 5, 7 at strides 1 and 2, with and without padding.
#include <gtest/gtest.h>

#include <algorithm>

#include "npu/cascade.h"

namespace edgec::npu {
namespace {

WindowRows Window(int in_h, int k, int s, int pad_top, int pad_bottom) {
  return {in_h, (in_h + pad_top + pad_bottom - k) / s + 1, k, s, pad_top};
}

// The rows output rows [a, b) read, by walking every window row.
void BruteRows(const WindowRows& w, int a, int b, int& in0, int& in1, int& above, int& below) {
  in0 = w.in_h, in1 = 0, above = 0, below = 0;
  int lo = 1 << 30, hi = -(1 << 30);
  for (int o = a; o < b; ++o)
    for (int k = 0; k < w.kernel_h; ++k) {
      const int r = o * w.stride_h - w.pad_top + k;
      lo = std::min(lo, r);
      hi = std::max(hi, r + 1);
      if (r >= 0 && r < w.in_h) in0 = std::min(in0, r), in1 = std::max(in1, r + 1);
    }
  above = std::max(0, -lo);
  below = std::max(0, hi - w.in_h);
}

TEST(CascadeStripesTest, HalosMatchTheWindowsAtStrideOneAndTwo) {
  for (int k : {3, 5, 7})
    for (int s : {1, 2})
      for (int pad : {0, k / 2}) {
        const WindowRows w = Window(37, k, s, pad, pad);
        for (int a = 0; a < w.out_h; ++a)
          for (int b = a + 1; b <= w.out_h; b += 3) {
            const StripeRows r = RowsFor(w, a, b);
            int in0, in1, above, below;
            BruteRows(w, a, b, in0, in1, above, below);
            const std::string at = "k" + std::to_string(k) + " s" + std::to_string(s) + " pad" + std::to_string(pad) +
                                   " rows " + std::to_string(a) + ".." + std::to_string(b);
            EXPECT_EQ(r.in0, in0) << at;
            EXPECT_EQ(r.in1, in1) << at;
            EXPECT_EQ(r.pad_top, above) << at;
            EXPECT_EQ(r.pad_bottom, below) << at;
            // The stripe as a layer of its own computes exactly its rows.
            EXPECT_EQ((r.in_rows() + r.pad_top + r.pad_bottom - k) / s + 1, b - a) << at;
          }
      }
}

TEST(CascadeStripesTest, ChainBandsLinkUpAndTileTheOutput) {
  // 3x3 s1 -> 5x5 s2 -> 7x7 s1 -> 3x3 s2 over 64 rows.
  std::vector<WindowRows> chain = {Window(64, 3, 1, 1, 1)};
  for (auto [k, s] : {std::pair{5, 2}, {7, 1}, {3, 2}}) chain.push_back(Window(chain.back().out_h, k, s, k / 2, k / 2));
  for (int height : {1, 2, 5, chain.back().out_h}) {
    auto stripes = CascadeStripes(chain, height);
    int next = 0;
    for (const auto& s : stripes) {
      ASSERT_EQ(s.size(), chain.size());
      EXPECT_EQ(s.back().out0, next);
      next = s.back().out1;
      EXPECT_LE(s.back().out_rows(), height);
      for (size_t j = 1; j < s.size(); ++j) {
        EXPECT_EQ(s[j].in0, s[j - 1].out0) << "layer " << j;
        EXPECT_EQ(s[j].in1, s[j - 1].out1) << "layer " << j;
      }
    }
    EXPECT_EQ(next, chain.back().out_h);
    // One stripe recomputes nothing; thinner stripes recompute their halos.
    const double extra = RecomputedCost(stripes, {chain[0].out_h, chain[1].out_h, chain[2].out_h, chain[3].out_h},
                                        {1, 1, 1, 1});
    if (height == chain.back().out_h) EXPECT_EQ(extra, 0);
    else EXPECT_GT(extra, 0) << height;
  }
}

TEST(CascadeStripesTest, PeakCountsTheInnerBandsOfAStripe) {
  const std::vector<WindowRows> chain = {Window(16, 3, 1, 1, 1), Window(16, 3, 1, 1, 1), Window(16, 1, 1, 0, 0)};
  auto stripes = CascadeStripes(chain, 4);
  ASSERT_EQ(stripes.size(), 4u);
  // A middle stripe: 4 rows of layer 1 and 6 of layer 0 (a halo row each side); the first
  // and last stripes hold 5 of layer 0. The last layer's rows are the output's, not a band.
  EXPECT_EQ(stripes[0][0].out_rows(), 5);
  EXPECT_EQ(stripes[1][0].out_rows(), 6);
  EXPECT_EQ(StripePeakBytes(stripes, {10, 100, 1000}), 6 * 10 + 4 * 100);
}

// A swish between two convs (conv -> lut -> mul(conv, lut) -> conv 3x3): the elementwise
// layers read the same rows as they write; the first conv's band is the hull of what the lut
// and the mul need, and the last conv's halo reaches back through both.
TEST(CascadeStripesTest, BranchesWithinAStripeTakeTheHullOfTheirNeeds) {
  const WindowRows one = Window(20, 1, 1, 0, 0);
  std::vector<CascadeLayer> layers = {{one, {}}, {one, {0}}, {one, {0, 1}}, {Window(20, 3, 2, 1, 1), {2}}};
  auto stripes = CascadeStripes(layers, 3);
  ASSERT_EQ(stripes.size(), 4u);  // 10 output rows in stripes of 3
  for (const auto& s : stripes) {
    EXPECT_EQ(s[2].out0, s[3].in0);
    EXPECT_EQ(s[2].out1, s[3].in1);
    for (int j : {0, 1}) {
      EXPECT_EQ(s[j].out0, s[2].in0) << j;
      EXPECT_EQ(s[j].out1, s[2].in1) << j;
    }
  }
  // Output rows 3..5 at stride 2 with a 3-row window: input rows 5..11.
  EXPECT_EQ(stripes[1][3].in0, 5);
  EXPECT_EQ(stripes[1][3].in1, 12);
}

}  // namespace
}  // namespace edgec::npu
