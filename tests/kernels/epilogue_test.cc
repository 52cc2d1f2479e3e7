// The epilogue kernels (FusedConv, FusedMatMul, FusedAdd) against the unfused op sequence
// on the standalone reference kernels, for every activation; small cases by hand; the
// inference checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/epilogue.h"
#include "kernels/ref/activation.h"
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

// Every activation with the parameters the tests use.
std::vector<ActivationSpec> AllActivations() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  return {
      {Activation::kNone},
      {Activation::kRelu},
      {Activation::kLeakyRelu, 0.1f, 0.f},
      {Activation::kClip, 0.f, 6.f},
      {Activation::kClip, -0.5f, kInf},
      {Activation::kHardSigmoid, 0.2f, 0.5f},
      {Activation::kHardSwish},
      {Activation::kSigmoid},
      {Activation::kTanh},
      {Activation::kSilu},
      {Activation::kGelu},
      {Activation::kGeluTanh},
  };
}

Attributes WithActivation(Attributes a, const ActivationSpec& spec) {
  WriteActivation(spec, a);
  return a;
}

Tensor ScalarOf(DType dt, double v) {
  Tensor t(dt, {});
  StoreFromDouble(dt, t.raw(), 0, v);
  return t;
}

// The activation spelled in standalone ops, run on the reference kernels.
Tensor UnfusedActivation(const ActivationSpec& a, const Tensor& x) {
  const DType dt = x.dtype();
  switch (a.kind) {
    case Activation::kNone: return x;
    case Activation::kRelu: return Run1(OpKind::kRelu, {x});
    case Activation::kLeakyRelu: return Run1(OpKind::kLeakyRelu, {x}, Attrs({{"alpha", a.alpha}}));
    case Activation::kClip: {
      Inputs in = {x, std::nullopt, std::nullopt};
      if (std::isfinite(a.alpha)) in[1] = ScalarOf(dt, a.alpha);
      if (std::isfinite(a.beta)) in[2] = ScalarOf(dt, a.beta);
      return Run1(OpKind::kClip, in);
    }
    case Activation::kHardSigmoid:
      return Run1(OpKind::kHardSigmoid, {x}, Attrs({{"alpha", a.alpha}, {"beta", a.beta}}));
    case Activation::kHardSwish: return Run1(OpKind::kHardSwish, {x});
    case Activation::kSigmoid: return Run1(OpKind::kSigmoid, {x});
    case Activation::kTanh: return Run1(OpKind::kTanh, {x});
    case Activation::kSilu: return Run1(OpKind::kMul, {x, Run1(OpKind::kSigmoid, {x})});
    case Activation::kGelu: {
      Tensor e = Run1(OpKind::kErf, {Run1(OpKind::kDiv, {x, ScalarOf(dt, std::sqrt(2.0))})});
      Tensor m = Run1(OpKind::kMul, {x, Run1(OpKind::kAdd, {e, ScalarOf(dt, 1.0)})});
      return Run1(OpKind::kMul, {m, ScalarOf(dt, 0.5)});
    }
    case Activation::kGeluTanh: {
      Tensor x3 = Run1(OpKind::kMul, {Run1(OpKind::kMul, {x, x}), x});
      Tensor inner = Run1(OpKind::kAdd, {x, Run1(OpKind::kMul, {x3, ScalarOf(dt, 0.044715)})});
      Tensor t = Run1(OpKind::kTanh, {Run1(OpKind::kMul, {inner, ScalarOf(dt, std::sqrt(2.0 / M_PI))})});
      Tensor m = Run1(OpKind::kMul, {x, Run1(OpKind::kAdd, {t, ScalarOf(dt, 1.0)})});
      return Run1(OpKind::kMul, {m, ScalarOf(dt, 0.5)});
    }
  }
  return Tensor();
}

// --- the activation helper itself, by hand ---

TEST(EpilogueActivation, ValuesByHand) {
  auto at = [](ActivationSpec a, double x) {
    return ref::WithActivation(a, [&](auto f) { return f(x); });
  };
  EXPECT_EQ(at({Activation::kRelu}, -2.0), 0.0);
  EXPECT_EQ(at({Activation::kRelu}, 3.0), 3.0);
  EXPECT_DOUBLE_EQ(at({Activation::kLeakyRelu, 0.1f}, -2.0), -2.0 * double(0.1f));
  EXPECT_EQ(at({Activation::kClip, 0.f, 6.f}, 7.5), 6.0);
  EXPECT_EQ(at({Activation::kClip, 0.f, 6.f}, -1.0), 0.0);
  EXPECT_DOUBLE_EQ(at({Activation::kHardSigmoid, 0.2f, 0.5f}, 1.0), double(0.2f) + 0.5);
  EXPECT_DOUBLE_EQ(at({Activation::kHardSwish}, 1.0), 1.0 * (1.0 / 6.0 + 0.5));
  EXPECT_EQ(at({Activation::kHardSwish}, -4.0), -0.0);
  EXPECT_DOUBLE_EQ(at({Activation::kSigmoid}, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(at({Activation::kSilu}, 2.0), 2.0 / (1.0 + std::exp(-2.0)));
  EXPECT_DOUBLE_EQ(at({Activation::kGelu}, 1.0), 0.5 * (1.0 + std::erf(1.0 / std::sqrt(2.0))));
  EXPECT_NEAR(at({Activation::kGeluTanh}, 1.0), 0.8411919906, 1e-9);  // known value
  EXPECT_NEAR(at({Activation::kGelu}, 1.0), 0.8413447461, 1e-9);
  EXPECT_TRUE(std::isnan(at({Activation::kRelu}, NAN)));
}

TEST(EpilogueActivation, AttributesRoundTripWithDefaults) {
  for (const ActivationSpec& a : AllActivations()) {
    Attributes attrs;
    WriteActivation(a, attrs);
    auto back = ReadActivation(attrs);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(*back, a) << ActivationToString(a);
  }
  Attributes hs = Attrs({{"activation", std::string("HardSigmoid")}});
  EXPECT_EQ(*ReadActivation(hs), (ActivationSpec{Activation::kHardSigmoid, 0.2f, 0.5f}));
  Attributes lr = Attrs({{"activation", std::string("LeakyRelu")}});
  EXPECT_EQ(ReadActivation(lr)->alpha, 0.01f);
}

// --- FusedConv ---

TEST(FusedConv, ByHandOneByOneWithResidualAndRelu) {
  // 1x1 conv, 2 in -> 1 out channel: y = x0 * 1 + x1 * (-1) + 0.5, then + r, then Relu.
  Tensor x = F32({1, 2, 1, 3}, {1, 2, 3, 3, 1, 0});
  Tensor w = F32({1, 2, 1, 1}, {1, -1});
  Tensor b = F32({1}, {0.5f});
  Tensor r = F32({1, 1, 1, 3}, {-1, 0, -4});
  Tensor y = Run1(OpKind::kFusedConv, {x, w, b, r}, Attrs({{"activation", std::string("Relu")}}));
  // conv: 1-3+.5 = -1.5, 2-1+.5 = 1.5, 3-0+.5 = 3.5; + r: -2.5, 1.5, -0.5; relu: 0, 1.5, 0
  ExpectF32(y, {1, 1, 1, 3}, {0, 1.5, 0});
}

void CheckFusedConvAgainstUnfused(DType dt, double tol) {
  Attributes conv = Attrs({{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}}, {"group", int64_t{2}},
                           {"dilations", Ints{1, 2}}});
  Tensor x = Random(dt, {2, 4, 7, 6}, 1);
  Tensor w = Random(dt, {6, 2, 3, 2}, 2);
  Tensor b = Random(dt, {6}, 3);
  Tensor conv_out = Run1(OpKind::kConv, {x, w, b}, conv);
  Tensor r = Random(dt, conv_out.dims(), 4);
  Tensor sum = Run1(OpKind::kAdd, {conv_out, r});
  for (const ActivationSpec& a : AllActivations()) {
    SCOPED_TRACE(ActivationToString(a));
    ExpectClose(Run1(OpKind::kFusedConv, {x, w, b, r}, WithActivation(conv, a)), UnfusedActivation(a, sum), tol);
    // Without bias and residual.
    Tensor plain = Run1(OpKind::kConv, {x, w}, conv);
    ExpectClose(Run1(OpKind::kFusedConv, {x, w}, WithActivation(conv, a)), UnfusedActivation(a, plain), tol);
  }
}

TEST(FusedConv, MatchesConvAddActivationF32) { CheckFusedConvAgainstUnfused(DType::kF32, 1e-5); }
TEST(FusedConv, MatchesConvAddActivationF64) { CheckFusedConvAgainstUnfused(DType::kF64, 1e-12); }
// 16-bit floats: the fused kernel rounds once, the sequence after every op.
TEST(FusedConv, MatchesConvAddActivationF16) { CheckFusedConvAgainstUnfused(DType::kF16, 4e-3); }

TEST(FusedConv, OneAndThreeSpatialDims) {
  for (Dims xd : {Dims{1, 3, 9}, Dims{1, 3, 4, 5, 3}}) {
    Dims wd = {4, 3};
    for (size_t i = 2; i < xd.size(); ++i) wd.push_back(2);
    Tensor x = Random(DType::kF32, xd, 5), w = Random(DType::kF32, wd, 6);
    Tensor c = Run1(OpKind::kConv, {x, w});
    Tensor r = Random(DType::kF32, c.dims(), 7);
    ActivationSpec a{Activation::kSilu};
    ExpectClose(Run1(OpKind::kFusedConv, {x, w, std::nullopt, r}, WithActivation({}, a)),
                UnfusedActivation(a, Run1(OpKind::kAdd, {c, r})), 1e-5);
  }
}

// --- FusedMatMul ---

TEST(FusedMatMul, ByHandGemmForm) {
  // [[1, 2], [3, 4]] x [[1, 0], [0, -1]]^T(=itself) * 2 + [1, -10] -> Clip(0, 6)
  Tensor a = F32({2, 2}, {1, 2, 3, 4});
  Tensor b = F32({2, 2}, {1, 0, 0, -1});
  Tensor bias = F32({2}, {1, -10});
  Attributes at = Attrs({{"transB", int64_t{1}}, {"alpha", 2.0f}, {"activation", std::string("Clip")},
                         {"activation_alpha", 0.0f}, {"activation_beta", 6.0f}});
  // a.b^T = [[1, -2], [3, -4]]; *2 = [[2, -4], [6, -8]]; + bias = [[3, -14], [7, -18]]
  ExpectF32(Run1(OpKind::kFusedMatMul, {a, b, bias}, at), {2, 2}, {3, 0, 6, 0});
}

TEST(FusedMatMul, MatchesGemmAddActivation) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Tensor a = Random(DType::kF32, ta ? Dims{5, 3} : Dims{3, 5}, 11);
      Tensor b = Random(DType::kF32, tb ? Dims{4, 5} : Dims{5, 4}, 12);
      Tensor c = Random(DType::kF32, {1, 4}, 13);
      Tensor r = Random(DType::kF32, {3, 4}, 14);
      Attributes gemm = Attrs({{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", 0.5f}});
      Tensor sum = Run1(OpKind::kAdd, {Run1(OpKind::kGemm, {a, b, c}, gemm), r});
      for (const ActivationSpec& act : AllActivations()) {
        SCOPED_TRACE(ActivationToString(act));
        ExpectClose(Run1(OpKind::kFusedMatMul, {a, b, c, r}, WithActivation(gemm, act)),
                    UnfusedActivation(act, sum), 1e-5);
      }
    }
  }
}

TEST(FusedMatMul, BatchedTransposesAndBroadcastBiasMatchMatMulAdd) {
  // A [2, 1, 4, 3] with transA (3x4 -> 4x3 matrices...), B [3, 5, 4] with transB.
  Tensor a = Random(DType::kF32, {2, 1, 3, 4}, 21);
  Tensor b = Random(DType::kF32, {3, 5, 3}, 22);
  Tensor bias = Random(DType::kF32, {5}, 23);
  Tensor r = Random(DType::kF32, {3, 1, 5}, 24);  // broadcasts over batch 0 and rows
  Tensor at = Run1(OpKind::kTranspose, {a}, Attrs({{"perm", Ints{0, 1, 3, 2}}}));
  Tensor bt = Run1(OpKind::kTranspose, {b}, Attrs({{"perm", Ints{0, 2, 1}}}));
  Tensor mm = Run1(OpKind::kMatMul, {at, bt});
  ASSERT_EQ(mm.dims(), (Dims{2, 3, 4, 5}));
  Tensor sum = Run1(OpKind::kAdd, {Run1(OpKind::kAdd, {mm, bias}), r});
  for (const ActivationSpec& act : AllActivations()) {
    SCOPED_TRACE(ActivationToString(act));
    Attributes attrs = WithActivation(Attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}}), act);
    ExpectClose(Run1(OpKind::kFusedMatMul, {a, b, bias, r}, attrs), UnfusedActivation(act, sum), 1e-5);
  }
}

TEST(FusedMatMul, VectorOperandsAndF16) {
  Tensor a = Random(DType::kF32, {4}, 31), b = Random(DType::kF32, {2, 4, 3}, 32);
  Tensor bias = Random(DType::kF32, {3}, 33);
  ActivationSpec act{Activation::kTanh};
  ExpectClose(Run1(OpKind::kFusedMatMul, {a, b, bias}, WithActivation({}, act)),
              UnfusedActivation(act, Run1(OpKind::kAdd, {Run1(OpKind::kMatMul, {a, b}), bias})), 1e-5);
  Tensor a16 = Random(DType::kF16, {3, 8}, 34), b16 = Random(DType::kF16, {8, 2}, 35);
  Tensor bias16 = Random(DType::kF16, {2}, 36);
  ExpectClose(Run1(OpKind::kFusedMatMul, {a16, b16, bias16}, WithActivation({}, act)),
              UnfusedActivation(act, Run1(OpKind::kAdd, {Run1(OpKind::kMatMul, {a16, b16}), bias16})), 4e-3);
}

// --- FusedAdd ---

TEST(FusedAdd, ByHandAndAgainstAddActivation) {
  ExpectF32(Run1(OpKind::kFusedAdd, {F32({2, 2}, {1, -2, 3, -4}), F32({2}, {-2, 1})},
                 Attrs({{"activation", std::string("Relu")}})),
            {2, 2}, {0, 0, 1, 0});
  Tensor a = Random(DType::kF32, {2, 3, 4}, 41), b = Random(DType::kF32, {3, 1}, 42);
  for (const ActivationSpec& act : AllActivations()) {
    SCOPED_TRACE(ActivationToString(act));
    ExpectClose(Run1(OpKind::kFusedAdd, {a, b}, WithActivation({}, act)),
                UnfusedActivation(act, Run1(OpKind::kAdd, {a, b})), 1e-5);
  }
  Tensor a64 = Random(DType::kF64, {5}, 43), b64 = Random(DType::kF64, {}, 44);
  ActivationSpec gelu{Activation::kGelu};
  ExpectClose(Run1(OpKind::kFusedAdd, {a64, b64}, WithActivation({}, gelu)),
              UnfusedActivation(gelu, Run1(OpKind::kAdd, {a64, b64})), 1e-12);
}

// --- inference ---

TEST(EpilogueInference, RejectsBadAttributesAndInputs) {
  Tensor x = Random(DType::kF32, {1, 2, 4, 4}, 51), w = Random(DType::kF32, {3, 2, 3, 3}, 52);
  std::string e = ErrorOf(OpKind::kFusedConv, {x, w}, Attrs({{"activation", std::string("Swish")}}));
  EXPECT_NE(e.find("unknown activation 'Swish'"), std::string::npos) << e;
  EXPECT_NE(e.find("FusedConv 'n1'"), std::string::npos) << e;
  EXPECT_NE(e.find("Silu"), std::string::npos) << e;  // lists the known ones
  e = ErrorOf(OpKind::kFusedAdd, {x, x}, Attrs({{"activation", std::string("Relu")}, {"activation_alpha", 1.0f}}));
  EXPECT_NE(e.find("takes no activation_alpha"), std::string::npos) << e;
  // Residual must have Y's shape exactly (Y is [1, 3, 2, 2]).
  e = ErrorOf(OpKind::kFusedConv, {x, w, std::nullopt, Random(DType::kF32, {1, 3, 1, 1}, 53)});
  EXPECT_NE(e.find("input 3 (Residual)"), std::string::npos) << e;
  // Conv's own checks still apply.
  e = ErrorOf(OpKind::kFusedConv, {x, Random(DType::kF32, {3, 5, 3, 3}, 54)});
  EXPECT_NE(e.find("channel mismatch"), std::string::npos) << e;
  e = ErrorOf(OpKind::kFusedConv, {x, w, Random(DType::kF64, {3}, 55)});
  EXPECT_NE(e.find("input 2 has dtype f64"), std::string::npos) << e;

  Tensor a = Random(DType::kF32, {3, 4}, 56), b = Random(DType::kF32, {4, 5}, 57);
  e = ErrorOf(OpKind::kFusedMatMul, {a, b, Random(DType::kF32, {3}, 58)});
  EXPECT_NE(e.find("input 2 (Bias)"), std::string::npos) << e;
  e = ErrorOf(OpKind::kFusedMatMul, {a, b, std::nullopt, Random(DType::kF32, {2, 3, 5}, 59)});
  EXPECT_NE(e.find("input 3 (Residual)"), std::string::npos) << e;  // would enlarge the output
  e = ErrorOf(OpKind::kFusedMatMul, {a, b}, Attrs({{"transB", int64_t{1}}}));
  EXPECT_NE(e.find("inner dims do not match"), std::string::npos) << e;
  e = ErrorOf(OpKind::kFusedMatMul, {Random(DType::kF32, {4}, 60), b}, Attrs({{"transA", int64_t{1}}}));
  EXPECT_NE(e.find("transA needs at least 2"), std::string::npos) << e;
  e = ErrorOf(OpKind::kFusedMatMul, {I32({1, 1}, {1}), I32({1, 1}, {1})});
  EXPECT_NE(e.find("dtype i32"), std::string::npos) << e;
  e = ErrorOf(OpKind::kFusedAdd, {a, b});
  EXPECT_NE(e.find("do not broadcast"), std::string::npos) << e;
}

TEST(EpilogueInference, CompileTimeShapes) {
  TensorType x = MakeType(DType::kF32, {kUnknownDim, 8, 10, 10});
  TensorType w = MakeType(DType::kF32, {16, 8, 3, 3});
  auto t = InferTypes(OpKind::kFusedConv, {x, w, std::nullopt, MakeType(DType::kF32, {kUnknownDim, 16, 8, 8})},
                      Attrs({{"activation", std::string("Relu")}}));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)[0].dims, (Dims{kUnknownDim, 16, 8, 8}));
  auto m = InferTypes(OpKind::kFusedMatMul,
                      {MakeType(DType::kF32, {kUnknownDim, 7, 32}), MakeType(DType::kF32, {64, 32}),
                       MakeType(DType::kF32, {64})},
                      Attrs({{"transB", int64_t{1}}}));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)[0].dims, (Dims{kUnknownDim, 7, 64}));
  auto unknown = InferTypes(OpKind::kFusedAdd, {UnknownRank(DType::kF32), MakeType(DType::kF32, {3})});
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE((*unknown)[0].rank_known);
}

}  // namespace
}  // namespace edgec
