// Softmax family: shape inference and reference kernels.
#include <cmath>

#include "elementwise_test_util.h"

namespace edgec {
namespace {

using namespace testing_ew;

// softmax([1, 2, 3]) and log_softmax([1, 2, 3]), computed by hand:
// e^1 + e^2 + e^3 = 30.19287485, so p = e^k / 30.19287485 and log p = k - 3.40760596.
const std::vector<double> kSoftmax123 = {0.09003057317038046, 0.24472847105479767,
                                         0.6652409557748219};
const std::vector<double> kLogSoftmax123 = {-2.4076059644443806, -1.4076059644443806,
                                            -0.40760596444438063};

TEST(Softmax, LastAxisByDefault) {
  ExpectValues(Run1(OpKind::kSoftmax, {F32({1, 3}, {1, 2, 3})}), DType::kF32, {1, 3},
               kSoftmax123);
  ExpectValues(Run1(OpKind::kLogSoftmax, {F32({1, 3}, {1, 2, 3})}), DType::kF32, {1, 3},
               kLogSoftmax123);
  ExpectValues(Run1(OpKind::kSoftmax, {F32({3}, {1, 2, 3})}), DType::kF32, {3}, kSoftmax123);
}

TEST(Softmax, LargeNumbersAreStable) {
  // Shifting by a constant does not change softmax; naive exp(1000) would overflow.
  Tensor x = F32({2, 3}, {1000, 1001, 1002, -1000, -1000, -1000});
  std::vector<double> want = kSoftmax123;
  want.insert(want.end(), {1.0 / 3, 1.0 / 3, 1.0 / 3});
  ExpectValues(Run1(OpKind::kSoftmax, {x}), DType::kF32, {2, 3}, want);
  std::vector<double> log_want = kLogSoftmax123;
  log_want.insert(log_want.end(), 3, -std::log(3.0));
  ExpectValues(Run1(OpKind::kLogSoftmax, {x}), DType::kF32, {2, 3}, log_want);
}

TEST(Softmax, AxisZero) {
  // columns normalize: col 0 = (0, ln 3) -> (1/4, 3/4); col 1 = (0, 0) -> (1/2, 1/2)
  Tensor x = F32({2, 2}, {0, 0, static_cast<float>(std::log(3.0)), 0});
  ExpectValues(Run1(OpKind::kSoftmax, {x}, Attrs({{"axis", int64_t{0}}})), DType::kF32, {2, 2},
               {0.25, 0.5, 0.75, 0.5});
  ExpectValues(Run1(OpKind::kLogSoftmax, {x}, Attrs({{"axis", int64_t{-2}}})), DType::kF32,
               {2, 2}, {std::log(0.25), std::log(0.5), std::log(0.75), std::log(0.5)});
}

// A naive second formula (no max subtraction; fine for small values) over a middle axis.
std::vector<double> NaiveSoftmaxAxis1(const std::vector<float>& x, int64_t a, int64_t n,
                                      int64_t b, bool log) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t k = 0; k < b; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x[(i * n + j) * b + k]);
      for (int64_t j = 0; j < n; ++j) {
        double v = x[(i * n + j) * b + k];
        out[(i * n + j) * b + k] = log ? v - std::log(sum) : std::exp(v) / sum;
      }
    }
  }
  return out;
}

TEST(Softmax, MiddleAxisMatchesNaiveFormula) {
  std::vector<float> x;
  for (int i = 0; i < 24; ++i) x.push_back(static_cast<float>((i * 7) % 11) * 0.3f - 1.0f);
  Attributes axis1 = Attrs({{"axis", int64_t{1}}});
  ExpectValues(Run1(OpKind::kSoftmax, {F32({2, 3, 4}, x)}, axis1), DType::kF32, {2, 3, 4},
               NaiveSoftmaxAxis1(x, 2, 3, 4, false));
  ExpectValues(Run1(OpKind::kLogSoftmax, {F32({2, 3, 4}, x)}, axis1), DType::kF32, {2, 3, 4},
               NaiveSoftmaxAxis1(x, 2, 3, 4, true));
}

TEST(Softmax, OtherFloatDTypes) {
  ExpectValues(Run1(OpKind::kSoftmax, {F64({3}, {1, 2, 3})}), DType::kF64, {3}, kSoftmax123,
               1e-12);
  ExpectValues(Run1(OpKind::kSoftmax, {F16({3}, {1, 2, 3})}), DType::kF16, {3}, kSoftmax123,
               1e-3);
  ExpectValues(Run1(OpKind::kLogSoftmax, {F16({3}, {1, 2, 3})}), DType::kF16, {3},
               kLogSoftmax123, 1e-3);
}

TEST(Softmax, SizeZeroAndSizeOne) {
  ExpectValues(Run1(OpKind::kSoftmax, {F32({0, 3}, {})}), DType::kF32, {0, 3}, {});
  ExpectValues(Run1(OpKind::kSoftmax, {F32({2, 0}, {})}), DType::kF32, {2, 0}, {});
  ExpectValues(Run1(OpKind::kSoftmax, {F32({2, 1}, {5, -7})}), DType::kF32, {2, 1}, {1, 1});
  ExpectValues(Run1(OpKind::kLogSoftmax, {F32({2, 1}, {5, -7})}), DType::kF32, {2, 1}, {0, 0});
}

TEST(Softmax, Errors) {
  auto axis = RunOp(OpKind::kSoftmax, {F32({2, 3}, {1, 2, 3, 4, 5, 6})},
                    Attrs({{"axis", int64_t{2}}}));
  ASSERT_FALSE(axis.ok());
  EXPECT_EQ(axis.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(axis.status().message().find("Softmax 'n1'"), std::string::npos);
  EXPECT_NE(axis.status().message().find("axis 2"), std::string::npos) << axis.status().message();
  EXPECT_EQ(RunOp(OpKind::kLogSoftmax, {F32({}, {1})}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RunOp(OpKind::kSoftmax, {I32({2}, {1, 2})}).status().code(),
            StatusCode::kUnimplemented);
  // unknown rank at compile time: no axis check yet
  auto t = InferTypes(OpKind::kSoftmax, {UnknownRank(DType::kF32)});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE((*t)[0].rank_known);
}

}  // namespace
}  // namespace edgec
