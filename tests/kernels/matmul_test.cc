// Gemm, MatMul and Einsum: hand-computed cases, broadcasting, transposes, the einsum forms
// (explicit, implicit, ellipsis, diagonal) and error cases.
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

// A = [[1, 2, 3], [4, 5, 6]], B = [[1, 2], [3, 4], [5, 6]]: A B = [[22, 28], [49, 64]].
Tensor A23() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor B32() { return F32({3, 2}, {1, 2, 3, 4, 5, 6}); }

// --- Gemm ---

TEST(GemmTest, PlainProductWithoutC) {
  ExpectF32(Run1(OpKind::kGemm, {A23(), B32()}), {2, 2}, {22, 28, 49, 64});
}

TEST(GemmTest, Transposes) {
  // The transposed operands are stored transposed; every variant gives A B.
  const Tensor at = F32({3, 2}, {1, 4, 2, 5, 3, 6});  // A23 transposed
  ExpectF32(Run1(OpKind::kGemm, {at, B32()}, Attrs({{"transA", int64_t{1}}})), {2, 2},
            {22, 28, 49, 64});
  const Tensor bt = F32({2, 3}, {1, 3, 5, 2, 4, 6});  // B32 transposed
  ExpectF32(Run1(OpKind::kGemm, {A23(), bt}, Attrs({{"transB", int64_t{1}}})), {2, 2},
            {22, 28, 49, 64});
  ExpectF32(Run1(OpKind::kGemm, {at, bt}, Attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}})),
            {2, 2}, {22, 28, 49, 64});
}

TEST(GemmTest, AlphaBetaAndBroadcastC) {
  const Attributes ab = Attrs({{"alpha", 0.5f}, {"beta", 2.0f}});
  // C scalar
  ExpectF32(Run1(OpKind::kGemm, {A23(), B32(), F32({}, {1})}, ab), {2, 2}, {13, 16, 26.5, 34});
  // C (N,): one value per column
  ExpectF32(Run1(OpKind::kGemm, {A23(), B32(), F32({2}, {1, 10})}, ab), {2, 2}, {13, 34, 26.5, 52});
  // C (M, 1): one value per row
  ExpectF32(Run1(OpKind::kGemm, {A23(), B32(), F32({2, 1}, {1, 10})}, ab), {2, 2},
            {13, 16, 44.5, 52});
  // C (M, N)
  ExpectF32(Run1(OpKind::kGemm, {A23(), B32(), F32({2, 2}, {1, 2, 3, 4})}), {2, 2},
            {23, 30, 52, 68});
  // beta = 0 drops C's contribution.
  ExpectF32(Run1(OpKind::kGemm, {A23(), B32(), F32({2, 2}, {1, 2, 3, 4})}, Attrs({{"beta", 0.0f}})),
            {2, 2}, {22, 28, 49, 64});
}

TEST(GemmTest, IntegerGemm) {
  const Tensor a = I32({1, 2}, {3, -4});
  const Tensor b = I32({2, 1}, {5, 6});
  ExpectValues(Run1(OpKind::kGemm, {a, b, I32({1}, {100})}), DType::kI32, {1, 1}, {91});
}

TEST(GemmTest, Errors) {
  std::string err = ErrorOf(OpKind::kGemm, {A23(), A23()});
  EXPECT_NE(err.find("Gemm 'n1': inner dims do not match"), std::string::npos) << err;
  err = ErrorOf(OpKind::kGemm, {A23(), B32(), F32({3}, {1, 2, 3})});
  EXPECT_NE(err.find("does not broadcast to the output (M, N) = [2, 2]"), std::string::npos) << err;
  err = ErrorOf(OpKind::kGemm, {F32({6}, {1, 2, 3, 4, 5, 6}), B32()});
  EXPECT_NE(err.find("expected 2"), std::string::npos) << err;
}

// --- MatMul ---

TEST(MatMulTest, TwoD) {
  ExpectF32(Run1(OpKind::kMatMul, {A23(), B32()}), {2, 2}, {22, 28, 49, 64});
}

TEST(MatMulTest, VectorOperandsDropTheirDim) {
  const Tensor v3 = F32({3}, {1, 0, -1});
  ExpectF32(Run1(OpKind::kMatMul, {A23(), v3}), {2}, {-2, -2});           // (2,3) x (3) -> (2)
  ExpectF32(Run1(OpKind::kMatMul, {v3, B32()}), {2}, {-4, -4});           // (3) x (3,2) -> (2)
  ExpectF32(Run1(OpKind::kMatMul, {v3, F32({3}, {4, 5, 6})}), {}, {-2});  // dot
}

TEST(MatMulTest, BatchBroadcasting) {
  // a (2, 1, 1, 2) x b (3, 2, 1) -> (2, 3, 1, 1): a[i] . b[j]
  const Tensor a = F32({2, 1, 1, 2}, {1, 2, 3, 4});
  const Tensor b = F32({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  ExpectF32(Run1(OpKind::kMatMul, {a, b}), {2, 3, 1, 1}, {1, 2, 3, 3, 4, 7});
  // A 2-D operand is shared by every batch.
  const Tensor batch = F32({2, 1, 3}, {1, 1, 1, 2, 2, 2});
  ExpectF32(Run1(OpKind::kMatMul, {batch, B32()}), {2, 1, 2}, {9, 12, 18, 24});
}

TEST(MatMulTest, OtherDtypes) {
  ExpectValues(Run1(OpKind::kMatMul, {I32({1, 2}, {2, -3}), I32({2, 1}, {4, 5})}), DType::kI32,
               {1, 1}, {-7});
  ExpectValues(Run1(OpKind::kMatMul, {F64({1, 2}, {0.5, 0.25}), F64({2, 1}, {2, 4})}), DType::kF64,
               {1, 1}, {2});
  ExpectValues(Run1(OpKind::kMatMul, {F16({1, 2}, {0.5, 0.25}), F16({2, 1}, {2, 4})}), DType::kF16,
               {1, 1}, {2});
}

TEST(MatMulTest, Errors) {
  std::string err = ErrorOf(OpKind::kMatMul, {A23(), A23()});
  EXPECT_NE(err.find("MatMul 'n1': inner dims do not match"), std::string::npos) << err;
  EXPECT_NE(err.find("[2, 3]"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMatMul,
                {F32({2, 2, 3}, std::vector<float>(12)), F32({3, 3, 2}, std::vector<float>(18))});
  EXPECT_NE(err.find("do not broadcast"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMatMul, {F32({}, {1}), B32()});
  EXPECT_NE(err.find("at least 1 dim"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMatMul, {A23(), I32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_NE(err.find("dtype i32"), std::string::npos) << err;
}

TEST(MatMulTest, CompileTimeInference) {
  auto out = InferTypes(OpKind::kMatMul, {MakeType(DType::kF32, {kUnknownDim, 8, 16}),
                                          MakeType(DType::kF32, {16, 4})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dims, (Dims{kUnknownDim, 8, 4}));
}

// --- Einsum ---

Tensor Einsum(const std::string& eq, const Inputs& inputs) {
  return Run1(OpKind::kEinsum, inputs, Attrs({{"equation", eq}}));
}

TEST(EinsumTest, MatmulForms) {
  ExpectF32(Einsum("ij,jk->ik", {A23(), B32()}), {2, 2}, {22, 28, 49, 64});
  ExpectF32(Einsum("ij,jk", {A23(), B32()}), {2, 2}, {22, 28, 49, 64});  // implicit
  // Batched: each batch is its own product.
  const Tensor a = F32({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = F32({2, 2, 1}, {1, 1, 2, 0});
  ExpectF32(Einsum("bij, bjk -> bik", {a, b}), {2, 1, 1}, {3, 6});
}

TEST(EinsumTest, TransposeSumDotOuter) {
  ExpectF32(Einsum("ij->ji", {A23()}), {3, 2}, {1, 4, 2, 5, 3, 6});
  ExpectF32(Einsum("ij->i", {A23()}), {2}, {6, 15});
  ExpectF32(Einsum("ij->j", {A23()}), {3}, {5, 7, 9});
  ExpectF32(Einsum("ij->", {A23()}), {}, {21});
  ExpectF32(Einsum("i,i", {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}), {}, {32});
  ExpectF32(Einsum("i,j->ij", {F32({2}, {1, 2}), F32({3}, {1, 10, 100})}), {2, 3},
            {1, 10, 100, 2, 20, 200});
  // Implicit output lists the labels used once, alphabetically: "ba" is a transpose.
  ExpectF32(Einsum("ba", {A23()}), {3, 2}, {1, 4, 2, 5, 3, 6});
}

TEST(EinsumTest, DiagonalAndTrace) {
  const Tensor m = F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  ExpectF32(Einsum("ii->i", {m}), {3}, {1, 5, 9});
  ExpectF32(Einsum("ii", {m}), {}, {15});
  // Batch diagonal with an ellipsis.
  const Tensor bm = F32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  ExpectF32(Einsum("...ii ->...i", {bm}), {2, 2}, {1, 4, 5, 8});
}

TEST(EinsumTest, EllipsisBroadcasts) {
  ExpectF32(Einsum("...ij->...ji", {F32({1, 2, 2}, {1, 2, 3, 4})}), {1, 2, 2}, {1, 3, 2, 4});
  // Ellipsis dims broadcast: (2, 1, 2) with (3, 2) -> "...i" dims (2, 3).
  const Tensor a = F32({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = F32({3, 2}, {1, 0, 0, 1, 1, 1});
  ExpectF32(Einsum("...i,...i->...", {a, b}), {2, 3}, {1, 2, 3, 3, 4, 7});
  // Implicit output puts the ellipsis dims first.
  ExpectF32(Einsum("...i,...i", {a, b}), {2, 3}, {1, 2, 3, 3, 4, 7});
}

TEST(EinsumTest, Integers) {
  ExpectValues(Einsum("i,i->", {I32({3}, {1, -2, 3}), I32({3}, {4, 5, 6})}), DType::kI32, {}, {12});
}

TEST(EinsumTest, Errors) {
  auto err = [](const std::string& eq, const Inputs& in) {
    return ErrorOf(OpKind::kEinsum, in, Attrs({{"equation", eq}}));
  };
  EXPECT_NE(err("ij,jk->ik", {A23()}).find("2 operand terms but the node has 1 inputs"),
            std::string::npos);
  EXPECT_NE(err("ij->k", {A23()}).find("'k' does not appear"), std::string::npos);
  EXPECT_NE(err("ij->ii", {A23()}).find("more than once"), std::string::npos);
  EXPECT_NE(err("i1->i", {A23()}).find("unexpected character '1'"), std::string::npos);
  EXPECT_NE(err("ijk->i", {A23()}).find("names 3 dims but operand 0 has rank 2"),
            std::string::npos);
  const std::string size = err("ij,ij->ij", {A23(), B32()});
  EXPECT_NE(size.find("Einsum 'n1'"), std::string::npos) << size;
  EXPECT_NE(size.find("label 'i' has size 3"), std::string::npos) << size;
  EXPECT_NE(err("i.j->i", {A23()}).find("'...'"), std::string::npos);
}

}  // namespace
}  // namespace edgec
