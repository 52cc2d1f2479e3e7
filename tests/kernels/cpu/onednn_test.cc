// The oneDNN kernels (Conv, ConvTranspose, FusedConv, MatMul, Gemm, FusedMatMul, pools,
// Attention) against the reference kernels over seeded random geometries and attributes.
#include <oneapi/dnnl/dnnl.hpp>

#include "cpu_test_util.h"
#include "kernels/cpu/context.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

const std::vector<Attributes>& Activations() {
  static const std::vector<Attributes> acts = {
      {},
      Attrs({{"activation", std::string("Relu")}}),
      Attrs({{"activation", std::string("LeakyRelu")}, {"activation_alpha", 0.1f}}),
      Attrs({{"activation", std::string("Clip")}, {"activation_alpha", 0.f}, {"activation_beta", 0.5f}}),
      Attrs({{"activation", std::string("Clip")}, {"activation_beta", 0.3f}}),
      Attrs({{"activation", std::string("HardSigmoid")}}),
      Attrs({{"activation", std::string("HardSwish")}}),
      Attrs({{"activation", std::string("Sigmoid")}}),
      Attrs({{"activation", std::string("Tanh")}}),
      Attrs({{"activation", std::string("Silu")}}),
      Attrs({{"activation", std::string("Gelu")}}),
      Attrs({{"activation", std::string("GeluTanh")}}),
  };
  return acts;
}

void Merge(Attributes& into, const Attributes& from) {
  for (const auto& [k, v] : from.map()) into.Set(k, v);
}

// --- convolutions ---

struct ConvGeometry {
  Dims x, w;
  Attributes attrs;
  int64_t out_channels;
};

ConvGeometry RandomConv(std::mt19937& rng, int spatial, bool transpose) {
  ConvGeometry g;
  const int kind = static_cast<int>(RandInt(rng, 0, 3));  // 0: plain, 1: grouped, 2: depthwise
  int64_t group = 1;
  int64_t cin = RandInt(rng, 1, 9), cout = RandInt(rng, 1, 9);
  if (kind == 1) {
    group = RandInt(rng, 2, 3);
    cin = group * RandInt(rng, 1, 3);
    cout = group * RandInt(rng, 1, 3);
  } else if (kind == 2) {
    group = RandInt(rng, 2, 12);
    cin = group;
    cout = group * RandInt(rng, 1, 2);
  }
  Dims kernel, strides, dilations, pads_begin, pads_end, in;
  for (int i = 0; i < spatial; ++i) {
    kernel.push_back(RandInt(rng, 1, 4));
    strides.push_back(RandInt(rng, 1, 3));
    dilations.push_back(RandInt(rng, 0, 3) == 0 ? 2 : 1);
    const int64_t reach = (kernel[i] - 1) * dilations[i] + 1;
    pads_begin.push_back(RandInt(rng, 0, reach - 1));
    pads_end.push_back(RandInt(rng, 0, reach - 1));
    in.push_back(RandInt(rng, std::max<int64_t>(1, reach - pads_begin[i] - pads_end[i]), 11));
  }
  g.x = {RandInt(rng, 1, 2), cin};
  g.x.insert(g.x.end(), in.begin(), in.end());
  g.w = transpose ? Dims{cin, cout / group} : Dims{cout, cin / group};
  g.w.insert(g.w.end(), kernel.begin(), kernel.end());
  g.out_channels = cout;
  g.attrs.Set("group", group);
  g.attrs.Set("strides", strides);
  g.attrs.Set("dilations", dilations);
  if (RandInt(rng, 0, 1)) g.attrs.Set("kernel_shape", kernel);
  const int pad_mode = static_cast<int>(RandInt(rng, 0, 4));
  if (pad_mode == 1) {
    g.attrs.Set("auto_pad", std::string(RandInt(rng, 0, 1) ? "SAME_UPPER" : "SAME_LOWER"));
  } else if (pad_mode == 2) {
    g.attrs.Set("auto_pad", std::string("VALID"));
  } else {
    Dims pads = pads_begin;
    pads.insert(pads.end(), pads_end.begin(), pads_end.end());
    g.attrs.Set("pads", pads);
  }
  if (transpose && RandInt(rng, 0, 2) == 0) {
    Dims op;
    for (int i = 0; i < spatial; ++i) op.push_back(RandInt(rng, 0, std::max(strides[i], dilations[i]) - 1));
    g.attrs.Set("output_padding", op);
  }
  return g;
}

TEST(CpuConv, ConvMatchesReference) {
  std::mt19937 rng(61);
  int nhwc_runs = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int spatial = std::vector<int>{1, 2, 2, 2, 3}[trial % 5];
    ConvGeometry g = RandomConv(rng, spatial, false);
    testing_mv::Inputs in = {Random(g.x, rng), Random(g.w, rng)};
    const int bias_mode = trial % 3;  // none, constant, run time
    if (bias_mode) in.push_back(Random({g.out_channels}, rng));
    FastCase c{OpKind::kConv, in, g.attrs};
    c.constants = {1};
    if (bias_mode == 1) c.constants.insert(2);
    c.nhwc = spatial == 2 && trial % 2;
    if (c.nhwc && trial % 3 == 0) c.row_major_inputs = {0};  // row-major in, NHWC out (a model's first conv)
    c.threads = 1 + trial % 2;
    nhwc_runs += c.nhwc;
    // Geometries the reference rejects (a window larger than the padded input) are skipped.
    if (!testing_mv::RunOp(c.op, c.inputs, c.attrs).ok()) continue;
    ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("conv x {} w {} {} {}", DimsStr(g.x), DimsStr(g.w), AttrsStr(g.attrs), trial));
  }
  EXPECT_GT(nhwc_runs, 10);
}

// Below KernelTuning::min_parallel_macs (2^20 multiply-adds; the API's 2^23 with sleeping
// OpenMP threads) a convolution or matrix product is made for one thread even when the
// request asks for two (its Run then sets OpenMP to 1 thread); above it, for two. The outputs
// match the reference either way.
TEST(CpuConv, SmallProductsRunOnOneThread) {
  std::mt19937 rng(64);
  Attributes conv;
  conv.Set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  struct Case {
    OpKind op;
    Dims a, b;
    int want_threads;
  };
  const Case cases[] = {
      {OpKind::kConv, {1, 4, 8, 8}, {4, 4, 3, 3}, 1},        // 9 K MACs
      {OpKind::kConv, {1, 32, 32, 32}, {64, 32, 3, 3}, 2},   // 18.9 M
      {OpKind::kMatMul, {8, 64}, {64, 12}, 1},               // 6 K
      {OpKind::kMatMul, {512, 128}, {128, 256}, 2},          // 16.8 M
      {OpKind::kMatMul, {128, 128}, {128, 256}, 0},          // 4.2 M: 1 thread only at 2^23
  };
  for (const bool passive : {false, true}) {
    for (const Case& k : cases) {
      FastCase c{k.op, {Random(k.a, rng), Random(k.b, rng)}, k.op == OpKind::kConv ? conv : Attributes{}};
      c.constants = {1};
      c.threads = 2;
      c.tuning.min_parallel_macs = passive ? int64_t{1} << 23 : int64_t{1} << 20;
      omp_set_num_threads(2);
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("{} {} x {}", OpName(k.op), DimsStr(k.a), DimsStr(k.b)));
      const int want = k.want_threads ? k.want_threads : passive ? 1 : 2;
      EXPECT_EQ(omp_get_max_threads(), want) << OpName(k.op) << " " << DimsStr(k.a) << (passive ? " at 2^23" : "") << ": " << d;
    }
  }
}

TEST(CpuConv, ConvTransposeMatchesReference) {
  std::mt19937 rng(62);
  int skipped = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const int spatial = std::vector<int>{1, 2, 2, 3}[trial % 4];
    ConvGeometry g = RandomConv(rng, spatial, true);
    if (trial % 7 == 0) {  // output_shape instead of pads
      Dims shape;
      for (int i = 0; i < spatial; ++i) shape.push_back(g.x[2 + i] * g.attrs.GetInts("strides")[i]);
      g.attrs.Erase("pads");
      g.attrs.Erase("auto_pad");
      g.attrs.Erase("output_padding");
      g.attrs.Set("output_shape", shape);
    }
    testing_mv::Inputs in = {Random(g.x, rng), Random(g.w, rng)};
    if (trial % 2) in.push_back(Random({g.out_channels}, rng));
    FastCase c{OpKind::kConvTranspose, in, g.attrs};
    c.constants = {1, 2};
    c.nhwc = spatial == 2 && trial % 3 == 0;
    if (!testing_mv::RunOp(c.op, c.inputs, c.attrs).ok()) continue;
    const std::string why = RefusalOf(c);
    if (why.find("oneDNN needs pads >= 0") != std::string::npos) {  // a documented fallback
      ++skipped;
      continue;
    }
    ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("deconv x {} w {} {} {}", DimsStr(g.x), DimsStr(g.w), AttrsStr(g.attrs), trial));
  }
  EXPECT_LT(skipped, 20);
}

TEST(CpuConv, FusedConvEpilogues) {
  std::mt19937 rng(63);
  int silu_convs = 0;
  for (int trial = 0; trial < 72; ++trial) {
    ConvGeometry g = RandomConv(rng, 2, false);
    Merge(g.attrs, Activations()[trial % Activations().size()]);
    testing_mv::Inputs in = {Random(g.x, rng), Random(g.w, rng)};
    FastCase probe{OpKind::kConv, in, g.attrs};
    auto conv = testing_mv::RunOp(OpKind::kConv, in, Attributes(g.attrs));
    if (!conv.ok()) continue;
    const bool bias = trial % 2, residual = (trial / 2) % 3 != 0;
    in.push_back(bias ? std::optional<Tensor>(Random({g.out_channels}, rng)) : std::nullopt);
    if (residual) in.push_back(Random((*conv)[0].dims(), rng));
    FastCase c{OpKind::kFusedConv, in, g.attrs};
    c.constants = {1, 2};
    c.nhwc = trial % 4 >= 2;
    if (c.nhwc && trial % 8 == 2) c.row_major_inputs = {3};  // residual in another layout
    c.threads = 2;
    const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5,
                                           fmt::format("fused conv {} act '{}' residual {} bias {}", trial,
                                                       g.attrs.GetString("activation"), residual, bias));
    if (trial < 12) std::printf("  %s\n", d.c_str());
    // SiLU is never a oneDNN post-op: the own loop after the primitive is faster.
    if (g.attrs.GetString("activation") == "Silu" && d.rfind("onednn conv", 0) == 0) {
      const size_t own = d.find("+ own epilogue");
      EXPECT_TRUE(own != std::string::npos && d.find("silu") > own) << d;
      ++silu_convs;
    }
  }
  EXPECT_GE(silu_convs, 3);
}

TEST(CpuConv, FusedConvEqualsUnfusedSequence) {
  // Independent of the fused reference: conv, add, relu on the standalone reference kernels.
  std::mt19937 rng(64);
  const Tensor x = Random({1, 8, 10, 10}, rng), w = Random({16, 8, 3, 3}, rng), b = Random({16}, rng);
  const Attributes conv_attrs = Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  auto y = testing_mv::RunOp(OpKind::kConv, {x, w, b}, conv_attrs);
  ASSERT_TRUE(y.ok());
  const Tensor r = Random((*y)[0].dims(), rng);
  auto sum = testing_mv::RunOp(OpKind::kAdd, {(*y)[0], r});
  ASSERT_TRUE(sum.ok());
  auto want = testing_mv::RunOp(OpKind::kRelu, {(*sum)[0]});
  ASSERT_TRUE(want.ok());
  Attributes fused = conv_attrs;
  fused.Set("activation", std::string("Relu"));
  for (bool nhwc : {false, true}) {
    FastCase c{OpKind::kFusedConv, {x, w, b, r}, fused};
    c.constants = {1, 2};
    c.nhwc = nhwc;
    auto got = RunFast(c);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(Close(got->outputs[0], (*want)[0], 1e-4, 1e-5)) << got->describe;
  }
}

// 3x3 stride-1 convolutions with many channels run as Winograd (blocked format, reorders
// in and out); fewer channels, strides and groups stay direct. Both match the reference.
// oneDNN 2.6 has Winograd kernels for AVX-512 only: on AVX2 every case must run direct.
TEST(CpuConv, WinogradWhereItPaysMatchesReference) {
  std::mt19937 rng(66);
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  const bool winograd_isa = isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
                            isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx ||
                            isa == dnnl::cpu_isa::avx512_mic || isa == dnnl::cpu_isa::avx512_mic_4ops;
  struct Shape {
    int64_t c_in, c_out, hw, stride, group;
    bool winograd;
  };
  for (const Shape& sh : std::vector<Shape>{{64, 64, 16, 1, 1, true}, {96, 64, 13, 1, 1, true},
                                            {96, 32, 16, 1, 1, true}, {32, 32, 12, 1, 1, true},
                                            {96, 24, 16, 1, 1, true}, {24, 24, 12, 1, 1, true},
                                            {32, 16, 16, 1, 1, false}, {24, 20, 16, 1, 1, false},
                                            {64, 64, 16, 2, 1, false}, {16, 16, 16, 1, 1, false},
                                            {64, 64, 16, 1, 2, false}, {64, 128, 6, 1, 1, false}}) {
    const Attributes a = Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                {"strides", std::vector<int64_t>{sh.stride, sh.stride}},
                                {"group", sh.group}, {"activation", std::string("Relu")}});
    const Tensor x = Random({1, sh.c_in, sh.hw, sh.hw}, rng), w = Random({sh.c_out, sh.c_in / sh.group, 3, 3}, rng, -0.2f, 0.2f);
    const int64_t out = (sh.hw + 2 - 3) / sh.stride + 1;
    for (bool nhwc : {false, true}) {
      FastCase c{OpKind::kFusedConv, {x, w, Random({sh.c_out}, rng), Random({1, sh.c_out, out, out}, rng)}, a};
      c.constants = {1, 2};
      c.nhwc = nhwc;
      c.threads = 2;
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("conv {}->{} at {}x{} stride {} group {}", sh.c_in,
                                                                     sh.c_out, sh.hw, sh.hw, sh.stride, sh.group));
      EXPECT_EQ(d.find("wino") != std::string::npos, sh.winograd && winograd_isa) << d;
    }
  }
}

// A row-major image of at most 4 channels: the kernel builds oneDNN's choice after a
// reorder of the source and its first-layer kernel reading the source as it is (the output
// reordered out, except that 16 NHWC channels are nChw16c itself), and keeps one by a fixed
// rule (kMeasure): the first-layer kernel up to 48 output channels, never a timing. Each
// candidate must match the reference; 8 input channels have one candidate.
TEST(CpuConv, FewChannelRowMajorSourceBothCandidatesMatchReference) {
  std::mt19937 rng(68);
  struct Shape {
    int64_t c_in, c_out, k, stride;
    bool nhwc;
  };
  for (const Shape& sh : std::vector<Shape>{{3, 24, 3, 2, false}, {1, 8, 3, 1, false}, {4, 24, 7, 2, false},
                                            {3, 24, 3, 2, true}, {3, 16, 3, 2, true}, {2, 16, 5, 1, true},
                                            {8, 24, 3, 2, false}, {3, 64, 3, 2, true}, {3, 64, 3, 1, false}}) {
    const int64_t hw = 29, pad = sh.k / 2, out = (hw + 2 * pad - sh.k) / sh.stride + 1;
    for (int variant = 0; variant < 3; ++variant) {  // plain; Relu + residual; a bias given at run time
      Attributes a = Attrs({{"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                            {"strides", std::vector<int64_t>{sh.stride, sh.stride}}});
      if (variant == 1) Merge(a, Attrs({{"activation", std::string("Relu")}}));
      testing_mv::Inputs in = {Random({2, sh.c_in, hw, hw}, rng),
                               Random({sh.c_out, sh.c_in, sh.k, sh.k}, rng, -0.3f, 0.3f), Random({sh.c_out}, rng)};
      if (variant == 1) in.push_back(Random({2, sh.c_out, out, out}, rng));  // a residual
      FastCase c{variant == 1 ? OpKind::kFusedConv : OpKind::kConv, in, a};
      c.constants = variant == 2 ? std::set<int>{1} : std::set<int>{1, 2};
      c.nhwc = sh.nhwc;
      if (sh.nhwc) c.row_major_inputs = {0};  // an NHWC region's first conv reads the image row-major
      c.threads = 1 + variant % 2;
      c.tuning.image_conv = cpu::MeasuredChoice::kFirst;  // oneDNN's candidates (image_conv_test.cc: the own one)
      const bool two = sh.c_in <= 4;
      for (auto choice : {cpu::MeasuredChoice::kFirst, cpu::MeasuredChoice::kSecond, cpu::MeasuredChoice::kMeasure}) {
        c.tuning.measured_choice = choice;
        const std::string what = fmt::format("conv {} -> {} channels {}x{} stride {} {} variant {} choice {}", sh.c_in,
                                             sh.c_out, sh.k, sh.k, sh.stride, sh.nhwc ? "nhwc" : "row-major", variant,
                                             static_cast<int>(choice));
        const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, what);
        EXPECT_EQ(d.find("measured faster than"), std::string::npos) << what << ": " << d;
        const bool by_rule = d.find("; by rule") != std::string::npos;
        EXPECT_EQ(by_rule, two && choice == cpu::MeasuredChoice::kMeasure) << what << ": " << d;
        if (by_rule) {  // the first-layer kernel (the source as it is) up to 48 channels
          EXPECT_EQ(d.find("reorders in") == std::string::npos, sh.c_out <= 48) << what << ": " << d;
        }
        if (two && choice == cpu::MeasuredChoice::kSecond) {
          EXPECT_EQ(d.find("reorders in"), std::string::npos) << what << ": " << d;  // the source as it is
          const bool bound = sh.nhwc && sh.c_out == 16;
          EXPECT_EQ(d.find("via reorders out") == std::string::npos, bound) << what << ": " << d;
        }
      }
    }
  }
}

// 1x1 convolutions on row-major activations with enough pixels run as a GEMM per image
// (W x X[n]), the epilogue included; NHWC, strided or small ones stay oneDNN convolutions.
TEST(CpuConv, RowMajor1x1AsGemmMatchesReference) {
  std::mt19937 rng(67);
  struct Shape {
    int64_t n, c_in, c_out, hw, stride;
    bool nhwc, gemm;
  };
  for (const Shape& sh : std::vector<Shape>{{1, 24, 144, 16, 1, false, true}, {2, 7, 5, 17, 1, false, true},
                                            {1, 24, 144, 16, 1, true, false}, {1, 16, 32, 32, 2, false, false},
                                            {1, 16, 32, 8, 1, false, false}}) {
    const int64_t out = (sh.hw - 1) / sh.stride + 1;
    for (int variant = 0; variant < 4; ++variant) {
      Attributes a = Attrs({{"strides", std::vector<int64_t>{sh.stride, sh.stride}}});
      if (variant % 2) Merge(a, Activations()[variant]);
      testing_mv::Inputs in = {Random({sh.n, sh.c_in, sh.hw, sh.hw}, rng), Random({sh.c_out, sh.c_in, 1, 1}, rng)};
      in.push_back(variant >= 1 ? std::optional<Tensor>(Random({sh.c_out}, rng)) : std::nullopt);
      if (variant >= 2) in.push_back(Random({sh.n, sh.c_out, out, out}, rng));
      FastCase c{variant ? OpKind::kFusedConv : OpKind::kConv, in, a};
      if (!variant) c.inputs.pop_back();
      c.constants = {1, 2};
      c.nhwc = sh.nhwc;
      c.threads = 1 + variant % 2;
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("1x1 conv {}->{} at {}x{} variant {}", sh.c_in,
                                                                     sh.c_out, sh.hw, sh.hw, variant));
      EXPECT_EQ(d.find("as gemm") != std::string::npos, sh.gemm) << d;
    }
  }
}

TEST(CpuConv, Refusals) {
  std::mt19937 rng(65);
  FastCase runtime_w{OpKind::kConv, {Random({1, 2, 5, 5}, rng), Random({3, 2, 3, 3}, rng)}, {}};
  EXPECT_NE(RefusalOf(runtime_w).find("W is not constant"), std::string::npos) << RefusalOf(runtime_w);
  FastCase f64{OpKind::kConv,
               {Random({1, 2, 5, 5}, rng).CastTo(DType::kF64), Random({3, 2, 3, 3}, rng).CastTo(DType::kF64)}, {}};
  f64.constants = {1};
  EXPECT_NE(RefusalOf(f64).find("f32 only"), std::string::npos) << RefusalOf(f64);
}

// --- matmul ---

TEST(CpuMatMul, MatMulBroadcastingMatchesReference) {
  std::mt19937 rng(71);
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t m = RandInt(rng, 1, 20), k = RandInt(rng, 1, 40), n = RandInt(rng, 1, 20);
    const int ra = static_cast<int>(RandInt(rng, 1, 4)), rb = static_cast<int>(RandInt(rng, 1, 4));
    Dims batch;
    for (int i = 0; i < 2; ++i) batch.push_back(RandInt(rng, 1, 3));
    auto shape = [&](int rank, int64_t rows, int64_t cols, bool is_a) {
      if (rank == 1) return Dims{is_a ? cols : rows};
      Dims d;
      for (int i = 0; i < rank - 2; ++i) d.push_back(RandInt(rng, 0, 1) ? batch[2 - (rank - 2) + i] : 1);
      d.push_back(rows);
      d.push_back(cols);
      return d;
    };
    const Dims ad = shape(ra, m, k, true), bd = shape(rb, k, n, false);
    FastCase c{OpKind::kMatMul, {Random(ad, rng), Random(bd, rng)}, {}};
    if (trial % 2) c.constants = {1};
    c.threads = 1 + trial % 2;
    ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("matmul {} x {}", DimsStr(ad), DimsStr(bd)));
  }
}

TEST(CpuMatMul, GemmMatchesReference) {
  std::mt19937 rng(72);
  for (int trial = 0; trial < 80; ++trial) {
    const int64_t m = RandInt(rng, 1, 30), k = RandInt(rng, 1, 30), n = RandInt(rng, 1, 30);
    const bool ta = trial % 2, tb = (trial / 2) % 2;
    const float alpha = trial % 5 == 0 ? 0.5f : 1.f;
    const int c_kind = trial % 7;  // none, [N], [1,N], [M,1], [M,N], scalar, [1]
    const std::vector<Dims> c_shapes = {{}, {n}, {1, n}, {m, 1}, {m, n}, {}, {1}};
    const bool const_c = trial % 3 != 0;
    const float beta = const_c && trial % 4 == 0 ? 2.f : 1.f;
    testing_mv::Inputs in = {Random(ta ? Dims{k, m} : Dims{m, k}, rng), Random(tb ? Dims{n, k} : Dims{k, n}, rng)};
    if (c_kind) in.push_back(Random(c_shapes[c_kind], rng));
    FastCase c{OpKind::kGemm, in,
               Attrs({{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", alpha}, {"beta", beta}})};
    c.constants = {1};
    if (trial % 4 == 3) c.constants = {};  // run-time B
    if (const_c) c.constants.insert(2);
    const std::string d = ExpectMatchesRef(
        c, 1e-4, 1e-5, fmt::format("gemm m{} k{} n{} ta{} tb{} alpha {} beta {} C kind {}", m, k, n, ta, tb, alpha, beta, c_kind));
    if (trial < 8) std::printf("  %s\n", d.c_str());
  }
}

TEST(CpuMatMul, FusedMatMulEpilogues) {
  std::mt19937 rng(73);
  for (int trial = 0; trial < 96; ++trial) {
    const int64_t m = RandInt(rng, 1, 24), k = RandInt(rng, 1, 24), n = RandInt(rng, 1, 24);
    const bool batched = trial % 3 == 0;
    const bool ta = trial % 5 == 1, tb = trial % 2;
    const Dims batch = batched ? Dims{RandInt(rng, 1, 3)} : Dims{};
    auto with_batch = [&](Dims d) {
      d.insert(d.begin(), batch.begin(), batch.end());
      return d;
    };
    const Dims ad = with_batch(ta ? Dims{k, m} : Dims{m, k}), bd = with_batch(tb ? Dims{n, k} : Dims{k, n});
    const Dims out = with_batch({m, n});
    const std::vector<Dims> bias_shapes = {{n}, {1, n}, {m, n}, {m, 1}, out, {}};
    Attributes a = Attrs({{"transA", int64_t{ta}}, {"transB", int64_t{tb}}});
    if (trial % 7 == 3) a.Set("alpha", 0.25f);
    Merge(a, Activations()[trial % Activations().size()]);
    testing_mv::Inputs in = {Random(ad, rng), Random(bd, rng)};
    const int bias_kind = static_cast<int>(RandInt(rng, 0, 6));
    in.push_back(bias_kind < 6 ? std::optional<Tensor>(Random(bias_shapes[bias_kind], rng)) : std::nullopt);
    const int res_kind = static_cast<int>(RandInt(rng, 0, 3));  // none, full, per row, per column
    const std::vector<Dims> res_shapes = {{}, out, {m, 1}, {n}};
    if (res_kind) in.push_back(Random(res_shapes[res_kind], rng));
    FastCase c{OpKind::kFusedMatMul, in, a};
    c.constants = trial % 4 == 0 ? std::set<int>{} : std::set<int>{1};
    if (trial % 2) c.constants.insert(2);
    c.threads = 2;
    const std::string d = ExpectMatchesRef(
        c, 1e-4, 1e-5,
        fmt::format("fused matmul {} x {} bias {} residual {} act '{}'", DimsStr(ad), DimsStr(bd), bias_kind, res_kind,
                    a.GetString("activation")));
    if (trial < 16) std::printf("  %s\n", d.c_str());
  }
}

// One-row products (a classifier at batch 1, a squeeze-excitation FC on one pixel) run on
// the own packed-panel GEMV; everything else about them is as for the oneDNN matmul.
TEST(CpuMatMul, OneRowProductsRunOnTheGemvAndMatchReference) {
  std::mt19937 rng(74);
  ForEachIsa([&] {
    for (int trial = 0; trial < 48; ++trial) {
      const int64_t k = RandInt(rng, 1, 300), n = RandInt(rng, 16, 150);
      const bool tb = trial % 2;
      const int form = trial % 3;  // MatMul [1, k] x [k, n]; Gemm; FusedMatMul
      Attributes a;
      testing_mv::Inputs in = {Random(form == 0 && trial % 4 == 0 ? Dims{k} : Dims{1, k}, rng),
                               Random(form != 0 && tb ? Dims{n, k} : Dims{k, n}, rng)};
      OpKind op = OpKind::kMatMul;
      if (form == 1) {
        op = OpKind::kGemm;
        a = Attrs({{"transB", int64_t{tb}}, {"alpha", trial % 5 == 1 ? 0.5f : 1.f}, {"beta", trial % 7 == 1 ? 2.f : 1.f}});
        in.push_back(Random(trial % 4 == 1 ? Dims{1} : Dims{n}, rng));
      } else if (form == 2) {
        op = OpKind::kFusedMatMul;
        a = Attrs({{"transB", int64_t{tb}}});
        Merge(a, Activations()[trial % Activations().size()]);
        in.push_back(trial % 4 == 2 ? std::optional<Tensor>() : Random(Dims{1, n}, rng));
        if (trial % 3 == 2 && trial % 2 == 0) in.push_back(Random(Dims{1, n}, rng));
      }
      FastCase c{op, in, a};
      c.constants = {1, 2};
      c.threads = 1 + trial % 2;
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("one-row {} k{} n{} tb{} trial {}", OpName(op), k, n, tb, trial));
      EXPECT_NE(d.find("own gemv"), std::string::npos) << d;
    }
  });
}

TEST(CpuMatMul, SinglePixelConvolutionsRunOnTheGemvAndMatchReference) {
  std::mt19937 rng(75);
  ForEachIsa([&] {
    for (int trial = 0; trial < 24; ++trial) {
      const int64_t c_in = RandInt(rng, 1, 200), c_out = RandInt(rng, 16, 200);
      const bool fused = trial % 2;
      Attributes a = Attrs({{"kernel_shape", std::vector<int64_t>{1, 1}}});
      if (fused) Merge(a, Activations()[trial % Activations().size()]);
      testing_mv::Inputs in = {Random({1, c_in, 1, 1}, rng), Random({c_out, c_in, 1, 1}, rng)};
      in.push_back(trial % 3 == 0 ? std::optional<Tensor>() : Random({c_out}, rng));
      if (fused && trial % 4 == 1) in.push_back(Random({1, c_out, 1, 1}, rng));
      FastCase c{fused ? OpKind::kFusedConv : OpKind::kConv, in, a};
      c.constants = {1, 2};
      c.nhwc = trial % 3 != 2;
      c.threads = 1 + trial % 2;
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("1x1 conv of one pixel {} -> {} trial {}", c_in, c_out, trial));
      EXPECT_NE(d.find("own gemv"), std::string::npos) << d;
    }
  });
}

TEST(CpuMatMul, GemvLeavesWhatItDoesNotFitToOneDnn) {
  std::mt19937 rng(76);
  auto describe = [&](FastCase c) {
    auto r = RunFast(c);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->describe : std::string();
  };
  // Narrow outputs (mostly panel padding), two rows, a run-time B or bias, padded convs.
  FastCase narrow{OpKind::kMatMul, {Random({1, 64}, rng), Random({64, 8}, rng)}, {}};
  narrow.constants = {1};
  EXPECT_NE(describe(narrow).find("onednn matmul"), std::string::npos);
  FastCase two_rows{OpKind::kMatMul, {Random({2, 64}, rng), Random({64, 64}, rng)}, {}};
  two_rows.constants = {1};
  EXPECT_NE(describe(two_rows).find("onednn matmul"), std::string::npos);
  FastCase runtime_b{OpKind::kMatMul, {Random({1, 64}, rng), Random({64, 64}, rng)}, {}};
  EXPECT_NE(describe(runtime_b).find("onednn matmul"), std::string::npos);
  FastCase runtime_bias{OpKind::kGemm, {Random({1, 64}, rng), Random({64, 64}, rng), Random({64}, rng)}, {}};
  runtime_bias.constants = {1};
  EXPECT_NE(describe(runtime_bias).find("onednn matmul"), std::string::npos);
  FastCase padded{OpKind::kConv, {Random({1, 8, 1, 1}, rng), Random({32, 8, 1, 1}, rng)},
                  Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}})};
  padded.constants = {1};
  EXPECT_EQ(describe(padded).find("own gemv"), std::string::npos);
  for (FastCase* c : {&narrow, &two_rows, &runtime_b, &runtime_bias, &padded}) ExpectMatchesRef(*c, 1e-4, 1e-5);
}

// --- pools ---

TEST(CpuPool, MaxAndAveragePoolMatchReference) {
  std::mt19937 rng(81);
  for (int trial = 0; trial < 120; ++trial) {
    const int spatial = std::vector<int>{1, 2, 2, 3}[trial % 4];
    const bool is_max = trial % 2;
    Dims kernel, strides, pads_b, pads_e, x = {RandInt(rng, 1, 2), RandInt(rng, 1, 6)}, dil;
    for (int i = 0; i < spatial; ++i) {
      kernel.push_back(RandInt(rng, 1, 4));
      strides.push_back(RandInt(rng, 1, 3));
      dil.push_back(is_max && RandInt(rng, 0, 3) == 0 ? 2 : 1);
      const int64_t reach = (kernel[i] - 1) * dil[i] + 1;
      pads_b.push_back(RandInt(rng, 0, reach - 1));
      pads_e.push_back(RandInt(rng, 0, reach - 1));
      x.push_back(RandInt(rng, reach, 12));
    }
    Dims pads = pads_b;
    pads.insert(pads.end(), pads_e.begin(), pads_e.end());
    Attributes a = Attrs({{"kernel_shape", kernel}, {"strides", strides}});
    if (trial % 5 == 0) a.Set("auto_pad", std::string(trial % 10 ? "SAME_UPPER" : "SAME_LOWER"));
    else a.Set("pads", pads);
    if (is_max) a.Set("dilations", dil);
    if (trial % 3 == 0) a.Set("ceil_mode", int64_t{1});
    if (!is_max && trial % 4 < 2) a.Set("count_include_pad", int64_t{1});
    FastCase c{is_max ? OpKind::kMaxPool : OpKind::kAveragePool, {Random(x, rng)}, a};
    c.nhwc = spatial == 2 && trial % 3 != 1;
    if (!testing_mv::RunOp(c.op, c.inputs, c.attrs).ok()) continue;
    const std::string why = RefusalOf(c);
    if (why.find("ceil_mode windows past the end pads") != std::string::npos ||
        why.find("entirely in padding") != std::string::npos) {
      continue;  // documented fallbacks
    }
    ExpectMatchesRef(c, 1e-5, 1e-6, fmt::format("{} x {} {}", OpName(c.op), DimsStr(x), trial));
  }
}

// The own NHWC MaxPool: channel counts across the 4-vector blocks, the single vectors and
// the tails of every ISA; pads, dilation, ceil_mode; 1 and 2 threads; NaNs win only as
// the reference lets them (the first valid tap of a window).
TEST(CpuPool, OwnNhwcMaxPoolEqualsReferenceOnEveryIsa) {
  std::mt19937 rng(84);
  int own = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t channels = std::vector<int64_t>{1, 3, 8, 16, 17, 64, 67, 130}[trial % 8];
    const int64_t k = RandInt(rng, 1, 3), s = RandInt(rng, 1, 2), d = trial % 5 == 0 ? 2 : 1;
    const int64_t reach = (k - 1) * d + 1;
    const Dims x = {RandInt(rng, 1, 2), channels, RandInt(rng, reach, 11), RandInt(rng, reach, 11)};
    Attributes a = Attrs({{"kernel_shape", Dims{k, k}}, {"strides", Dims{s, s}}, {"dilations", Dims{d, d}}});
    const int64_t p = RandInt(rng, 0, reach - 1);
    a.Set("pads", Dims{p, 0, RandInt(rng, 0, reach - 1), p});
    if (trial % 3 == 0) a.Set("ceil_mode", int64_t{1});
    Tensor input = Random(x, rng);
    if (trial % 4 == 1) {
      for (int64_t i = 0; i < input.numel(); i += 7) input.data<float>()[i] = std::nanf("");
    }
    FastCase c{OpKind::kMaxPool, {input}, a};
    c.nhwc = true;
    c.threads = trial % 2 ? 2 : 1;
    if (!testing_mv::RunOp(c.op, c.inputs, c.attrs).ok()) continue;
    ForEachIsa([&] {
      auto fast = RunFast(c);
      ASSERT_TRUE(fast.ok()) << fast.status().message();
      if (fast->describe.find("own MaxPool") == std::string::npos) return;
      ++own;
      auto want = testing_mv::RunOp(c.op, c.inputs, c.attrs);
      ASSERT_TRUE(want.ok());
      const auto& w = (*want)[0];
      const auto& g = fast->outputs[0];
      ASSERT_EQ(w.dims(), g.dims());
      for (int64_t i = 0; i < w.numel(); ++i) {
        const float a = w.data<float>()[i], b = g.data<float>()[i];
        ASSERT_TRUE(a == b || (std::isnan(a) && std::isnan(b)))
            << "trial " << trial << " x " << DimsStr(x) << " element " << i << ": " << b << " vs " << a;
      }
    });
  }
  EXPECT_GE(own, 60);  // most cases of 40 trials x ISAs take the own kernel
}

TEST(CpuPool, GlobalPools) {
  std::mt19937 rng(82);
  for (Dims x : {Dims{1, 64, 7, 7}, Dims{2, 3, 5, 1}, Dims{1, 5, 9}, Dims{2, 3, 2, 3, 4}}) {
    for (OpKind op : {OpKind::kGlobalAveragePool, OpKind::kGlobalMaxPool}) {
      for (bool nhwc : {false, true}) {
        if (nhwc && x.size() != 4) continue;
        FastCase c{op, {Random(x, rng)}, {}};
        c.nhwc = nhwc;
        ExpectMatchesRef(c, 1e-5, 1e-6, fmt::format("{} {}", OpName(op), DimsStr(x)));
      }
    }
  }
}

// The own NHWC f32 GlobalAveragePool (AVX-512): one image per thread, or the pixels of one
// image split between threads (partial sums, then the channels split to add them up);
// channel counts with masked tails, pixel counts that leave a share's remainder.
TEST(CpuPool, OwnGlobalAveragePoolSplitsPixels) {
  std::mt19937 rng(84);
  int own = 0, split = 0;
  struct Shape { Dims x; int threads; };
  for (const Shape& t : {Shape{{1, 40, 57, 56}, 2}, Shape{{1, 1152, 7, 7}, 2}, Shape{{2, 24, 30, 31}, 2},
                         Shape{{1, 40, 57, 56}, 1}, Shape{{3, 17, 5, 3}, 2}, Shape{{1, 16, 1, 1}, 2}}) {
    ForEachIsa([&] {
      FastCase c{OpKind::kGlobalAveragePool, {Random(t.x, rng)}, {}};
      c.nhwc = true;
      c.threads = t.threads;
      const std::string d = ExpectMatchesRef(c, 1e-5, 1e-6, fmt::format("{} on {} threads", DimsStr(t.x), t.threads));
      if (d.find("own GlobalAveragePool") == std::string::npos) return;  // not AVX-512: oneDNN's
      ++own;
      const bool splits = d.find("pixels split") != std::string::npos;
      split += splits;
      EXPECT_EQ(splits, t.threads == 2 && t.x[0] == 1 && t.x[1] * t.x[2] * t.x[3] >= 32768) << DimsStr(t.x) << ": " << d;
    });
  }
  if (cpu::OwnAvx512(cpu::Avx512Ext::kBw)) {
    EXPECT_GE(own, 6);
    EXPECT_GE(split, 2);
  }
}

TEST(CpuPool, MaxPoolIndicesFallBack) {
  std::mt19937 rng(83);
  FastCase c{OpKind::kMaxPool, {Random({1, 1, 4, 4}, rng)}, Attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}}), 2};
  EXPECT_NE(RefusalOf(c).find("Indices"), std::string::npos) << RefusalOf(c);
}

// --- attention ---

TEST(CpuAttention, MatchesReference) {
  std::mt19937 rng(91);
  int skipped = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t sq = RandInt(rng, 1, 20), sk = RandInt(rng, 1, 20), d = RandInt(rng, 1, 16), dv = RandInt(rng, 1, 16);
    const int64_t b = RandInt(rng, 1, 2), h = RandInt(rng, 1, 3);
    const bool kt = trial % 2;
    auto maybe = [&](int64_t v) { return RandInt(rng, 0, 2) ? v : 1; };
    const Dims qd = {maybe(b), h, sq, d};
    const Dims kd = kt ? Dims{maybe(b), maybe(h), d, sk} : Dims{maybe(b), maybe(h), sk, d};
    const Dims vd = {maybe(b), maybe(h), sk, dv};
    testing_mv::Inputs in = {Random(qd, rng), Random(kd, rng), Random(vd, rng)};
    const int mask_kind = trial % 4;  // none, [sq, sk], [b?,1,1,sk], [1, h, sq, 1]
    if (mask_kind == 1) in.push_back(Random({sq, sk}, rng, -3, 0));
    if (mask_kind == 2) in.push_back(Random({1, 1, 1, sk}, rng, -3, 0));
    if (mask_kind == 3) in.push_back(Random({1, h, sq, 1}, rng, -3, 0));
    Attributes a = Attrs({{"k_transposed", int64_t{kt}}});
    if (trial % 3 == 0) a.Set("scale", 0.3f);
    FastCase c{OpKind::kAttention, in, a};
    c.threads = 2;
    if (RefusalOf(c).find("broadcast beyond") != std::string::npos) {  // a documented fallback
      ++skipped;
      continue;
    }
    ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("attention q {} k {} v {} mask {}", DimsStr(qd), DimsStr(kd), DimsStr(vd), mask_kind));
  }
  EXPECT_LT(skipped, 10);
}

}  // namespace
}  // namespace edgec::testing_cpu
