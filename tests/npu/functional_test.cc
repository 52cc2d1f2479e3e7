// NPU functional model vs the reference kernels, bit for bit: seeded random int8 conv and
// matmul layers, lowered with the tiler's choice and with other legal tilings (single and
// double buffering, each operand resident, several core counts), on every target in
// targets/. The reference is the reference ConvInteger kernel (int32) followed by the
// integer requantization of src/quant/fixed_point.h.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "../kernels/conv_test_util.h"
#include "npu/lower.h"
#include "npu/sim.h"
#include "npu/tiler.h"

namespace edgec::npu {
namespace {

using testing_conv::Attrs;
using testing_conv::Ints;

// The built-in target and targets/*.json, as `edgec targets` lists them (npu::ListTargets).
std::vector<Target> AllTargets() {
  auto t = ListTargets();
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t.ok() ? t->size() : 0u, 3u) << "targets/*.json not found from the test's working directory";
  return t.ok() ? *t : std::vector<Target>{DefaultTarget()};
}

struct Case {
  ConvLayer layer;
  std::vector<int8_t> x;  // NHWC
};

Case RandomConv(std::mt19937& rng, bool matmul) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ConvLayer l;
  if (matmul) {
    l = ConvLayer::MatMul("mm", U(1, 150), U(1, 300), U(1, 90));
  } else {
    l.name = "conv";
    l.batch = U(1, 2);
    l.in_h = U(1, 14);
    l.in_w = U(1, 14);
    l.channels = U(1, 40);
    l.out_channels = U(1, 70);
    l.kernel_h = U(1, 3);
    l.kernel_w = U(1, 3);
    l.stride_h = U(1, 2);
    l.stride_w = U(1, 2);
    l.dilation_h = U(1, 2);
    l.dilation_w = U(1, 1);
    l.pad_top = U(0, 1);
    l.pad_left = U(0, 1);
    l.pad_bottom = U(0, 1);
    l.pad_right = U(0, 1);
    if (l.out_h() < 1 || l.out_w() < 1) {
      l.kernel_h = l.kernel_w = 1;
      l.dilation_h = 1;
    }
  }
  l.x_zero_point = U(-20, 20);
  l.y_zero_point = U(-10, 10);
  if (U(0, 1)) l.act_min = l.y_zero_point;  // fused ReLU
  l.weights.resize(l.k() * l.n());
  for (auto& w : l.weights) w = static_cast<int8_t>(U(-127, 127));
  l.bias.resize(l.n());
  for (auto& b : l.bias) b = U(-3000, 3000);
  const bool per_channel = U(0, 1);
  for (int i = 0; i < (per_channel ? l.out_channels : 1); ++i) {
    const double real = std::uniform_real_distribution<double>(1e-4, 2e-2)(rng);
    auto m = quant::QuantizeMultiplier(real / std::sqrt(static_cast<double>(l.k())));
    EXPECT_TRUE(m.ok());
    l.requant.push_back(*m);
  }
  Case c{l, {}};
  c.x.resize(int64_t{l.batch} * l.in_h * l.in_w * l.channels);
  for (auto& v : c.x) v = static_cast<int8_t>(U(-128, 127));
  return c;
}

// Reference: ConvInteger (NCHW/OIHW) + bias + fixed-point requantization, output NHWC.
std::vector<int8_t> Reference(const Case& c) {
  const ConvLayer& l = c.layer;
  const int C = l.channels, N = l.out_channels, H = l.in_h, W = l.in_w;
  std::vector<int8_t> x_nchw(c.x.size()), w_oihw(l.weights.size());
  for (int b = 0; b < l.batch; ++b)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int ch = 0; ch < C; ++ch)
          x_nchw[((int64_t{b} * C + ch) * H + y) * W + x] = c.x[((int64_t{b} * H + y) * W + x) * C + ch];
  for (int kh = 0; kh < l.kernel_h; ++kh)
    for (int kw = 0; kw < l.kernel_w; ++kw)
      for (int ch = 0; ch < C; ++ch)
        for (int oc = 0; oc < N; ++oc)
          w_oihw[((int64_t{oc} * C + ch) * l.kernel_h + kh) * l.kernel_w + kw] =
              l.weights[((int64_t{kh} * l.kernel_w + kw) * C + ch) * N + oc];
  const Tensor x = testing_conv::I8({l.batch, C, H, W}, x_nchw);
  const Tensor w = testing_conv::I8({N, C, l.kernel_h, l.kernel_w}, w_oihw);
  const Tensor y = testing_conv::Run1(
      OpKind::kConvInteger, {x, w, testing_conv::I8({}, {static_cast<int8_t>(l.x_zero_point)})},
      Attrs({{"pads", Ints{l.pad_top, l.pad_left, l.pad_bottom, l.pad_right}},
             {"strides", Ints{l.stride_h, l.stride_w}},
             {"dilations", Ints{l.dilation_h, l.dilation_w}}}));
  const int OH = l.out_h(), OW = l.out_w();
  EXPECT_EQ(y.numel(), l.m() * N);
  std::vector<int8_t> out(l.m() * N);
  const int32_t* acc = y.data<int32_t>();
  for (int b = 0; b < l.batch; ++b)
    for (int oc = 0; oc < N; ++oc)
      for (int i = 0; i < OH * OW; ++i) {
        const auto& rq = l.requant.size() == 1 ? l.requant[0] : l.requant[oc];
        const int32_t a = acc[(int64_t{b} * N + oc) * OH * OW + i] + l.bias[oc];
        out[(int64_t{b} * OH * OW + i) * N + oc] =
            static_cast<int8_t>(quant::Requantize(a, rq, l.y_zero_point, l.act_min, l.act_max));
      }
  return out;
}

// Runs the layer on the NPU functional model; returns the NHWC output.
StatusOr<std::vector<int8_t>> RunNpu(const Case& c, const Target& t, const Tiling& tl) {
  LayerImage img;
  ASSIGN_OR_RETURN(Program p, LowerConv(c.layer, t, tl, &img));
  std::vector<uint8_t> dram(p.dram_bytes, 0xAB);
  std::copy(c.x.begin(), c.x.end(), reinterpret_cast<int8_t*>(dram.data() + img.input_addr));
  SimOptions opt;
  opt.functional = true;
  opt.dram = &dram;
  // The binary form is what runs: encode and decode first.
  ASSIGN_OR_RETURN(Program decoded, DecodeProgram(EncodeProgram(p)));
  ASSIGN_OR_RETURN(SimResult r, Simulate(decoded, t, opt));
  EXPECT_GT(r.total.cycles, 0);
  std::vector<int8_t> out(img.output_bytes);
  std::copy(dram.begin() + img.output_addr, dram.begin() + img.output_addr + img.output_bytes,
            reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

void CheckCase(const Case& c, const Target& t, const Tiling& tl, const std::string& what) {
  auto got = RunNpu(c, t, tl);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  const std::vector<int8_t> want = Reference(c);
  ASSERT_EQ(got->size(), want.size());
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < want.size(); ++i)
    if ((*got)[i] != want[i] && bad++ == 0) first = static_cast<int64_t>(i);
  EXPECT_EQ(bad, 0) << what << " on " << t.name << " tiling " << tl.ToString() << ": " << bad << " of "
                    << want.size() << " differ, first at " << first << " (npu " << int((*got)[first])
                    << " ref " << int(want[first]) << ")";
}

std::string Describe(const ConvLayer& l) {
  return fmt::format("{} n{} {}x{}x{} -> {} k{}x{} s{}x{} d{} pads {},{},{},{}", l.name, l.batch, l.in_h,
                     l.in_w, l.channels, l.out_channels, l.kernel_h, l.kernel_w, l.stride_h, l.stride_w,
                     l.dilation_h, l.pad_top, l.pad_left, l.pad_bottom, l.pad_right);
}

TEST(NpuFunctionalTest, RandomLayersMatchReferenceBitForBit) {
  std::mt19937 rng(20261202);
  const std::vector<Target> targets = AllTargets();
  int checked = 0;
  for (int i = 0; i < 24; ++i) {
    const Case c = RandomConv(rng, i % 3 == 2);
    for (const Target& t : targets) {
      TilerOptions opt;
      opt.allow_single = true;
      auto choice = ChooseTiling(c.layer, t, opt);
      ASSERT_TRUE(choice.ok()) << choice.status().ToString();
      CheckCase(c, t, choice->best.tiling, Describe(c.layer) + " (tiler's choice)");
      ++checked;
      // A few other legal tilings, picked at random, including single buffering and each
      // residency.
      std::vector<Tiling> cands = TilingCandidates(c.layer, t, opt);
      for (int j = 0; j < 3 && !cands.empty(); ++j) {
        const Tiling& tl = cands[rng() % cands.size()];
        CheckCase(c, t, tl, Describe(c.layer));
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 24 * 3 * 4);
}

TEST(NpuFunctionalTest, EveryResidencyAndBuffering) {
  std::mt19937 rng(7);
  Case c = RandomConv(rng, false);
  c.layer.batch = 1;
  c.layer.in_h = c.layer.in_w = 9;
  c.layer.channels = 20;
  c.layer.out_channels = 40;
  c.layer.kernel_h = c.layer.kernel_w = 3;
  c.layer.stride_h = c.layer.stride_w = 1;
  c.layer.dilation_h = c.layer.dilation_w = 1;
  c.layer.pad_top = c.layer.pad_left = c.layer.pad_bottom = c.layer.pad_right = 1;
  c.layer.weights.resize(c.layer.k() * c.layer.n());
  c.layer.bias.resize(c.layer.n());
  c.layer.requant.resize(1);
  c.x.resize(9 * 9 * 20);
  for (auto& v : c.x) v = static_cast<int8_t>(rng() % 256 - 128);
  for (auto& w : c.layer.weights) w = static_cast<int8_t>(rng() % 255 - 127);
  for (Resident r : {Resident::kWeights, Resident::kInput, Resident::kNone})
    for (bool db : {false, true})
      for (int g : {1, 3})
        for (int cores : {1, 3}) {
          Tiling tl{2, 9, 20, g, 16, r, db, cores};
          CheckCase(c, DefaultTarget(), tl, Describe(c.layer));
        }
  // Teams sharing their operands through the SRAM (some cores without a tile in the last
  // blocks): 2x2 and 1x3, 3x1 teams, 4x4 of 16 cores.
  for (auto [tm, tn, cores] : {std::tuple{2, 2, 4}, {1, 3, 3}, {3, 1, 6}, {4, 4, 16}})
    for (Resident r : {Resident::kWeights, Resident::kInput, Resident::kNone})
      for (bool db : {false, true})
        for (int g : {1, 3}) {
          Tiling tl{2, 9, 20, g, 16, r, db, cores};
          tl.team_m = tm;
          tl.team_n = tn;
          CheckCase(c, DefaultTarget(), tl, Describe(c.layer) + " teams");
        }
  {
    Tiling tl{1, 4, 8, 1, 16, Resident::kNone, true, 8};  // one-row tiles, channel-split K steps
    tl.team_m = 4;
    tl.team_n = 2;
    CheckCase(c, DefaultTarget(), tl, Describe(c.layer) + " teams, narrow tiles");
  }
  // Band mode: whole channels (contiguous rows, fill-only left padding) and channel chunks.
  for (int tc : {20, 8})
    for (bool db : {false, true})
      for (int th : {1, 4, 9}) {
        Tiling tl{th, 9, tc, 1, 16, Resident::kWeights, db, 2};
        tl.band = true;
        CheckCase(c, DefaultTarget(), tl, Describe(c.layer) + " band");
        if (tc != c.layer.channels) continue;
        tl.im2col = true;  // the band laid out as im2col rows on chip, one MATMUL of the whole K
        CheckCase(c, DefaultTarget(), tl, Describe(c.layer) + " band im2col");
      }
  {
    Tiling tl{4, 9, 20, 1, 16, Resident::kWeights, true, 2};
    tl.band = tl.im2col = true;
    auto two = ApplyOverride(DefaultTarget(), "dma.max_dims=2");
    ASSERT_TRUE(two.ok());
    CheckCase(c, *two, tl, Describe(c.layer) + " band im2col, max_dims=2");
    Case d = c;  // stride 2, dilation 2: one gather per kernel column
    d.layer.stride_h = d.layer.stride_w = 2;
    d.layer.dilation_h = d.layer.dilation_w = 2;
    d.layer.pad_top = d.layer.pad_left = d.layer.pad_bottom = d.layer.pad_right = 2;
    tl.tile_w = d.layer.out_w();
    CheckCase(d, DefaultTarget(), tl, Describe(d.layer) + " band im2col");
  }
  // Channel-split K steps and a DMA limited to one strided dim (rows issued separately).
  auto two_dims = ApplyOverride(DefaultTarget(), "dma.max_dims=2");
  ASSERT_TRUE(two_dims.ok());
  CheckCase(c, *two_dims, Tiling{3, 9, 8, 1, 32, Resident::kWeights, true, 2}, "max_dims=2");
  CheckCase(c, DefaultTarget(), Tiling{1, 4, 8, 1, 8, Resident::kNone, true, 16}, "narrow tiles");
  // A thin output (4 channels, all in the tile): each tile (whole-width rows, or part of one
  // row) is stored as one DMA row.
  Case thin = c;
  thin.layer.out_channels = 4;
  thin.layer.weights.resize(thin.layer.k() * thin.layer.n());
  thin.layer.bias.assign(thin.layer.n(), 5);
  for (const Tiling& tl : {Tiling{3, 9, 20, 1, 32, Resident::kWeights, true, 2},
                           Tiling{2, 9, 20, 1, 32, Resident::kNone, false, 3},
                           Tiling{1, 5, 20, 1, 32, Resident::kInput, true, 4}})
    CheckCase(thin, DefaultTarget(), tl, Describe(thin.layer) + " thin output");
}

TEST(NpuFunctionalTest, MissingTokenComputesWrongNumbers) {
  // Drop the WAIT that makes a core's execute queue wait for its data: the simulator runs the
  // MATMUL before the load has landed, so the output must differ from the reference. Alone,
  // the core waits for its own load; in a team of two, core 1 waits for the weights core 0
  // loads for both.
  std::mt19937 rng(3);
  Case c = RandomConv(rng, true);
  c.layer = ConvLayer::MatMul("mm", 64, 64, 64);
  c.layer.weights.assign(64 * 64, 3);
  c.layer.bias.assign(64, 100);
  c.layer.requant = {*quant::QuantizeMultiplier(0.01)};
  c.x.assign(64 * 64, 5);
  Tiling team{64, 1, 64, 1, 32, Resident::kNone, true, 2};
  team.team_n = 2;
  for (auto [tl, core] : {std::pair{Tiling{64, 1, 64, 1, 32, Resident::kWeights, true, 1}, 0}, {team, 1}}) {
    for (bool drop : {false, true}) {
      LayerImage img;
      auto p = LowerConv(c.layer, DefaultTarget(), tl, &img);
      ASSERT_TRUE(p.ok());
      if (drop) {  // the core's execute-queue WAIT right before its first MATMUL (the stream slot is full)
        size_t first_mm = 0;
        while (p->instrs[first_mm].op != Opcode::kMatMul || p->instrs[first_mm].core != core) ++first_mm;
        size_t wait = first_mm - 1;
        ASSERT_EQ(p->instrs[wait].op, Opcode::kWait);
        ASSERT_EQ(p->instrs[wait].queue, QueueKind::kExecute);
        p->instrs.erase(p->instrs.begin() + wait);
      }
      std::vector<uint8_t> dram(p->dram_bytes, 0);
      std::copy(c.x.begin(), c.x.end(), reinterpret_cast<int8_t*>(dram.data() + img.input_addr));
      SimOptions opt;
      opt.functional = true;
      opt.dram = &dram;
      auto r = Simulate(*p, DefaultTarget(), opt);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const std::vector<int8_t> want = Reference(c);
      EXPECT_EQ(std::equal(want.begin(), want.end(), reinterpret_cast<int8_t*>(dram.data() + img.output_addr)), !drop)
          << tl.ToString() << (drop ? " without" : " with") << " the WAIT";
    }
  }
}

TEST(NpuFunctionalTest, EltwiseAddAndRelu) {
  std::mt19937 rng(11);
  const int64_t n = 5000;
  std::vector<int8_t> a(n), b(n);
  for (auto& v : a) v = static_cast<int8_t>(rng() % 256 - 128);
  for (auto& v : b) v = static_cast<int8_t>(rng() % 256 - 128);
  const auto params = *quant::MakeQuantizedAdd(0.02, 3, 0.015, -5, 0.03, 2, -128, 127);
  const EltwiseLayer add = EltwiseLayer::Add("add", n, params);
  EltwiseLayer relu{"relu", VecOp::kRelu, n, {-7}};
  for (const EltwiseLayer& l : {add, relu}) {
    for (bool db : {false, true}) {
      int64_t pa, pb, py;
      auto p = LowerEltwise(l, DefaultTarget(), 300, db, &pa, &pb, &py);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      std::vector<uint8_t> dram(p->dram_bytes, 0);
      std::copy(a.begin(), a.end(), reinterpret_cast<int8_t*>(dram.data() + pa));
      if (l.op == VecOp::kAdd) std::copy(b.begin(), b.end(), reinterpret_cast<int8_t*>(dram.data() + pb));
      SimOptions opt;
      opt.functional = true;
      opt.dram = &dram;
      auto r = Simulate(*p, DefaultTarget(), opt);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      for (int64_t i = 0; i < n; ++i) {
        int32_t want;
        if (l.op == VecOp::kRelu) {
          want = std::max<int32_t>(a[i], -7);
        } else {
          // The arithmetic written out (TFLite's scheme, see quant/fixed_point.h).
          const int32_t s = quant::MultiplyByQuantizedMultiplier((a[i] - 3) * (1 << 20), params.a) +
                            quant::MultiplyByQuantizedMultiplier((b[i] + 5) * (1 << 20), params.b);
          want = std::clamp(2 + quant::MultiplyByQuantizedMultiplier(s, params.y), -128, 127);
          ASSERT_EQ(want, quant::QuantizedAdd(a[i], b[i], params));
        }
        ASSERT_EQ(static_cast<int8_t>(dram[py + i]), want) << l.name << " element " << i;
      }
    }
  }
}

TEST(NpuFunctionalTest, OutOfBoundsAccessIsAnError) {
  ConvLayer l = ConvLayer::MatMul("mm", 4, 4, 4);
  l.weights.assign(16, 1);
  l.requant = {*quant::QuantizeMultiplier(0.5)};
  auto p = LowerConv(l, DefaultTarget(), Tiling{4, 1, 4, 1, 4, Resident::kWeights, false, 1}, nullptr);
  ASSERT_TRUE(p.ok());
  for (Instr& in : p->instrs)
    if (in.op == Opcode::kMatMul) in.a_addr = DefaultTarget().shared_sram.bytes - 2;
  std::vector<uint8_t> dram(p->dram_bytes, 0);
  SimOptions opt;
  opt.functional = true;
  opt.dram = &dram;
  auto r = Simulate(*p, DefaultTarget(), opt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("MATMUL a row"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace edgec::npu

namespace edgec::npu {
namespace {

// Max and average pooling on the vector cores vs a plain int8 reference (padding: -128 for
// max; the zero point for average, i.e. count_include_pad = 1, with the same integer
// requantization).
TEST(NpuFunctionalTest, PoolsMatchReference) {
  std::mt19937 rng(17);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 30; ++i) {
    PoolLayer l;
    l.max = i % 2 == 0;
    l.batch = U(1, 2);
    l.in_h = U(2, 13);
    l.in_w = U(2, 13);
    l.channels = U(1, 70);
    l.kernel_h = U(1, 3);
    l.kernel_w = U(1, 3);
    l.stride_h = U(1, 2);
    l.stride_w = U(1, 2);
    l.pad_top = U(0, l.kernel_h - 1);
    l.pad_left = U(0, l.kernel_w - 1);
    l.pad_bottom = U(0, l.kernel_h - 1);
    l.pad_right = U(0, l.kernel_w - 1);
    l.x_zero_point = U(-10, 10);
    l.y_zero_point = U(-10, 10);
    l.mult = *quant::QuantizeMultiplier(0.9 / (l.kernel_h * l.kernel_w));
    if (l.out_h() < 1 || l.out_w() < 1) continue;
    std::vector<int8_t> x(int64_t{l.batch} * l.in_h * l.in_w * l.channels);
    for (auto& v : x) v = static_cast<int8_t>(U(-128, 127));
    const int OH = l.out_h(), OW = l.out_w(), C = l.channels;
    std::vector<int8_t> want(int64_t{l.batch} * OH * OW * C);
    for (int b = 0; b < l.batch; ++b)
      for (int oy = 0; oy < OH; ++oy)
        for (int ox = 0; ox < OW; ++ox)
          for (int c = 0; c < C; ++c) {
            int32_t best = -128, sum = 0;
            for (int ky = 0; ky < l.kernel_h; ++ky)
              for (int kx = 0; kx < l.kernel_w; ++kx) {
                const int iy = oy * l.stride_h + ky - l.pad_top, ix = ox * l.stride_w + kx - l.pad_left;
                const bool in = iy >= 0 && iy < l.in_h && ix >= 0 && ix < l.in_w;
                const int32_t v = in ? x[((int64_t{b} * l.in_h + iy) * l.in_w + ix) * C + c] : (l.max ? -128 : l.x_zero_point);
                best = std::max(best, v);
                sum += v - l.x_zero_point;
              }
            want[((int64_t{b} * OH + oy) * OW + ox) * C + c] = static_cast<int8_t>(
                l.max ? best : quant::Requantize(sum, l.mult, l.y_zero_point, l.act_min, l.act_max));
          }
    for (const Target& t : AllTargets()) {
      for (auto [rows, ch, db] : {std::tuple{1, 16, true}, std::tuple{3, 64, false}, std::tuple{100, 100, true}}) {
        LayerImage img;
        auto p = LowerPool(l, t, rows, ch, db, &img);
        if (!p.ok()) {
          EXPECT_NE(p.status().message().find("needs"), std::string::npos) << p.status().message();
          continue;  // does not fit this target's SRAM
        }
        std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
        std::copy(x.begin(), x.end(), reinterpret_cast<int8_t*>(dram.data() + img.input_addr));
        SimOptions opt;
        opt.functional = true;
        opt.dram = &dram;
        auto r = Simulate(*p, t, opt);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        ASSERT_TRUE(std::equal(want.begin(), want.end(), reinterpret_cast<int8_t*>(dram.data() + img.output_addr)))
            << (l.max ? "max" : "avg") << " pool " << l.in_h << "x" << l.in_w << "x" << C << " k" << l.kernel_h << "x"
            << l.kernel_w << " s" << l.stride_h << "x" << l.stride_w << " on " << t.name << " tile " << rows << "x" << ch;
      }
    }
  }
}

TEST(NpuFunctionalTest, DepthwiseMatchesReference) {
  // Random depthwise layers (kernels 1..5, strides 1..2, padding, per-channel multipliers,
  // clamps), written out as the integer formula, against the vector cores' VEC dwconv on
  // every target, with single and double buffering and several tiles.
  std::mt19937 rng(23);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int i = 0; i < 24; ++i) {
    DepthwiseLayer l;
    l.batch = U(1, 2);
    l.in_h = U(3, 14);
    l.in_w = U(3, 14);
    l.channels = U(1, 80);
    l.kernel_h = U(1, 5);
    l.kernel_w = i % 3 == 0 ? l.kernel_h : U(1, 3);
    l.stride_h = U(1, 2);
    l.stride_w = U(1, 2);
    l.pad_top = U(0, l.kernel_h - 1);
    l.pad_left = U(0, l.kernel_w - 1);
    l.pad_bottom = U(0, l.kernel_h - 1);
    l.pad_right = U(0, l.kernel_w - 1);
    l.x_zero_point = U(-20, 20);
    l.y_zero_point = U(-20, 20);
    if (i % 4 == 1) l.act_min = l.y_zero_point;  // a fused ReLU
    if (l.out_h() < 1 || l.out_w() < 1) continue;
    const int C = l.channels, KH = l.kernel_h, KW = l.kernel_w, OH = l.out_h(), OW = l.out_w();
    l.weights.resize(int64_t{KH} * KW * C);
    for (auto& w : l.weights) w = static_cast<int8_t>(U(-127, 127));
    for (int c = 0; c < C; ++c) {
      l.bias.push_back(U(-3000, 3000));
      if (i % 2 == 0 || c == 0) l.requant.push_back(*quant::QuantizeMultiplier(0.002 * U(1, 20)));
    }
    std::vector<int8_t> x(int64_t{l.batch} * l.in_h * l.in_w * C);
    for (auto& v : x) v = static_cast<int8_t>(U(-128, 127));
    std::vector<int8_t> want(int64_t{l.batch} * OH * OW * C);
    for (int b = 0; b < l.batch; ++b)
      for (int oy = 0; oy < OH; ++oy)
        for (int ox = 0; ox < OW; ++ox)
          for (int c = 0; c < C; ++c) {
            int32_t acc = l.bias[c];
            for (int ky = 0; ky < KH; ++ky)
              for (int kx = 0; kx < KW; ++kx) {
                const int iy = oy * l.stride_h + ky - l.pad_top, ix = ox * l.stride_w + kx - l.pad_left;
                if (iy < 0 || iy >= l.in_h || ix < 0 || ix >= l.in_w) continue;  // padding holds the zero point
                acc += (x[((int64_t{b} * l.in_h + iy) * l.in_w + ix) * C + c] - l.x_zero_point) *
                       l.weights[(int64_t{ky} * KW + kx) * C + c];
              }
            const auto& m = l.requant.size() == 1 ? l.requant[0] : l.requant[c];
            want[((int64_t{b} * OH + oy) * OW + ox) * C + c] =
                static_cast<int8_t>(quant::Requantize(acc, m, l.y_zero_point, l.act_min, l.act_max));
          }
    for (const Target& t : AllTargets()) {
      for (auto [rows, ch, db] : {std::tuple{1, 16, true}, std::tuple{3, 32, false}, std::tuple{100, 100, true}}) {
        auto p = LowerDepthwise(l, t, rows, ch, db);
        if (!p.ok()) {
          EXPECT_NE(p.status().message().find("needs"), std::string::npos) << p.status().message();
          continue;  // does not fit this target's SRAM
        }
        const DramRegion* in = nullptr;
        const DramRegion* out = nullptr;
        for (const DramRegion& r : p->regions) {
          if (r.name == l.name + ".input") in = &r;
          if (r.name == l.name + ".output") out = &r;
        }
        ASSERT_TRUE(in && out);
        std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
        std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
        std::copy(x.begin(), x.end(), reinterpret_cast<int8_t*>(dram.data() + in->addr));
        SimOptions opt;
        opt.functional = true;
        opt.dram = &dram;
        auto r = Simulate(*p, t, opt);
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        ASSERT_TRUE(std::equal(want.begin(), want.end(), reinterpret_cast<int8_t*>(dram.data() + out->addr)))
            << "dw " << l.in_h << "x" << l.in_w << "x" << C << " k" << KH << "x" << KW << " s" << l.stride_h << "x"
            << l.stride_w << " on " << t.name << " tile " << rows << "x" << ch << (db ? " double" : " single");
        EXPECT_EQ(r->total.macs, l.macs());
        EXPECT_GE(r->total.cycles, r->total.roofline_cycles(t));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace edgec::npu
