// Elementwise ops added for wider ONNX coverage: comparisons, CastLike, Xor, Mod, Sign,
// Round, IsNaN/IsInf, the extra activations and the trigonometric/hyperbolic functions.
// Expected values are worked out by hand or from the defining formula with <cmath>.
#include <cmath>
#include <limits>

#include "elementwise_test_util.h"

namespace edgec {
namespace {

using namespace testing_ew;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string ErrorOf(OpKind op, const Inputs& inputs, const Attributes& attrs = {}) {
  auto r = RunOp(op, inputs, attrs);
  return r.ok() ? std::string() : r.status().message();
}

// ---- comparisons and logic ----

TEST(ElementwiseMore, LessOrEqualAndGreaterOrEqualBroadcast) {
  Tensor a = F32({2, 2}, {1, 2, 3, 4});
  Tensor b = F32({2}, {2, 3});
  ExpectValues(Run1(OpKind::kLessOrEqual, {a, b}), DType::kBool, {2, 2}, {1, 1, 0, 0});
  ExpectValues(Run1(OpKind::kGreaterOrEqual, {a, b}), DType::kBool, {2, 2}, {0, 0, 1, 1});
  // Equal elements satisfy both; NaN satisfies neither.
  Tensor x = F32({2}, {5, NAN});
  Tensor y = F32({2}, {5, 5});
  ExpectValues(Run1(OpKind::kLessOrEqual, {x, y}), DType::kBool, {2}, {1, 0});
  ExpectValues(Run1(OpKind::kGreaterOrEqual, {x, y}), DType::kBool, {2}, {1, 0});
  ExpectValues(Run1(OpKind::kGreaterOrEqual, {I32({3}, {-1, 0, 1}), I32({}, {0})}), DType::kBool,
               {3}, {0, 1, 1});
}

TEST(ElementwiseMore, ComparisonRejectsMixedDTypesAndBool) {
  EXPECT_NE(ErrorOf(OpKind::kLessOrEqual, {F32({1}, {1}), I32({1}, {1})}), "");
  EXPECT_NE(ErrorOf(OpKind::kGreaterOrEqual, {Bool({1}, {1}), Bool({1}, {0})}), "");
  EXPECT_NE(ErrorOf(OpKind::kLessOrEqual, {F32({2}, {1, 2}), F32({3}, {1, 2, 3})}), "");
}

TEST(ElementwiseMore, XorTruthTableAndBroadcast) {
  Tensor a = Bool({2, 2}, {0, 0, 1, 1});
  Tensor b = Bool({2, 2}, {0, 1, 0, 1});
  ExpectValues(Run1(OpKind::kXor, {a, b}), DType::kBool, {2, 2}, {0, 1, 1, 0});
  ExpectValues(Run1(OpKind::kXor, {a, Bool({1}, {1})}), DType::kBool, {2, 2}, {1, 1, 0, 0});
  EXPECT_NE(ErrorOf(OpKind::kXor, {F32({1}, {1}), F32({1}, {0})}), "");
}

// ---- casts ----

TEST(ElementwiseMore, CastLikeTakesTheTargetsDTypeOnly) {
  Tensor y = Run1(OpKind::kCastLike, {F32({3}, {1.9f, -1.9f, 0}), I32({2}, {0, 0})});
  ExpectValues(y, DType::kI32, {3}, {1, -1, 0});  // truncation, shape of input 0
  Tensor h = Run1(OpKind::kCastLike, {F64({2}, {0.5, 65504.0}), F16({}, {0})});
  ExpectValues(h, DType::kF16, {2}, {0.5, 65504});
  ExpectValues(Run1(OpKind::kCastLike, {I32({2}, {0, 7}), Bool({1}, {0})}), DType::kBool, {2},
               {0, 1});
  EXPECT_NE(ErrorOf(OpKind::kCastLike, {F32({1}, {1})}), "");  // target missing
}

// ---- Mod ----

TEST(ElementwiseMore, ModIntegerTakesTheDivisorsSign) {
  // Python: -7 % 3 = 2, 7 % -3 = -2, -7 % -3 = -1, 7 % 3 = 1
  Tensor a = I32({4}, {-7, 7, -7, 7});
  Tensor b = I32({4}, {3, -3, -3, 3});
  ExpectValues(Run1(OpKind::kMod, {a, b}), DType::kI32, {4}, {2, -2, -1, 1});
}

TEST(ElementwiseMore, ModFmodTakesTheDividendsSign) {
  Tensor a = I64({4}, {-7, 7, -7, 7});
  Tensor b = I64({4}, {3, -3, -3, 3});
  ExpectValues(Run1(OpKind::kMod, {a, b}, Attrs({{"fmod", int64_t{1}}})), DType::kI64, {4},
               {-1, 1, -1, 1});
  Tensor f = Run1(OpKind::kMod, {F32({3}, {-7.5f, 7.5f, 5}), F32({3}, {2, -2, 0.75f})},
                  Attrs({{"fmod", int64_t{1}}}));
  ExpectValues(f, DType::kF32, {3}, {-1.5, 1.5, 0.5});
}

TEST(ElementwiseMore, ModEdgeCases) {
  // The lowest value mod -1 is 0 (no overflow); unsigned is plain %; broadcasting.
  ExpectValues(Run1(OpKind::kMod, {I8({2}, {-128, 5}), I8({1}, {-1})}), DType::kI8, {2}, {0, 0});
  ExpectValues(Run1(OpKind::kMod, {U8({3}, {250, 7, 3}), U8({}, {4})}), DType::kU8, {3},
               {2, 3, 3});
  EXPECT_NE(ErrorOf(OpKind::kMod, {I32({2}, {1, 2}), I32({2}, {1, 0})}).find("by zero"),
            std::string::npos);
  // Floats need fmod=1, as ONNX requires; fmod must be 0 or 1.
  EXPECT_NE(ErrorOf(OpKind::kMod, {F32({1}, {1}), F32({1}, {1})}).find("fmod"), std::string::npos);
  EXPECT_NE(ErrorOf(OpKind::kMod, {I32({1}, {1}), I32({1}, {1})}, Attrs({{"fmod", int64_t{2}}})),
            "");
}

// ---- Sign, Round, IsNaN, IsInf ----

TEST(ElementwiseMore, Sign) {
  ExpectValues(Run1(OpKind::kSign, {F32({5}, {-3.5f, -0.0f, 0, 2, NAN})}), DType::kF32, {5},
               {-1, 0, 0, 1, kNaN});
  ExpectValues(Run1(OpKind::kSign, {I8({3}, {-128, 0, 127})}), DType::kI8, {3}, {-1, 0, 1});
  ExpectValues(Run1(OpKind::kSign, {U8({2}, {0, 9})}), DType::kU8, {2}, {0, 1});
}

TEST(ElementwiseMore, RoundHalfToEven) {
  Tensor x = F32({10}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f, -2.6f, 3});
  ExpectValues(Run1(OpKind::kRound, {x}), DType::kF32, {10}, {0, 2, 2, 0, -2, -2, 2, 3, -3, 3});
  ExpectValues(Run1(OpKind::kRound, {F64({3}, {kInf, -kInf, kNaN})}), DType::kF64, {3},
               {kInf, -kInf, kNaN});
  ExpectValues(Run1(OpKind::kRound, {F16({2}, {1.5f, 4.5f})}), DType::kF16, {2}, {2, 4});
  EXPECT_NE(ErrorOf(OpKind::kRound, {I32({1}, {1})}), "");  // floats only
}

TEST(ElementwiseMore, IsNaNAndIsInf) {
  Tensor x = F32({4}, {1, NAN, INFINITY, -INFINITY});
  ExpectValues(Run1(OpKind::kIsNaN, {x}), DType::kBool, {4}, {0, 1, 0, 0});
  ExpectValues(Run1(OpKind::kIsInf, {x}), DType::kBool, {4}, {0, 0, 1, 1});
  ExpectValues(Run1(OpKind::kIsInf, {x}, Attrs({{"detect_negative", int64_t{0}}})), DType::kBool,
               {4}, {0, 0, 1, 0});
  ExpectValues(Run1(OpKind::kIsInf, {x}, Attrs({{"detect_positive", int64_t{0}}})), DType::kBool,
               {4}, {0, 0, 0, 1});
  ExpectValues(Run1(OpKind::kIsNaN, {F16({2}, {NAN, 0})}), DType::kBool, {2}, {1, 0});
  EXPECT_NE(ErrorOf(OpKind::kIsNaN, {I32({1}, {1})}), "");
}

// ---- activations ----

TEST(ElementwiseMore, EluSeluCelu) {
  Tensor x = F32({3}, {-1, 0, 2});
  const double em1 = std::exp(-1.0) - 1;  // -0.6321
  ExpectValues(Run1(OpKind::kElu, {x}), DType::kF32, {3}, {em1, 0, 2});
  ExpectValues(Run1(OpKind::kElu, {x}, Attrs({{"alpha", 2.0f}})), DType::kF32, {3},
               {2 * em1, 0, 2});
  const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
  ExpectValues(Run1(OpKind::kSelu, {x}), DType::kF32, {3}, {g * a * em1, 0, g * 2});
  ExpectValues(Run1(OpKind::kSelu, {x}, Attrs({{"alpha", 2.0f}, {"gamma", 3.0f}})), DType::kF32,
               {3}, {3 * 2 * em1, 0, 6});
  // Celu(alpha=2): min(0, 2 * (exp(-1/2) - 1)) for -1.
  ExpectValues(Run1(OpKind::kCelu, {x}, Attrs({{"alpha", 2.0f}})), DType::kF32, {3},
               {2 * (std::exp(-0.5) - 1), 0, 2});
  ExpectValues(Run1(OpKind::kCelu, {x}), DType::kF32, {3}, {em1, 0, 2});
  EXPECT_NE(ErrorOf(OpKind::kCelu, {x}, Attrs({{"alpha", 0.0f}})), "");
}

TEST(ElementwiseMore, SoftplusSoftsignIsStableForLargeInputs) {
  Tensor x = F64({4}, {-1000, -1, 1, 1000});
  ExpectValues(Run1(OpKind::kSoftplus, {x}), DType::kF64, {4},
               {0, std::log(1 + std::exp(-1.0)), std::log(1 + std::exp(1.0)), 1000});
  ExpectValues(Run1(OpKind::kSoftsign, {x}), DType::kF64, {4},
               {-1000.0 / 1001, -0.5, 0.5, 1000.0 / 1001});
}

TEST(ElementwiseMore, ThresholdedReluAndShrink) {
  Tensor x = F32({5}, {-2, 0.5f, 1, 1.5f, 3});
  ExpectValues(Run1(OpKind::kThresholdedRelu, {x}), DType::kF32, {5}, {0, 0, 0, 1.5, 3});
  ExpectValues(Run1(OpKind::kThresholdedRelu, {x}, Attrs({{"alpha", 2.0f}})), DType::kF32, {5},
               {0, 0, 0, 0, 3});
  // Shrink defaults: lambd 0.5, bias 0 (hard shrink).
  ExpectValues(Run1(OpKind::kShrink, {F32({5}, {-1, -0.5f, 0, 0.5f, 2})}), DType::kF32, {5},
               {-1, 0, 0, 0, 2});
  // Soft shrink: lambd 1, bias 1.
  ExpectValues(Run1(OpKind::kShrink, {F32({5}, {-3, -1, 0, 1, 3})},
                    Attrs({{"lambd", 1.0f}, {"bias", 1.0f}})),
               DType::kF32, {5}, {-2, 0, 0, 0, 2});
  ExpectValues(Run1(OpKind::kShrink, {I32({3}, {-5, 1, 5})}, Attrs({{"lambd", 1.5f}, {"bias", 1.0f}})),
               DType::kI32, {3}, {-4, 0, 4});
}

// ---- trigonometric and hyperbolic ----

TEST(ElementwiseMore, TrigonometricAndHyperbolic) {
  Tensor x = F64({3}, {-0.5, 0.25, 0.75});
  struct Case {
    OpKind op;
    double (*fn)(double);
  };
  const Case cases[] = {
      {OpKind::kSin, [](double v) { return std::sin(v); }},
      {OpKind::kCos, [](double v) { return std::cos(v); }},
      {OpKind::kTan, [](double v) { return std::tan(v); }},
      {OpKind::kAsin, [](double v) { return std::asin(v); }},
      {OpKind::kAcos, [](double v) { return std::acos(v); }},
      {OpKind::kAtan, [](double v) { return std::atan(v); }},
      {OpKind::kSinh, [](double v) { return std::sinh(v); }},
      {OpKind::kCosh, [](double v) { return std::cosh(v); }},
      {OpKind::kAsinh, [](double v) { return std::asinh(v); }},
      {OpKind::kAtanh, [](double v) { return std::atanh(v); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(OpName(c.op)));
    ExpectValues(Run1(c.op, {x}), DType::kF64, {3}, {c.fn(-0.5), c.fn(0.25), c.fn(0.75)}, 1e-12);
  }
  // Known values: sin(pi/2) = 1, acos(-1) = pi, cosh(0) = 1, acosh(1) = 0; outside the
  // domain gives NaN.
  ExpectValues(Run1(OpKind::kSin, {F32({1}, {static_cast<float>(M_PI / 2)})}), DType::kF32, {1}, {1});
  ExpectValues(Run1(OpKind::kAcos, {F64({1}, {-1})}), DType::kF64, {1}, {M_PI});
  ExpectValues(Run1(OpKind::kAcosh, {F64({2}, {1, 0.5})}), DType::kF64, {2}, {0, kNaN});
  ExpectValues(Run1(OpKind::kAsin, {F32({1}, {2})}), DType::kF32, {1}, {kNaN});
  ExpectValues(Run1(OpKind::kCos, {F16({1}, {0})}), DType::kF16, {1}, {1});
  EXPECT_NE(ErrorOf(OpKind::kSin, {I32({1}, {0})}), "");
}

TEST(ElementwiseMore, UnknownShapesPropagate) {
  TensorType t = MakeType(DType::kF32, {kUnknownDim, 3});
  auto r = InferTypes(OpKind::kIsInf, {t});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0], MakeType(DType::kBool, {kUnknownDim, 3}));
  auto m = InferTypes(OpKind::kMod, {MakeType(DType::kI32, {kUnknownDim, 1}), MakeType(DType::kI32, {4})});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)[0], MakeType(DType::kI32, {kUnknownDim, 4}));
}

}  // namespace
}  // namespace edgec
