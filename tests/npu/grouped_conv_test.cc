// Grouped convolutions on the MAC array (ConvLayer::group, npu/lower.h) vs the reference
// ConvInteger kernel with the same group attribute plus the integer requantization, bit for
// bit: seeded random shapes (2 and 4 groups, groups of 16 channels, 1x1 and 3x3, stride 2,
// padding) with the tiler's choice and random legal tilings, then every residency, band and
// im2col mode and teams on a fixed layer, and the int16 output.
#include <gtest/gtest.h>

#include <random>

#include "../kernels/conv_test_util.h"
#include "npu/lower.h"
#include "npu/sim.h"
#include "npu/tiler.h"

namespace edgec::npu {
namespace {

using testing_conv::Attrs;
using testing_conv::Ints;

struct Case {
  ConvLayer layer;
  std::vector<int8_t> x;  // NHWC
};

Case MakeCase(std::mt19937& rng, int group, int cin_g, int cout_g, int k, int stride, int pad, int h, int w) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ConvLayer l;
  l.name = "gconv";
  l.group = group;
  l.in_h = h;
  l.in_w = w;
  l.channels = group * cin_g;
  l.out_channels = group * cout_g;
  l.kernel_h = l.kernel_w = k;
  l.stride_h = l.stride_w = stride;
  l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = pad;
  l.x_zero_point = U(-20, 20);
  l.y_zero_point = U(-10, 10);
  if (U(0, 1)) l.act_min = l.y_zero_point;  // fused ReLU
  l.weights.resize(l.k() * l.n());
  for (auto& v : l.weights) v = static_cast<int8_t>(U(-127, 127));
  l.bias.resize(l.n());
  for (auto& b : l.bias) b = U(-3000, 3000);
  const int multipliers = U(0, 1) ? l.out_channels : 1;  // per channel or one
  for (int i = 0; i < multipliers; ++i) {
    auto m = quant::QuantizeMultiplier(std::uniform_real_distribution<double>(1e-4, 2e-2)(rng) /
                                       std::sqrt(static_cast<double>(l.k())));
    EXPECT_TRUE(m.ok());
    l.requant.push_back(*m);
  }
  Case c{l, std::vector<int8_t>(int64_t{l.batch} * h * w * l.channels)};
  for (auto& v : c.x) v = static_cast<int8_t>(U(-128, 127));
  return c;
}

// ConvInteger with the group attribute (NCHW, OIHW with I = C / group) + bias + requantize,
// as NHWC values of the output's width (ConvLayer::out_elem_bytes).
std::vector<int32_t> Reference(const Case& c) {
  const ConvLayer& l = c.layer;
  const int C = l.channels, CG = l.group_in(), N = l.out_channels, H = l.in_h, W = l.in_w;
  std::vector<int8_t> x_nchw(c.x.size()), w_oihw(l.weights.size());
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int ch = 0; ch < C; ++ch) x_nchw[(int64_t{ch} * H + y) * W + x] = c.x[(int64_t{y} * W + x) * C + ch];
  for (int kh = 0; kh < l.kernel_h; ++kh)
    for (int kw = 0; kw < l.kernel_w; ++kw)
      for (int ch = 0; ch < CG; ++ch)
        for (int oc = 0; oc < N; ++oc)
          w_oihw[((int64_t{oc} * CG + ch) * l.kernel_h + kh) * l.kernel_w + kw] =
              l.weights[((int64_t{kh} * l.kernel_w + kw) * CG + ch) * N + oc];
  const Tensor y = testing_conv::Run1(
      OpKind::kConvInteger,
      {testing_conv::I8({1, C, H, W}, x_nchw), testing_conv::I8({N, CG, l.kernel_h, l.kernel_w}, w_oihw),
       testing_conv::I8({}, {static_cast<int8_t>(l.x_zero_point)})},
      Attrs({{"pads", Ints{l.pad_top, l.pad_left, l.pad_bottom, l.pad_right}},
             {"strides", Ints{l.stride_h, l.stride_w}},
             {"group", int64_t{l.group}}}));
  const int64_t P = int64_t{l.out_h()} * l.out_w();
  EXPECT_EQ(y.numel(), P * N);
  std::vector<int32_t> out(P * N);
  for (int oc = 0; oc < N; ++oc)
    for (int64_t i = 0; i < P; ++i) {
      const auto& rq = l.requant.size() == 1 ? l.requant[0] : l.requant[oc];
      out[i * N + oc] = quant::Requantize(y.data<int32_t>()[oc * P + i] + l.bias[oc], rq, l.y_zero_point,
                                          l.act_min, l.act_max);
    }
  return out;
}

void CheckCase(const Case& c, const Target& t, const Tiling& tl, const std::string& what) {
  LayerImage img;
  auto p = LowerConv(c.layer, t, tl, &img);
  ASSERT_TRUE(p.ok()) << what << " " << tl.ToString() << ": " << p.status().ToString();
  std::vector<uint8_t> dram(p->dram_bytes, 0xAB);
  std::copy(c.x.begin(), c.x.end(), reinterpret_cast<int8_t*>(dram.data() + img.input_addr));
  SimOptions opt;
  opt.functional = true;
  opt.dram = &dram;
  auto decoded = DecodeProgram(EncodeProgram(*p));  // the binary form is what runs
  ASSERT_TRUE(decoded.ok());
  auto r = Simulate(*decoded, t, opt);
  ASSERT_TRUE(r.ok()) << what << " " << tl.ToString() << ": " << r.status().ToString();
  const std::vector<int32_t> want = Reference(c);
  const int ys = c.layer.out_elem_bytes();
  ASSERT_EQ(img.output_bytes, static_cast<int64_t>(want.size()) * ys);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    const uint8_t* at = dram.data() + img.output_addr + i * ys;
    const int32_t got = ys == 2 ? int32_t{static_cast<int16_t>(at[0] | at[1] << 8)} : int32_t{static_cast<int8_t>(*at)};
    if (got != want[i] && bad++ == 0) first = static_cast<int64_t>(i);
  }
  EXPECT_EQ(bad, 0) << what << " on " << t.name << " tiling " << tl.ToString() << ": " << bad << " of "
                    << want.size() << " differ, first at " << first;
}

std::string Describe(const ConvLayer& l) {
  return fmt::format("{}x{}x{} -> {} group {} k{} s{} p{}", l.in_h, l.in_w, l.channels, l.out_channels, l.group,
                     l.kernel_h, l.stride_h, l.pad_top);
}

TEST(NpuGroupedConvTest, RandomShapesMatchReferenceBitForBit) {
  std::mt19937 rng(20261207);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const Target t = DefaultTarget();
  int checked = 0;
  for (int i = 0; i < 12; ++i) {
    // 2 groups, 4 groups, groups of 16 channels (RegNet's width) in turn.
    const int kind = i % 3, cin_g = kind == 2 ? 16 : U(3, 24), cout_g = kind == 2 ? 16 : U(2, 40);
    const int group = kind == 0 ? 2 : kind == 1 ? 4 : U(2, 6);
    const int k = i % 2 ? 3 : 1, stride = U(1, 2), pad = k == 3 ? U(0, 1) : 0;
    const Case c = MakeCase(rng, group, cin_g, cout_g, k, stride, pad, U(3, 14), U(3, 14));
    TilerOptions opt;
    opt.allow_single = true;
    auto choice = ChooseTiling(c.layer, t, opt);
    ASSERT_TRUE(choice.ok()) << choice.status().ToString();
    CheckCase(c, t, choice->best.tiling, Describe(c.layer) + " (tiler's choice)");
    std::vector<Tiling> cands = TilingCandidates(c.layer, t, opt);
    ASSERT_FALSE(cands.empty());
    for (int j = 0; j < 4; ++j) CheckCase(c, t, cands[rng() % cands.size()], Describe(c.layer));
    checked += 5;
  }
  EXPECT_EQ(checked, 60);
}

TEST(NpuGroupedConvTest, EveryResidencyBandAndTeam) {
  std::mt19937 rng(5);
  // 4 groups of 16 -> 16 channels, 3x3, padding 1: K = 144 per group.
  const Case c = MakeCase(rng, 4, 16, 16, 3, 1, 1, 9, 9);
  const Target t = DefaultTarget();
  for (Resident r : {Resident::kWeights, Resident::kInput, Resident::kNone})
    for (bool db : {false, true})
      for (int g : {1, 3})
        for (int tn : {16, 8})  // one N tile per group, two (input-resident items per group)
          for (int cores : {1, 3})
            CheckCase(c, t, Tiling{2, 9, 16, g, tn, r, db, cores}, Describe(c.layer));
  // Channel-split K steps within a group.
  CheckCase(c, t, Tiling{1, 4, 8, 1, 16, Resident::kNone, true, 4}, Describe(c.layer) + " split K");
  // Teams: a block of team_n tiles within a group (8-channel tiles, 2 per group).
  for (auto [tm, tn, cores] : {std::tuple{2, 2, 4}, {4, 1, 8}, {1, 2, 2}})
    for (Resident r : {Resident::kWeights, Resident::kInput, Resident::kNone}) {
      Tiling tl{2, 9, 16, 1, 8, r, true, cores};
      tl.team_m = tm;
      tl.team_n = tn;
      CheckCase(c, t, tl, Describe(c.layer) + " teams");
    }
  // Band mode over the group's channel slice (whole group and chunks), and im2col.
  for (int tc : {16, 8})
    for (int th : {1, 4, 9}) {
      Tiling tl{th, 9, tc, 1, 16, Resident::kWeights, true, 2};
      tl.band = true;
      CheckCase(c, t, tl, Describe(c.layer) + " band");
      if (tc != 16) continue;
      tl.im2col = true;
      CheckCase(c, t, tl, Describe(c.layer) + " band im2col");
    }
  // Stride 2 in band mode.
  Case s = MakeCase(rng, 2, 8, 32, 3, 2, 1, 11, 11);
  Tiling tl{3, s.layer.out_w(), 8, 1, 32, Resident::kWeights, true, 2};
  tl.band = true;
  CheckCase(s, t, tl, Describe(s.layer) + " band stride 2");
  tl.im2col = true;
  CheckCase(s, t, tl, Describe(s.layer) + " band im2col stride 2");
}

TEST(NpuGroupedConvTest, Int16Output) {
  std::mt19937 rng(11);
  Case c = MakeCase(rng, 4, 8, 16, 3, 1, 1, 7, 7);
  c.layer.y_bytes = 2;  // an int16 point: zero point and clamp in int16 terms
  c.layer.y_zero_point = 0;
  c.layer.act_min = -32768;
  c.layer.act_max = 32767;
  for (auto& m : c.layer.requant) m = *quant::QuantizeMultiplier(0.05);
  const Target t = DefaultTarget();
  auto choice = ChooseTiling(c.layer, t, TilerOptions{});
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  CheckCase(c, t, choice->best.tiling, Describe(c.layer) + " int16 (tiler's choice)");
  CheckCase(c, t, Tiling{1, 7, 8, 1, 16, Resident::kInput, true, 2}, Describe(c.layer) + " int16");
}

TEST(NpuGroupedConvTest, RefusesTilesAcrossGroups) {
  std::mt19937 rng(3);
  const Case c = MakeCase(rng, 4, 16, 16, 1, 1, 0, 8, 8);
  const Target t = DefaultTarget();
  // A 32-channel tile would straddle two groups of 16; so would a team of two 16-channel tiles.
  auto wide = CheckTiling(c.layer, t, Tiling{1, 8, 16, 1, 32, Resident::kWeights, true, 1});
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.status().message().find("16 output channels per group"), std::string::npos)
      << wide.status().message();
  Tiling team{1, 8, 16, 1, 16, Resident::kWeights, true, 2};
  team.team_n = 2;
  EXPECT_FALSE(CheckTiling(c.layer, t, team).ok());
  EXPECT_TRUE(CheckTiling(c.layer, t, Tiling{1, 8, 16, 1, 16, Resident::kWeights, true, 1}).ok());
  for (const Tiling& tl : TilingCandidates(c.layer, t, TilerOptions{}))
    EXPECT_EQ(16 % (tl.tile_n * tl.team_n), 0) << tl.ToString();
  // A group count that does not divide the channels is an error naming the value.
  ConvLayer bad = c.layer;
  bad.group = 3;
  auto r = ChooseTiling(bad, t, TilerOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("group 3"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace edgec::npu
