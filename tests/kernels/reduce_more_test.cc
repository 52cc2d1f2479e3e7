// Reductions and axis-wise ops added for wider ONNX coverage: ReduceL1, ReduceSumSquare,
// ReduceLogSum, ReduceLogSumExp, CumSum, Hardmax, MeanVarianceNormalization and LRN.
// Expected values are computed by hand or by a second, direct formula.
#include <cmath>
#include <limits>

#include "movement_test_util.h"

namespace edgec {
namespace {

using namespace testing_mv;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor F64(Dims dims, std::vector<double> v) {
  return Tensor::FromVector<double>(DType::kF64, std::move(dims), v);
}

// x = [[1, -2], [-3, 4]]
Tensor X22() { return F32({2, 2}, {1, -2, -3, 4}); }

// --- Reduce* ---

TEST(ReduceMoreTest, L1AndSumSquare) {
  ExpectTensor(Run1(OpKind::kReduceL1, {X22(), I64s({1})}), {2, 1}, {3, 7});
  ExpectTensor(Run1(OpKind::kReduceL1, {X22()}, Attrs({{"keepdims", int64_t{0}}})), {}, {10});
  ExpectTensor(Run1(OpKind::kReduceSumSquare, {X22(), I64s({0})}), {1, 2}, {10, 20});
  ExpectTensor(Run1(OpKind::kReduceSumSquare, {X22(), I64s({-1})}, Attrs({{"keepdims", int64_t{0}}})),
               {2}, {5, 25});
}

TEST(ReduceMoreTest, L1AndSumSquareOnIntegersAreExact) {
  Tensor x = I32({3}, {-100000, 3, 4});
  Tensor l1 = Run1(OpKind::kReduceL1, {x});
  EXPECT_EQ(l1.dtype(), DType::kI32);
  ExpectTensor(l1, {1}, {100007});
  Tensor big = Run1(OpKind::kReduceSumSquare, {I64({2}, {3000000000LL, -1})});
  EXPECT_EQ(big.ToInt64Vector(), (std::vector<int64_t>{9000000000000000001LL}));
}

TEST(ReduceMoreTest, LogSumAndLogSumExp) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(Run1(OpKind::kReduceLogSum, {x, I64s({1})}), {2, 1}, {std::log(6.0), std::log(15.0)},
               1e-6);
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse1 = std::log(std::exp(4.0) + std::exp(5.0) + std::exp(6.0));
  ExpectTensor(Run1(OpKind::kReduceLogSumExp, {x, I64s({1})}), {2, 1}, {lse0, lse1}, 1e-6);
  // Large values do not overflow: log(e^1000 + e^1000) = 1000 + log 2.
  Tensor big = F64({2}, {1000, 1000});
  ExpectTensor(Run1(OpKind::kReduceLogSumExp, {big}), {1}, {1000 + std::log(2.0)}, 1e-9);
  Tensor mixed = F64({3}, {-kInf, 0, -kInf});
  ExpectTensor(Run1(OpKind::kReduceLogSumExp, {mixed}), {1}, {0});
}

TEST(ReduceMoreTest, EmptyReductionsGiveTheirIdentities) {
  Tensor x(DType::kF32, {2, 0});
  const Attributes one = Attrs({{"keepdims", int64_t{0}}});
  ExpectTensor(Run1(OpKind::kReduceL1, {x, I64s({1})}, one), {2}, {0, 0});
  ExpectTensor(Run1(OpKind::kReduceSumSquare, {x, I64s({1})}, one), {2}, {0, 0});
  ExpectTensor(Run1(OpKind::kReduceLogSum, {x, I64s({1})}, one), {2}, {-kInf, -kInf});
  ExpectTensor(Run1(OpKind::kReduceLogSumExp, {x, I64s({1})}, one), {2}, {-kInf, -kInf});
}

TEST(ReduceMoreTest, NewReductionsShareAxesValidation) {
  EXPECT_NE(RunError(OpKind::kReduceL1, {X22(), I64s({2})}).find("out of range"), std::string::npos);
  EXPECT_NE(RunError(OpKind::kReduceLogSum, {X22(), I64s({0, 0})}).find("twice"), std::string::npos);
  TensorType t = Infer1(OpKind::kReduceSumSquare,
                        {Unknown(Type(DType::kF32, {2, 3})), Unknown(Type(DType::kI64, {1}))},
                        Attrs({{"keepdims", int64_t{0}}}));
  EXPECT_EQ(t, Type(DType::kF32, {kUnknownDim}));
}

// --- CumSum ---

TEST(CumSumTest, InclusiveExclusiveReverse) {
  Tensor x = F32({5}, {1, 2, 3, 4, 5});
  Tensor axis = I64({}, {0});
  ExpectTensor(Run1(OpKind::kCumSum, {x, axis}), {5}, {1, 3, 6, 10, 15});
  ExpectTensor(Run1(OpKind::kCumSum, {x, axis}, Attrs({{"exclusive", int64_t{1}}})), {5},
               {0, 1, 3, 6, 10});
  ExpectTensor(Run1(OpKind::kCumSum, {x, axis}, Attrs({{"reverse", int64_t{1}}})), {5},
               {15, 14, 12, 9, 5});
  ExpectTensor(Run1(OpKind::kCumSum, {x, axis},
                    Attrs({{"reverse", int64_t{1}}, {"exclusive", int64_t{1}}})),
               {5}, {14, 12, 9, 5, 0});
}

TEST(CumSumTest, AlongEachAxisOf2D) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(Run1(OpKind::kCumSum, {x, I32({}, {0})}), {2, 3}, {1, 2, 3, 5, 7, 9});
  ExpectTensor(Run1(OpKind::kCumSum, {x, I64({1}, {-1})}), {2, 3}, {1, 3, 6, 4, 9, 15});
  Tensor y = Run1(OpKind::kCumSum, {I32({3}, {2147483647, 1, 1}), I64({}, {0})});
  EXPECT_EQ(y.dtype(), DType::kI32);
  ExpectTensor(y, {3}, {2147483647, -2147483648.0, -2147483647.0});  // wraps
}

TEST(CumSumTest, Errors) {
  Tensor x = F32({2}, {1, 2});
  EXPECT_NE(RunError(OpKind::kCumSum, {x, I64({}, {1})}).find("out of range"), std::string::npos);
  EXPECT_NE(RunError(OpKind::kCumSum, {x, I64({2}, {0, 0})}), "");
  EXPECT_NE(RunError(OpKind::kCumSum, {x, F32({}, {0})}), "");
  EXPECT_NE(RunError(OpKind::kCumSum, {F32({}, {1}), I64({}, {0})}), "");
}

// --- Hardmax ---

TEST(HardmaxTest, OneHotOfTheFirstMaximum) {
  Tensor x = F32({2, 3}, {1, 3, 3, -1, -5, -2});
  ExpectTensor(Run1(OpKind::kHardmax, {x}), {2, 3}, {0, 1, 0, 1, 0, 0});
  ExpectTensor(Run1(OpKind::kHardmax, {x}, Attrs({{"axis", int64_t{0}}})), {2, 3}, {1, 1, 1, 0, 0, 0});
  ExpectTensor(Run1(OpKind::kHardmax, {F32({3}, {1, NAN, 2})}), {3}, {0, 1, 0});
  EXPECT_NE(RunError(OpKind::kHardmax, {x}, Attrs({{"axis", int64_t{2}}})), "");
}

// --- MeanVarianceNormalization ---

TEST(MvnTest, NormalizesOverTheGivenAxes) {
  // Over axis 1: row [1, 3] has mean 2, std 1 -> [-1, 1]; row [2, 6]: mean 4, std 2.
  Tensor x = F32({2, 2}, {1, 3, 2, 6});
  ExpectTensor(Run1(OpKind::kMeanVarianceNormalization, {x}, Attrs({{"axes", std::vector<int64_t>{1}}})),
               {2, 2}, {-1, 1, -1, 1}, 1e-6);
  // Over axis 0: columns [1, 2] (mean 1.5, std 0.5) and [3, 6] (mean 4.5, std 1.5).
  ExpectTensor(Run1(OpKind::kMeanVarianceNormalization, {x}, Attrs({{"axes", std::vector<int64_t>{0}}})),
               {2, 2}, {-1, -1, 1, 1}, 1e-6);
}

TEST(MvnTest, DefaultAxesAreBatchAndSpatial) {
  // [N=2, C=2, 1, 1]: per channel over the batch. Channel 0: [0, 4] -> [-1, 1];
  // channel 1: [1, 1] (std 0) -> 0 / 1e-9 = 0.
  Tensor x = F32({2, 2, 1, 1}, {0, 1, 4, 1});
  ExpectTensor(Run1(OpKind::kMeanVarianceNormalization, {x}), {2, 2, 1, 1}, {-1, 0, 1, 0}, 1e-6);
  EXPECT_NE(RunError(OpKind::kMeanVarianceNormalization, {F32({2, 2}, {1, 2, 3, 4})}), "");
}

// --- LRN ---

TEST(LrnTest, SumsSquaresOverNeighbouringChannels) {
  // [1, 3, 1, 1] = [1, 2, 3], size 3, alpha 3 (alpha/size = 1), beta 1, bias 1:
  // c0: 1 / (1 + 1 + 4) ; c1: 2 / (1 + 1 + 4 + 9) ; c2: 3 / (1 + 4 + 9)
  Tensor x = F32({1, 3, 1, 1}, {1, 2, 3});
  const Attributes a = Attrs({{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}});
  ExpectTensor(Run1(OpKind::kLRN, {x}, a), {1, 3, 1, 1}, {1.0 / 6, 2.0 / 15, 3.0 / 14}, 1e-6);
  // size 2: window [c, c + 1]; beta 0.5.
  const Attributes b = Attrs({{"size", int64_t{2}}, {"alpha", 2.0f}, {"beta", 0.5f}, {"bias", 0.0f}});
  ExpectTensor(Run1(OpKind::kLRN, {x}, b), {1, 3, 1, 1},
               {1 / std::sqrt(5.0), 2 / std::sqrt(13.0), 3 / std::sqrt(9.0)}, 1e-6);
}

TEST(LrnTest, DefaultsAndErrors) {
  Tensor x = F32({1, 1, 1, 2}, {2, -2});
  // defaults alpha 1e-4, beta 0.75, bias 1: y = x / (1 + 1e-4 * 4)^0.75
  const double d = std::pow(1 + 1e-4 * 4, 0.75);
  ExpectTensor(Run1(OpKind::kLRN, {x}, Attrs({{"size", int64_t{1}}})), {1, 1, 1, 2}, {2 / d, -2 / d},
               1e-6);
  EXPECT_NE(RunError(OpKind::kLRN, {x}).find("size"), std::string::npos);
  EXPECT_NE(RunError(OpKind::kLRN, {x}, Attrs({{"size", int64_t{0}}})), "");
  EXPECT_NE(RunError(OpKind::kLRN, {F32({2}, {1, 2})}, Attrs({{"size", int64_t{1}}})), "");
}

}  // namespace
}  // namespace edgec
