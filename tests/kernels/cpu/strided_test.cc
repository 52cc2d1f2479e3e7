// Fast kernels on strided input buffers (zero-copy views such as a Transpose the views pass
// left in place, rows with a pitch): the kernels that read strides match the reference;
// the others refuse with the reason.
#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

TEST(CpuStrided, BinaryReadsStridedInputs) {
  std::mt19937 rng(101);
  ForEachIsa([&] {
    FastCase c{OpKind::kAdd, {Random({3, 5, 7}, rng), Random({5, 1}, rng)}, {}};
    c.strided_inputs = {{0, {2, 0, 1}}, {1, {1, 0}}};
    ExpectMatchesRef(c, 0, 0, "add strided");
    FastCase f{OpKind::kFusedAdd, {Random({2, 4, 6, 3}, rng), Random({2, 4, 6, 3}, rng)},
               Attrs({{"activation", std::string("Relu")}})};
    f.strided_inputs = {{1, {0, 3, 1, 2}}};
    f.nhwc = true;
    ExpectMatchesRef(f, 0, 0, "fused add nhwc + strided");
  });
}

TEST(CpuStrided, MovementReadsStridedInputs) {
  std::mt19937 rng(102);
  FastCase t{OpKind::kTranspose, {Random({4, 5, 6}, rng)}, Attrs({{"perm", std::vector<int64_t>{1, 0, 2}}})};
  t.strided_inputs = {{0, {1, 2, 0}}};
  ExpectMatchesRef(t, 0, 0, "transpose strided");
  FastCase cat{OpKind::kConcat, {Random({2, 3, 4}, rng), Random({2, 5, 4}, rng)}, Attrs({{"axis", int64_t{1}}})};
  cat.strided_inputs = {{0, {0, 2, 1}}};
  ExpectMatchesRef(cat, 0, 0, "concat strided");
  FastCase sl{OpKind::kSlice, {Random({6, 7}, rng), Tensor::VectorI64({1, 5}), Tensor::VectorI64({5, 0}),
                               Tensor::VectorI64({0, 1}), Tensor::VectorI64({2, -2})}, {}};
  sl.constants = {1, 2, 3, 4};
  sl.strided_inputs = {{0, {1, 0}}};
  ExpectMatchesRef(sl, 0, 0, "slice strided");
}

TEST(CpuStrided, MatMulAndAttentionReadStridedOperands) {
  std::mt19937 rng(103);
  FastCase mm{OpKind::kMatMul, {Random({2, 6, 9}, rng), Random({2, 9, 5}, rng)}, {}};
  mm.strided_inputs = {{0, {0, 2, 1}}, {1, {2, 0, 1}}};
  ExpectMatchesRef(mm, 1e-4, 1e-5, "matmul strided");
  // A constant operand is packed from its tensor; its run-time buffer's strides do not matter.
  FastCase constant_b = mm;
  constant_b.constants = {1};
  ExpectMatchesRef(constant_b, 1e-4, 1e-5, "matmul strided, constant B");
  // Q, K, V as the head-split transposes of one projection (the views of an attention block).
  FastCase at{OpKind::kAttention, {Random({1, 2, 7, 4}, rng), Random({1, 2, 7, 4}, rng), Random({1, 2, 7, 4}, rng)}, {}};
  at.strided_inputs = {{0, {0, 2, 1, 3}}, {1, {0, 2, 1, 3}}, {2, {0, 2, 1, 3}}};
  ExpectMatchesRef(at, 1e-4, 1e-5, "attention strided");
}

// Attention writing its output transposed (views: a head-merge Transpose after it becomes
// the output's strides): oneDNN's fast matmul wants a dense destination, so the kernel
// writes densely and reorders into the strides instead of running the reference matmul.
TEST(CpuStrided, AttentionWritesStridedOutput) {
  std::mt19937 rng(106);
  for (const auto& [q_dims, kv_dims] : std::vector<std::pair<Dims, Dims>>{
           {{1, 2, 7, 4}, {1, 2, 7, 4}}, {{1, 4, 64, 16}, {1, 4, 64, 16}}, {{2, 3, 5, 8}, {2, 3, 9, 8}}}) {
    FastCase at{OpKind::kAttention, {Random(q_dims, rng), Random(kv_dims, rng), Random(kv_dims, rng)}, {}};
    at.strided_outputs = {{0, {0, 2, 1, 3}}};
    const std::string d = ExpectMatchesRef(at, 1e-4, 1e-5, "attention, strided output " + DimsStr(q_dims));
    EXPECT_EQ(d.find("[ref"), std::string::npos) << d;
  }
}

// A B shared by all batches folds A's batch into its rows when A's memory allows: a
// [5, 1, 9] view of a transposed [1, 5, 9] does, a [2, 3, 9] view with rows outermost does not.
TEST(CpuStrided, MatMulFoldsBatchIntoRowsWhereMemoryAllows) {
  std::mt19937 rng(105);
  for (const auto& [a_dims, order] : std::vector<std::pair<Dims, std::vector<int>>>{
           {{5, 1, 9}, {1, 0, 2}}, {{2, 3, 9}, {1, 0, 2}}, {{2, 3, 9}, {0, 1, 2}}, {{1, 4, 1, 9}, {0, 2, 1, 3}}}) {
    Dims out = a_dims;
    out.back() = 4;
    FastCase c{OpKind::kFusedMatMul, {Random(a_dims, rng), Random({9, 4}, rng), Random({4}, rng), Random(out, rng)},
               Attrs({{"activation", std::string("Relu")}})};
    c.constants = {1, 2};
    c.strided_inputs = {{0, order}};
    const std::string d = ExpectMatchesRef(
        c, 1e-4, 1e-5, fmt::format("fused matmul {} (memory order {}) x [9, 4]", DimsStr(a_dims), fmt::join(order, ",")));
    const bool foldable = a_dims[1] == 1 || order == std::vector<int>{0, 1, 2} || a_dims.size() == 4;
    EXPECT_EQ(d.find("batch folded into rows") != std::string::npos, foldable) << d;
    FastCase plain{OpKind::kMatMul, {Random(a_dims, rng), Random({9, 4}, rng)}, {}};
    plain.strided_inputs = {{0, order}};
    ExpectMatchesRef(plain, 1e-4, 1e-5, "matmul, run-time B");
  }
}

TEST(CpuStrided, DenseOnlyKernelsRefuse) {
  std::mt19937 rng(104);
  FastCase relu{OpKind::kRelu, {Random({3, 4}, rng)}, {}};
  relu.strided_inputs = {{0, {1, 0}}};
  EXPECT_NE(RefusalOf(relu).find("strided view"), std::string::npos) << RefusalOf(relu);
  FastCase sm{OpKind::kSoftmax, {Random({3, 4}, rng)}, {}};
  sm.strided_inputs = {{0, {0, 1}}};  // a row pitch only
  EXPECT_NE(RefusalOf(sm).find("strided view"), std::string::npos) << RefusalOf(sm);
}

}  // namespace
}  // namespace edgec::testing_cpu
