// QLinearAveragePool: the fast CPU kernel (int8_avg_pool.cc) against the reference kernel bit
// for bit on every vector ISA the CPU has, and the reference against the float island
// DequantizeLinear -> AveragePool -> QuantizeLinear it folds (float mode: the same bits;
// fixed-point mode: within one step), over seeded random geometries: padding, ceil_mode,
// count_include_pad 0 and 1, strides larger than the kernel, one-row and one-column images,
// u8 and i8, NHWC and row-major, 1 and 2 threads.
#include "cpu_test_util.h"
#include "quant/exact_scale.h"

namespace edgec::testing_cpu {
namespace {

Tensor Scalar(DType dt, double v) {
  Tensor t(dt, {});
  if (dt == DType::kF32) t.data<float>()[0] = static_cast<float>(v);
  else if (dt == DType::kU8) t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
  else t.data<int8_t>()[0] = static_cast<int8_t>(v);
  return t;
}

Tensor RandomBytes(DType dt, const Dims& dims, std::mt19937& rng) {
  Tensor t(dt, dims);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::kU8) t.data<uint8_t>()[i] = static_cast<uint8_t>(RandInt(rng, 0, 255));
    else t.data<int8_t>()[i] = static_cast<int8_t>(RandInt(rng, -128, 127));
  }
  return t;
}

TEST(CpuInt8, QuantizedAveragePoolEqualsReferenceAndTheIsland) {
  std::mt19937 rng(2026);
  int padded_exclusive = 0, ceil_extra = 0, integer_sums = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const DType xt = trial % 2 ? DType::kI8 : DType::kU8, yt = trial % 3 ? DType::kU8 : DType::kI8;
    const int64_t kh = RandInt(rng, 1, 4), kw = RandInt(rng, 1, 4);
    // Strides up to one past the kernel (windows that skip inputs); every 7th trial a one-row
    // or one-column image.
    const int64_t sh = RandInt(rng, 1, kh + 1), sw = RandInt(rng, 1, kw + 1);
    int64_t h = RandInt(rng, kh, 13), w = RandInt(rng, kw, 13);
    if (trial % 7 == 3) h = 1;
    if (trial % 7 == 5) w = 1;
    const int64_t pt = RandInt(rng, 0, kh - 1), pl = RandInt(rng, 0, kw - 1), pb = RandInt(rng, 0, kh - 1),
                  pr = RandInt(rng, 0, kw - 1);
    if (h + pt + pb < kh || w + pl + pr < kw) continue;  // no window fits
    const Dims dims = {RandInt(rng, 1, 2), trial % 4 == 1 ? RandInt(rng, 17, 80) : RandInt(rng, 1, 20), h, w};
    const bool ceil = trial % 4 >= 2, include_pad = trial % 5 >= 3;
    Attributes a;
    a.Set("kernel_shape", std::vector<int64_t>{kh, kw});
    a.Set("strides", std::vector<int64_t>{sh, sw});
    a.Set("pads", std::vector<int64_t>{pt, pl, pb, pr});
    a.Set("ceil_mode", int64_t{ceil});
    a.Set("count_include_pad", int64_t{include_pad});
    Attributes folded_attrs = a;
    const bool fixed = trial % 3 == 1;
    if (fixed) folded_attrs.Set("edgec_requant", std::string("fixed_point"));
    const int64_t zx = xt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    const int64_t zy = yt == DType::kU8 ? RandInt(rng, 0, 255) : RandInt(rng, -128, 127);
    float sx = std::uniform_real_distribution<float>(0.005f, 0.05f)(rng);
    const float sy = std::uniform_real_distribution<float>(0.002f, 0.03f)(rng);
    if ((trial / 2) % 2 == 0) sx = quant::RoundScaleForExactDequantization(sx);
    Tensor x = RandomBytes(xt, dims, rng);
    FastCase c{OpKind::kQLinearAveragePool, {x, Scalar(DType::kF32, sx), Scalar(xt, zx), Scalar(DType::kF32, sy), Scalar(yt, zy)},
               folded_attrs};
    c.constants = {1, 2, 3, 4};
    c.nhwc = trial % 2 == 0;
    c.threads = 1 + trial % 2;
    const std::string what = fmt::format("qavgpool {} {} trial {}", DimsStr(dims), AttrsStr(folded_attrs), trial);
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(c, 0, 0, what);
      EXPECT_NE(d.find("quantized average pool"), std::string::npos) << d;
      integer_sums += d.find("integer sums") != std::string::npos;
    });
    auto folded = testing_mv::RunOp(c.op, c.inputs, folded_attrs);
    auto dq = testing_mv::RunOp(OpKind::kDequantizeLinear, {x, Scalar(DType::kF32, sx), Scalar(xt, zx)});
    ASSERT_TRUE(folded.ok() && dq.ok()) << what;
    auto pool = testing_mv::RunOp(OpKind::kAveragePool, {(*dq)[0]}, a);
    ASSERT_TRUE(pool.ok()) << what;
    auto island = testing_mv::RunOp(OpKind::kQuantizeLinear, {(*pool)[0], Scalar(DType::kF32, sy), Scalar(yt, zy)});
    ASSERT_TRUE(island.ok()) << what;
    EXPECT_TRUE(Close((*folded)[0], (*island)[0], 0, fixed ? 1 : 0)) << what;
    padded_exclusive += !include_pad && (pt || pl || pb || pr);
    const Dims& od = (*pool)[0].dims();
    ceil_extra += ceil && ((od[2] - 1) * sh + kh > h + pt + pb || (od[3] - 1) * sw + kw > w + pl + pr);
  }
  EXPECT_GE(padded_exclusive, 10) << "cases with padding left out of the divisor";
  EXPECT_GE(ceil_extra, 5) << "cases with ceil_mode windows past the end pads";
  EXPECT_GE(integer_sums, 5) << "float-mode cases with an exact input scale";
}

TEST(CpuInt8, QuantizedAveragePoolWithDilationsIsLeftToTheReference) {
  std::mt19937 rng(7);
  Tensor x = RandomBytes(DType::kU8, {1, 4, 6, 6}, rng);
  Attributes a;
  a.Set("kernel_shape", std::vector<int64_t>{2, 2});
  a.Set("dilations", std::vector<int64_t>{2, 2});
  FastCase c{OpKind::kQLinearAveragePool,
             {x, Scalar(DType::kF32, 0.02), Scalar(DType::kU8, 3), Scalar(DType::kF32, 0.01), Scalar(DType::kU8, 5)}, a};
  c.constants = {1, 2, 3, 4};
  EXPECT_NE(RefusalOf(c).find("dilations [2, 2]"), std::string::npos) << RefusalOf(c);
}

}  // namespace
}  // namespace edgec::testing_cpu
