// Fast elementwise kernels (unary, Gelu, broadcasting binary, FusedAdd) against the
// reference kernels: seeded random shapes and broadcasting patterns, both layouts, both
// each vector ISA the CPU has (AVX-512, AVX2, scalar).
#include <limits>

#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

struct UnaryCase {
  OpKind op;
  float lo, hi;  // input range
  Attributes attrs;
};

std::vector<UnaryCase> UnaryCases() {
  return {
      {OpKind::kRelu, -3, 3, {}},
      {OpKind::kLeakyRelu, -3, 3, Attrs({{"alpha", 0.13f}})},
      {OpKind::kLeakyRelu, -3, 3, {}},
      {OpKind::kSigmoid, -30, 30, {}},
      {OpKind::kHardSigmoid, -8, 8, Attrs({{"alpha", 0.3f}, {"beta", 0.4f}})},
      {OpKind::kHardSigmoid, -8, 8, {}},
      {OpKind::kHardSwish, -8, 8, {}},
      {OpKind::kTanh, -12, 12, {}},
      {OpKind::kTanh, -0.7f, 0.7f, {}},
      {OpKind::kErf, -5, 5, {}},
      {OpKind::kErf, -0.6f, 0.6f, {}},
      {OpKind::kExp, -80, 80, {}},
      {OpKind::kLog, 1e-6f, 1e6f, {}},
      {OpKind::kLog, 0.5f, 2.f, {}},
      {OpKind::kSqrt, 0, 100, {}},
      {OpKind::kReciprocal, 0.1f, 10, {}},
      {OpKind::kNeg, -5, 5, {}},
      {OpKind::kAbs, -5, 5, {}},
      {OpKind::kFloor, -5, 5, {}},
      {OpKind::kCeil, -5, 5, {}},
      {OpKind::kSoftplus, -30, 30, {}},
      {OpKind::kSoftplus, -100, 100, {}},
      {OpKind::kSoftsign, -50, 50, {}},
      {OpKind::kGelu, -8, 8, {}},
      {OpKind::kGelu, -8, 8, Attrs({{"approximate", std::string("tanh")}})},
  };
}

Dims RandomDims(std::mt19937& rng, int rank, int64_t max_dim) {
  Dims d;
  for (int i = 0; i < rank; ++i) d.push_back(RandInt(rng, 1, max_dim));
  return d;
}

TEST(CpuElementwise, UnaryMatchesReference) {
  std::mt19937 rng(1234);
  ForEachIsa([&] {
    for (const UnaryCase& u : UnaryCases()) {
      for (Dims dims : {Dims{1}, Dims{7}, Dims{8}, Dims{9}, Dims{1000}, Dims{3, 4099}, Dims{2, 5, 7, 3}}) {
        for (bool nhwc : {false, true}) {
          if (nhwc && dims.size() != 4) continue;
          FastCase c{u.op, {Random(dims, rng, u.lo, u.hi)}, u.attrs};
          c.nhwc = nhwc;
          c.threads = 2;
          ExpectMatchesRef(c, 2e-6, 1e-6, std::string(OpName(u.op)) + " " + DimsStr(dims));
        }
      }
    }
  });
}

TEST(CpuElementwise, ClipWithConstantBounds) {
  std::mt19937 rng(7);
  ForEachIsa([&] {
    const Tensor x = Random({4, 33}, rng, -10, 10);
    FastCase both{OpKind::kClip, {x, Tensor::Scalar(-1.5f), Tensor::Scalar(6.f)}, {}, 1, {1, 2}};
    ExpectMatchesRef(both, 0, 0, "clip(-1.5, 6)");
    FastCase lo_only{OpKind::kClip, {x, Tensor::Scalar(0.f), std::nullopt}, {}, 1, {1}};
    ExpectMatchesRef(lo_only, 0, 0, "clip(0, -)");
    FastCase hi_only{OpKind::kClip, {x, std::nullopt, Tensor::Scalar(2.f)}, {}, 1, {2}};
    ExpectMatchesRef(hi_only, 0, 0, "clip(-, 2)");
    FastCase none{OpKind::kClip, {x}, {}};
    ExpectMatchesRef(none, 0, 0, "clip()");
  });
  // Bounds that are not constants are refused with the reason.
  FastCase runtime{OpKind::kClip, {Random({8}, rng), Tensor::Scalar(0.f), std::nullopt}, {}};
  EXPECT_NE(RefusalOf(runtime).find("not a constant"), std::string::npos) << RefusalOf(runtime);
}

TEST(CpuElementwise, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const Tensor x = testing_mv::F32({9}, {nan, -inf, inf, -0.f, 0.f, 1e-30f, -1e-30f, 200.f, -200.f});
  ForEachIsa([&] {
    for (OpKind op : {OpKind::kRelu, OpKind::kAbs, OpKind::kNeg, OpKind::kTanh, OpKind::kSigmoid, OpKind::kLog,
                      OpKind::kSoftplus, OpKind::kSoftsign}) {
      ExpectMatchesRef(FastCase{op, {x}, {}}, 1e-6, 1e-30, std::string(OpName(op)) + " special");
    }
    // Exp saturates at e^88 and ~1e-38 (documented); compare only in-range values.
    const Tensor e = testing_mv::F32({4}, {-87.f, 0.f, 1e-30f, 88.f});
    ExpectMatchesRef(FastCase{OpKind::kExp, {e}, {}}, 2e-6, 0, "exp edges");
  });
}

TEST(CpuElementwise, IdentityCopiesAnyDType) {
  const Tensor x = testing_mv::I64({5}, {1, -2, 3, 1LL << 40, 5});
  ExpectMatchesRef(FastCase{OpKind::kIdentity, {x}, {}}, 0, 0, "identity i64");
}

TEST(CpuElementwise, RefusesOtherDTypes) {
  const Tensor x = Tensor::FromVector<double>(DType::kF64, {3}, {1, 2, 3});
  const std::string why = RefusalOf(FastCase{OpKind::kRelu, {x}, {}});
  EXPECT_NE(why.find("f32 only"), std::string::npos) << why;
  EXPECT_NE(why.find("Relu 'node7'"), std::string::npos) << why;
}

// --- binary ---

// Random output dims and two inputs that broadcast to them (leading dims dropped, dims set to 1).
std::pair<Dims, Dims> BroadcastPair(std::mt19937& rng, const Dims& out) {
  auto derive = [&](Dims d) {
    const int drop = static_cast<int>(RandInt(rng, 0, static_cast<int64_t>(d.size())));
    d.erase(d.begin(), d.begin() + drop);
    for (int64_t& v : d) {
      if (RandInt(rng, 0, 2) == 0) v = 1;
    }
    return d;
  };
  Dims a = derive(out), b = derive(out);
  // One input keeps the full shape so that the output shape is `out`.
  if (RandInt(rng, 0, 1)) a = out;
  else b = out;
  return {a, b};
}

TEST(CpuElementwise, BinaryBroadcastingMatchesReference) {
  std::mt19937 rng(99);
  const std::vector<OpKind> ops = {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv,
                                   OpKind::kMax, OpKind::kMin, OpKind::kPRelu, OpKind::kPow};
  ForEachIsa([&] {
    for (int trial = 0; trial < 60; ++trial) {
      const int rank = static_cast<int>(RandInt(rng, 1, 5));
      const Dims out = RandomDims(rng, rank, 9);
      auto [ad, bd] = BroadcastPair(rng, out);
      for (OpKind op : ops) {
        const bool pow = op == OpKind::kPow;
        // PRelu's slope broadcasts to X (one direction only).
        Tensor a = Random(op == OpKind::kPRelu ? out : ad, rng, pow ? 0.1f : -2.f, 2.f);
        Tensor b = Random(bd, rng, op == OpKind::kDiv ? 0.5f : -2.f, 2.f);
        for (bool nhwc : {false, true}) {
          if (nhwc && rank != 4) continue;
          FastCase c{op, {a, b}, {}};
          c.nhwc = nhwc;
          c.threads = 2;
          if (nhwc && trial % 3 == 0) c.row_major_inputs = {1};  // mixed layouts
          ExpectMatchesRef(c, 1e-6, 1e-6,
                           fmt::format("{} {} {} nhwc={}", OpName(op), DimsStr(a.dims()), DimsStr(bd), nhwc));
        }
      }
    }
  });
}

TEST(CpuElementwise, BinaryFastPaths) {
  std::mt19937 rng(5);
  ForEachIsa([&] {
    const Dims x = {2, 16, 9, 11};
    const std::vector<std::pair<Dims, Dims>> pairs = {
        {x, x},                      // same shape
        {x, {}},                     // scalar
        {{}, x},                     // scalar first
        {x, {1, 16, 1, 1}},          // per channel (NCHW)
        {x, {16, 1, 1}},             // per channel, rank 3
        {x, {11}},                   // last dim
        {{2, 1, 9, 11}, {1, 16, 1, 1}},  // outer product
        {{40000}, {40000}},          // long, split over threads
    };
    for (const auto& [ad, bd] : pairs) {
      for (bool nhwc : {false, true}) {
        FastCase c{OpKind::kAdd, {Random(ad, rng), Random(bd, rng)}, {}};
        c.nhwc = nhwc;
        c.threads = 2;
        ExpectMatchesRef(c, 0, 0, fmt::format("add {} {} nhwc={}", DimsStr(ad), DimsStr(bd), nhwc));
      }
    }
  });
}

TEST(CpuElementwise, MaxMinPropagateNaN) {
  const float nan = std::nanf("");
  const Tensor a = testing_mv::F32({10}, {nan, 1, nan, 2, 3, 4, 5, 6, 7, 8});
  const Tensor b = testing_mv::F32({10}, {1, nan, nan, 3, 2, 4, 6, 5, 7, -8});
  ForEachIsa([&] {
    ExpectMatchesRef(FastCase{OpKind::kMax, {a, b}, {}}, 0, 0, "max nan");
    ExpectMatchesRef(FastCase{OpKind::kMin, {a, b}, {}}, 0, 0, "min nan");
  });
}

TEST(CpuElementwise, PowConstantSquare) {
  std::mt19937 rng(3);
  FastCase c{OpKind::kPow, {Random({3, 50}, rng, -4, 4), Tensor::Scalar(2.f)}, {}, 1, {1}};
  const std::string d = ExpectMatchesRef(c, 1e-7, 0, "pow 2");
  EXPECT_NE(d.find("pow(x, 2)"), std::string::npos) << d;
  // An integer exponent that is a constant 2 works too (not read at run time).
  FastCase i{OpKind::kPow, {Random({17}, rng, -4, 4), Tensor::ScalarI64(2)}, {}, 1, {1}};
  ExpectMatchesRef(i, 1e-7, 0, "pow i64 2");
}

TEST(CpuElementwise, FusedAddWithEveryActivation) {
  std::mt19937 rng(11);
  const std::vector<Attributes> acts = {
      {},
      Attrs({{"activation", std::string("Relu")}}),
      Attrs({{"activation", std::string("LeakyRelu")}, {"activation_alpha", 0.2f}}),
      Attrs({{"activation", std::string("Clip")}, {"activation_alpha", 0.f}, {"activation_beta", 6.f}}),
      Attrs({{"activation", std::string("HardSigmoid")}}),
      Attrs({{"activation", std::string("HardSwish")}}),
      Attrs({{"activation", std::string("Sigmoid")}}),
      Attrs({{"activation", std::string("Tanh")}}),
      Attrs({{"activation", std::string("Silu")}}),
      Attrs({{"activation", std::string("Gelu")}}),
      Attrs({{"activation", std::string("GeluTanh")}}),
  };
  ForEachIsa([&] {
    for (const Attributes& a : acts) {
      for (int trial = 0; trial < 4; ++trial) {
        const Dims out = RandomDims(rng, static_cast<int>(RandInt(rng, 1, 4)), 12);
        auto [ad, bd] = BroadcastPair(rng, out);
        FastCase c{OpKind::kFusedAdd, {Random(ad, rng, -4, 4), Random(bd, rng, -4, 4)}, a};
        c.nhwc = out.size() == 4 && trial % 2;
        // Long rows run the activation in blocks.
        if (trial == 3) c.inputs = {Random({3, 2500}, rng, -4, 4), Random({2500}, rng, -4, 4)};
        ExpectMatchesRef(c, 2e-6, 2e-6, fmt::format("fused add {} {}", a.GetString("activation"), DimsStr(out)));
      }
    }
  });
}

TEST(CpuElementwise, InPlace) {
  std::mt19937 rng(8);
  const Tensor x = Random({3, 1001}, rng, -3, 3);
  auto want = testing_mv::RunOp(OpKind::kSigmoid, {x});
  ASSERT_TRUE(want.ok());
  auto got = RunFast(FastCase{OpKind::kSigmoid, {x}, {}}, /*in_place=*/0);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(Close(got->outputs[0], (*want)[0], 2e-6, 1e-7));

  const Tensor b = Random({1001}, rng);
  auto want2 = testing_mv::RunOp(OpKind::kAdd, {x, b});
  ASSERT_TRUE(want2.ok());
  auto got2 = RunFast(FastCase{OpKind::kAdd, {x, b}, {}}, /*in_place=*/0);
  ASSERT_TRUE(got2.ok()) << got2.status().ToString();
  EXPECT_TRUE(Close(got2->outputs[0], (*want2)[0], 0, 0));
}

TEST(CpuElementwise, VariadicMaxIsRefused) {
  std::mt19937 rng(1);
  FastCase c{OpKind::kMax, {Random({4}, rng), Random({4}, rng), Random({4}, rng)}, {}};
  EXPECT_NE(RefusalOf(c).find("exactly 2"), std::string::npos) << RefusalOf(c);
}

TEST(CpuElementwise, VectorIsaCanBeCapped) {
  ASSERT_TRUE(cpu::CapVectorIsa(""));  // lifts an EDGEC_CPU_ISA cap too
  const std::string widest = __builtin_cpu_supports("avx512f") ? "avx512"
                             : __builtin_cpu_supports("avx2")  ? "avx2"
                                                               : "scalar";
  EXPECT_EQ(cpu::VectorIsa(), widest);
  EXPECT_EQ(std::string(cpu::VectorIsas().front()), widest);
  EXPECT_EQ(std::string(cpu::VectorIsas().back()), "scalar");
  ASSERT_TRUE(cpu::CapVectorIsa("scalar"));
  EXPECT_EQ(cpu::VectorIsa(), "scalar");
  if (__builtin_cpu_supports("avx512f")) {
    ASSERT_TRUE(cpu::CapVectorIsa("avx2"));
    EXPECT_EQ(cpu::VectorIsa(), "avx2");
  }
  EXPECT_FALSE(cpu::CapVectorIsa("sse9"));
  EXPECT_EQ(cpu::VectorIsa(), __builtin_cpu_supports("avx512f") ? "avx2" : "scalar");  // unchanged
  ASSERT_TRUE(cpu::CapVectorIsa(""));
  EXPECT_EQ(cpu::VectorIsa(), widest);
}

}  // namespace
}  // namespace edgec::testing_cpu
