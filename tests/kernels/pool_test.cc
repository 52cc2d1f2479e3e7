// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: hand-computed cases per
// attribute (pads, auto_pad, strides, dilations, ceil_mode, count_include_pad,
// storage_order, Indices), 1-D/2-D/3-D, integer inputs and errors.
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

Tensor X44() { return Iota({1, 1, 4, 4}, 1); }  // 1..16 row-major

Attributes Kernel(Ints k, Ints strides = {}) {
  Attributes a;
  a.Set("kernel_shape", std::move(k));
  if (!strides.empty()) a.Set("strides", std::move(strides));
  return a;
}

Attributes With(Attributes a, const std::string& name, AttrValue v) {
  a.Set(name, std::move(v));
  return a;
}

// --- MaxPool ---

TEST(MaxPoolTest, StridedWindowsAndIndices) {
  auto r = RunOp(OpKind::kMaxPool, {X44()}, Kernel({2, 2}, {2, 2}), 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectF32((*r)[0], {1, 1, 2, 2}, {6, 8, 14, 16});
  ExpectValues((*r)[1], DType::kI64, {1, 1, 2, 2}, {5, 7, 13, 15});
  // storage_order 1: column-major spatial index h + w * H.
  auto c = RunOp(OpKind::kMaxPool, {X44()},
                 With(Kernel({2, 2}, {2, 2}), "storage_order", int64_t{1}), 2);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ExpectValues((*c)[1], DType::kI64, {1, 1, 2, 2}, {5, 13, 7, 15});
}

TEST(MaxPoolTest, IndicesCountEarlierPlanes) {
  // Second channel's maximum is at its own offset 3, flat index 4 + 3.
  auto r = RunOp(OpKind::kMaxPool, {Iota({1, 2, 2, 2})}, Kernel({2, 2}), 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectValues((*r)[1], DType::kI64, {1, 2, 1, 1}, {3, 7});
}

TEST(MaxPoolTest, PaddingNeverWins) {
  const Tensor x = F32({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  Tensor y = Run1(OpKind::kMaxPool, {x}, With(Kernel({3, 3}), "pads", Ints{1, 1, 1, 1}));
  ExpectF32(y, {1, 1, 3, 3}, {-1, -1, -2, -1, -1, -2, -4, -4, -5});
}

TEST(MaxPoolTest, CeilMode) {
  ExpectF32(Run1(OpKind::kMaxPool, {X44()}, Kernel({3, 3}, {2, 2})), {1, 1, 1, 1}, {11});
  ExpectF32(Run1(OpKind::kMaxPool, {X44()}, With(Kernel({3, 3}, {2, 2}), "ceil_mode", int64_t{1})),
            {1, 1, 2, 2}, {11, 12, 15, 16});
  // 1-D: 5 wide, k2 s2: ceil adds the partial window [5].
  const Tensor x = F32({1, 1, 5}, {1, 2, 3, 4, 5});
  ExpectF32(Run1(OpKind::kMaxPool, {x}, With(Kernel({2}, {2}), "ceil_mode", int64_t{1})), {1, 1, 3},
            {2, 4, 5});
  // A window that would start in the end padding is dropped: 4 wide, pads (0, 1).
  const Attributes drop = With(With(Kernel({2}, {2}), "ceil_mode", int64_t{1}), "pads", Ints{0, 1});
  ExpectF32(Run1(OpKind::kMaxPool, {F32({1, 1, 4}, {1, 2, 3, 4})}, drop), {1, 1, 2}, {2, 4});
}

TEST(MaxPoolTest, Dilations) {
  ExpectF32(Run1(OpKind::kMaxPool, {X44()}, With(Kernel({2, 2}, {1, 1}), "dilations", Ints{2, 2})),
            {1, 1, 2, 2}, {11, 12, 15, 16});
}

TEST(MaxPoolTest, AutoPadSameUpperLower) {
  const Tensor x = F32({1, 1, 3}, {1, 3, 2});
  ExpectF32(Run1(OpKind::kMaxPool, {x}, With(Kernel({2}), "auto_pad", std::string("SAME_UPPER"))),
            {1, 1, 3}, {3, 3, 2});
  ExpectF32(Run1(OpKind::kMaxPool, {x}, With(Kernel({2}), "auto_pad", std::string("SAME_LOWER"))),
            {1, 1, 3}, {1, 3, 3});
  ExpectF32(Run1(OpKind::kMaxPool, {x}, With(Kernel({2}), "auto_pad", std::string("VALID"))),
            {1, 1, 2}, {3, 3});
}

TEST(MaxPoolTest, OneAndThreeDims) {
  ExpectF32(Run1(OpKind::kMaxPool, {F32({1, 1, 3}, {1, 3, 2})}, Kernel({2})), {1, 1, 2}, {3, 3});
  ExpectF32(Run1(OpKind::kMaxPool, {Iota({1, 1, 2, 2, 3}, 1)}, Kernel({2, 2, 2})), {1, 1, 1, 1, 2},
            {11, 12});
}

TEST(MaxPoolTest, IntegerAndHalfInputs) {
  ExpectValues(Run1(OpKind::kMaxPool, {U8({1, 1, 1, 4}, {10, 200, 3, 4})}, Kernel({1, 2}, {1, 2})),
               DType::kU8, {1, 1, 1, 2}, {200, 4});
  ExpectValues(
      Run1(OpKind::kMaxPool, {I8({1, 1, 1, 4}, {-5, -3, -128, -127})}, Kernel({1, 2}, {1, 2})),
      DType::kI8, {1, 1, 1, 2}, {-3, -127});
  ExpectValues(Run1(OpKind::kMaxPool, {F16({1, 1, 3}, {0.5, -1, 0.25})}, Kernel({2})), DType::kF16,
               {1, 1, 2}, {0.5, 0.25});
}

// --- AveragePool ---

TEST(AveragePoolTest, StridedWindows) {
  ExpectF32(Run1(OpKind::kAveragePool, {X44()}, Kernel({2, 2}, {2, 2})), {1, 1, 2, 2},
            {3.5, 5.5, 11.5, 13.5});
}

TEST(AveragePoolTest, CountIncludePad) {
  const Tensor x = F32({1, 1, 3}, {1, 2, 3});
  const Attributes a = With(Kernel({3}), "pads", Ints{1, 1});
  ExpectF32(Run1(OpKind::kAveragePool, {x}, a), {1, 1, 3}, {1.5, 2, 2.5});
  ExpectF32(Run1(OpKind::kAveragePool, {x}, With(a, "count_include_pad", int64_t{1})), {1, 1, 3},
            {1, 2, 5.0 / 3});
}

TEST(AveragePoolTest, CeilModeWindowPastThePadsCountsOnlyItsInside) {
  const Tensor x = F32({1, 1, 5}, {1, 2, 3, 4, 5});
  const Attributes a = With(Kernel({2}, {2}), "ceil_mode", int64_t{1});
  ExpectF32(Run1(OpKind::kAveragePool, {x}, a), {1, 1, 3}, {1.5, 3.5, 5});
  ExpectF32(Run1(OpKind::kAveragePool, {x}, With(a, "count_include_pad", int64_t{1})), {1, 1, 3},
            {1.5, 3.5, 5});
}

TEST(AveragePoolTest, AutoPadCountsComputedPads) {
  const Tensor x = F32({1, 1, 3}, {1, 3, 2});
  const Attributes a = With(Kernel({2}), "auto_pad", std::string("SAME_UPPER"));
  ExpectF32(Run1(OpKind::kAveragePool, {x}, a), {1, 1, 3}, {2, 2.5, 2});
  ExpectF32(Run1(OpKind::kAveragePool, {x}, With(a, "count_include_pad", int64_t{1})), {1, 1, 3},
            {2, 2.5, 1});
  ExpectF32(
      Run1(OpKind::kAveragePool, {x}, With(Kernel({2}), "auto_pad", std::string("SAME_LOWER"))),
      {1, 1, 3}, {1, 2, 2.5});
}

TEST(AveragePoolTest, ThreeDimsAndDoubles) {
  ExpectF32(Run1(OpKind::kAveragePool, {Iota({1, 1, 2, 2, 2}, 1)}, Kernel({2, 2, 2})),
            {1, 1, 1, 1, 1}, {4.5});
  ExpectValues(Run1(OpKind::kAveragePool, {F64({1, 1, 2}, {1, 4})}, Kernel({2})), DType::kF64,
               {1, 1, 1}, {2.5});
}

// --- global pools ---

TEST(GlobalPoolTest, AverageAndMaxPerPlane) {
  const Tensor x = Iota({1, 2, 2, 2}, 1);
  ExpectF32(Run1(OpKind::kGlobalAveragePool, {x}), {1, 2, 1, 1}, {2.5, 6.5});
  ExpectF32(Run1(OpKind::kGlobalMaxPool, {x}), {1, 2, 1, 1}, {4, 8});
  ExpectF32(Run1(OpKind::kGlobalAveragePool, {Iota({2, 1, 3})}), {2, 1, 1}, {1, 4});
  ExpectValues(Run1(OpKind::kGlobalMaxPool, {I8({1, 1, 3}, {-7, -2, -9})}), DType::kI8, {1, 1, 1},
               {-2});
}

// --- inference and errors ---

TEST(PoolTest, CompileTimeInference) {
  auto out =
      InferTypes(OpKind::kMaxPool, {MakeType(DType::kF32, {kUnknownDim, 3, kUnknownDim, 32})},
                 Kernel({2, 2}, {2, 2}), 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dims, (Dims{kUnknownDim, 3, kUnknownDim, 16}));
  EXPECT_EQ((*out)[1].dtype, DType::kI64);
  auto global =
      InferTypes(OpKind::kGlobalAveragePool, {MakeType(DType::kF32, {kUnknownDim, 8, 7, 7})});
  ASSERT_TRUE(global.ok());
  EXPECT_EQ((*global)[0].dims, (Dims{kUnknownDim, 8, 1, 1}));
}

TEST(PoolTest, Errors) {
  std::string err = ErrorOf(OpKind::kMaxPool, {X44()});
  EXPECT_NE(err.find("MaxPool 'n1': attribute kernel_shape is required"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAveragePool, {X44()}, Kernel({5, 5}));
  EXPECT_NE(err.find("larger than the padded input 4"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMaxPool, {X44()}, Kernel({2}));
  EXPECT_NE(err.find("kernel_shape [2] has 1 entries, expected 2"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMaxPool, {Iota({4, 4})}, Kernel({2}));
  EXPECT_NE(err.find("expected at least 3"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMaxPool, {X44()}, With(Kernel({2, 2}), "storage_order", int64_t{2}));
  EXPECT_NE(err.find("storage_order is 2"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAveragePool, {U8({1, 1, 2}, {1, 2})}, Kernel({2}));
  EXPECT_NE(err.find("dtype u8"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMaxPool, {X44()}, With(Kernel({2, 2}), "ceil_mode", int64_t{3}));
  EXPECT_NE(err.find("ceil_mode is 3"), std::string::npos) << err;
}

}  // namespace
}  // namespace edgec
