// Reduce*, ArgMax/ArgMin and TopK: hand-computed cases, attribute variants, value-dependent
// inference and error cases.
#include <limits>

#include "movement_test_util.h"

namespace edgec {
namespace {

using namespace testing_mv;

// x = [[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]]], shape [3, 2, 2].
Tensor X322() { return F32({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); }

// --- Reduce* ---

TEST(ReduceTest, SumOverAxisKeepdims) {
  Tensor y = Run1(OpKind::kReduceSum, {X322(), I64s({1})});
  ExpectTensor(y, {3, 1, 2}, {4, 6, 12, 14, 20, 22});
}

TEST(ReduceTest, SumOverAxisWithoutKeepdims) {
  Tensor y = Run1(OpKind::kReduceSum, {X322(), I64s({1})}, Attrs({{"keepdims", int64_t{0}}}));
  ExpectTensor(y, {3, 2}, {4, 6, 12, 14, 20, 22});
}

TEST(ReduceTest, MeanOverAllAxesWhenAxesAbsent) {
  Tensor y = Run1(OpKind::kReduceMean, {X322()});
  ExpectTensor(y, {1, 1, 1}, {6.5});
  Tensor z = Run1(OpKind::kReduceMean, {X322()}, Attrs({{"keepdims", int64_t{0}}}));
  ExpectTensor(z, {}, {6.5});
}

TEST(ReduceTest, EmptyAxesReduceAllUnlessNoop) {
  Tensor empty = I64({0}, {});
  ExpectTensor(Run1(OpKind::kReduceSum, {X322(), empty}), {1, 1, 1}, {78});
  Tensor y = Run1(OpKind::kReduceSum, {X322(), empty}, Attrs({{"noop_with_empty_axes", int64_t{1}}}));
  ExpectTensor(y, {3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
}

TEST(ReduceTest, MaxMinWithNegativeAxes) {
  ExpectTensor(Run1(OpKind::kReduceMax, {X322(), I64s({-1})}), {3, 2, 1}, {2, 4, 6, 8, 10, 12});
  ExpectTensor(Run1(OpKind::kReduceMin, {X322(), I64s({-3, -1})}), {1, 2, 1}, {1, 3});
}

TEST(ReduceTest, ProdAndL2) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  ExpectTensor(Run1(OpKind::kReduceProd, {x, I64s({0})}), {1, 2}, {3, 8});
  // sqrt(1 + 4) and sqrt(9 + 16)
  ExpectTensor(Run1(OpKind::kReduceL2, {x, I64s({1})}), {2, 1}, {std::sqrt(5.0), 5.0}, 1e-6);
}

TEST(ReduceTest, AxesFromAttributeWhenNoInput) {
  Tensor y = Run1(OpKind::kReduceSum, {X322()}, Attrs({{"axes", std::vector<int64_t>{0, 2}}}));
  ExpectTensor(y, {1, 2, 1}, {1 + 2 + 5 + 6 + 9 + 10, 3 + 4 + 7 + 8 + 11 + 12});
}

TEST(ReduceTest, EmptyReductionGivesTheIdentity) {
  Tensor x(DType::kF32, {2, 0});
  const double inf = std::numeric_limits<double>::infinity();
  ExpectTensor(Run1(OpKind::kReduceSum, {x, I64s({1})}), {2, 1}, {0, 0});
  ExpectTensor(Run1(OpKind::kReduceProd, {x, I64s({1})}), {2, 1}, {1, 1});
  ExpectTensor(Run1(OpKind::kReduceMax, {x, I64s({1})}), {2, 1}, {-inf, -inf});
  ExpectTensor(Run1(OpKind::kReduceMin, {x, I64s({1})}), {2, 1}, {inf, inf});
  ExpectTensor(Run1(OpKind::kReduceL2, {x, I64s({1})}), {2, 1}, {0, 0});
  ExpectTensor(Run1(OpKind::kReduceMean, {x, I64s({1})}), {2, 1}, {NAN, NAN});
  // Reducing the non-empty axis leaves an empty output.
  ExpectTensor(Run1(OpKind::kReduceSum, {x, I64s({0})}), {1, 0}, {});
}

TEST(ReduceTest, IntegerDTypesAreExact) {
  const int64_t big = (int64_t{1} << 60) + 1;  // not representable as a double
  Tensor y = Run1(OpKind::kReduceMax, {I64({3}, {5, big, -7}), I64s({0})});
  EXPECT_EQ(y.data<int64_t>()[0], big);
  Tensor s = Run1(OpKind::kReduceSum, {I32({2, 2}, {1, -2, 30, 40}), I64s({1})});
  ASSERT_EQ(s.dtype(), DType::kI32);
  EXPECT_EQ(s.data<int32_t>()[0], -1);
  EXPECT_EQ(s.data<int32_t>()[1], 70);
  Tensor m = Run1(OpKind::kReduceMean, {I32({1, 2}, {3, 4}), I64s({1})});
  EXPECT_EQ(m.data<int32_t>()[0], 3);  // 7 / 2 truncated
}

TEST(ReduceTest, HalfPrecisionInput) {
  Tensor x = F32({4}, {1, 2, 3, 4}).CastTo(DType::kF16);
  Tensor y = Run1(OpKind::kReduceMean, {x, I64s({0})});
  ASSERT_EQ(y.dtype(), DType::kF16);
  ExpectTensor(y, {1}, {2.5});
}

TEST(ReduceTest, InferenceWithUnknownAxes) {
  InferArg data = Unknown(Type(DType::kF32, {3, 2, 2}));
  InferArg axes = Unknown(Type(DType::kI64, {1}));
  EXPECT_EQ(Infer1(OpKind::kReduceSum, {data, axes}).dims, Dims({-1, -1, -1}));
  EXPECT_EQ(Infer1(OpKind::kReduceSum, {data, axes}, Attrs({{"keepdims", int64_t{0}}})).dims,
            Dims({-1, -1}));
  // An axes input of unknown length with keepdims=0: rank unknown.
  InferArg any_axes = Unknown(Type(DType::kI64, {-1}));
  EXPECT_FALSE(Infer1(OpKind::kReduceSum, {data, any_axes}, Attrs({{"keepdims", int64_t{0}}})).rank_known);
  // Known axes: exact.
  EXPECT_EQ(Infer1(OpKind::kReduceSum, {data, Known(I64s({-2}))}).dims, Dims({3, 1, 2}));
  // Unknown data dims stay unknown, reduced ones become 1.
  InferArg partial = Unknown(Type(DType::kF32, {-1, 5}));
  EXPECT_EQ(Infer1(OpKind::kReduceMax, {partial, Known(I64s({1}))}).dims, Dims({-1, 1}));
}

TEST(ReduceTest, Errors) {
  EXPECT_NE(RunError(OpKind::kReduceSum, {X322(), I64s({3})}).find("out of range"), std::string::npos);
  EXPECT_NE(RunError(OpKind::kReduceSum, {X322(), I64s({1, -2})}).find("twice"), std::string::npos);
  EXPECT_NE(RunError(OpKind::kReduceSum, {X322(), F32({1}, {1})}).find("dtype"), std::string::npos);
  Tensor b(DType::kBool, {2});
  EXPECT_FALSE(RunError(OpKind::kReduceMax, {b}).empty());
}

// --- ArgMax / ArgMin ---

TEST(ArgReduceTest, AxisAndKeepdims) {
  Tensor x = F32({2, 3}, {2, 9, 1, 7, 0, 7});
  Tensor y = Run1(OpKind::kArgMax, {x}, Attrs({{"axis", int64_t{1}}}));
  ASSERT_EQ(y.dtype(), DType::kI64);
  ExpectTensor(y, {2, 1}, {1, 0});
  ExpectTensor(Run1(OpKind::kArgMin, {x}, Attrs({{"axis", int64_t{0}}, {"keepdims", int64_t{0}}})),
               {3}, {0, 1, 0});
  ExpectTensor(Run1(OpKind::kArgMax, {x}, Attrs({{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}})),
               {2}, {1, 0});
}

TEST(ArgReduceTest, TiesAndSelectLastIndex) {
  Tensor x = F32({1, 4}, {3, 1, 3, 1});
  Attributes first = Attrs({{"axis", int64_t{1}}});
  Attributes last = Attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}});
  ExpectTensor(Run1(OpKind::kArgMax, {x}, first), {1, 1}, {0});
  ExpectTensor(Run1(OpKind::kArgMax, {x}, last), {1, 1}, {2});
  ExpectTensor(Run1(OpKind::kArgMin, {x}, first), {1, 1}, {1});
  ExpectTensor(Run1(OpKind::kArgMin, {x}, last), {1, 1}, {3});
}

TEST(ArgReduceTest, Errors) {
  Tensor empty(DType::kF32, {2, 0});
  EXPECT_NE(RunError(OpKind::kArgMax, {empty}, Attrs({{"axis", int64_t{1}}})).find("empty"),
            std::string::npos);
  EXPECT_NE(RunError(OpKind::kArgMin, {F32({2}, {1, 2})}, Attrs({{"axis", int64_t{1}}})).find("out of range"),
            std::string::npos);
}

// --- TopK ---

TEST(TopKTest, LargestSortedWithTiesByLowerIndex) {
  Tensor x = F32({2, 4}, {1, 5, 3, 5, 4, 4, 4, 0});
  auto r = RunOp(OpKind::kTopK, {x, I64s({3})}, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectTensor((*r)[0], {2, 3}, {5, 5, 3, 4, 4, 4});
  ASSERT_EQ((*r)[1].dtype(), DType::kI64);
  ExpectTensor((*r)[1], {2, 3}, {1, 3, 2, 0, 1, 2});
}

TEST(TopKTest, SmallestAlongAxisZero) {
  Tensor x = F32({3, 2}, {3, 0, 1, 2, 2, -1});
  auto r = RunOp(OpKind::kTopK, {x, I64s({2})}, Attrs({{"axis", int64_t{0}}, {"largest", int64_t{0}}}), 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectTensor((*r)[0], {2, 2}, {1, -1, 2, 0});
  ExpectTensor((*r)[1], {2, 2}, {1, 2, 2, 0});
}

TEST(TopKTest, IntegerValuesAreCopiedExactly) {
  const int64_t big = (int64_t{1} << 62) + 3;
  auto r = RunOp(OpKind::kTopK, {I64({3}, {big - 1, big, 7}), I64s({1})}, {}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<int64_t>()[0], big);
  EXPECT_EQ((*r)[1].data<int64_t>()[0], 1);
}

TEST(TopKTest, KZeroAndErrors) {
  auto r = RunOp(OpKind::kTopK, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), I64s({0})}, {}, 2);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].dims(), Dims({2, 0}));
  EXPECT_NE(RunError(OpKind::kTopK, {F32({3}, {1, 2, 3}), I64s({4})}, {}, 2).find("larger"),
            std::string::npos);
  EXPECT_NE(RunError(OpKind::kTopK, {F32({3}, {1, 2, 3}), I64s({-1})}, {}, 2).find("negative"),
            std::string::npos);
}

TEST(TopKTest, InferenceWithUnknownK) {
  auto r = Infer(OpKind::kTopK, {Unknown(Type(DType::kF32, {4, 10})), Unknown(Type(DType::kI64, {1}))}, {}, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].dims, Dims({4, -1}));
  EXPECT_EQ((*r)[1].dims, Dims({4, -1}));
  EXPECT_EQ((*r)[1].dtype, DType::kI64);
}

}  // namespace
}  // namespace edgec
