// Elementwise family: shape inference and reference kernels, with values worked out by hand.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/ref/elementwise_util.h"
#include "elementwise_test_util.h"

namespace edgec {
namespace {

using namespace testing_ew;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- the broadcasting walker ----

std::vector<std::vector<int64_t>> Walk(const Dims& out, const std::vector<Dims>& ins) {
  std::vector<const Dims*> ptrs;
  for (const Dims& d : ins) ptrs.push_back(&d);
  std::vector<std::vector<int64_t>> seen;
  ref::ForEachBroadcast(out, ptrs, [&](int64_t o, const int64_t* idx) {
    std::vector<int64_t> row = {o};
    for (size_t k = 0; k < ins.size(); ++k) row.push_back(idx[k]);
    seen.push_back(row);
  });
  return seen;
}

TEST(ElementwiseBroadcastWalk, SameShapeIsIdentity) {
  auto w = Walk({2, 2}, {{2, 2}, {2, 2}});
  std::vector<std::vector<int64_t>> want = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
  EXPECT_EQ(w, want);
}

TEST(ElementwiseBroadcastWalk, RowVectorAndColumn) {
  // out [2,3]; a = [3] repeats per row; b = [2,1] repeats per column.
  auto w = Walk({2, 3}, {{3}, {2, 1}});
  std::vector<std::vector<int64_t>> want = {{0, 0, 0}, {1, 1, 0}, {2, 2, 0},
                                            {3, 0, 1}, {4, 1, 1}, {5, 2, 1}};
  EXPECT_EQ(w, want);
}

TEST(ElementwiseBroadcastWalk, RankZeroAndSizeZero) {
  auto w = Walk({3}, {{}, {3}});
  std::vector<std::vector<int64_t>> want = {{0, 0, 0}, {1, 0, 1}, {2, 0, 2}};
  EXPECT_EQ(w, want);
  EXPECT_TRUE(Walk({0, 3}, {{0, 3}, {3}}).empty());
  auto scalar = Walk({}, {{}, {}});
  ASSERT_EQ(scalar.size(), 1u);
  EXPECT_EQ(scalar[0], (std::vector<int64_t>{0, 0, 0}));
}

TEST(ElementwiseBroadcastWalk, MiddleDimRepeated) {
  // out [2,2,2], a = [2,1,2]: a's index ignores the middle dim.
  auto w = Walk({2, 2, 2}, {{2, 1, 2}});
  std::vector<int64_t> a_index;
  for (auto& row : w) a_index.push_back(row[1]);
  EXPECT_EQ(a_index, (std::vector<int64_t>{0, 1, 0, 1, 2, 3, 2, 3}));
}

// ---- activations ----

TEST(Elementwise, Relu) {
  ExpectValues(Run1(OpKind::kRelu, {F32({4}, {-2, -0.5f, 0, 3})}), DType::kF32, {4}, {0, 0, 0, 3});
  ExpectValues(Run1(OpKind::kRelu, {I32({3}, {-7, 0, 9})}), DType::kI32, {3}, {0, 0, 9});
  ExpectValues(Run1(OpKind::kRelu, {U8({2}, {0, 200})}), DType::kU8, {2}, {0, 200});
  ExpectValues(Run1(OpKind::kRelu, {F32({1}, {NAN})}), DType::kF32, {1}, {kNaN});
}

TEST(Elementwise, LeakyReluDefaultAndAlpha) {
  ExpectValues(Run1(OpKind::kLeakyRelu, {F32({3}, {-10, 0, 5})}), DType::kF32, {3},
               {-0.1, 0, 5});
  ExpectValues(Run1(OpKind::kLeakyRelu, {F32({2}, {-2, 2})}, Attrs({{"alpha", 0.5f}})),
               DType::kF32, {2}, {-1, 2});
}

TEST(Elementwise, PReluBroadcastsSlope) {
  // slope [3] applies per column of x [2,3].
  Tensor y = Run1(OpKind::kPRelu, {F32({2, 3}, {-1, -2, -3, 1, -1, 2}), F32({3}, {0.5f, 2, 10})});
  ExpectValues(y, DType::kF32, {2, 3}, {-0.5, -4, -30, 1, -2, 2});
  // rank-0 slope
  ExpectValues(Run1(OpKind::kPRelu, {F32({2}, {-4, 4}), F32({}, {0.25f})}), DType::kF32, {2},
               {-1, 4});
  // integer PRelu
  ExpectValues(Run1(OpKind::kPRelu, {I32({2}, {-4, 4}), I32({1}, {3})}), DType::kI32, {2},
               {-12, 4});
}

TEST(Elementwise, PReluSlopeMustBroadcastToX) {
  auto r = RunOp(OpKind::kPRelu, {F32({3}, {1, 2, 3}), F32({2, 3}, {1, 1, 1, 1, 1, 1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("PRelu 'n1'"), std::string::npos) << r.status().message();
  auto r2 = RunOp(OpKind::kPRelu, {F32({2, 3}, {1, 1, 1, 1, 1, 1}), F32({2}, {1, 1})});
  EXPECT_EQ(r2.status().code(), StatusCode::kInvalidArgument);
}

TEST(Elementwise, SigmoidAndTanh) {
  // sigmoid(0)=0.5, sigmoid(2)=1/(1+e^-2)=0.880797, sigmoid(-2)=0.119203
  ExpectValues(Run1(OpKind::kSigmoid, {F32({3}, {0, 2, -2})}), DType::kF32, {3},
               {0.5, 0.8807970779778823, 0.11920292202211755});
  // no overflow far out
  ExpectValues(Run1(OpKind::kSigmoid, {F32({2}, {-1000, 1000})}), DType::kF32, {2}, {0, 1});
  ExpectValues(Run1(OpKind::kTanh, {F64({3}, {0, 1, -1})}), DType::kF64, {3},
               {0, 0.7615941559557649, -0.7615941559557649}, 1e-12);
}

TEST(Elementwise, HardSigmoidAndHardSwish) {
  // default alpha 0.2, beta 0.5: 0.2x+0.5 clamped to [0,1]
  ExpectValues(Run1(OpKind::kHardSigmoid, {F32({4}, {-5, -1, 1, 5})}), DType::kF32, {4},
               {0, 0.3, 0.7, 1});
  ExpectValues(Run1(OpKind::kHardSigmoid, {F32({2}, {0, 1})},
                    Attrs({{"alpha", 0.5f}, {"beta", 0.25f}})),
               DType::kF32, {2}, {0.25, 0.75});
  // x * clamp(x/6 + 0.5): -4 -> 0, -1 -> -1*(1/3), 1 -> 2/3, 4 -> 4
  ExpectValues(Run1(OpKind::kHardSwish, {F32({4}, {-4, -1, 1, 4})}), DType::kF32, {4},
               {0, -1.0 / 3, 2.0 / 3, 4});
}

TEST(Elementwise, ClipBounds) {
  Tensor x = F32({5}, {-3, -1, 0, 1, 3});
  ExpectValues(Run1(OpKind::kClip, {x, F32({}, {-1}), F32({}, {2})}), DType::kF32, {5},
               {-1, -1, 0, 1, 2});
  ExpectValues(Run1(OpKind::kClip, {x, F32({}, {0})}), DType::kF32, {5}, {0, 0, 0, 1, 3});
  ExpectValues(Run1(OpKind::kClip, {x, std::nullopt, F32({}, {0})}), DType::kF32, {5},
               {-3, -1, 0, 0, 0});
  ExpectValues(Run1(OpKind::kClip, {x}), DType::kF32, {5}, {-3, -1, 0, 1, 3});
  // Infinities are not clipped by an absent bound.
  ExpectValues(Run1(OpKind::kClip, {F32({2}, {-INFINITY, INFINITY})}), DType::kF32, {2},
               {-kInf, kInf});
  // min > max: numpy's min(max(x, lo), hi) gives max everywhere
  ExpectValues(Run1(OpKind::kClip, {x, F32({}, {2}), F32({}, {1})}), DType::kF32, {5},
               {1, 1, 1, 1, 1});
  // shape [1] bounds are accepted as one value
  ExpectValues(Run1(OpKind::kClip, {x, F32({1}, {-2}), F32({1}, {2})}), DType::kF32, {5},
               {-2, -1, 0, 1, 2});
}

TEST(Elementwise, ClipIntegerAndHalf) {
  ExpectValues(Run1(OpKind::kClip, {I8({4}, {-128, -5, 5, 127}), I8({}, {-10}), I8({}, {10})}),
               DType::kI8, {4}, {-10, -5, 5, 10});
  ExpectValues(Run1(OpKind::kClip, {I8({2}, {-128, 127}), std::nullopt, I8({}, {0})}),
               DType::kI8, {2}, {-128, 0});
  ExpectValues(Run1(OpKind::kClip, {F16({3}, {-2, 0.5f, 2}), F16({}, {-1}), F16({}, {1})}),
               DType::kF16, {3}, {-1, 0.5, 1});
}

TEST(Elementwise, ClipBadBounds) {
  auto r = RunOp(OpKind::kClip, {F32({2}, {1, 2}), F32({2}, {0, 0})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("min"), std::string::npos) << r.status().message();
  auto r2 = RunOp(OpKind::kClip, {F32({2}, {1, 2}), I32({}, {0})});
  EXPECT_EQ(r2.status().code(), StatusCode::kInvalidArgument) << r2.status().ToString();
}

// ---- unary math ----

TEST(Elementwise, ExpLogSqrtReciprocal) {
  ExpectValues(Run1(OpKind::kExp, {F32({3}, {0, 1, -1})}), DType::kF32, {3},
               {1, 2.718281828459045, 0.36787944117144233});
  ExpectValues(Run1(OpKind::kLog, {F32({4}, {1, 2.718281828f, 0, -1})}), DType::kF32, {4},
               {0, 1, -kInf, kNaN});
  ExpectValues(Run1(OpKind::kSqrt, {F32({3}, {0, 4, 2})}), DType::kF32, {3},
               {0, 2, 1.4142135623730951});
  ExpectValues(Run1(OpKind::kReciprocal, {F32({3}, {2, -0.5f, 0})}), DType::kF32, {3},
               {0.5, -2, kInf});
}

TEST(Elementwise, ErfFloorCeil) {
  // erf(0)=0, erf(1)=0.8427007929, erf(-0.5)=-0.5204998778
  ExpectValues(Run1(OpKind::kErf, {F32({3}, {0, 1, -0.5f})}), DType::kF32, {3},
               {0, 0.8427007929497149, -0.5204998778130465});
  ExpectValues(Run1(OpKind::kFloor, {F32({4}, {-1.5f, -1, 0.5f, 2.9f})}), DType::kF32, {4},
               {-2, -1, 0, 2});
  ExpectValues(Run1(OpKind::kCeil, {F32({4}, {-1.5f, -1, 0.5f, 2.1f})}), DType::kF32, {4},
               {-1, -1, 1, 3});
}

TEST(Elementwise, NegAbsOnIntegers) {
  ExpectValues(Run1(OpKind::kNeg, {F32({2}, {1.5f, -2})}), DType::kF32, {2}, {-1.5, 2});
  ExpectValues(Run1(OpKind::kNeg, {I8({3}, {5, -5, -128})}), DType::kI8, {3}, {-5, 5, -128});
  ExpectValues(Run1(OpKind::kAbs, {I32({3}, {-3, 0, 4})}), DType::kI32, {3}, {3, 0, 4});
  ExpectValues(Run1(OpKind::kAbs, {U8({2}, {0, 255})}), DType::kU8, {2}, {0, 255});
  ExpectValues(Run1(OpKind::kAbs, {F16({2}, {-1.5f, 2})}), DType::kF16, {2}, {1.5, 2});
  Tensor lowest = Run1(OpKind::kAbs,
                       {I64({1}, {std::numeric_limits<int64_t>::min()})});
  EXPECT_EQ(lowest.data<int64_t>()[0], std::numeric_limits<int64_t>::min());  // wraps, no UB
}

TEST(Elementwise, HalfAndBFloat16ComputeThroughFloat) {
  ExpectValues(Run1(OpKind::kExp, {F16({2}, {0, 1})}), DType::kF16, {2}, {1, 2.71875}, 1e-3);
  std::vector<uint16_t> bits = {FloatToBFloat16(4.0f), FloatToBFloat16(-9.0f)};
  Tensor b = Tensor::FromVector<uint16_t>(DType::kBF16, {2}, bits);
  ExpectValues(Run1(OpKind::kRelu, {b}), DType::kBF16, {2}, {4, 0});
  ExpectValues(Run1(OpKind::kSqrt, {b}), DType::kBF16, {2}, {2, kNaN});
}

TEST(Elementwise, NotAndIdentity) {
  ExpectValues(Run1(OpKind::kNot, {Bool({3}, {1, 0, 1})}), DType::kBool, {3}, {0, 1, 0});
  ExpectValues(Run1(OpKind::kIdentity, {I64({2, 1}, {7, -8})}), DType::kI64, {2, 1}, {7, -8});
  ExpectValues(Run1(OpKind::kIdentity, {F32({}, {3})}), DType::kF32, {}, {3});
  ExpectValues(Run1(OpKind::kIdentity, {F32({0, 4}, {})}), DType::kF32, {0, 4}, {});
}

TEST(Elementwise, UnaryRejectsWrongDType) {
  auto relu = RunOp(OpKind::kRelu, {Bool({1}, {1})});
  EXPECT_EQ(relu.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(relu.status().message().find("Relu 'n1'"), std::string::npos);
  EXPECT_EQ(RunOp(OpKind::kSigmoid, {I32({1}, {1})}).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(RunOp(OpKind::kNot, {F32({1}, {1})}).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(RunOp(OpKind::kNeg, {U8({1}, {1})}).status().code(), StatusCode::kUnimplemented);
  auto two = RunOp(OpKind::kRelu, {F32({1}, {1}), F32({1}, {1})});
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
}

// ---- Dropout ----

TEST(Elementwise, DropoutIsIdentityWithAllTrueMask) {
  Tensor x = F32({2, 2}, {1, -2, 3, -4});
  auto r = RunOp(OpKind::kDropout, {x, F32({}, {0.75f})}, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectValues((*r)[0], DType::kF32, {2, 2}, {1, -2, 3, -4});
  ExpectValues((*r)[1], DType::kBool, {2, 2}, {1, 1, 1, 1});
  ExpectValues(Run1(OpKind::kDropout, {x}), DType::kF32, {2, 2}, {1, -2, 3, -4});
  // training mode with ratio 0 keeps everything
  auto t0 = RunOp(OpKind::kDropout, {x, F32({}, {0}), Bool({}, {1})}, {}, 2);
  ASSERT_TRUE(t0.ok()) << t0.status().ToString();
  ExpectValues((*t0)[0], DType::kF32, {2, 2}, {1, -2, 3, -4});
  ExpectValues((*t0)[1], DType::kBool, {2, 2}, {1, 1, 1, 1});
  // training_mode false is inference
  EXPECT_TRUE(RunOp(OpKind::kDropout, {x, F32({}, {0.5f}), Bool({}, {0})}).ok());
}

TEST(Elementwise, DropoutTrainingWithRatioIsUnsupported) {
  Tensor x = F32({2}, {1, 2});
  auto r = RunOp(OpKind::kDropout, {x, F32({}, {0.5f}), Bool({}, {1})});
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  // default ratio is 0.5
  auto d = RunOp(OpKind::kDropout, {x, std::nullopt, Bool({}, {1})});
  EXPECT_EQ(d.status().code(), StatusCode::kUnimplemented);
  auto bad = RunOp(OpKind::kDropout, {x, F32({}, {1.5f})});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

// ---- Cast ----

Attributes To(DType t) { return Attrs({{"to", static_cast<int64_t>(t)}}); }

TEST(ElementwiseCast, FloatToIntegerTruncates) {
  Tensor x = F32({6}, {2.7f, -2.7f, 0.5f, -0.5f, 100.0f, -1.0f});
  ExpectValues(Run1(OpKind::kCast, {x}, To(DType::kI32)), DType::kI32, {6},
               {2, -2, 0, 0, 100, -1});
  ExpectValues(Run1(OpKind::kCast, {x}, To(DType::kI8)), DType::kI8, {6}, {2, -2, 0, 0, 100, -1});
  // -1.0 -> u8 wraps as numpy does on x86: 255; 300.0 -> u8: 300 mod 256 = 44
  ExpectValues(Run1(OpKind::kCast, {F32({2}, {-1.0f, 300.0f})}, To(DType::kU8)), DType::kU8, {2},
               {255, 44});
}

TEST(ElementwiseCast, NaNAndInfinityToIntegersAreDefined) {
  Tensor x = F32({3}, {NAN, INFINITY, -INFINITY});
  Tensor y = Run1(OpKind::kCast, {x}, To(DType::kI64));
  ASSERT_EQ(y.dtype(), DType::kI64);
  EXPECT_EQ(y.data<int64_t>()[0], 0);
  EXPECT_EQ(y.data<int64_t>()[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(y.data<int64_t>()[2], std::numeric_limits<int64_t>::min());
  Tensor u = Run1(OpKind::kCast, {F64({1}, {1.8446744073709552e19})}, To(DType::kU64));
  EXPECT_EQ(u.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  Tensor big = Run1(OpKind::kCast, {F64({1}, {1e19})}, To(DType::kU64));
  EXPECT_EQ(big.data<uint64_t>()[0], 10000000000000000000ull);
}

TEST(ElementwiseCast, ToAndFromBool) {
  ExpectValues(Run1(OpKind::kCast, {F32({4}, {0, -0.0f, 0.1f, NAN})}, To(DType::kBool)),
               DType::kBool, {4}, {0, 0, 1, 1});
  ExpectValues(Run1(OpKind::kCast, {I32({3}, {0, 7, -1})}, To(DType::kBool)), DType::kBool, {3},
               {0, 1, 1});
  ExpectValues(Run1(OpKind::kCast, {Bool({2}, {1, 0})}, To(DType::kF32)), DType::kF32, {2},
               {1, 0});
  ExpectValues(Run1(OpKind::kCast, {Bool({2}, {1, 0})}, To(DType::kI64)), DType::kI64, {2},
               {1, 0});
  ExpectValues(Run1(OpKind::kCast, {Bool({2}, {1, 0})}, To(DType::kF16)), DType::kF16, {2},
               {1, 0});
}

TEST(ElementwiseCast, IntegerToIntegerWraps) {
  ExpectValues(Run1(OpKind::kCast, {I32({3}, {300, -1, 127})}, To(DType::kU8)), DType::kU8, {3},
               {44, 255, 127});
  Tensor y = Run1(OpKind::kCast, {I8({1}, {-1})}, To(DType::kU64));
  EXPECT_EQ(y.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  Tensor max_u64 = Tensor::FromVector<uint64_t>(DType::kU64, {1},
                                                {std::numeric_limits<uint64_t>::max()});
  Tensor as_f64 = Run1(OpKind::kCast, {max_u64}, To(DType::kF64));
  EXPECT_EQ(as_f64.data<double>()[0], 18446744073709551616.0);
  Tensor as_i64 = Run1(OpKind::kCast, {max_u64}, To(DType::kI64));
  EXPECT_EQ(as_i64.data<int64_t>()[0], -1);
}

TEST(ElementwiseCast, HalfPrecisions) {
  // f32 -> f16 rounds to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> 1
  Tensor h = Run1(OpKind::kCast, {F32({3}, {1.0f + 1.0f / 2048, 65504.0f, 1e6f})}, To(DType::kF16));
  ASSERT_EQ(h.dtype(), DType::kF16);
  EXPECT_EQ(h.data<uint16_t>()[0], 0x3C00);
  EXPECT_EQ(h.data<uint16_t>()[1], 0x7BFF);
  EXPECT_EQ(h.data<uint16_t>()[2], 0x7C00);  // overflow -> inf
  // f64 -> f16 rounds once: just above halfway must round up (going through float first
  // would land exactly on the halfway point and round down to 1).
  Tensor d = Run1(OpKind::kCast, {F64({1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)})},
                  To(DType::kF16));
  EXPECT_EQ(d.data<uint16_t>()[0], 0x3C01);
  // f16 -> f32 is exact, NaN and inf survive
  Tensor back = Run1(OpKind::kCast, {F16({3}, {0.333251953125f, NAN, -INFINITY})},
                     To(DType::kF32));
  ExpectValues(back, DType::kF32, {3}, {0.333251953125, kNaN, -kInf}, 0);
  // i64 -> f16
  ExpectValues(Run1(OpKind::kCast, {I64({2}, {-3, 2048})}, To(DType::kF16)), DType::kF16, {2},
               {-3, 2048});
  // f16 -> i32 truncates
  ExpectValues(Run1(OpKind::kCast, {F16({2}, {-2.5f, 3.75f})}, To(DType::kI32)), DType::kI32,
               {2}, {-2, 3});
}

TEST(ElementwiseCast, FloatToBFloat16Truncates) {
  // 0.48033667f's upper 16 bits are 0x3EF5 and its lower half is above 0x8000: truncation
  // keeps 0x3EF5 (round-to-nearest would give 0x3EF6), as ONNX's own Cast test data expects.
  Tensor y = Run1(OpKind::kCast, {F32({4}, {0.48033667f, NAN, INFINITY, -INFINITY})},
                  To(DType::kBF16));
  ASSERT_EQ(y.dtype(), DType::kBF16);
  EXPECT_EQ(y.data<uint16_t>()[0], 0x3EF5);
  EXPECT_EQ(y.data<uint16_t>()[1], 0x7FC0);
  EXPECT_EQ(y.data<uint16_t>()[2], 0x7F80);
  EXPECT_EQ(y.data<uint16_t>()[3], 0xFF80);
  // a NaN whose payload sits only in the low bits stays NaN, not inf
  uint32_t low_nan_bits = 0x7F800001u;
  float low_nan;
  std::memcpy(&low_nan, &low_nan_bits, 4);
  Tensor n = Run1(OpKind::kCast, {F32({1}, {low_nan})}, To(DType::kBF16));
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(n.data<uint16_t>()[0])));
  // bf16 -> f32 is exact; bf16 -> f16
  Tensor b = Tensor::FromVector<uint16_t>(DType::kBF16, {2}, {0x3EF5, 0xC040});
  ExpectValues(Run1(OpKind::kCast, {b}, To(DType::kF32)), DType::kF32, {2}, {0.478515625, -3}, 0);
  ExpectValues(Run1(OpKind::kCast, {b}, To(DType::kF16)), DType::kF16, {2}, {0.478515625, -3}, 0);
}

TEST(ElementwiseCast, EveryPairRoundTripsSmallIntegers) {
  // 0, 1 and 5 are exact in every dtype except bool (5 -> true -> 1).
  const DType all[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                       DType::kI16, DType::kI32, DType::kI64, DType::kU8,   DType::kU16,
                       DType::kU32, DType::kU64, DType::kBool};
  Tensor src = F32({3}, {0, 1, 5});
  for (DType from : all) {
    Tensor x = src.CastTo(from);
    for (DType to : all) {
      auto r = RunOp(OpKind::kCast, {x}, To(to));
      ASSERT_TRUE(r.ok()) << DTypeName(from) << "->" << DTypeName(to) << r.status().ToString();
      bool lossy = from == DType::kBool || to == DType::kBool;
      std::vector<double> want = lossy ? std::vector<double>{0, 1, 1} : std::vector<double>{0, 1, 5};
      ExpectValues((*r)[0], to, {3}, want, 0);
    }
  }
}

TEST(ElementwiseCast, NeedsAValidTo) {
  EXPECT_EQ(RunOp(OpKind::kCast, {F32({1}, {1})}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RunOp(OpKind::kCast, {F32({1}, {1})}, Attrs({{"to", int64_t{99}}})).status().code(),
            StatusCode::kInvalidArgument);
}

// ---- broadcasting binary arithmetic ----

TEST(ElementwiseBinary, AddBroadcastShapes) {
  // [2,3] + [3]
  ExpectValues(Run1(OpKind::kAdd, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {10, 20, 30})}),
               DType::kF32, {2, 3}, {11, 22, 33, 14, 25, 36});
  // [2,1] + [1,3] -> [2,3]
  ExpectValues(Run1(OpKind::kAdd, {F32({2, 1}, {1, 2}), F32({1, 3}, {10, 20, 30})}), DType::kF32,
               {2, 3}, {11, 21, 31, 12, 22, 32});
  // rank 0 + [2]
  ExpectValues(Run1(OpKind::kAdd, {F32({}, {100}), F32({2}, {1, 2})}), DType::kF32, {2},
               {101, 102});
  // rank 0 + rank 0
  ExpectValues(Run1(OpKind::kAdd, {F32({}, {1}), F32({}, {2})}), DType::kF32, {}, {3});
  // size-0 dim: [0,3] + [3] -> [0,3]; [0] + [1] -> [0]
  ExpectValues(Run1(OpKind::kAdd, {F32({0, 3}, {}), F32({3}, {1, 2, 3})}), DType::kF32, {0, 3}, {});
  ExpectValues(Run1(OpKind::kAdd, {F32({0}, {}), F32({1}, {5})}), DType::kF32, {0}, {});
  // different ranks: [2,1,2] + [3,1] -> [2,3,2]
  Tensor y = Run1(OpKind::kAdd, {F32({2, 1, 2}, {0, 1, 2, 3}), F32({3, 1}, {0, 10, 20})});
  ExpectValues(y, DType::kF32, {2, 3, 2}, {0, 1, 10, 11, 20, 21, 2, 3, 12, 13, 22, 23});
}

TEST(ElementwiseBinary, AddIntegerDTypesWrap) {
  ExpectValues(Run1(OpKind::kAdd, {U8({2}, {200, 1}), U8({2}, {100, 2})}), DType::kU8, {2},
               {44, 3});
  Tensor y = Run1(OpKind::kAdd, {I32({1}, {std::numeric_limits<int32_t>::max()}), I32({1}, {1})});
  EXPECT_EQ(y.data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  Tensor u16 = Tensor::FromVector<uint16_t>(DType::kU16, {1}, {65535});
  Tensor sq = Run1(OpKind::kMul, {u16, u16});  // 65535^2 mod 2^16 = 1
  EXPECT_EQ(sq.data<uint16_t>()[0], 1);
  ExpectValues(Run1(OpKind::kAdd, {F16({2}, {0.5f, 1}), F16({}, {0.25f})}), DType::kF16, {2},
               {0.75, 1.25});
  ExpectValues(Run1(OpKind::kAdd, {I64({2}, {-5, 5}), I64({1}, {3})}), DType::kI64, {2}, {-2, 8});
}

TEST(ElementwiseBinary, SubMul) {
  ExpectValues(Run1(OpKind::kSub, {F32({3}, {1, 2, 3}), F32({}, {1})}), DType::kF32, {3},
               {0, 1, 2});
  ExpectValues(Run1(OpKind::kSub, {U8({2}, {1, 5}), U8({2}, {2, 5})}), DType::kU8, {2}, {255, 0});
  ExpectValues(Run1(OpKind::kMul, {F64({2, 2}, {1, 2, 3, 4}), F64({2, 1}, {10, -1})}),
               DType::kF64, {2, 2}, {10, 20, -3, -4});
  ExpectValues(Run1(OpKind::kMul, {I8({2}, {100, -3}), I8({2}, {2, 4})}), DType::kI8, {2},
               {-56, -12});  // 200 wraps to -56
}

TEST(ElementwiseBinary, Div) {
  ExpectValues(Run1(OpKind::kDiv, {F32({3}, {1, -3, 1}), F32({3}, {4, 2, 0})}), DType::kF32, {3},
               {0.25, -1.5, kInf});
  // integer division truncates toward zero
  ExpectValues(Run1(OpKind::kDiv, {I32({4}, {7, -7, 7, -7}), I32({4}, {2, 2, -2, -2})}),
               DType::kI32, {4}, {3, -3, -3, 3});
  ExpectValues(Run1(OpKind::kDiv, {U8({2}, {255, 7}), U8({}, {2})}), DType::kU8, {2}, {127, 3});
  Tensor lowest = Run1(OpKind::kDiv, {I64({1}, {std::numeric_limits<int64_t>::min()}),
                                      I64({1}, {-1})});
  EXPECT_EQ(lowest.data<int64_t>()[0], std::numeric_limits<int64_t>::min());
}

TEST(ElementwiseBinary, IntegerDivisionByZeroIsAnError) {
  auto r = RunOp(OpKind::kDiv, {I32({2}, {1, 2}), I32({2}, {1, 0})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("Div 'n1'"), std::string::npos);
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos);
}

TEST(ElementwiseBinary, PowMixedDTypes) {
  ExpectValues(Run1(OpKind::kPow, {F32({3}, {2, 4, 9}), F32({3}, {3, 0.5f, -1})}), DType::kF32,
               {3}, {8, 2, 1.0 / 9});
  ExpectValues(Run1(OpKind::kPow, {F32({2, 2}, {1, 2, 3, 4}), F32({}, {2})}), DType::kF32, {2, 2},
               {1, 4, 9, 16});
  ExpectValues(Run1(OpKind::kPow, {F32({2}, {1.5f, 2}), I64({2}, {2, 3})}), DType::kF32, {2},
               {2.25, 8});
  // integer base, float exponent: truncated
  ExpectValues(Run1(OpKind::kPow, {I32({3}, {2, 4, 2}), F32({3}, {0.5f, 0.5f, 3})}), DType::kI32,
               {3}, {1, 2, 8});
  // integer ** integer, exact beyond float precision: 3^39 = 4052555153018976267
  Tensor big = Run1(OpKind::kPow, {I64({1}, {3}), I64({1}, {39})});
  EXPECT_EQ(big.data<int64_t>()[0], 4052555153018976267LL);
  ExpectValues(Run1(OpKind::kPow, {I32({3}, {-2, 2, 1}), I32({3}, {3, -1, -5})}), DType::kI32,
               {3}, {-8, 0, 1});
  Tensor u = Tensor::FromVector<uint32_t>(DType::kU32, {1}, {3});
  ExpectValues(Run1(OpKind::kPow, {F32({1}, {2}), u}), DType::kF32, {1}, {8});
  ExpectValues(Run1(OpKind::kPow, {F16({1}, {3}), F32({1}, {2})}), DType::kF16, {1}, {9});
}

TEST(ElementwiseBinary, MixedDTypesAreInvalid) {
  auto r = RunOp(OpKind::kAdd, {F32({1}, {1}), I64({1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("i64"), std::string::npos) << r.status().message();
  EXPECT_EQ(RunOp(OpKind::kAdd, {Bool({1}, {1}), Bool({1}, {1})}).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(RunOp(OpKind::kAnd, {I32({1}, {1}), I32({1}, {1})}).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(RunOp(OpKind::kPow, {Bool({1}, {1}), F32({1}, {1})}).status().code(),
            StatusCode::kUnimplemented);
}

TEST(ElementwiseBinary, NonBroadcastableShapesNameTheNode) {
  auto r = RunOp(OpKind::kMul, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({4}, {1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("Mul 'n1'"), std::string::npos) << m;
  EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
  EXPECT_NE(m.find("[4]"), std::string::npos) << m;
  // a size-0 dim broadcasts only with 0 or 1
  EXPECT_EQ(RunOp(OpKind::kAdd, {F32({0}, {}), F32({2}, {1, 2})}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ElementwiseBinary, CompileTimeShapes) {
  // unknown dims stay unknown, known ones broadcast
  auto t = InferTypes(OpKind::kAdd, {MakeType(DType::kF32, {kUnknownDim, 3}),
                                     MakeType(DType::kF32, {1, 3})});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)[0].dims, (Dims{kUnknownDim, 3}));
  auto u = InferTypes(OpKind::kAdd, {UnknownRank(DType::kF32), MakeType(DType::kF32, {3})});
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE((*u)[0].rank_known);
  auto e = InferTypes(OpKind::kLess, {MakeType(DType::kI32, {kUnknownDim}),
                                      MakeType(DType::kI32, {4, 1})});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)[0].dtype, DType::kBool);
  EXPECT_EQ((*e)[0].dims, (Dims{4, kUnknownDim}));
  // Dropout with an unknown training flag still types its outputs
  auto d = InferTypes(OpKind::kDropout,
                      {MakeType(DType::kF32, {2}), MakeType(DType::kF32, {}),
                       MakeType(DType::kBool, {})}, {}, 2);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)[1].dtype, DType::kBool);
}

// ---- variadic ----

TEST(ElementwiseVariadic, MaxMinSumMeanBroadcastAll) {
  Tensor a = F32({2, 1}, {1, 6});
  Tensor b = F32({3}, {2, 5, 4});
  Tensor c = F32({}, {3});
  ExpectValues(Run1(OpKind::kMax, {a, b, c}), DType::kF32, {2, 3}, {3, 5, 4, 6, 6, 6});
  ExpectValues(Run1(OpKind::kMin, {a, b, c}), DType::kF32, {2, 3}, {1, 1, 1, 2, 3, 3});
  ExpectValues(Run1(OpKind::kSum, {a, b, c}), DType::kF32, {2, 3}, {6, 9, 8, 11, 14, 13});
  ExpectValues(Run1(OpKind::kMean, {a, b, c}), DType::kF32, {2, 3},
               {2, 3, 8.0 / 3, 11.0 / 3, 14.0 / 3, 13.0 / 3});
}

TEST(ElementwiseVariadic, OneInputIsACopy) {
  for (OpKind op : {OpKind::kMax, OpKind::kMin, OpKind::kSum, OpKind::kMean}) {
    ExpectValues(Run1(op, {F32({2}, {-1, 4})}), DType::kF32, {2}, {-1, 4});
  }
}

TEST(ElementwiseVariadic, IntegerAndHalfDTypes) {
  ExpectValues(Run1(OpKind::kMax, {I8({3}, {-128, 5, 0}), I8({3}, {-1, 4, 0})}), DType::kI8, {3},
               {-1, 5, 0});
  Tensor ua = Tensor::FromVector<uint64_t>(DType::kU64, {2}, {18446744073709551615ull, 1});
  Tensor ub = Tensor::FromVector<uint64_t>(DType::kU64, {2}, {1, 2});
  Tensor mx = Run1(OpKind::kMax, {ua, ub});
  EXPECT_EQ(mx.data<uint64_t>()[0], 18446744073709551615ull);
  EXPECT_EQ(mx.data<uint64_t>()[1], 2u);
  Tensor mn = Run1(OpKind::kMin, {ua, ub});
  EXPECT_EQ(mn.data<uint64_t>()[0], 1u);
  ExpectValues(Run1(OpKind::kMin, {F16({2}, {1.5f, -2}), F16({2}, {1, 3})}), DType::kF16, {2},
               {1, -2});
  ExpectValues(Run1(OpKind::kSum, {I32({2}, {1, 2}), I32({2}, {3, 4}), I32({1}, {10})}),
               DType::kI32, {2}, {14, 16});
}

TEST(ElementwiseVariadic, NaNPropagates) {
  ExpectValues(Run1(OpKind::kMax, {F32({2}, {NAN, 1}), F32({2}, {1, NAN})}), DType::kF32, {2},
               {kNaN, kNaN});
  ExpectValues(Run1(OpKind::kMin, {F32({2}, {NAN, 1}), F32({2}, {1, NAN})}), DType::kF32, {2},
               {kNaN, kNaN});
}

TEST(ElementwiseVariadic, Errors) {
  EXPECT_EQ(RunOp(OpKind::kSum, {}).status().code(), StatusCode::kInvalidArgument);
  auto r = RunOp(OpKind::kMax, {F32({2}, {1, 2}), F32({3}, {1, 2, 3}), F32({1}, {0})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("input 1"), std::string::npos) << r.status().message();
  EXPECT_EQ(RunOp(OpKind::kMean, {I32({1}, {1})}).status().code(), StatusCode::kUnimplemented);
}

// ---- comparison and logic ----

TEST(ElementwiseCompare, EqualLessGreater) {
  Tensor a = F32({2, 2}, {1, 2, 3, 4});
  Tensor b = F32({2}, {2, 3});
  ExpectValues(Run1(OpKind::kEqual, {a, b}), DType::kBool, {2, 2}, {0, 0, 0, 0});
  ExpectValues(Run1(OpKind::kLess, {a, b}), DType::kBool, {2, 2}, {1, 1, 0, 0});
  ExpectValues(Run1(OpKind::kGreater, {a, b}), DType::kBool, {2, 2}, {0, 0, 1, 1});
  ExpectValues(Run1(OpKind::kEqual, {I32({3}, {1, 2, 3}), I32({}, {2})}), DType::kBool, {3},
               {0, 1, 0});
  ExpectValues(Run1(OpKind::kEqual, {Bool({2}, {1, 0}), Bool({2}, {1, 1})}), DType::kBool, {2},
               {1, 0});
  ExpectValues(Run1(OpKind::kLess, {U8({2}, {0, 255}), U8({2}, {255, 0})}), DType::kBool, {2},
               {1, 0});
  ExpectValues(Run1(OpKind::kGreater, {F16({2}, {0.5f, -1}), F16({1}, {0})}), DType::kBool, {2},
               {1, 0});
  // NaN compares false
  ExpectValues(Run1(OpKind::kEqual, {F32({1}, {NAN}), F32({1}, {NAN})}), DType::kBool, {1}, {0});
  EXPECT_EQ(RunOp(OpKind::kLess, {Bool({1}, {1}), Bool({1}, {0})}).status().code(),
            StatusCode::kUnimplemented);
}

TEST(ElementwiseCompare, AndOr) {
  Tensor a = Bool({2, 2}, {0, 0, 1, 1});
  Tensor b = Bool({2}, {0, 1});
  ExpectValues(Run1(OpKind::kAnd, {a, b}), DType::kBool, {2, 2}, {0, 0, 0, 1});
  ExpectValues(Run1(OpKind::kOr, {a, b}), DType::kBool, {2, 2}, {0, 1, 1, 1});
  ExpectValues(Run1(OpKind::kOr, {Bool({}, {1}), Bool({0}, {})}), DType::kBool, {0}, {});
}

// ---- Where ----

TEST(ElementwiseWhere, ThreeWayBroadcast) {
  // cond [2,1], x [1,3], y scalar -> [2,3]
  Tensor y = Run1(OpKind::kWhere, {Bool({2, 1}, {1, 0}), F32({1, 3}, {1, 2, 3}), F32({}, {-1})});
  ExpectValues(y, DType::kF32, {2, 3}, {1, 2, 3, -1, -1, -1});
  // int64 values, cond broadcast over columns
  Tensor z = Run1(OpKind::kWhere, {Bool({2}, {1, 0}), I64({2, 2}, {1, 2, 3, 4}),
                                   I64({2, 2}, {9, 8, 7, 6})});
  ExpectValues(z, DType::kI64, {2, 2}, {1, 8, 3, 6});
  Tensor b = Run1(OpKind::kWhere, {Bool({2}, {0, 1}), Bool({2}, {1, 1}), Bool({2}, {0, 0})});
  ExpectValues(b, DType::kBool, {2}, {0, 1});
}

TEST(ElementwiseWhere, Errors) {
  EXPECT_EQ(RunOp(OpKind::kWhere, {F32({1}, {1}), F32({1}, {1}), F32({1}, {1})}).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(RunOp(OpKind::kWhere, {Bool({1}, {1}), F32({1}, {1}), I32({1}, {1})}).status().code(),
            StatusCode::kInvalidArgument);
  auto r = RunOp(OpKind::kWhere, {Bool({2}, {1, 0}), F32({3}, {1, 2, 3}), F32({1}, {1})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("Where 'n1'"), std::string::npos);
}

}  // namespace
}  // namespace edgec
