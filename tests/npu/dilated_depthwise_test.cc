// Dilated depthwise convolutions on the vector cores (lower.h DepthwiseLayer, isa.h
// kWindowDilationImm): the lowered program, run by the functional simulator, against the
// integer formula with window position (ky, kx) reading input pixel
// (oy * stride + ky * dilation - pad, ox * stride + kx * dilation - pad) (and output channel o
// input channel o / multiplier), bit for bit. The
// cases cover dilations 2 and 3 (and unequal ones), strides 1 and 2, padding on every side,
// odd sizes, row tiles of 1..3 rows whose halos ((k - 1) * d + 1 input rows) overlap their
// neighbours', channel tiles, several cores and both bufferings, on every target.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <tuple>

#include "npu/lower.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "quant/fixed_point.h"

namespace edgec::npu {
namespace {

// The built-in target and targets/*.json, as `edgec targets` lists them (npu::ListTargets).
std::vector<Target> AllTargets() {
  auto t = ListTargets();
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t.ok() ? t->size() : 0u, 3u) << "targets/*.json not found from the test's working directory";
  return t.ok() ? *t : std::vector<Target>{DefaultTarget()};
}

// The integer formula of a depthwise convolution, NHWC; padding holds the input zero point.
// With a multiplier m, output channel o reads input channel o / m.
std::vector<int8_t> Reference(const DepthwiseLayer& l, const std::vector<int8_t>& x) {
  const int C = l.out_channels(), Cin = l.channels, OH = l.out_h(), OW = l.out_w();
  std::vector<int8_t> y(int64_t{l.batch} * OH * OW * C);
  for (int b = 0; b < l.batch; ++b)
    for (int oy = 0; oy < OH; ++oy)
      for (int ox = 0; ox < OW; ++ox)
        for (int c = 0; c < C; ++c) {
          int32_t acc = l.bias[c];
          for (int ky = 0; ky < l.kernel_h; ++ky)
            for (int kx = 0; kx < l.kernel_w; ++kx) {
              const int iy = oy * l.stride_h + ky * l.dilation_h - l.pad_top;
              const int ix = ox * l.stride_w + kx * l.dilation_w - l.pad_left;
              if (iy < 0 || iy >= l.in_h || ix < 0 || ix >= l.in_w) continue;
              acc += (x[((int64_t{b} * l.in_h + iy) * l.in_w + ix) * Cin + c / l.multiplier] - l.x_zero_point) *
                     l.weights[(int64_t{ky} * l.kernel_w + kx) * C + c];
            }
          const auto& m = l.requant.size() == 1 ? l.requant[0] : l.requant[c];
          y[((int64_t{b} * OH + oy) * OW + ox) * C + c] =
              static_cast<int8_t>(quant::Requantize(acc, m, l.y_zero_point, l.act_min, l.act_max));
        }
  return y;
}

void FillData(DepthwiseLayer& l, std::mt19937& rng) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  l.weights.resize(int64_t{l.kernel_h} * l.kernel_w * l.out_channels());
  for (auto& w : l.weights) w = static_cast<int8_t>(U(-127, 127));
  l.bias.clear();
  l.requant.clear();
  for (int c = 0; c < l.out_channels(); ++c) {
    l.bias.push_back(U(-3000, 3000));
    l.requant.push_back(*quant::QuantizeMultiplier(0.002 * U(1, 20)));
  }
  l.x_zero_point = U(-20, 20);
  l.y_zero_point = U(-20, 20);
}

struct Run {
  std::vector<int8_t> y;
  Stats total;
  int cores = 0;
};

// Lowers `l` with the given tile and runs it functionally; an error when it does not fit.
StatusOr<Run> RunNpu(const DepthwiseLayer& l, const std::vector<int8_t>& x, const Target& t, int rows, int ch,
                     bool db) {
  ASSIGN_OR_RETURN(Program p, LowerDepthwise(l, t, rows, ch, db));
  const DramRegion* in = nullptr;
  const DramRegion* out = nullptr;
  for (const DramRegion& r : p.regions) {
    if (r.name == l.name + ".input") in = &r;
    if (r.name == l.name + ".output") out = &r;
  }
  if (!in || !out) return Internal("no input or output region");
  std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
  std::copy(p.dram_init.begin(), p.dram_init.end(), dram.begin());
  std::copy(x.begin(), x.end(), reinterpret_cast<int8_t*>(dram.data() + in->addr));
  SimOptions opt;
  opt.functional = true;
  opt.dram = &dram;
  ASSIGN_OR_RETURN(SimResult r, Simulate(p, t, opt));
  Run run;
  const auto* y = reinterpret_cast<const int8_t*>(dram.data() + out->addr);
  run.y.assign(y, y + out->bytes);
  run.total = r.total;
  run.cores = p.cores_used;
  return run;
}

std::string Describe(const DepthwiseLayer& l) {
  std::ostringstream s;
  s << "dw " << l.batch << "x" << l.in_h << "x" << l.in_w << "x" << l.channels << " k" << l.kernel_h << "x"
    << l.kernel_w << " s" << l.stride_h << "x" << l.stride_w << " d" << l.dilation_h << "x" << l.dilation_w << " m"
    << l.multiplier << " pad "
    << l.pad_top << "," << l.pad_left << "," << l.pad_bottom << "," << l.pad_right;
  return s.str();
}

TEST(NpuDilatedDepthwiseTest, FixedCasesMatchTheFormula) {
  // (in_h, in_w, channels, kernel, stride, dilation, pad): the segmentation nets' dilation 2
  // with "same" padding, dilation 3, stride 2 with dilation, odd sizes, a pad of one side only.
  struct Shape { int h, w, c, k, s, d, pad; };
  const Shape shapes[] = {{16, 16, 40, 5, 1, 2, 4}, {15, 13, 24, 3, 1, 3, 3}, {17, 11, 33, 3, 2, 2, 2},
                          {9, 9, 16, 5, 2, 3, 5},   {11, 19, 7, 3, 1, 2, 0},  {13, 7, 80, 3, 2, 3, 1}};
  std::mt19937 rng(31);
  int checked = 0, multi_core = 0;
  for (const Shape& sh : shapes) {
    DepthwiseLayer l;
    l.in_h = sh.h;
    l.in_w = sh.w;
    l.channels = sh.c;
    l.kernel_h = l.kernel_w = sh.k;
    l.stride_h = l.stride_w = sh.s;
    l.dilation_h = l.dilation_w = sh.d;
    l.pad_top = l.pad_left = sh.pad;
    l.pad_bottom = sh.pad > 0 ? sh.pad - 1 : 0;  // unequal padding: the bottom and right side one less
    l.pad_right = sh.pad;
    FillData(l, rng);
    ASSERT_GT(l.out_h(), 0) << Describe(l);
    std::vector<int8_t> x(int64_t{l.in_h} * l.in_w * l.channels);
    for (auto& v : x) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
    const std::vector<int8_t> want = Reference(l, x);
    for (const Target& t : AllTargets()) {
      // Row tiles of 1, 2, 3 rows (their halos overlap the neighbours' bands) and one whole tile.
      for (auto [rows, ch, db] : {std::tuple{1, 16, true}, std::tuple{2, 32, false}, std::tuple{3, 16, true},
                                  std::tuple{100, 100, false}}) {
        auto r = RunNpu(l, x, t, rows, ch, db);
        if (!r.ok()) {
          EXPECT_NE(r.status().message().find("needs"), std::string::npos) << r.status().message();
          continue;  // does not fit this target's SRAM
        }
        EXPECT_EQ(r->y, want) << Describe(l) << " on " << t.name << " tile " << rows << "x" << ch
                              << (db ? " double" : " single");
        EXPECT_EQ(r->total.macs, l.macs()) << Describe(l);
        EXPECT_GE(r->total.cycles, r->total.roofline_cycles(t)) << Describe(l);
        multi_core += r->cores > 1;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 60);
  EXPECT_GT(multi_core, 30) << "too few cases spread over several cores";
}

TEST(NpuDilatedDepthwiseTest, RandomLayersMatchTheFormula) {
  // Random geometry: dilations 1..3 per axis (unequal too), kernels 1..5, strides 1..2,
  // padding up to the window's extent, batch 1..2, on the tiler's own choice of tile.
  std::mt19937 rng(37);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  for (int i = 0; i < 30; ++i) {
    DepthwiseLayer l;
    l.batch = U(1, 2);
    l.in_h = U(4, 21);
    l.in_w = U(4, 21);
    l.channels = U(1, 70);
    l.kernel_h = U(1, 5);
    l.kernel_w = i % 3 == 0 ? l.kernel_h : U(1, 3);
    l.stride_h = U(1, 2);
    l.stride_w = U(1, 2);
    l.dilation_h = U(1, 3);
    l.dilation_w = i % 2 ? l.dilation_h : U(1, 3);
    l.pad_top = U(0, l.extent_h() - 1);
    l.pad_bottom = U(0, l.extent_h() - 1);
    l.pad_left = U(0, l.extent_w() - 1);
    l.pad_right = U(0, l.extent_w() - 1);
    if (l.out_h() < 1 || l.out_w() < 1) continue;
    FillData(l, rng);
    if (i % 4 == 1) l.act_min = l.y_zero_point;  // a fused ReLU
    std::vector<int8_t> x(int64_t{l.batch} * l.in_h * l.in_w * l.channels);
    for (auto& v : x) v = static_cast<int8_t>(U(-128, 127));
    const std::vector<int8_t> want = Reference(l, x);
    for (const Target& t : AllTargets()) {
      auto vt = ChooseDepthwiseTiling(l, t);
      ASSERT_TRUE(vt.ok()) << vt.status().ToString() << " " << Describe(l);
      auto r = RunNpu(l, x, t, vt->tile_rows, vt->tile_c, vt->double_buffer);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->y, want) << Describe(l) << " on " << t.name << " tile " << vt->ToString();
      ++checked;
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(NpuDilatedDepthwiseTest, TheBandHoldsTheDilatedHalo) {
  // A row tile's band is (rows - 1) * stride + (k - 1) * d + 1 input rows: the VEC's source
  // tile. Its in_h is checked directly, as is the instruction's dilation.
  DepthwiseLayer l;
  l.in_h = l.in_w = 16;
  l.channels = 16;
  l.kernel_h = l.kernel_w = 3;
  l.dilation_h = 2;
  l.dilation_w = 3;
  l.pad_top = l.pad_bottom = 2;
  l.pad_left = l.pad_right = 3;
  auto p = LowerDepthwise(l, DefaultTarget(), 4, 16, true);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  int vecs = 0;
  for (const Instr& in : p->instrs) {
    if (in.op != Opcode::kVec || in.vec != VecOp::kDwConv) continue;
    ++vecs;
    EXPECT_EQ(in.in_h, (4 - 1) * 1 + (3 - 1) * 2 + 1);
    EXPECT_EQ(in.in_w, (16 - 1) * 1 + (3 - 1) * 3 + 1);
    EXPECT_EQ(WindowDilation(in.imm, 0), 2);
    EXPECT_EQ(WindowDilation(in.imm, 1), 3);
  }
  EXPECT_EQ(vecs, 4);
}

TEST(NpuDilatedDepthwiseTest, ChannelMultiplierMatchesTheFormula) {
  // A depthwise conv with m = 2..4 filters per input channel (ONNX group = C, M = m * C):
  // output channel o reads input channel o / m. Channel tiles of 16 and 32 output channels
  // (rounded down to a multiple of m, so a tile reads whole input channels) split the filters
  // of one input channel when m does not divide them; with dilation and stride too.
  std::mt19937 rng(41);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0, split = 0;
  for (int i = 0; i < 12; ++i) {
    DepthwiseLayer l;
    l.in_h = U(5, 17);
    l.in_w = U(5, 17);
    l.channels = U(1, 24);
    l.multiplier = 2 + i % 3;
    l.kernel_h = l.kernel_w = 3;
    l.stride_h = l.stride_w = U(1, 2);
    l.dilation_h = l.dilation_w = U(1, 2);
    l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = l.dilation_h;
    FillData(l, rng);
    std::vector<int8_t> x(int64_t{l.in_h} * l.in_w * l.channels);
    for (auto& v : x) v = static_cast<int8_t>(U(-128, 127));
    const std::vector<int8_t> want = Reference(l, x);
    for (const Target& t : AllTargets()) {
      for (auto [rows, ch, db] : {std::tuple{2, 16, true}, std::tuple{3, 32, false}, std::tuple{100, 1000, true}}) {
        auto r = RunNpu(l, x, t, rows, ch, db);
        if (!r.ok()) {
          EXPECT_NE(r.status().message().find("needs"), std::string::npos) << r.status().message();
          continue;
        }
        EXPECT_EQ(r->y, want) << Describe(l) << " on " << t.name << " tile " << rows << "x" << ch;
        EXPECT_EQ(r->total.macs, l.macs()) << Describe(l);
        split += ch % l.multiplier != 0 && ch < l.out_channels();
        ++checked;
      }
      auto vt = ChooseDepthwiseTiling(l, t);
      ASSERT_TRUE(vt.ok()) << vt.status().ToString();
      auto r = RunNpu(l, x, t, vt->tile_rows, vt->tile_c, vt->double_buffer);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->y, want) << Describe(l) << " on " << t.name << " tile " << vt->ToString();
    }
  }
  EXPECT_GT(checked, 60);
  EXPECT_GT(split, 5) << "too few tiles whose channel count the multiplier does not divide";
}

}  // namespace
}  // namespace edgec::npu
