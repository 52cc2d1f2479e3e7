// Indexing family: GatherND, ScatterElements, ScatterND, OneHot, Trilu, EyeLike, NonZero and
// Compress. Hand-computed cases, attribute variants, value-dependent inference and errors.
#include <limits>

#include "movement_test_util.h"

namespace edgec {
namespace {

using namespace testing_mv;

Tensor Bools(Dims dims, std::vector<int> v) {
  Tensor t(DType::kBool, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i] != 0;
  return t;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// --- GatherND ---

TEST(GatherNDTest, FullTuplesGiveElements) {
  // data [[0, 1], [2, 3]], indices [[0, 0], [1, 1]] -> [0, 3]
  ExpectTensor(Run1(OpKind::kGatherND, {Iota({2, 2}), I64({2, 2}, {0, 0, 1, 1})}), {2}, {0, 3});
}

TEST(GatherNDTest, ShortTuplesGiveSlices) {
  // data [2, 2, 2] = 0..7; indices [[1], [0]] -> data[1], data[0]; [[-1, 0]] -> data[1][0].
  ExpectTensor(Run1(OpKind::kGatherND, {Iota({2, 2, 2}), I64({2, 1}, {1, 0})}), {2, 2, 2},
               {4, 5, 6, 7, 0, 1, 2, 3});
  ExpectTensor(Run1(OpKind::kGatherND, {Iota({2, 2, 2}), I32({1, 2}, {-1, 0})}), {1, 2}, {4, 5});
}

TEST(GatherNDTest, BatchDims) {
  // batch_dims 1: data [2, 2, 2], indices [2, 1]: batch 0 takes data[0][1], batch 1 data[1][0].
  Tensor y = Run1(OpKind::kGatherND, {Iota({2, 2, 2}), I64({2, 1}, {1, 0})},
                  Attrs({{"batch_dims", int64_t{1}}}));
  ExpectTensor(y, {2, 2}, {2, 3, 4, 5});
  // batch_dims 1 with full tuples: indices [2, 1, 2] -> data[0][1][1], data[1][0][1].
  Tensor z = Run1(OpKind::kGatherND, {Iota({2, 2, 2}), I64({2, 1, 2}, {1, 1, 0, 1})},
                  Attrs({{"batch_dims", int64_t{1}}}));
  ExpectTensor(z, {2, 1}, {3, 5});
}

TEST(GatherNDTest, Errors) {
  EXPECT_TRUE(Contains(RunError(OpKind::kGatherND, {Iota({2, 2}), I64({1, 2}, {0, 2})}), "out of range"));
  EXPECT_NE(RunError(OpKind::kGatherND, {Iota({2, 2}), I64({1, 3}, {0, 0, 0})}), "");
  EXPECT_NE(RunError(OpKind::kGatherND, {Iota({2, 2}), F32({1, 1}, {0})}), "");
  EXPECT_NE(RunError(OpKind::kGatherND, {Iota({2, 2}), I64({3, 1}, {0, 0, 0})},
                     Attrs({{"batch_dims", int64_t{1}}})), "");  // batch dims differ
  // Unknown last dim of indices: the rank is unknown too.
  TensorType t = Infer1(OpKind::kGatherND,
                        {Unknown(Type(DType::kF32, {4, 5})), Unknown(Type(DType::kI64, {3, kUnknownDim}))});
  EXPECT_FALSE(t.rank_known);
}

// --- ScatterElements ---

TEST(ScatterElementsTest, ReplaceAlongAxis) {
  // data zeros [3, 3]; indices [[1, 0, 2], [0, 2, 1]] on axis 0; updates 1..6.
  Tensor data(DType::kF32, {3, 3});
  Tensor y = Run1(OpKind::kScatterElements,
                  {data, I64({2, 3}, {1, 0, 2, 0, 2, 1}), F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ExpectTensor(y, {3, 3}, {4, 2, 0, 1, 0, 6, 0, 5, 3});
  // axis 1, negative index.
  Tensor z = Run1(OpKind::kScatterElements,
                  {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, -2}), F32({1, 2}, {10, 20})},
                  Attrs({{"axis", int64_t{1}}}));
  ExpectTensor(z, {1, 5}, {1, 10, 3, 20, 5});
}

TEST(ScatterElementsTest, Reductions) {
  Tensor data = F32({1, 3}, {1, 2, 3});
  Tensor idx = I64({1, 3}, {1, 1, 0});
  Tensor upd = F32({1, 3}, {4, 5, 6});
  auto run = [&](const char* r) {
    return Run1(OpKind::kScatterElements, {data, idx, upd},
                Attrs({{"axis", int64_t{1}}, {"reduction", std::string(r)}}));
  };
  ExpectTensor(run("none"), {1, 3}, {6, 5, 3});  // the last duplicate wins
  ExpectTensor(run("add"), {1, 3}, {7, 11, 3});
  ExpectTensor(run("mul"), {1, 3}, {6, 40, 3});
  ExpectTensor(run("max"), {1, 3}, {6, 5, 3});
  ExpectTensor(run("min"), {1, 3}, {1, 2, 3});
  Tensor i = Run1(OpKind::kScatterElements, {I32({2}, {2147483647, 0}), I64({1}, {0}), I32({1}, {1})},
                  Attrs({{"reduction", std::string("add")}}));
  ExpectTensor(i, {2}, {-2147483648.0, 0});  // integer sums wrap
}

TEST(ScatterElementsTest, Errors) {
  Tensor data = F32({2}, {0, 0});
  EXPECT_TRUE(Contains(RunError(OpKind::kScatterElements, {data, I64({1}, {2}), F32({1}, {1})}),
                       "out of range"));
  EXPECT_NE(RunError(OpKind::kScatterElements, {data, I64({1}, {0}), I32({1}, {1})}), "");
  EXPECT_NE(RunError(OpKind::kScatterElements, {data, I64({2}, {0, 1}), F32({1}, {1})}), "");
  EXPECT_NE(RunError(OpKind::kScatterElements, {data, I64({1}, {0}), F32({1}, {1})},
                     Attrs({{"reduction", std::string("avg")}})), "");
  EXPECT_NE(RunError(OpKind::kScatterElements, {data, I64({1, 1}, {0}), F32({1, 1}, {1})}), "");
}

// --- ScatterND ---

TEST(ScatterNDTest, ElementsAndSlices) {
  // The ONNX example: data 1..8, indices [[4], [3], [1], [7]], updates [9, 10, 11, 12].
  Tensor y = Run1(OpKind::kScatterND, {F32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), I64({4, 1}, {4, 3, 1, 7}),
                                       F32({4}, {9, 10, 11, 12})});
  ExpectTensor(y, {8}, {1, 11, 3, 10, 9, 6, 7, 12});
  // Slices: data zeros [2, 2]; indices [[1]] replaces row 1.
  Tensor z = Run1(OpKind::kScatterND, {F32({2, 2}, {0, 0, 0, 0}), I64({1, 1}, {-1}), F32({1, 2}, {5, 6})});
  ExpectTensor(z, {2, 2}, {0, 0, 5, 6});
}

TEST(ScatterNDTest, ReductionsAndErrors) {
  Tensor data = F32({3}, {1, 2, 3});
  Tensor idx = I64({2, 1}, {0, 0});
  Tensor upd = F32({2}, {4, 5});
  ExpectTensor(Run1(OpKind::kScatterND, {data, idx, upd}, Attrs({{"reduction", std::string("add")}})),
               {3}, {10, 2, 3});
  ExpectTensor(Run1(OpKind::kScatterND, {data, idx, upd}, Attrs({{"reduction", std::string("mul")}})),
               {3}, {20, 2, 3});
  EXPECT_TRUE(Contains(RunError(OpKind::kScatterND, {data, I64({1, 1}, {3}), F32({1}, {1})}),
                       "out of range"));
  EXPECT_TRUE(Contains(RunError(OpKind::kScatterND, {data, idx, F32({3}, {1, 2, 3})}), "updates"));
  EXPECT_NE(RunError(OpKind::kScatterND, {data, I64({1, 2}, {0, 0}), F32({1}, {1})}), "");
}

// --- OneHot ---

TEST(OneHotTest, LastAxisByDefault) {
  // indices [0, 2, -1, 3], depth 3: -1 is index 2; 3 is out of range (all off).
  Tensor y = Run1(OpKind::kOneHot, {I64({4}, {0, 2, -1, 3}), F32({}, {3}), F32({2}, {-1, 5})});
  ExpectTensor(y, {4, 3}, {5, -1, -1, -1, -1, 5, -1, -1, 5, -1, -1, -1});
}

TEST(OneHotTest, AxisAndDTypes) {
  // indices [2] = [1, 0], depth 2, axis 0: out[d][i] = on if indices[i] == d.
  Tensor y = Run1(OpKind::kOneHot, {F32({2}, {1.7f, 0}), I64({1}, {2}), I32({2}, {0, 1})},
                  Attrs({{"axis", int64_t{0}}}));
  EXPECT_EQ(y.dtype(), DType::kI32);
  ExpectTensor(y, {2, 2}, {0, 1, 1, 0});  // 1.7 truncates to 1
  TensorType t = Infer1(OpKind::kOneHot, {Unknown(Type(DType::kI64, {2, 3})),
                                          Unknown(Type(DType::kI64, {})),
                                          Unknown(Type(DType::kF32, {2}))},
                        Attrs({{"axis", int64_t{1}}}));
  EXPECT_EQ(t, Type(DType::kF32, {2, kUnknownDim, 3}));
}

TEST(OneHotTest, Errors) {
  Tensor idx = I64({1}, {0});
  EXPECT_NE(RunError(OpKind::kOneHot, {idx, F32({}, {-2}), F32({2}, {0, 1})}), "");
  EXPECT_NE(RunError(OpKind::kOneHot, {idx, F32({}, {2}), F32({3}, {0, 1, 2})}), "");
  EXPECT_NE(RunError(OpKind::kOneHot, {idx, F32({2}, {2, 2}), F32({2}, {0, 1})}), "");
  EXPECT_NE(RunError(OpKind::kOneHot, {idx, F32({}, {2}), F32({2}, {0, 1})},
                     Attrs({{"axis", int64_t{2}}})), "");
}

// --- Trilu ---

TEST(TriluTest, UpperAndLowerWithK) {
  Tensor x = F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ExpectTensor(Run1(OpKind::kTrilu, {x}), {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  ExpectTensor(Run1(OpKind::kTrilu, {x, I64({}, {1})}), {3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0});
  const Attributes lower = Attrs({{"upper", int64_t{0}}});
  ExpectTensor(Run1(OpKind::kTrilu, {x}, lower), {3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9});
  ExpectTensor(Run1(OpKind::kTrilu, {x, I64({}, {-1})}, lower), {3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0});
  // k beyond the matrix: everything or nothing.
  ExpectTensor(Run1(OpKind::kTrilu, {x, I64({}, {-5})}), {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ExpectTensor(Run1(OpKind::kTrilu, {x, I64({}, {std::numeric_limits<int64_t>::max()})}), {3, 3},
               {0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST(TriluTest, BatchedNonSquareAndErrors) {
  // [2, 2, 3] upper: each matrix keeps j >= i.
  ExpectTensor(Run1(OpKind::kTrilu, {Iota({2, 2, 3})}), {2, 2, 3},
               {0, 1, 2, 0, 4, 5, 6, 7, 8, 0, 10, 11});
  EXPECT_NE(RunError(OpKind::kTrilu, {F32({3}, {1, 2, 3})}), "");
  EXPECT_NE(RunError(OpKind::kTrilu, {Iota({2, 2}), I64({2}, {0, 1})}), "");
  EXPECT_NE(RunError(OpKind::kTrilu, {Iota({2, 2}), I32({}, {0})}), "");
}

// --- EyeLike ---

TEST(EyeLikeTest, DiagonalsAndDType) {
  ExpectTensor(Run1(OpKind::kEyeLike, {F32({2, 3}, {7, 7, 7, 7, 7, 7})}), {2, 3}, {1, 0, 0, 0, 1, 0});
  Tensor y = Run1(OpKind::kEyeLike, {F32({3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0})},
                  Attrs({{"k", int64_t{-1}}, {"dtype", static_cast<int64_t>(DType::kI32)}}));
  EXPECT_EQ(y.dtype(), DType::kI32);
  ExpectTensor(y, {3, 3}, {0, 0, 0, 1, 0, 0, 0, 1, 0});
  ExpectTensor(Run1(OpKind::kEyeLike, {I64({2, 2}, {0, 0, 0, 0})}, Attrs({{"k", int64_t{5}}})), {2, 2},
               {0, 0, 0, 0});
  EXPECT_NE(RunError(OpKind::kEyeLike, {F32({3}, {0, 0, 0})}), "");
  EXPECT_NE(RunError(OpKind::kEyeLike, {F32({1, 1}, {0})}, Attrs({{"dtype", int64_t{99}}})), "");
}

// --- NonZero ---

TEST(NonZeroTest, IndicesInRowMajorOrder) {
  // [[1, 0], [1, 1]] -> rows [0, 1, 1], cols [0, 0, 1]
  Tensor y = Run1(OpKind::kNonZero, {F32({2, 2}, {1, 0, 1, 1})});
  EXPECT_EQ(y.dtype(), DType::kI64);
  ExpectTensor(y, {2, 3}, {0, 1, 1, 0, 0, 1});
  ExpectTensor(Run1(OpKind::kNonZero, {Bools({3}, {0, 0, 0})}), {1, 0}, {});
  ExpectTensor(Run1(OpKind::kNonZero, {F32({}, {3})}), {1, 1}, {0});  // a scalar is 1-D
  ExpectTensor(Run1(OpKind::kNonZero, {F32({2}, {NAN, -0.0f})}), {1, 1}, {0});
}

TEST(NonZeroTest, CountIsUnknownUntilTheValueIs) {
  TensorType t = Infer1(OpKind::kNonZero, {Unknown(Type(DType::kF32, {4, 5, 6}))});
  EXPECT_EQ(t, Type(DType::kI64, {3, kUnknownDim}));
  TensorType k = Infer1(OpKind::kNonZero, {Known(I32({3}, {0, 5, 6}))});
  EXPECT_EQ(k, Type(DType::kI64, {1, 2}));
}

// --- Compress ---

TEST(CompressTest, AlongAnAxisAndFlattened) {
  Tensor x = Iota({3, 2});  // [[0, 1], [2, 3], [4, 5]]
  ExpectTensor(Run1(OpKind::kCompress, {x, Bools({3}, {0, 1, 1})}, Attrs({{"axis", int64_t{0}}})),
               {2, 2}, {2, 3, 4, 5});
  ExpectTensor(Run1(OpKind::kCompress, {x, Bools({2}, {0, 1})}, Attrs({{"axis", int64_t{-1}}})),
               {3, 1}, {1, 3, 5});
  // Without an axis the input is flattened; a shorter condition drops the rest.
  ExpectTensor(Run1(OpKind::kCompress, {x, Bools({3}, {1, 0, 1})}), {2}, {0, 2});
  // Entries beyond the axis may be false.
  ExpectTensor(Run1(OpKind::kCompress, {x, Bools({4}, {1, 0, 0, 0})}, Attrs({{"axis", int64_t{0}}})),
               {1, 2}, {0, 1});
}

TEST(CompressTest, ErrorsAndUnknownCount) {
  Tensor x = Iota({3, 2});
  EXPECT_NE(RunError(OpKind::kCompress, {x, Bools({4}, {0, 0, 0, 1})}, Attrs({{"axis", int64_t{0}}})),
            "");
  EXPECT_NE(RunError(OpKind::kCompress, {x, I64({3}, {1, 0, 1})}), "");
  EXPECT_NE(RunError(OpKind::kCompress, {x, Bools({1}, {1})}, Attrs({{"axis", int64_t{2}}})), "");
  TensorType t = Infer1(OpKind::kCompress, {Unknown(Type(DType::kF32, {3, 2})),
                                            Unknown(Type(DType::kBool, {3}))},
                        Attrs({{"axis", int64_t{0}}}));
  EXPECT_EQ(t, Type(DType::kF32, {kUnknownDim, 2}));
}

}  // namespace
}  // namespace edgec
