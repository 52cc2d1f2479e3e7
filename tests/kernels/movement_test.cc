// Data movement and shape ops: hand-computed cases per op and attribute, value-dependent
// shapes with and without known values, and error cases.
#include <limits>

#include "movement_test_util.h"

namespace edgec {
namespace {

using namespace testing_mv;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// --- Reshape ---

TEST(ReshapeTest, ZeroCopiesAndMinusOneInfers) {
  Tensor y = Run1(OpKind::kReshape, {Iota({2, 3, 4}), I64s({0, -1})});
  ASSERT_EQ(y.dims(), Dims({2, 12}));
  EXPECT_EQ(Floats(y), Floats(Iota({24})));  // same elements in the same order
  EXPECT_EQ(Run1(OpKind::kReshape, {Iota({2, 3, 4}), I64s({-1, 2, 0})}).dims(), Dims({3, 2, 4}));
}

TEST(ReshapeTest, AllowZeroKeepsZeroDims) {
  Tensor x(DType::kF32, {0, 3, 4});
  Tensor y = Run1(OpKind::kReshape, {x, I64s({3, 4, 0})}, Attrs({{"allowzero", int64_t{1}}}));
  EXPECT_EQ(y.dims(), Dims({3, 4, 0}));
  // Without allowzero the 0 copies input dim 2 (4): 3*4*4 != 0 elements.
  EXPECT_TRUE(Contains(RunError(OpKind::kReshape, {x, I64s({3, 4, 0})}), "cannot reshape"));
}

TEST(ReshapeTest, CountMismatchIsAClearError) {
  std::string e = RunError(OpKind::kReshape, {Iota({2, 3, 4}), I64s({5, 5})});
  EXPECT_TRUE(Contains(e, "Reshape 'node7'")) << e;
  EXPECT_TRUE(Contains(e, "24 elements")) << e;
  EXPECT_TRUE(Contains(e, "25 elements")) << e;
  EXPECT_TRUE(Contains(RunError(OpKind::kReshape, {Iota({2, 3}), I64s({-1, -1})}), "more than one -1"));
  EXPECT_TRUE(Contains(RunError(OpKind::kReshape, {Iota({2, 3}), I64s({4, -1})}), "-1"));
  EXPECT_TRUE(Contains(RunError(OpKind::kReshape, {Iota({6}), I64s({6, 0})}), "only 1 dims"));
}

TEST(ReshapeTest, InferenceWithoutTheShapeValue) {
  InferArg data = Unknown(Type(DType::kF32, {2, 3, 4}));
  TensorType t = Infer1(OpKind::kReshape, {data, Unknown(Type(DType::kI64, {3}))});
  EXPECT_EQ(t.dims, Dims({-1, -1, -1}));
  EXPECT_FALSE(Infer1(OpKind::kReshape, {data, Unknown(Type(DType::kI64, {-1}))}).rank_known);
  // Shape known but data dims not: 0 copies the (unknown) dim, -1 stays unknown.
  InferArg dynamic = Unknown(Type(DType::kF32, {-1, 3, 4}));
  EXPECT_EQ(Infer1(OpKind::kReshape, {dynamic, Known(I64s({0, -1}))}).dims, Dims({-1, -1}));
  EXPECT_EQ(Infer1(OpKind::kReshape, {dynamic, Known(I64s({0, 3, 2, 2}))}).dims, Dims({-1, 3, 2, 2}));
}

// --- Flatten ---

TEST(FlattenTest, AxisVariants) {
  Tensor x = Iota({2, 3, 4, 5});
  EXPECT_EQ(Run1(OpKind::kFlatten, {x}).dims(), Dims({2, 60}));
  EXPECT_EQ(Run1(OpKind::kFlatten, {x}, Attrs({{"axis", int64_t{0}}})).dims(), Dims({1, 120}));
  EXPECT_EQ(Run1(OpKind::kFlatten, {x}, Attrs({{"axis", int64_t{4}}})).dims(), Dims({120, 1}));
  EXPECT_EQ(Run1(OpKind::kFlatten, {x}, Attrs({{"axis", int64_t{-1}}})).dims(), Dims({24, 5}));
  EXPECT_TRUE(Contains(RunError(OpKind::kFlatten, {x}, Attrs({{"axis", int64_t{5}}})), "out of range"));
  EXPECT_EQ(Infer1(OpKind::kFlatten, {Unknown(Type(DType::kF32, {-1, 3, 4}))}).dims, Dims({-1, 12}));
}

// --- Transpose ---

TEST(TransposeTest, DefaultReversesAndPermIsApplied) {
  Tensor x = Iota({2, 3});
  ExpectTensor(Run1(OpKind::kTranspose, {x}), {3, 2}, {0, 3, 1, 4, 2, 5});
  Tensor y = Run1(OpKind::kTranspose, {Iota({2, 3, 4})}, Attrs({{"perm", std::vector<int64_t>{1, 2, 0}}}));
  ASSERT_EQ(y.dims(), Dims({3, 4, 2}));
  // y[i][j][k] = x[k][i][j] = k*12 + i*4 + j
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) EXPECT_EQ(y.data<float>()[(i * 4 + j) * 2 + k], k * 12 + i * 4 + j);
}

TEST(TransposeTest, AnyDTypeByBytes) {
  Tensor x = Tensor::FromVector<int8_t>(DType::kI8, {2, 2}, {1, 2, 3, 4});
  Tensor y = Run1(OpKind::kTranspose, {x});
  EXPECT_EQ(y.dtype(), DType::kI8);
  ExpectTensor(y, {2, 2}, {1, 3, 2, 4});
}

TEST(TransposeTest, BadPerm) {
  EXPECT_TRUE(Contains(RunError(OpKind::kTranspose, {Iota({2, 3})}, Attrs({{"perm", std::vector<int64_t>{0, 0}}})),
                       "not a permutation"));
  EXPECT_TRUE(Contains(RunError(OpKind::kTranspose, {Iota({2, 3})}, Attrs({{"perm", std::vector<int64_t>{0}}})),
                       "rank 2"));
}

// --- Squeeze / Unsqueeze ---

TEST(SqueezeTest, AxesAbsentRemovesEveryOne) {
  EXPECT_EQ(Run1(OpKind::kSqueeze, {Iota({1, 3, 1, 2})}).dims(), Dims({3, 2}));
  EXPECT_EQ(Run1(OpKind::kSqueeze, {Iota({1, 3, 1, 2}), I64s({-2})}).dims(), Dims({1, 3, 2}));
  ExpectTensor(Run1(OpKind::kSqueeze, {Iota({1, 3}), I64s({0})}), {3}, {0, 1, 2});
  EXPECT_EQ(Run1(OpKind::kSqueeze, {Iota({1, 3, 1}), I64({0}, {})}).dims(), Dims({3}));
}

TEST(SqueezeTest, NonOneAxisIsAnError) {
  std::string e = RunError(OpKind::kSqueeze, {Iota({1, 3}), I64s({1})});
  EXPECT_TRUE(Contains(e, "Squeeze 'node7'")) << e;
  EXPECT_TRUE(Contains(e, "size is 3")) << e;
}

TEST(SqueezeTest, Inference) {
  // Axes value unknown, length known: rank known.
  EXPECT_EQ(Infer1(OpKind::kSqueeze, {Unknown(Type(DType::kF32, {1, 3, 1})), Unknown(Type(DType::kI64, {2}))}).dims,
            Dims({-1}));
  // Axes absent with an unknown dim: which dims go is unknown.
  EXPECT_FALSE(Infer1(OpKind::kSqueeze, {Unknown(Type(DType::kF32, {-1, 3}))}).rank_known);
  // Named axis with an unknown dim is trusted to be 1.
  EXPECT_EQ(Infer1(OpKind::kSqueeze, {Unknown(Type(DType::kF32, {-1, 3})), Known(I64s({0}))}).dims, Dims({3}));
}

TEST(UnsqueezeTest, UnsortedAndNegativeAxes) {
  EXPECT_EQ(Run1(OpKind::kUnsqueeze, {Iota({3, 4, 5}), I64s({5, 4, 2})}).dims(), Dims({3, 4, 1, 5, 1, 1}));
  EXPECT_EQ(Run1(OpKind::kUnsqueeze, {Iota({3}), I64s({-1, 0})}).dims(), Dims({1, 3, 1}));
  EXPECT_EQ(Run1(OpKind::kUnsqueeze, {Tensor::Scalar(2.f), I64s({0})}).dims(), Dims({1}));
  EXPECT_TRUE(Contains(RunError(OpKind::kUnsqueeze, {Iota({3}), I64s({0, -3})}), "twice"));
  EXPECT_TRUE(Contains(RunError(OpKind::kUnsqueeze, {Iota({3}), I64s({2})}), "out of range"));
  EXPECT_EQ(Infer1(OpKind::kUnsqueeze, {Unknown(Type(DType::kF32, {3})), Unknown(Type(DType::kI64, {2}))}).dims,
            Dims({-1, -1, -1}));
}

// --- Concat / Split ---

TEST(ConcatTest, NegativeAxisAndEmptyInputs) {
  Tensor a = Iota({2, 2});
  Tensor b = F32({2, 1}, {10, 11});
  Tensor empty(DType::kF32, {2, 0});
  Tensor y = Run1(OpKind::kConcat, {a, empty, b}, Attrs({{"axis", int64_t{-1}}}));
  ExpectTensor(y, {2, 3}, {0, 1, 10, 2, 3, 11});
  Tensor z = Run1(OpKind::kConcat, {a, a}, Attrs({{"axis", int64_t{0}}}));
  ExpectTensor(z, {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3});
}

TEST(ConcatTest, Errors) {
  EXPECT_TRUE(Contains(RunError(OpKind::kConcat, {Iota({2, 2}), Iota({3, 1})}, Attrs({{"axis", int64_t{1}}})),
                       "dim 0"));
  EXPECT_TRUE(Contains(RunError(OpKind::kConcat, {Iota({2}), Iota({2, 1})}, Attrs({{"axis", int64_t{0}}})),
                       "rank"));
  EXPECT_TRUE(Contains(RunError(OpKind::kConcat, {Iota({2})}), "axis is required"));
  EXPECT_EQ(Infer1(OpKind::kConcat, {Unknown(Type(DType::kF32, {-1, 2})), Unknown(Type(DType::kF32, {3, 5}))},
                   Attrs({{"axis", int64_t{1}}})).dims,
            Dims({3, 7}));
}

TEST(SplitTest, EqualAndExplicitSplits) {
  auto r = RunOp(OpKind::kSplit, {Iota({2, 6})}, Attrs({{"axis", int64_t{1}}}), 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectTensor((*r)[0], {2, 2}, {0, 1, 6, 7});
  ExpectTensor((*r)[2], {2, 2}, {4, 5, 10, 11});
  auto s = RunOp(OpKind::kSplit, {Iota({6}), I64s({1, 0, 5})}, {}, 3);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ExpectTensor((*s)[0], {1}, {0});
  ExpectTensor((*s)[1], {0}, {});
  ExpectTensor((*s)[2], {5}, {1, 2, 3, 4, 5});
}

TEST(SplitTest, ErrorsAndInference) {
  EXPECT_TRUE(Contains(RunError(OpKind::kSplit, {Iota({5})}, {}, 2), "equal parts"));
  EXPECT_TRUE(Contains(RunError(OpKind::kSplit, {Iota({5}), I64s({2, 2})}, {}, 2), "sums to 4"));
  EXPECT_TRUE(Contains(RunError(OpKind::kSplit, {Iota({5}), I64s({5})}, {}, 2), "2 outputs"));
  auto t = Infer(OpKind::kSplit, {Unknown(Type(DType::kF32, {4, 6})), Unknown(Type(DType::kI64, {2}))},
                 Attrs({{"axis", int64_t{1}}}), 2);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[1].dims, Dims({4, -1}));
}

// --- Slice ---

TEST(SliceTest, BasicWithAxesAndSteps) {
  Tensor x = Iota({3, 4});
  // rows 0..2 step 2, cols 1..3
  Tensor y = Run1(OpKind::kSlice, {x, I64s({0, 1}), I64s({3, 3}), I64s({0, 1}), I64s({2, 1})});
  ExpectTensor(y, {2, 2}, {1, 2, 9, 10});
  // axes absent: the first len(starts) axes.
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({1}), I64s({2})}), {1, 4}, {4, 5, 6, 7});
}

TEST(SliceTest, NegativeStepsAndClamping) {
  Tensor x = Iota({5});
  // Reverse the whole axis: start past the end clamps to dim-1, end INT64_MIN to "before 0".
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({kMax}), I64s({kMin}), I64s({0}), I64s({-1})}), {5},
               {4, 3, 2, 1, 0});
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({-1}), I64s({0}), I64s({0}), I64s({-2})}), {2}, {4, 2});
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({-3}), I64s({kMax})}), {3}, {2, 3, 4});
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({-100}), I64s({2})}), {2}, {0, 1});
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({10}), I64s({20})}), {0}, {});
  ExpectTensor(Run1(OpKind::kSlice, {x, I64s({1}), I64s({kMax}), I64s({0}), I64s({kMax})}), {1}, {1});
}

TEST(SliceTest, NegativeAxesAndInt32Inputs) {
  Tensor y = Run1(OpKind::kSlice, {Iota({2, 3}), I32({1}, {1}), I32({1}, {3}), I32({1}, {-1})});
  ExpectTensor(y, {2, 2}, {1, 2, 4, 5});
}

TEST(SliceTest, ErrorsAndInference) {
  EXPECT_TRUE(Contains(RunError(OpKind::kSlice, {Iota({4}), I64s({0}), I64s({2}), I64s({0}), I64s({0})}),
                       "steps[0] is 0"));
  EXPECT_TRUE(Contains(RunError(OpKind::kSlice, {Iota({4, 4}), I64s({0, 0}), I64s({2, 2}), I64s({1, -1})}),
                       "twice"));
  // Axes known, bounds unknown: the sliced axis is unknown, the other keeps its dim.
  TensorType t = Infer1(OpKind::kSlice, {Unknown(Type(DType::kF32, {4, 5})), Unknown(Type(DType::kI64, {1})),
                                         Unknown(Type(DType::kI64, {1})), Known(I64s({1}))});
  EXPECT_EQ(t.dims, Dims({4, -1}));
  TensorType u = Infer1(OpKind::kSlice, {Unknown(Type(DType::kF32, {4, 5})), Known(I64s({1})), Known(I64s({3}))});
  EXPECT_EQ(u.dims, Dims({2, 5}));
}

// --- Gather / GatherElements ---

TEST(GatherTest, AxesAndIndexRanks) {
  Tensor x = Iota({3, 2});
  ExpectTensor(Run1(OpKind::kGather, {x, I64s({2, 0})}), {2, 2}, {4, 5, 0, 1});
  ExpectTensor(Run1(OpKind::kGather, {x, I64({2, 2}, {1, 0, 0, 1})}, Attrs({{"axis", int64_t{1}}})),
               {3, 2, 2}, {1, 0, 0, 1, 3, 2, 2, 3, 5, 4, 4, 5});
  // A scalar index drops the axis; negative indices count from the end.
  ExpectTensor(Run1(OpKind::kGather, {x, I64({}, {-1})}), {2}, {4, 5});
  ExpectTensor(Run1(OpKind::kGather, {x, I32({1}, {-3})}), {1, 2}, {0, 1});
}

TEST(GatherTest, IndexOutOfRangeNamesNodeAndIndex) {
  std::string e = RunError(OpKind::kGather, {Iota({3, 2}), I64s({0, 3})});
  EXPECT_TRUE(Contains(e, "Gather 'node7'")) << e;
  EXPECT_TRUE(Contains(e, "indices element 1 = 3")) << e;
  EXPECT_TRUE(Contains(e, "size 3")) << e;
  // The kernel checks too (indices not known to inference).
  Tensor data = Iota({3});
  Tensor idx = I64s({-4});
  std::vector<Tensor> out = {Tensor(DType::kF32, {1})};
  Attributes attrs;
  ref::KernelContext k{OpKind::kGather, attrs, "Gather 'g'", {&data, &idx}, out};
  Status st = ref::Gather(k);
  EXPECT_TRUE(Contains(st.message(), "Gather 'g': indices element 0 = -4")) << st.message();
}

TEST(GatherElementsTest, AxisAndNegativeIndices) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  ExpectTensor(Run1(OpKind::kGatherElements, {x, I64({2, 2}, {0, 0, 1, 0})}, Attrs({{"axis", int64_t{1}}})),
               {2, 2}, {1, 1, 4, 3});
  Tensor y = Iota({3, 3});
  ExpectTensor(Run1(OpKind::kGatherElements, {y, I64({2, 3}, {-1, -2, 0, -2, 0, 0})}), {2, 3},
               {6, 4, 2, 3, 1, 2});
  std::string e = RunError(OpKind::kGatherElements, {x, I64({1, 1}, {2})});
  EXPECT_TRUE(Contains(e, "GatherElements 'node7': indices element 0 = 2")) << e;
}

// --- Shape / Size ---

TEST(ShapeTest, StartAndEnd) {
  Tensor x = Iota({3, 4, 5});
  ExpectTensor(Run1(OpKind::kShape, {x}), {3}, {3, 4, 5});
  ExpectTensor(Run1(OpKind::kShape, {x}, Attrs({{"start", int64_t{1}}})), {2}, {4, 5});
  ExpectTensor(Run1(OpKind::kShape, {x}, Attrs({{"end", int64_t{-1}}})), {2}, {3, 4});
  ExpectTensor(Run1(OpKind::kShape, {x}, Attrs({{"start", int64_t{-10}}, {"end", int64_t{10}}})), {3}, {3, 4, 5});
  ExpectTensor(Run1(OpKind::kShape, {x}, Attrs({{"start", int64_t{2}}, {"end", int64_t{1}}})), {0}, {});
  EXPECT_EQ(Infer1(OpKind::kShape, {Unknown(Type(DType::kF32, {-1, 4}))}).dims, Dims({2}));
  ExpectTensor(Run1(OpKind::kSize, {x}), {}, {60});
}

// --- Constant / ConstantOfShape ---

TEST(ConstantTest, EveryValueForm) {
  Tensor v = I32({2}, {7, 8});
  ExpectTensor(Run1(OpKind::kConstant, {}, Attrs({{"value", v}})), {2}, {7, 8});
  ExpectTensor(Run1(OpKind::kConstant, {}, Attrs({{"value_float", 1.5f}})), {}, {1.5});
  ExpectTensor(Run1(OpKind::kConstant, {}, Attrs({{"value_floats", std::vector<float>{1, 2}}})), {2}, {1, 2});
  Tensor i = Run1(OpKind::kConstant, {}, Attrs({{"value_int", int64_t{-3}}}));
  EXPECT_EQ(i.dtype(), DType::kI64);
  ExpectTensor(i, {}, {-3});
  ExpectTensor(Run1(OpKind::kConstant, {}, Attrs({{"value_ints", std::vector<int64_t>{4, 5, 6}}})), {3}, {4, 5, 6});
  auto r = RunOp(OpKind::kConstant, {}, Attrs({{"value_string", std::string("hi")}}));
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
}

TEST(ConstantOfShapeTest, ValueAndDefault) {
  Tensor d = Run1(OpKind::kConstantOfShape, {I64s({2, 1})});
  EXPECT_EQ(d.dtype(), DType::kF32);
  ExpectTensor(d, {2, 1}, {0, 0});
  Tensor v = I32({1}, {5});
  Tensor y = Run1(OpKind::kConstantOfShape, {I64s({3})}, Attrs({{"value", v}}));
  EXPECT_EQ(y.dtype(), DType::kI32);
  ExpectTensor(y, {3}, {5, 5, 5});
  ExpectTensor(Run1(OpKind::kConstantOfShape, {I64({0}, {})}, Attrs({{"value", v}})), {}, {5});
  ExpectTensor(Run1(OpKind::kConstantOfShape, {I64s({0, 2})}), {0, 2}, {});
  EXPECT_TRUE(Contains(RunError(OpKind::kConstantOfShape, {I64s({-1})}), "negative"));
  EXPECT_EQ(Infer1(OpKind::kConstantOfShape, {Unknown(Type(DType::kI64, {3}))}).dims, Dims({-1, -1, -1}));
}

// --- Expand / Tile ---

TEST(ExpandTest, BidirectionalBroadcast) {
  Tensor x = F32({3, 1}, {1, 2, 3});
  ExpectTensor(Run1(OpKind::kExpand, {x, I64s({2, 1, 2})}), {2, 3, 2},
               {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  // A 1 in the shape keeps the larger data dim.
  ExpectTensor(Run1(OpKind::kExpand, {x, I64s({1, 1})}), {3, 1}, {1, 2, 3});
  EXPECT_TRUE(Contains(RunError(OpKind::kExpand, {x, I64s({2, 2})}), "broadcast"));
  EXPECT_EQ(Infer1(OpKind::kExpand, {Unknown(Type(DType::kF32, {3, 1})), Unknown(Type(DType::kI64, {4}))}).dims,
            Dims({-1, -1, -1, -1}));
}

TEST(TileTest, RepeatsEveryAxis) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  ExpectTensor(Run1(OpKind::kTile, {x, I64s({1, 2})}), {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4});
  ExpectTensor(Run1(OpKind::kTile, {x, I64s({2, 1})}), {4, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  ExpectTensor(Run1(OpKind::kTile, {x, I64s({0, 3})}), {0, 6}, {});
  EXPECT_TRUE(Contains(RunError(OpKind::kTile, {x, I64s({2})}), "rank 2"));
}

// --- Pad ---

TEST(PadTest, ConstantWithValueAndCrop) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  Tensor y = Run1(OpKind::kPad, {x, I64s({0, 1, 1, 0}), Tensor::Scalar(9.f)});
  ExpectTensor(y, {3, 3}, {9, 1, 2, 9, 3, 4, 9, 9, 9});
  // Negative pads crop: drop the first column, add a row of zeros at the top.
  ExpectTensor(Run1(OpKind::kPad, {x, I64s({1, -1, 0, 0})}), {3, 1}, {0, 2, 4});
}

TEST(PadTest, ReflectAndEdge) {
  Tensor x = I32({1, 3}, {1, 2, 3});
  Attributes reflect = Attrs({{"mode", std::string("reflect")}});
  Attributes edge = Attrs({{"mode", std::string("edge")}});
  ExpectTensor(Run1(OpKind::kPad, {x, I64s({0, 2, 0, 2})}, reflect), {1, 7}, {3, 2, 1, 2, 3, 2, 1});
  ExpectTensor(Run1(OpKind::kPad, {x, I64s({0, 2, 0, 1})}, edge), {1, 6}, {1, 1, 1, 2, 3, 3});
  // Two axes: the corners come from the already padded rows.
  Tensor m = F32({2, 2}, {1, 2, 3, 4});
  ExpectTensor(Run1(OpKind::kPad, {m, I64s({1, 1, 1, 1})}, edge), {4, 4},
               {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  ExpectTensor(Run1(OpKind::kPad, {m, I64s({1, 0, 0, 1})}, reflect), {3, 3},
               {3, 4, 3, 1, 2, 1, 3, 4, 3});
  // A reflection longer than the axis folds back again (numpy's rule).
  ExpectTensor(Run1(OpKind::kPad, {I32({2}, {1, 2}), I64s({3, 0})}, reflect), {5}, {2, 1, 2, 1, 2});
}

TEST(PadTest, ErrorsAndInference) {
  Tensor x = F32({2}, {1, 2});
  EXPECT_TRUE(Contains(RunError(OpKind::kPad, {x, I64s({1})}), "2 * rank"));
  EXPECT_TRUE(Contains(RunError(OpKind::kPad, {x, I64s({-2, -1})}), "below zero"));
  EXPECT_TRUE(Contains(RunError(OpKind::kPad, {x, I64s({1, 1}), I32({}, {0})}), "dtype"));
  EXPECT_EQ(RunOp(OpKind::kPad, {x, I64s({1, 1})}, Attrs({{"mode", std::string("wrap")}})).status().code(),
            StatusCode::kUnimplemented);
  Tensor empty(DType::kF32, {0});
  EXPECT_TRUE(Contains(RunError(OpKind::kPad, {empty, I64s({1, 0})}, Attrs({{"mode", std::string("edge")}})),
                       "at least one element"));
  EXPECT_EQ(Infer1(OpKind::kPad, {Unknown(Type(DType::kF32, {2, 3})), Unknown(Type(DType::kI64, {4}))}).dims,
            Dims({-1, -1}));
}

// --- Range ---

TEST(RangeTest, FloatIntAndEmpty) {
  ExpectTensor(Run1(OpKind::kRange, {Tensor::Scalar(1.f), Tensor::Scalar(5.f), Tensor::Scalar(1.5f)}), {3},
               {1, 2.5, 4});
  Tensor r = Run1(OpKind::kRange, {I32({}, {10}), I32({}, {4}), I32({}, {-3})});
  EXPECT_EQ(r.dtype(), DType::kI32);
  ExpectTensor(r, {2}, {10, 7});
  ExpectTensor(Run1(OpKind::kRange, {Tensor::ScalarI64(5), Tensor::ScalarI64(1), Tensor::ScalarI64(2)}), {0}, {});
  EXPECT_TRUE(Contains(RunError(OpKind::kRange, {Tensor::ScalarI64(0), Tensor::ScalarI64(1), Tensor::ScalarI64(0)}),
                       "delta is 0"));
  EXPECT_TRUE(Contains(RunError(OpKind::kRange, {Tensor::ScalarI64(0), Tensor::Scalar(1.f), Tensor::ScalarI64(1)}),
                       "dtype"));
  EXPECT_EQ(Infer1(OpKind::kRange, {Unknown(Type(DType::kF32, {})), Unknown(Type(DType::kF32, {})),
                                    Unknown(Type(DType::kF32, {}))}).dims,
            Dims({-1}));
}

// --- DepthToSpace / SpaceToDepth ---

TEST(DepthToSpaceTest, DcrAndCrd) {
  // Input [1, 4, 1, 1], channels 0..3, blocksize 2 -> [1, 1, 2, 2].
  Tensor x = Iota({1, 4, 1, 1});
  // DCR: channel = (bh * 2 + bw) * C' + c; CRD: channel = c * 4 + bh * 2 + bw. With C' = 1 both
  // give [[0, 1], [2, 3]].
  ExpectTensor(Run1(OpKind::kDepthToSpace, {x}, Attrs({{"blocksize", int64_t{2}}})), {1, 1, 2, 2}, {0, 1, 2, 3});
  // C' = 2 separates them: input [1, 8, 1, 1].
  Tensor y = Iota({1, 8, 1, 1});
  ExpectTensor(Run1(OpKind::kDepthToSpace, {y}, Attrs({{"blocksize", int64_t{2}}})), {1, 2, 2, 2},
               {0, 2, 4, 6, 1, 3, 5, 7});
  ExpectTensor(Run1(OpKind::kDepthToSpace, {y}, Attrs({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}})),
               {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_TRUE(Contains(RunError(OpKind::kDepthToSpace, {Iota({1, 3, 1, 1})}, Attrs({{"blocksize", int64_t{2}}})),
                       "multiple"));
}

TEST(SpaceToDepthTest, InvertsDepthToSpaceDcr) {
  Tensor x = Iota({2, 8, 3, 2});
  Attributes b2 = Attrs({{"blocksize", int64_t{2}}});
  Tensor d2s = Run1(OpKind::kDepthToSpace, {x}, b2);
  ASSERT_EQ(d2s.dims(), Dims({2, 2, 6, 4}));
  Tensor back = Run1(OpKind::kSpaceToDepth, {d2s}, b2);
  EXPECT_EQ(back.dims(), x.dims());
  EXPECT_EQ(Floats(back), Floats(x));
  // Hand case: [1, 1, 2, 2] -> [1, 4, 1, 1] holding the 2x2 block in row-major order.
  ExpectTensor(Run1(OpKind::kSpaceToDepth, {F32({1, 1, 2, 2}, {1, 2, 3, 4})}, b2), {1, 4, 1, 1}, {1, 2, 3, 4});
  EXPECT_TRUE(Contains(RunError(OpKind::kSpaceToDepth, {Iota({1, 1, 3, 2})}, b2), "multiple"));
}

// --- a value-dependent shape chain: Shape -> Gather -> Concat -> Reshape ---

// Flattens all but the first dim of x, computing the target shape from x's own shape.
Tensor FlattenByShapeChain(const Tensor& x) {
  Tensor shape = Run1(OpKind::kShape, {x});
  Tensor batch = Run1(OpKind::kGather, {shape, I64s({0})});
  Tensor target = Run1(OpKind::kConcat, {batch, I64s({-1})}, Attrs({{"axis", int64_t{0}}}));
  return Run1(OpKind::kReshape, {x, target});
}

TEST(ShapeChainTest, FollowsTheInputShapeBetweenRuns) {
  EXPECT_EQ(FlattenByShapeChain(Iota({2, 3, 4})).dims(), Dims({2, 12}));
  EXPECT_EQ(FlattenByShapeChain(Iota({5, 2, 2})).dims(), Dims({5, 4}));
  // At compile time with a dynamic batch, the chain keeps the ranks it can know.
  TensorType shape = Infer1(OpKind::kShape, {Unknown(Type(DType::kF32, {-1, 3, 4}))});
  EXPECT_EQ(shape.dims, Dims({3}));
  TensorType target = Infer1(OpKind::kConcat, {Unknown(Type(DType::kI64, {1})), Known(I64s({-1}))},
                             Attrs({{"axis", int64_t{0}}}));
  EXPECT_EQ(target.dims, Dims({2}));
  TensorType out = Infer1(OpKind::kReshape, {Unknown(Type(DType::kF32, {-1, 3, 4})), Unknown(target)});
  EXPECT_EQ(out.dims, Dims({-1, -1}));
}

}  // namespace
}  // namespace edgec
