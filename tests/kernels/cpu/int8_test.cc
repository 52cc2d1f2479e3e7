// The fast int8 kernels (QLinearConv, QLinearMatMul, QuantizeLinear, DequantizeLinear, the
// lookup, QLinearAdd, QLinearMul, QLinearGlobalAveragePool) against the reference kernels, bit
// for bit, over seeded random geometries (padding, strides, dilations, groups, depthwise),
// u8 and i8 activations, per-tensor and per-channel weight scales, zero points, bias, fused
// clamps, both requantization modes, NHWC and row-major, 1 and 2 threads, the requantization
// and the own elementwise kernels on each vector ISA the CPU has. On a CPU without VNNI the
// kernels refuse 8-bit weights (their oneDNN sums would saturate); the 7-bit-weight cases
// still run there.
#include <oneapi/dnnl/dnnl.hpp>

#include "cpu_test_util.h"
#include "kernels/cpu/int8_requant.h"
#include "quant/exact_scale.h"

namespace edgec::testing_cpu {
namespace {

template <typename T>
Tensor RandomInts(DType dt, Dims dims, std::mt19937& rng, int64_t lo, int64_t hi) {
  Tensor t(dt, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = static_cast<T>(RandInt(rng, lo, hi));
  return t;
}
Tensor ScalarF(float v) {
  Tensor t(DType::kF32, {});
  t.data<float>()[0] = v;
  return t;
}
Tensor ScalarQ(DType dt, int64_t v) {
  Tensor t(dt, {});
  if (dt == DType::kU8) t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
  else t.data<int8_t>()[0] = static_cast<int8_t>(v);
  return t;
}
float RandScale(std::mt19937& rng, float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }

Tensor RandomActivation(DType dt, Dims dims, std::mt19937& rng, bool extreme) {
  const int64_t lo = dt == DType::kU8 ? 0 : -128, hi = dt == DType::kU8 ? 255 : 127;
  if (dt == DType::kU8) return RandomInts<uint8_t>(dt, dims, rng, extreme ? hi - 2 : lo, hi);
  return RandomInts<int8_t>(dt, dims, rng, extreme ? hi - 2 : lo, hi);
}

// Whether a refusal is the documented non-VNNI one.
bool NoVnniRefusal(const std::string& why) { return why.find("without VNNI") != std::string::npos; }

struct Int8ConvCase {
  FastCase c;
  std::string what;
};

// 256 random values of `t` (u8 or i8): an `edgec_output_table` (a QuantizedLookup fused
// into the integer op).
std::vector<int64_t> RandomOutputTable(std::mt19937& rng, DType t) {
  std::vector<int64_t> table(256);
  for (int64_t& v : table) v = t == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
  return table;
}

// `large`: outputs of 64-96 channels over 48-64 pixels square, whose int32 accumulators
// exceed the kernel's band size, so that it runs them in bands of rows.
Int8ConvCase RandomInt8Conv(std::mt19937& rng, int trial, bool large = false) {
  const int kind = static_cast<int>(RandInt(rng, 0, 3));  // 0, 3: plain, 1: grouped, 2: depthwise
  int64_t group = 1, cin = RandInt(rng, 1, 24), cout = large ? RandInt(rng, 64, 96) : RandInt(rng, 1, 40);
  if (kind == 1) {
    group = RandInt(rng, 2, 4);
    cin = group * RandInt(rng, 1, 4);
    cout = group * (large ? 24 : RandInt(rng, 1, 4));
  } else if (kind == 2) {
    group = large ? RandInt(rng, 64, 96) : RandInt(rng, 2, 40);
    cin = cout = group;
  }
  Dims kernel, strides, dilations, pads_begin, pads_end, in;
  for (int i = 0; i < 2; ++i) {
    kernel.push_back(std::vector<int64_t>{1, 3, 3, 5, 2}[RandInt(rng, 0, 4)]);
    strides.push_back(RandInt(rng, 1, 2));
    dilations.push_back(RandInt(rng, 0, 4) == 0 ? 2 : 1);
    const int64_t reach = (kernel[i] - 1) * dilations[i] + 1;
    pads_begin.push_back(RandInt(rng, 0, reach - 1));
    pads_end.push_back(RandInt(rng, 0, reach - 1));
    in.push_back(large ? RandInt(rng, 48, 64) * strides[i]
                       : RandInt(rng, std::max<int64_t>(1, reach - pads_begin[i] - pads_end[i]), 13));
  }
  const DType xt = trial % 3 == 2 ? DType::kI8 : DType::kU8;
  const DType yt = trial % 4 == 3 ? DType::kI8 : DType::kU8;
  const bool extreme = trial % 5 == 4;          // near-maximal operands: saturating paths would show
  const bool reduced = trial % 7 == 6;          // 7-bit weights (--reduce-range)
  const bool per_channel = trial % 2 == 0;
  // Every eighth trial: no output zero point and power-of-two scales, so the multipliers are
  // powers of two and many outputs fall exactly on ties (oneDNN's epilogue then rounds in its
  // conversion alone). The same random draws either way.
  const bool ties = trial % 8 == 5;
  auto pow2 = [&](float v) { return ties ? std::exp2(std::round(std::log2(v))) : v; };
  Dims xd = {RandInt(rng, 1, 2), cin, in[0], in[1]};
  Dims wd = {cout, cin / group, kernel[0], kernel[1]};
  const int64_t k = cin / group * kernel[0] * kernel[1];
  const float x_scale = pow2(RandScale(rng, 0.005f, 0.05f));
  std::vector<float> ws(per_channel ? cout : 1);
  for (float& s : ws) s = pow2(RandScale(rng, 0.001f, 0.02f));
  Tensor w_scale(DType::kF32, per_channel ? Dims{cout} : Dims{});
  for (size_t i = 0; i < ws.size(); ++i) w_scale.data<float>()[i] = ws[i];
  const int64_t wmax = reduced ? 64 : 127;
  Tensor w = extreme ? RandomInts<int8_t>(DType::kI8, wd, rng, wmax - 1, wmax) : RandomInts<int8_t>(DType::kI8, wd, rng, -wmax, wmax);
  const int64_t x_zp = extreme ? 0 : (xt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127));
  int64_t y_zp = yt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
  if (ties) y_zp = 0;
  const float y_scale = pow2(x_scale * ws[0] * std::sqrt(static_cast<float>(k)) * RandScale(rng, 20.f, 200.f));
  Attributes a;
  a.Set("group", group);
  a.Set("strides", strides);
  a.Set("dilations", dilations);
  Dims pads = pads_begin;
  pads.insert(pads.end(), pads_end.begin(), pads_end.end());
  if (RandInt(rng, 0, 4) == 0) a.Set("auto_pad", std::string("SAME_UPPER"));
  else a.Set("pads", pads);
  if (trial % 3 == 1) a.Set("edgec_requant", std::string("fixed_point"));
  if (trial % 4 == 1) {
    a.Set("edgec_qmin", std::min<int64_t>(y_zp + 3, 127));
    a.Set("edgec_qmax", std::min<int64_t>(y_zp + 90, 127));
  }
  if (trial % 5 == 3) a.Set("edgec_output_table", RandomOutputTable(rng, yt));  // a fused lookup
  testing_mv::Inputs inputs = {RandomActivation(xt, xd, rng, extreme), ScalarF(x_scale), ScalarQ(xt, x_zp), w, w_scale,
                               ScalarQ(DType::kI8, 0), ScalarF(y_scale), ScalarQ(yt, y_zp)};
  if (trial % 3 != 0) inputs.push_back(RandomInts<int32_t>(DType::kI32, {cout}, rng, -20000, 20000));
  FastCase c{OpKind::kQLinearConv, inputs, a};
  c.constants = {1, 2, 3, 4, 5, 6, 7, 8};
  c.nhwc = trial % 2 == 1 || trial % 5 == 0;
  if (c.nhwc && trial % 6 == 5) c.row_major_inputs = {0};
  c.threads = 1 + trial % 2;
  return {c, fmt::format("trial {} x {} {} zp {} w {} {} {} {}", trial, DimsStr(xd), DTypeName(xt), x_zp, DimsStr(wd),
                         per_channel ? "per-channel" : "per-tensor", AttrsStr(a), c.nhwc ? "nhwc" : "row-major")};
}

// Sets the kernels' measured choice for a scope (kMeasure again at its end).
// Whether the kernel described by `d` requantizes in oneDNN's epilogue (the words before the
// measured candidates it beat, which may name either epilogue).
bool OnednnRequantChosen(const std::string& d) {
  return d.substr(0, d.find("; measured")).find("with its requant") != std::string::npos;
}

// Why the kernel refuses the case ("" when it runs it). Without VNNI a u8 case is first
// made one with 7-bit weights, which oneDNN sums exactly there.
std::string RefusalWith7BitFallback(Int8ConvCase& t) {
  std::string why = RefusalOf(t.c);
  if (NoVnniRefusal(why) && t.c.inputs[0]->dtype() == DType::kU8) {
    Tensor& w = *t.c.inputs[3];
    for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(w.data<int8_t>()[i] / 2);
    why = RefusalOf(t.c);
  }
  return why;
}

TEST(CpuInt8, QLinearConvEqualsReference) {
  // oneDNN's first implementation with its epilogue where exact: what runs is known from the
  // case (the measured choice between candidates is QLinearConvAmxAndVnniCandidatesEqualReference's).
  std::mt19937 rng(808);
  int ran = 0, refused = 0, folded = 0, bordered = 0, tabled = 0, by_onednn = 0, by_own = 0;
  std::set<std::string> impls;
  for (int trial = 0; trial < 300; ++trial) {
    Int8ConvCase t = RandomInt8Conv(rng, trial);
    t.c.tuning.measured_choice = cpu::MeasuredChoice::kFirst;
    if (!testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs).ok()) continue;  // window larger than the input
    const std::string why = RefusalWith7BitFallback(t);
    if (NoVnniRefusal(why) || why.find("only its reference") != std::string::npos) {
      ++refused;  // documented fallbacks: the Plan runs the reference kernel
      continue;
    }
    std::string d;
    ForEachIsa([&] { d = ExpectMatchesRef(t.c, 0, 0, t.what); });  // the requantization's paths
    impls.insert(d.substr(0, d.find(']') + 1));
    folded += d.find("(zero point in the bias)") != std::string::npos;
    bordered += d.find("(zero point in the bias and border sums)") != std::string::npos;
    const bool onednn_requant = OnednnRequantChosen(d);
    (onednn_requant ? by_onednn : by_own) += 1;
    if (t.c.attrs.Has("edgec_output_table")) {
      ++tabled;
      EXPECT_NE(d.find(onednn_requant ? "then own 256-entry lookup" : "fused 256-entry lookup"), std::string::npos)
          << t.what << ": " << d;
    }
    ++ran;
  }
  EXPECT_GE(tabled, 20) << "cases with a fused lookup";
  EXPECT_GT(ran, 100);
  EXPECT_GE(folded, 10) << "unpadded cases whose source zero point went into the bias";
  EXPECT_GE(bordered, 40) << "padded cases whose source zero point went into the bias and border sums";
  if (ran) {  // both epilogues: oneDNN's (exact sums, one bias per channel) and the own one
    EXPECT_GE(by_onednn, 30) << "cases requantized by oneDNN";
    EXPECT_GE(by_own, 30) << "cases requantized by the own epilogue";
  }
  std::printf("QLinearConv: %d case(s) requantized by oneDNN, %d by the own epilogue\n", by_onednn, by_own);
  std::string list;
  for (const auto& s : impls) list += "\n  " + s;
  RecordProperty("implementations", list);
  if (refused) std::printf("QLinearConv: %d case(s) refused (no VNNI or only oneDNN's reference), %d ran\n", refused, ran);
}

// The reference's `edgec_output_table` is a QuantizedLookup of the op's output: QLinearConv
// with the table equals QuantizedLookup(QLinearConv without it, table) on u8 and i8 outputs,
// clamps and both requantizations; a table of the wrong size or with a value outside the
// output type is an error naming the attribute.
TEST(CpuInt8, OutputTableIsTheLookupOfTheOutput) {
  std::mt19937 rng(816);
  int checked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Int8ConvCase t = RandomInt8Conv(rng, trial);
    if (!t.c.attrs.Has("edgec_output_table")) continue;
    auto fused = testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs);
    if (!fused.ok()) continue;  // window larger than the input
    const DType yt = (*fused)[0].dtype();
    const std::vector<int64_t> entries = t.c.attrs.GetInts("edgec_output_table");
    Attributes plain = t.c.attrs;
    plain.Erase("edgec_output_table");
    auto conv = testing_mv::RunOp(t.c.op, t.c.inputs, plain);
    ASSERT_TRUE(conv.ok()) << t.what;
    Tensor table(yt, {256});
    for (int i = 0; i < 256; ++i) {
      if (yt == DType::kU8) table.data<uint8_t>()[i] = static_cast<uint8_t>(entries[i]);
      else table.data<int8_t>()[i] = static_cast<int8_t>(entries[i]);
    }
    auto looked_up = testing_mv::RunOp(OpKind::kQuantizedLookup, {(*conv)[0], table}, {});
    ASSERT_TRUE(looked_up.ok()) << t.what;
    EXPECT_TRUE(Close((*fused)[0], (*looked_up)[0], 0, 0)) << t.what;
    ++checked;
  }
  EXPECT_GE(checked, 5);
  Int8ConvCase t = RandomInt8Conv(rng, 0);
  t.c.attrs.Set("edgec_output_table", std::vector<int64_t>(255, 0));
  auto short_table = testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs);
  ASSERT_FALSE(short_table.ok());
  EXPECT_NE(short_table.status().message().find("edgec_output_table has 255 values"), std::string::npos)
      << short_table.status().message();
  std::vector<int64_t> bad(256, 0);
  bad[7] = 300;
  t.c.attrs.Set("edgec_output_table", bad);
  auto out_of_range = testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs);
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.status().message().find("value 300 is outside"), std::string::npos)
      << out_of_range.status().message();
  EXPECT_NE(RefusalOf(t.c).find("value 300 is outside"), std::string::npos) << RefusalOf(t.c);
}

// A QLinearConv of one pixel through a 1x1 kernel (an SE block's FC, a classifier) runs on
// the own VNNI GEMV where the CPU has it: inputs not a multiple of 4, outputs not a multiple
// of 16 (and fewer than 4 blocks), u8 and i8 rows with zero points, clamps, 2 images, 2
// threads, every ISA, bit for bit.
TEST(CpuInt8, QLinearConvOfOnePixelEqualsReference) {
  std::mt19937 rng(814);
  int gemv = 0, ran = 0;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{3, 1}, {4, 15}, {17, 16}, {64, 17}, {96, 70}, {576, 1000}, {1, 33}};
  for (int trial = 0; trial < 21; ++trial) {
    const auto [k, m] = shapes[trial % shapes.size()];
    const DType xt = trial % 2 ? DType::kI8 : DType::kU8, yt = trial % 3 == 2 ? DType::kI8 : DType::kU8;
    const Dims xd = {1 + trial % 2, k, 1, 1}, wd = {m, k, 1, 1};
    const bool per_channel = trial % 4 != 3;
    Tensor w_scale(DType::kF32, per_channel ? Dims{m} : Dims{});
    for (int64_t c = 0; c < w_scale.numel(); ++c) w_scale.data<float>()[c] = RandScale(rng, 0.001f, 0.02f);
    const float x_scale = 0.02f;
    const int64_t x_zp = xt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    const int64_t y_zp = yt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    Attributes a;
    if (trial % 4 == 2) a.Set("edgec_requant", std::string("fixed_point"));
    if (trial % 5 == 1) {
      a.Set("edgec_qmin", std::min<int64_t>(y_zp + 3, yt == DType::kU8 ? 255 : 127));
      a.Set("edgec_qmax", std::min<int64_t>(y_zp + 90, yt == DType::kU8 ? 255 : 127));
    }
    if (trial % 3 == 1) a.Set("edgec_output_table", RandomOutputTable(rng, yt));
    testing_mv::Inputs inputs = {RandomActivation(xt, xd, rng, trial % 7 == 6), ScalarF(x_scale), ScalarQ(xt, x_zp),
                                 RandomInts<int8_t>(DType::kI8, wd, rng, -127, 127), w_scale, ScalarQ(DType::kI8, 0),
                                 ScalarF(x_scale * 0.01f * std::sqrt(static_cast<float>(k)) * 40.f), ScalarQ(yt, y_zp)};
    if (trial % 3 != 0) inputs.push_back(RandomInts<int32_t>(DType::kI32, {m}, rng, -20000, 20000));
    FastCase c{OpKind::kQLinearConv, inputs, a};
    c.constants = {1, 2, 3, 4, 5, 6, 7, 8};
    c.nhwc = trial % 2 == 0;
    c.threads = 1 + trial % 2;
    const std::string what = fmt::format("trial {} k {} m {} {} -> {} zp {}", trial, k, m, DTypeName(xt), DTypeName(yt), x_zp);
    if (NoVnniRefusal(RefusalOf(c))) continue;  // no VNNI: the Plan runs the reference kernel
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, what);
      gemv += d.find("own int8 gemv") != std::string::npos;
    });
    ++ran;
  }
  EXPECT_GT(ran, 10);
  static const bool vnni = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw");
  if (vnni) {
    EXPECT_GE(gemv, ran);  // at least the avx512 pass of every case
  }
}

// A row-major image of 3 channels (a model's quantized input) is interleaved into NHWC by
// the kernel itself (64 pixels per step with AVX-512 VBMI, the rest and other CPUs pixel by
// pixel): images whose pixel count is and is not a multiple of 64, NHWC and row-major
// outputs, 1 and 2 images, every ISA, bit for bit.
TEST(CpuInt8, QLinearConvOfAThreeChannelImageEqualsReference) {
  std::mt19937 rng(813);
  int interleaved = 0;
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{8, 8}, {13, 11}, {32, 50}, {7, 9}};
  for (int trial = 0; trial < 8; ++trial) {
    const auto [h, w] = sizes[trial % sizes.size()];
    const DType xt = trial % 3 == 2 ? DType::kI8 : DType::kU8;
    const Dims xd = {1 + trial % 2, 3, h, w}, wd = {16, 3, 3, 3};
    const float x_scale = 0.02f;
    Tensor w_scale(DType::kF32, Dims{16});
    for (int64_t c = 0; c < 16; ++c) w_scale.data<float>()[c] = RandScale(rng, 0.001f, 0.02f);
    const int64_t x_zp = xt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    Attributes a = testing_mv::Attrs({{"strides", Dims{2, 2}}, {"pads", Dims{1, 1, 1, 1}}});
    testing_mv::Inputs inputs = {RandomActivation(xt, xd, rng, false), ScalarF(x_scale), ScalarQ(xt, x_zp),
                                 RandomInts<int8_t>(DType::kI8, wd, rng, -127, 127), w_scale, ScalarQ(DType::kI8, 0),
                                 ScalarF(x_scale * 0.01f * 6.f * 50.f), ScalarQ(DType::kU8, 128),
                                 RandomInts<int32_t>(DType::kI32, {16}, rng, -20000, 20000)};
    FastCase c{OpKind::kQLinearConv, inputs, a};
    c.constants = {1, 2, 3, 4, 5, 6, 7, 8};
    c.nhwc = trial % 4 < 3;
    if (c.nhwc) c.row_major_inputs = {0};
    c.threads = 1 + trial % 2;
    const std::string what = fmt::format("trial {} x {} {} zp {} {}", trial, DimsStr(xd), DTypeName(xt), x_zp,
                                         c.nhwc ? "nhwc out" : "row-major out");
    if (NoVnniRefusal(RefusalOf(c))) continue;  // no VNNI: the Plan runs the reference kernel
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, what);
      interleaved += d.find("own interleave in") != std::string::npos;
    });
  }
  if (!NoVnniRefusal(RefusalOf(RandomInt8Conv(rng, 0).c))) {
    EXPECT_GE(interleaved, 16);
  }
}

// edgec_quantize_input (fuse-input-quantize): input 0 is f32 and the conv quantizes it first.
// The reference equals QuantizeLinear then QLinearConv bit for bit (ties, saturation, NaN and
// infinities among the values); the fast kernel equals the reference on every ISA: a
// three-channel image quantized as it is interleaved (small, and 224x224 in bands, on two
// threads side by side each quantizing its own rows), and any other conv behind a quantize.
TEST(CpuInt8, QuantizedInputIsTheQuantizeOfTheFloatInput) {
  std::mt19937 rng(817);
  int fused = 0, wrapped = 0, checked = 0;
  for (int trial = 0; trial < 14; ++trial) {
    FastCase c{OpKind::kQLinearConv, {}, {}};
    std::string what;
    if (trial % 2 == 0) {
      const int64_t side = trial == 0 || trial == 6 ? 224 : std::vector<int64_t>{9, 13, 32, 50}[trial / 2 % 4];
      const DType xt = trial % 3 == 2 ? DType::kI8 : DType::kU8;
      Tensor w_scale(DType::kF32, Dims{16});
      for (int64_t k = 0; k < 16; ++k) w_scale.data<float>()[k] = RandScale(rng, 0.001f, 0.02f);
      const int64_t x_zp = xt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
      c.inputs = {Tensor(DType::kF32, {1 + trial % 4 / 2, 3, side, side + 3 * (trial % 3)}), ScalarF(0.02f), ScalarQ(xt, x_zp),
                  RandomInts<int8_t>(DType::kI8, {16, 3, 3, 3}, rng, -127, 127), w_scale, ScalarQ(DType::kI8, 0),
                  ScalarF(0.02f * 0.01f * 300.f), ScalarQ(DType::kU8, 128), RandomInts<int32_t>(DType::kI32, {16}, rng, -20000, 20000)};
      c.attrs = testing_mv::Attrs({{"strides", Dims{2, 2}}, {"pads", Dims{1, 1, 1, 1}}});
      c.constants = {1, 2, 3, 4, 5, 6, 7, 8};
      c.nhwc = true;
      c.row_major_inputs = {0};
      c.threads = trial % 4 == 0 ? 2 : 1 + trial % 2;
      what = fmt::format("trial {} image {} {}", trial, DimsStr(c.inputs[0]->dims()), DTypeName(xt));
    } else {
      Int8ConvCase t = RandomInt8Conv(rng, trial);
      c = t.c;
      c.inputs[0] = Tensor(DType::kF32, c.inputs[0]->dims());
      what = t.what;
    }
    // Values around every step of the quantized range and beyond: whole and half steps (ties
    // to even), saturation, NaN, infinities.
    Tensor& x = *c.inputs[0];
    const float scale = c.inputs[1]->data<float>()[0];
    std::uniform_int_distribution<int> step(-300, 300), kind(0, 99);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int k = kind(rng);
      x.data<float>()[i] = k == 0   ? std::numeric_limits<float>::quiet_NaN()
                           : k == 1 ? (i % 2 ? 1 : -1) * std::numeric_limits<float>::infinity()
                           : k < 30 ? (static_cast<float>(step(rng)) + 0.5f) * scale
                                    : static_cast<float>(step(rng)) * scale * 0.37f;
    }
    c.attrs.Set("edgec_quantize_input", int64_t{1});
    // The reference: the fused attribute is QuantizeLinear, then the conv.
    auto with = testing_mv::RunOp(c.op, c.inputs, c.attrs);
    if (!with.ok()) continue;  // a random window larger than its input
    auto q = testing_mv::RunOp(OpKind::kQuantizeLinear, {x, *c.inputs[1], *c.inputs[2]});
    ASSERT_TRUE(q.ok()) << what;
    testing_mv::Inputs plain_inputs = c.inputs;
    plain_inputs[0] = (*q)[0];
    Attributes plain = c.attrs;
    plain.Erase("edgec_quantize_input");
    auto without = testing_mv::RunOp(c.op, plain_inputs, plain);
    ASSERT_TRUE(without.ok()) << what;
    EXPECT_TRUE(Close((*with)[0], (*without)[0], 0, 0)) << what;
    ++checked;
    if (NoVnniRefusal(RefusalOf(c))) continue;  // no VNNI: the Plan runs the reference kernel
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, what);
      fused += d.find("via own quantize + interleave in") != std::string::npos;
      wrapped += d.find("own quantize in, then") != std::string::npos;
      if (trial % 2 == 0) {
        EXPECT_EQ(d.find("own quantize in, then"), std::string::npos) << d;
      }
    });
  }
  EXPECT_GE(checked, 10);
  if (!NoVnniRefusal(RefusalOf(RandomInt8Conv(rng, 0).c))) {
    EXPECT_GE(fused, 10);
    EXPECT_GE(wrapped, 6);
  }
  // Not f32: an error that names the input and its dtype.
  Int8ConvCase t = RandomInt8Conv(rng, 0);
  t.c.attrs.Set("edgec_quantize_input", int64_t{1});
  auto wrong = testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("input 0 has dtype u8, expected one of f32"), std::string::npos)
      << wrong.status().message();
  EXPECT_NE(RefusalOf(t.c).find("input 0 has dtype u8, expected one of f32"), std::string::npos) << RefusalOf(t.c);
}

// Large layers run in bands of output rows (each band's accumulators requantized while in
// cache): the first and last bands carry the padding, a band's input rows overlap its
// neighbours' by the window; with 2 threads each runs whole bands, side by side (the band
// count a multiple of the threads); all of it must still equal the reference bit for bit.
TEST(CpuInt8, QLinearConvInBandsEqualsReference) {
  std::mt19937 rng(810);
  int banded = 0, side_by_side = 0, fused = 0;
  for (int trial = 0; trial < 16; ++trial) {
    Int8ConvCase t = RandomInt8Conv(rng, trial, /*large=*/true);
    t.c.tuning.measured_choice = cpu::MeasuredChoice::kFirst;  // as in QLinearConvEqualsReference
    if (!testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs).ok()) continue;
    if (!RefusalOf(t.c).empty()) continue;  // no VNNI: the 300 small cases cover what runs
    const std::string d = ExpectMatchesRef(t.c, 0, 0, t.what);
    const bool in_bands = d.find("in bands of") != std::string::npos;
    const bool onednn_requant = OnednnRequantChosen(d);
    banded += in_bands && !onednn_requant;
    fused += onednn_requant;
    side_by_side += d.find("on 2 threads side by side") != std::string::npos;
    // Bands run side by side on 2 threads; a layer whose u8 result fits one band per image
    // (oneDNN's requantization: no accumulators in scratch) may run unbanded instead.
    if (t.c.threads == 1 || in_bands) EXPECT_EQ(d.find("side by side") != std::string::npos, t.c.threads == 2) << t.what << ": " << d;
    else EXPECT_TRUE(onednn_requant) << t.what << ": " << d;
  }
  if (!NoVnniRefusal(RefusalOf(RandomInt8Conv(rng, 0, true).c))) {
    EXPECT_GE(banded, 8) << "layers banded for the own requantization";
    EXPECT_GE(fused, 3) << "layers requantized by oneDNN";
    EXPECT_GE(side_by_side, 6);
  }
}

// On a CPU with AMX the kernel times oneDNN's AMX convolution against the first that is not
// AMX and keeps the faster (MeasuredChoice::kMeasure): both candidates must equal the
// reference, the measured choice must say what it beat, dilated layers must never get AMX
// (oneDNN 2.6's is wrong there), and without AMX nothing is measured.
TEST(CpuInt8, QLinearConvAmxAndVnniCandidatesEqualReference) {
  const bool amx = dnnl::get_effective_cpu_isa() == dnnl::cpu_isa::avx512_core_amx;
  std::mt19937 rng(811);
  int both = 0, measured = 0, ran = 0;
  for (int trial = 0; trial < 240; ++trial) {
    Int8ConvCase t = RandomInt8Conv(rng, trial, /*large=*/trial % 4 == 0);
    if (!testing_mv::RunOp(t.c.op, t.c.inputs, t.c.attrs).ok()) continue;
    if (!RefusalWith7BitFallback(t).empty()) continue;  // i8 without VNNI, or only oneDNN's reference
    const Dims dil = t.c.attrs.GetInts("dilations", {1, 1});
    const bool dilated = dil[0] != 1 || dil[1] != 1;
    t.c.tuning.measured_choice = cpu::MeasuredChoice::kFirst;
    const std::string first = ExpectMatchesRef(t.c, 0, 0, t.what + " (oneDNN's first)");
    t.c.tuning.measured_choice = cpu::MeasuredChoice::kSecond;
    const std::string no_amx = ExpectMatchesRef(t.c, 0, 0, t.what + " (first not AMX)");
    t.c.tuning.measured_choice = cpu::MeasuredChoice::kMeasure;
    const std::string chosen = ExpectMatchesRef(t.c, 0, 0, t.what + " (measured)");
    ++ran;
    const bool first_amx = first.find("amx") != std::string::npos;
    if (dilated) {
      EXPECT_EQ(first.find("amx"), std::string::npos) << t.what << ": " << first;
    }
    if (!amx) {
      EXPECT_FALSE(first_amx) << t.what << ": " << first;
      EXPECT_EQ(first, chosen) << t.what;
    }
    if (first_amx && no_amx.find("amx") == std::string::npos) {
      ++both;  // two candidates: the measured kernel is one of them and names the other
      measured += chosen.find("; measured faster than [") != std::string::npos;
      EXPECT_NE(chosen.find("; measured faster than ["), std::string::npos) << t.what << ": " << chosen;
      // The implementation in brackets (the output type before it depends on the epilogue).
      auto impl = [](const std::string& d) { return d.substr(d.find('['), d.find(']') - d.find('[') + 1); };
      EXPECT_TRUE(impl(chosen) == impl(first) || impl(chosen) == impl(no_amx)) << t.what << ": " << chosen;
    } else {
      EXPECT_EQ(chosen.find("measured"), std::string::npos) << t.what << ": " << chosen;
    }
  }
  EXPECT_GT(ran, 40);
  if (amx) {
    EXPECT_GE(both, 30) << "cases with an AMX and a non-AMX candidate";
  }
  std::printf("QLinearConv: %d of %d case(s) had an AMX and a non-AMX candidate, %d measured\n", both, ran, measured);
}

// The requantization epilogue on every ISA against ONNX's formula written out here:
// saturate(round_half_to_even(f32(acc + b) · m) + zp), clamped to [qmin, qmax]. Channel counts
// cover the 64-wide path, its 16-wide and masked tails; multipliers of 0.5 with odd sums make
// exact ties; large sums and multipliers overflow both ends of the range.
TEST(CpuInt8, RequantizationEqualsTheFormulaOnEveryIsa) {
  std::mt19937 rng(812);
  int cases = 0;
  for (int64_t channels : {1, 5, 16, 24, 40, 48, 64, 80, 130, 192}) {
    for (int trial = 0; trial < 6; ++trial) {
      const DType out = trial % 2 ? DType::kI8 : DType::kU8;
      const int32_t tmin = out == DType::kU8 ? 0 : -128, tmax = out == DType::kU8 ? 255 : 127;
      const int32_t zp = static_cast<int32_t>(RandInt(rng, tmin, tmax));
      Attributes attrs;
      if (trial % 3 == 2) {
        attrs.Set("edgec_qmin", std::min<int64_t>(zp + 2, tmax));
        attrs.Set("edgec_qmax", std::min<int64_t>(zp + 70, tmax));
      }
      std::vector<float> w_scale(channels);
      std::vector<int32_t> bias(channels);
      for (int64_t c = 0; c < channels; ++c) {
        w_scale[c] = c % 4 == 0 ? 0.5f : RandScale(rng, 0.001f, trial == 5 ? 40.f : 0.05f);
        bias[c] = static_cast<int32_t>(RandInt(rng, -3000, 3000));
      }
      // x_scale 1, y_scale 1: the multiplier is w_scale itself (0.5: exact ties on odd sums).
      auto rq = cpu::MakeInt8Requant(attrs, "requant", 1.f, w_scale, channels, 1.f, zp, out, bias.data());
      ASSERT_TRUE(rq.ok()) << rq.status().ToString();
      const int64_t rows = 37;
      std::vector<int32_t> acc(rows * channels);
      for (int32_t& a : acc) a = static_cast<int32_t>(RandInt(rng, trial == 4 ? -2000000000 : -40000, trial == 4 ? 2000000000 : 40000));
      std::vector<int32_t> want(acc.size());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < channels; ++c) {
          const float f = static_cast<float>(acc[r * channels + c] + bias[c]) * rq->multiplier[c];
          const float q = std::nearbyint(f) + static_cast<float>(zp);
          want[r * channels + c] = static_cast<int32_t>(std::min(std::max(q, static_cast<float>(rq->qmin)), static_cast<float>(rq->qmax)));
        }
      ForEachIsa([&] {
        std::vector<uint8_t> y(acc.size(), 0xAA);
        rq->Run(acc.data(), channels, 0, rows, y.data(), channels, 1);
        int wrong = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          const int32_t got = out == DType::kU8 ? y[i] : static_cast<int8_t>(y[i]);
          if (got != want[i] && wrong++ < 3)
            ADD_FAILURE() << channels << " channels, trial " << trial << ", element " << i << ": got " << got << ", want " << want[i];
        }
      });
      ++cases;
    }
  }
  EXPECT_EQ(cases, 60);
}

TEST(CpuInt8, QLinearMatMulEqualsReference) {
  std::mt19937 rng(809);
  int ran = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int64_t m = RandInt(rng, 1, 40), k = RandInt(rng, 1, 300), n = RandInt(rng, 1, 70);
    const DType at = trial % 2 ? DType::kI8 : DType::kU8;
    const DType yt = trial % 3 == 2 ? DType::kI8 : DType::kU8;
    const bool per_col = trial % 2 == 0;
    Dims ad = trial % 4 == 3 ? Dims{2, m, k} : Dims{m, k};
    Tensor bs(DType::kF32, per_col ? Dims{n} : Dims{});
    for (int64_t i = 0; i < bs.numel(); ++i) bs.data<float>()[i] = RandScale(rng, 0.001f, 0.02f);
    const float a_scale = RandScale(rng, 0.005f, 0.05f);
    const float y_scale = a_scale * bs.data<float>()[0] * std::sqrt(static_cast<float>(k)) * RandScale(rng, 20.f, 200.f);
    Attributes a;
    if (trial % 3 == 1) a.Set("edgec_requant", std::string("fixed_point"));
    if (trial % 4 == 3) a.Set("edgec_output_table", RandomOutputTable(rng, yt));  // a fused lookup
    const int64_t zlo = at == DType::kU8 ? 0 : -128, zhi = at == DType::kU8 ? 255 : 127;
    testing_mv::Inputs in = {RandomActivation(at, ad, rng, trial % 5 == 4), ScalarF(a_scale), ScalarQ(at, RandInt(rng, zlo, zhi)),
                             RandomInts<int8_t>(DType::kI8, {k, n}, rng, -127, 127), bs, ScalarQ(DType::kI8, 0), ScalarF(y_scale),
                             ScalarQ(yt, yt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127))};
    FastCase c{OpKind::kQLinearMatMul, in, a};
    c.constants = {1, 2, 3, 4, 5, 6, 7};
    c.threads = 1 + trial % 2;
    if (NoVnniRefusal(RefusalOf(c))) {
      // Without VNNI only 7-bit weights (and u8 activations) are exact: test those instead.
      Tensor& w = *c.inputs[3];
      for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(w.data<int8_t>()[i] / 2);
      if (NoVnniRefusal(RefusalOf(c))) continue;  // i8 activations: the Plan runs the reference kernel
    }
    ForEachIsa([&] { ExpectMatchesRef(c, 0, 0, fmt::format("matmul a {} k {} n {} trial {}", DimsStr(ad), k, n, trial)); });
    ++ran;
  }
  EXPECT_GT(ran, 20);
}

// Values at, just below and just above (k + 0.5) · scale for every k of the range, many
// scales: the fast QuantizeLinear must round x / scale half to even exactly as the
// reference does (a loop that multiplied by 1 / scale would differ at some of them).
TEST(CpuInt8, QuantizeRoundsTiesAsTheDivision) {
  std::mt19937 rng(815);
  for (int trial = 0; trial < 24; ++trial) {
    const DType qt = trial % 2 ? DType::kI8 : DType::kU8;
    const float s = trial == 0 ? 0.1f : trial == 1 ? 1.f / 3.f : RandScale(rng, 0.0005f, 0.5f);
    const int64_t z = qt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    std::vector<float> values;
    for (int k = -300; k <= 300; ++k) {
      const float tie = (static_cast<float>(k) + 0.5f) * s;
      float below = tie, above = tie;
      for (int u = 0; u < 3; ++u) {
        values.push_back(below);
        values.push_back(above);
        below = std::nextafter(below, -INFINITY);
        above = std::nextafter(above, INFINITY);
      }
    }
    Tensor x(DType::kF32, {1, static_cast<int64_t>(values.size())});
    std::copy(values.begin(), values.end(), x.data<float>());
    FastCase q{OpKind::kQuantizeLinear, {x, ScalarF(s), ScalarQ(qt, z)}, {}};
    q.constants = {1, 2};
    ForEachIsa([&] { ExpectMatchesRef(q, 0, 0, fmt::format("quantize near ties, scale {} trial {}", s, trial)); });
  }
}

TEST(CpuInt8, QuantizeDequantizeEqualReference) {
  std::mt19937 rng(810);
  for (int trial = 0; trial < 40; ++trial) {
    const DType qt = trial % 2 ? DType::kI8 : DType::kU8;
    Dims dims = {1, RandInt(rng, 1, 20), RandInt(rng, 1, 9), RandInt(rng, 1, 9)};
    Tensor x = Random(dims, rng, -4.f, 4.f);
    x.data<float>()[0] = std::nanf("");  // NaN quantizes to the zero point
    if (x.numel() > 2) x.data<float>()[1] = 1e9f;  // saturates
    const float s = RandScale(rng, 0.003f, 0.05f);
    const int64_t z = qt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    FastCase q{OpKind::kQuantizeLinear, {x, ScalarF(s), ScalarQ(qt, z)}, {}};
    q.constants = {1, 2};
    q.nhwc = trial % 3 == 0;
    q.threads = 1 + trial % 2;
    ForEachIsa([&] { ExpectMatchesRef(q, 0, 0, fmt::format("quantize {} trial {}", DimsStr(dims), trial)); });
    FastCase d{OpKind::kDequantizeLinear, {RandomActivation(qt, dims, rng, false), ScalarF(s), ScalarQ(qt, z)}, {}};
    d.constants = {1, 2};
    d.nhwc = q.nhwc;
    d.threads = q.threads;
    ForEachIsa([&] { ExpectMatchesRef(d, 0, 0, fmt::format("dequantize {} trial {}", DimsStr(dims), trial)); });
  }
}

// oneDNN's int8 pools, and the own NHWC MaxPool (u8 and i8: signed and unsigned maxima,
// 64-byte blocks and masked tails, every ISA).
TEST(CpuInt8, MaxPoolOnInt8EqualsReference) {
  std::mt19937 rng(812);
  int own = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const DType dt = trial % 2 ? DType::kI8 : DType::kU8;
    const int64_t k = RandInt(rng, 1, 3), st = RandInt(rng, 1, 2), pad = RandInt(rng, 0, k - 1);
    Dims dims = {1, trial % 4 == 1 ? RandInt(rng, 64, 150) : RandInt(rng, 1, 20), RandInt(rng, k, 12), RandInt(rng, k, 12)};
    Attributes a;
    a.Set("kernel_shape", Dims{k, k});
    a.Set("strides", Dims{st, st});
    a.Set("pads", Dims{pad, pad, pad, pad});
    FastCase c{trial % 5 == 4 ? OpKind::kGlobalMaxPool : OpKind::kMaxPool, {RandomActivation(dt, dims, rng, false)},
               trial % 5 == 4 ? Attributes{} : a};
    c.nhwc = trial % 3 != 0;
    c.threads = 1 + trial % 2;
    // A documented fallback: oneDNN's AVX2 build has no optimized int8 global pooling.
    if (c.op == OpKind::kGlobalMaxPool && RefusalOf(c).find("only its reference int8 pooling") != std::string::npos) continue;
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, fmt::format("maxpool {} {} trial {}", DimsStr(dims), AttrsStr(a), trial));
      EXPECT_NE(d.find(std::string(DTypeName(dt))), std::string::npos) << d;
      own += d.find("own MaxPool") != std::string::npos;
    });
  }
  EXPECT_GE(own, 20);
}

TEST(CpuInt8, LookupEqualsReference) {
  std::mt19937 rng(813);
  for (int trial = 0; trial < 20; ++trial) {
    const DType xt = trial % 2 ? DType::kI8 : DType::kU8, yt = trial % 3 ? DType::kU8 : DType::kI8;
    Dims dims = {1, RandInt(rng, 1, 40), RandInt(rng, 1, 17), RandInt(rng, 1, 17)};
    Tensor table = yt == DType::kU8 ? RandomInts<uint8_t>(yt, {256}, rng, 0, 255) : RandomInts<int8_t>(yt, {256}, rng, -128, 127);
    FastCase c{OpKind::kQuantizedLookup, {RandomActivation(xt, dims, rng, false), table}, {}};
    c.constants = {1};
    c.nhwc = trial % 3 == 0;
    c.threads = 1 + trial % 2;
    ForEachIsa([&] { ExpectMatchesRef(c, 0, 0, fmt::format("lookup {} trial {}", DimsStr(dims), trial)); });
  }
}

TEST(CpuInt8, QuantizedAddEqualsReference) {
  // Both requantization modes, u8/i8 operands and result, a fused ReLU clamp, NHWC and
  // row-major, 1 and 2 threads; lengths not a multiple of the vector width.
  std::mt19937 rng(814);
  for (int trial = 0; trial < 40; ++trial) {
    const DType at = trial % 2 ? DType::kI8 : DType::kU8, bt = trial % 3 ? DType::kU8 : DType::kI8;
    const DType yt = trial % 5 < 2 ? DType::kI8 : DType::kU8;
    Dims dims = {RandInt(rng, 1, 2), RandInt(rng, 1, 40), RandInt(rng, 1, 17), RandInt(rng, 1, 17)};
    auto zp = [&](DType t) { return t == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127); };
    const int64_t zy = zp(yt);
    Attributes a;
    if (trial % 3 == 1) a.Set("edgec_requant", std::string("fixed_point"));
    if (trial % 4 == 2) a.Set("edgec_qmin", zy);
    FastCase c{OpKind::kQLinearAdd,
               {RandomActivation(at, dims, rng, false), ScalarF(RandScale(rng, 0.002f, 0.05f)), ScalarQ(at, zp(at)),
                RandomActivation(bt, dims, rng, trial % 7 == 6), ScalarF(RandScale(rng, 0.002f, 0.05f)),
                ScalarQ(bt, zp(bt)), ScalarF(RandScale(rng, 0.004f, 0.08f)), ScalarQ(yt, zy)},
               a};
    c.constants = {1, 2, 4, 5, 6, 7};
    c.nhwc = trial % 3 == 0;
    c.threads = 1 + trial % 2;
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, fmt::format("qlinearadd {} {} trial {}", DimsStr(dims), AttrsStr(a), trial));
      EXPECT_NE(d.find("quantized add"), std::string::npos) << d;
    });
  }
  // One operand per channel runs on the fast kernel (as QLinearMul's, below); other
  // broadcasting runs on the reference (refused here, with the reason).
  FastCase b{OpKind::kQLinearAdd,
             {RandomActivation(DType::kU8, {1, 4, 3, 3}, rng, false), ScalarF(0.1f), ScalarQ(DType::kU8, 3),
              RandomActivation(DType::kU8, {1, 4, 1, 1}, rng, false), ScalarF(0.1f), ScalarQ(DType::kU8, 3),
              ScalarF(0.1f), ScalarQ(DType::kU8, 3)},
             {}};
  b.constants = {1, 2, 4, 5, 6, 7};
  EXPECT_NE(ExpectMatchesRef(b, 0, 0, "per-channel add").find("one operand per channel"), std::string::npos);
  b.inputs[3] = RandomActivation(DType::kU8, {1, 1, 3, 3}, rng, false);
  EXPECT_NE(RefusalOf(b).find("broadcasting"), std::string::npos) << RefusalOf(b);
}

// Output scales so small that the ratios are huge or infinite: products of zero give NaN
// (the zero point, as the reference), the rest saturate; the kernel keeps its NaN check for
// them and drops it for ordinary scales, which must not change a value either way.
TEST(CpuInt8, QuantizedAddAndMulWithExtremeRatiosEqualReference) {
  std::mt19937 rng(817);
  int ran = 0;
  for (OpKind op : {OpKind::kQLinearMul, OpKind::kQLinearAdd}) {
    for (float sy : {1e-44f, 1e-36f, 3e-33f, 0.05f}) {
      for (bool per_channel : {false, true}) {
        const Dims x = {1, 48, 5, 7};
        const Dims bd = per_channel ? Dims{1, 48, 1, 1} : x;
        Tensor a = RandomActivation(DType::kU8, x, rng, false), b = RandomActivation(DType::kU8, bd, rng, false);
        for (int64_t i = 0; i < a.numel(); i += 5) a.data<uint8_t>()[i] = 17;  // a - za = 0: a zero product
        FastCase c{op, {a, ScalarF(0.01f), ScalarQ(DType::kU8, 17), b, ScalarF(0.02f), ScalarQ(DType::kU8, 3),
                        ScalarF(sy), ScalarQ(DType::kU8, 100)}, {}};
        c.constants = {1, 2, 4, 5, 6, 7};
        c.nhwc = true;
        ForEachIsa([&] { ExpectMatchesRef(c, 0, 0, fmt::format("{} sy {} {}", OpName(op), sy, DimsStr(bd))); });
        ++ran;
      }
    }
  }
  EXPECT_EQ(ran, 16);
}

// One seeded QLinearMul case: same shapes, or the squeeze-excitation form x[N,C,H,W] · gate[N|1,C,1,1]
// in either order; u8/i8 operands and result, random zero points, output scales from
// "most products saturate" to "fine steps", a clamp, both modes, NHWC and row-major, 1 and 2
// threads (the large cases split across them).
FastCase RandomQLinearMul(std::mt19937& rng, int trial) {
  const DType at = trial % 2 ? DType::kI8 : DType::kU8, bt = trial % 3 ? DType::kU8 : DType::kI8;
  const DType yt = trial % 5 < 2 ? DType::kI8 : DType::kU8;
  const bool large = trial % 6 == 5;
  // 16, 32 and 96 channels (and 64 among the large ones): whole NHWC rows the AVX-512 loop
  // runs with the gate's terms taken once per run of pixels.
  const int64_t channels = trial % 16 == 10 ? 96 : trial % 8 == 2 ? 16 : trial % 8 == 6 ? 32 : RandInt(rng, 1, 40);
  Dims x = {RandInt(rng, 1, 2), channels, RandInt(rng, 1, 17), RandInt(rng, 1, 17)};
  if (large) x = {2, trial % 12 == 11 ? 64 : RandInt(rng, 48, 70), RandInt(rng, 19, 25), RandInt(rng, 19, 25)};
  const int form = trial % 4;  // 0: same shapes, 1: x · gate, 2: gate · x, 3: one gate for every image
  Dims gate = {form == 3 ? 1 : x[0], x[1], 1, 1};
  const Dims ad = form == 2 ? gate : x, bd = form == 0 ? x : form == 2 ? x : gate;
  auto zp = [&](DType t) { return t == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127); };
  const int64_t zy = zp(yt);
  const float sa = RandScale(rng, 0.002f, 0.05f), sb = RandScale(rng, 0.002f, 0.05f);
  // |(a - za)(b - zb)| reaches 255²: a ratio of 20 saturates most products, 4000 none.
  const float sy = sa * sb * std::exp(RandScale(rng, std::log(20.f), std::log(4000.f)));
  Attributes a;
  if (trial % 3 == 1) a.Set("edgec_requant", std::string("fixed_point"));
  if (trial % 4 == 2) a.Set("edgec_qmin", zy);
  FastCase c{OpKind::kQLinearMul,
             {RandomActivation(at, ad, rng, trial % 7 == 6), ScalarF(sa), ScalarQ(at, zp(at)),
              RandomActivation(bt, bd, rng, false), ScalarF(sb), ScalarQ(bt, zp(bt)), ScalarF(sy), ScalarQ(yt, zy)},
             a};
  c.constants = {1, 2, 4, 5, 6, 7};
  c.nhwc = trial % 2 == 0 || trial % 12 == 11;
  c.threads = large ? 2 : 1 + (trial / 2) % 2;
  return c;
}

TEST(CpuInt8, QuantizedMulEqualsReferenceAndTheIsland) {
  // The fast kernel equals the reference bit for bit, AVX2 and scalar; the reference's float
  // mode (the ratio form, quant/ratio_forms.h) is within one step of DequantizeLinear,
  // DequantizeLinear -> Mul -> QuantizeLinear on the reference kernels and equal to it but
  // next to a rounding tie (here: all but a few values in 10^4); the fixed-point mode is
  // within one step of the island.
  std::mt19937 rng(816);
  int saturated = 0, broadcast = 0, fixed_differs = 0;
  int64_t values = 0, float_differs = 0;
  for (int trial = 0; trial < 48; ++trial) {
    const FastCase c = RandomQLinearMul(rng, trial);
    const std::string what =
        fmt::format("qlinearmul {} x {} {} {} trial {}", DimsStr(c.inputs[0]->dims()), DimsStr(c.inputs[3]->dims()),
                    AttrsStr(c.attrs), c.nhwc ? "nhwc" : "row-major", trial);
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, what);
      EXPECT_NE(d.find("quantized mul"), std::string::npos) << d;
      broadcast += d.find("per channel") != std::string::npos;
    });
    auto folded = testing_mv::RunOp(c.op, c.inputs, c.attrs);
    Attributes float_mode = c.attrs;
    float_mode.Set("edgec_requant", std::string("float"));
    auto as_float = testing_mv::RunOp(c.op, c.inputs, float_mode);
    auto da = testing_mv::RunOp(OpKind::kDequantizeLinear, {*c.inputs[0], *c.inputs[1], *c.inputs[2]});
    auto db = testing_mv::RunOp(OpKind::kDequantizeLinear, {*c.inputs[3], *c.inputs[4], *c.inputs[5]});
    ASSERT_TRUE(folded.ok() && as_float.ok() && da.ok() && db.ok()) << what;
    auto mul = testing_mv::RunOp(OpKind::kMul, {(*da)[0], (*db)[0]});
    ASSERT_TRUE(mul.ok()) << what;
    auto island = testing_mv::RunOp(OpKind::kQuantizeLinear, {(*mul)[0], *c.inputs[6], *c.inputs[7]});
    ASSERT_TRUE(island.ok()) << what;
    Tensor want = (*island)[0];
    if (c.attrs.Has("edgec_qmin")) {  // the clamp is a Relu after the Mul: Q(Relu(v)) = max(Q(v), zy)
      const std::vector<double> v = want.ToDoubleVector();
      const double lo = c.inputs[7]->ToDoubleVector()[0];
      for (int64_t i = 0; i < want.numel(); ++i) StoreFromDouble(want.dtype(), want.raw(), i, std::max(v[i], lo));
    }
    const bool fixed = c.attrs.GetString("edgec_requant", "float") == "fixed_point";
    EXPECT_TRUE(Close((*as_float)[0], want, 0, 1)) << what;
    EXPECT_TRUE(Close((*folded)[0], want, 0, 1)) << what;
    const std::vector<double> got = (*as_float)[0].ToDoubleVector(), island_v = want.ToDoubleVector();
    for (size_t i = 0; i < got.size(); ++i) float_differs += got[i] != island_v[i];
    values += static_cast<int64_t>(got.size());
    fixed_differs += fixed && !Close((*folded)[0], want, 0, 0);
    const double lo = want.dtype() == DType::kU8 ? 0 : -128, hi = want.dtype() == DType::kU8 ? 255 : 127;
    for (double v : want.ToDoubleVector()) saturated += v == lo || v == hi;
  }
  EXPECT_GT(saturated, 1000);   // the saturating cases did saturate
  EXPECT_GT(broadcast, 40);     // the per-channel forms ran on the fast kernel (x2 ISAs)
  EXPECT_GT(fixed_differs, 0);  // the fixed-point mode is not the float one under another name
  EXPECT_LE(float_differs * 10000, values * 3) << float_differs << " of " << values;  // only next to ties
}

TEST(CpuInt8, QuantizedGlobalAveragePoolEqualsReferenceAndTheIsland) {
  // The fast kernel equals the reference in both modes, NHWC and row-major; the reference's
  // float mode equals DequantizeLinear -> GlobalAveragePool -> QuantizeLinear on the
  // reference kernels bit for bit, and the fixed-point mode is within one step of it.
  // Half the trials have an input scale of 16 significant bits, as the quantizer chooses
  // (quant/exact_scale.h): the fast kernel's float mode then sums integers, and must still
  // equal the island.
  std::mt19937 rng(815);
  int split = 0, integer_sums = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const DType xt = trial % 2 ? DType::kI8 : DType::kU8, yt = trial % 3 ? DType::kU8 : DType::kI8;
    Dims dims = {RandInt(rng, 1, 2), RandInt(rng, 1, 70), RandInt(rng, 1, 9), RandInt(rng, 1, 9)};
    // Large planes on two threads: row-major splits the channels (of both images), NHWC in
    // float mode the pixels (their partial sums added after).
    // Trials 4, 14, 24: over 128 channels (the integer sums' second pass over the pixels).
    if (trial % 5 == 4)
      dims = {RandInt(rng, 1, 2), trial % 10 == 4 ? RandInt(rng, 130, 300) : RandInt(rng, 20, 70), RandInt(rng, 40, 60),
              RandInt(rng, 40, 60)};
    const int64_t zx = xt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    const int64_t zy = yt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    float sx = RandScale(rng, 0.005f, 0.05f);
    const float sy = RandScale(rng, 0.002f, 0.03f);
    if ((trial / 2) % 2 == 0) sx = quant::RoundScaleForExactDequantization(sx);
    Attributes a;
    if (trial % 3 == 1) a.Set("edgec_requant", std::string("fixed_point"));
    Tensor x = RandomActivation(xt, dims, rng, false);
    FastCase c{OpKind::kQLinearGlobalAveragePool, {x, ScalarF(sx), ScalarQ(xt, zx), ScalarF(sy), ScalarQ(yt, zy)}, a};
    c.constants = {1, 2, 3, 4};
    c.nhwc = trial % 2 == 0;
    c.threads = trial % 5 == 4 ? 2 : 1 + trial % 2;
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, fmt::format("qgap {} {} trial {}", DimsStr(dims), AttrsStr(a), trial));
      EXPECT_NE(d.find("global average pool"), std::string::npos) << d;
      split += d.find("pixels split between 2 threads") != std::string::npos;
      integer_sums += d.find("integer sums") != std::string::npos;
      EXPECT_EQ(d.find("integer sums") != std::string::npos, trial % 3 != 1 && quant::DequantizesExactly(sx)) << d;
    });
    auto folded = testing_mv::RunOp(c.op, c.inputs, a);
    auto dq = testing_mv::RunOp(OpKind::kDequantizeLinear, {x, ScalarF(sx), ScalarQ(xt, zx)});
    ASSERT_TRUE(folded.ok() && dq.ok());
    auto gap = testing_mv::RunOp(OpKind::kGlobalAveragePool, {(*dq)[0]});
    ASSERT_TRUE(gap.ok());
    auto island = testing_mv::RunOp(OpKind::kQuantizeLinear, {(*gap)[0], ScalarF(sy), ScalarQ(yt, zy)});
    ASSERT_TRUE(island.ok());
    EXPECT_TRUE(Close((*folded)[0], (*island)[0], 0, trial % 3 == 1 ? 1 : 0)) << "trial " << trial;
  }
  EXPECT_GE(split, 2) << "NHWC cases whose pixels were split between threads";
  EXPECT_GE(integer_sums, 8) << "float-mode cases with an exact input scale";
}

TEST(CpuInt8, RefusesWhatItCannotDoExactly) {
  std::mt19937 rng(811);
  Tensor x = RandomActivation(DType::kU8, {1, 4, 5, 5}, rng, false);
  Tensor w = RandomInts<int8_t>(DType::kI8, {8, 4, 3, 3}, rng, -64, 64);  // 7-bit: runs without VNNI too
  Tensor wz(DType::kI8, {});
  wz.data<int8_t>()[0] = 3;
  FastCase c{OpKind::kQLinearConv,
             {x, ScalarF(0.02f), ScalarQ(DType::kU8, 7), w, ScalarF(0.01f), wz, ScalarF(0.1f), ScalarQ(DType::kU8, 0)},
             {}};
  c.constants = {1, 2, 3, 4, 5, 6, 7};
  EXPECT_NE(RefusalOf(c).find("zero point 3 is not 0"), std::string::npos) << RefusalOf(c);
  // The fixed-point requantization is what the reference computes for the same attribute,
  // and differs from the float formula somewhere over many outputs (it is not ignored).
  c.inputs[5] = ScalarQ(DType::kI8, 0);
  Attributes fp;
  fp.Set("edgec_requant", std::string("fixed_point"));
  FastCase f = c;
  f.attrs = fp;
  f.inputs[0] = RandomActivation(DType::kU8, {1, 4, 40, 40}, rng, false);
  f.inputs[6] = ScalarF(0.0123f);
  FastCase fl = f;
  fl.attrs = {};
  auto a = testing_mv::RunOp(f.op, f.inputs, f.attrs);
  auto b = testing_mv::RunOp(fl.op, fl.inputs, fl.attrs);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_FALSE(Close((*a)[0], (*b)[0], 0, 0));
  EXPECT_TRUE(Close((*a)[0], (*b)[0], 0, 1));  // within one step
  Attributes bad;
  bad.Set("edgec_requant", std::string("magic"));
  f.attrs = bad;
  EXPECT_NE(RefusalOf(f).find("edgec_requant is 'magic'"), std::string::npos) << RefusalOf(f);
}

}  // namespace
}  // namespace edgec::testing_cpu
