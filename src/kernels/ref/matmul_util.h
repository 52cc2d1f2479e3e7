// The batched matmul loop of the reference kernels, shared by MatMul, Gemm (matmul.cc),
// MatMulInteger and QLinearMatMul (quant.cc), FusedMatMul (epilogue.cc): numpy semantics,
// batch dims broadcast.
// Also BroadcastMap, the index map of unidirectional broadcasting (quant and norm kernels).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ir/tensor.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

// A numpy matmul with sizes resolved: `batch` matrices of (m, k) x (k, n); the element
// offsets of each batch's A and B follow the broadcast of their batch dims.
struct MatMulProblem {
  int64_t m = 1, k = 1, n = 1;
  Dims batch_dims;  // broadcast batch dims of the output
  std::vector<int64_t> a_offset, b_offset;
  int64_t batch() const { return static_cast<int64_t>(a_offset.size()); }
};

// A and B dims as inference validated them (1-D operands allowed).
MatMulProblem MakeMatMulProblem(const Dims& a, const Dims& b);

// Floats accumulate in double; integers in uint64 (wrapping, exact modulo 2^64, so a
// narrower result is the wrapped sum).
template <typename T>
using MatMulAcc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// y[b, i, j] = sum_k a[b, i, k] * b[b, k, j], converted to Out with static_cast.
template <typename T, typename Out = T>
void MatMulBatched(const MatMulProblem& p, const T* a, const T* b, Out* y) {
  using Acc = MatMulAcc<T>;
  std::vector<Acc> row(p.n);
  for (int64_t bi = 0; bi < p.batch(); ++bi) {
    const T* ab = a + p.a_offset[bi];
    const T* bb = b + p.b_offset[bi];
    Out* yb = y + bi * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      std::fill(row.begin(), row.end(), Acc(0));
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const Acc av = static_cast<Acc>(ab[i * p.k + kk]);
        const T* brow = bb + kk * p.n;
        for (int64_t j = 0; j < p.n; ++j) row[j] += av * static_cast<Acc>(brow[j]);
      }
      for (int64_t j = 0; j < p.n; ++j) yb[i * p.n + j] = static_cast<Out>(row[j]);
    }
  }
}

// The row-major transposes of `batch` consecutive (rows, cols) matrices.
template <typename T>
std::vector<T> TransposedMatrices(const T* src, int64_t batch, int64_t rows, int64_t cols) {
  std::vector<T> t(batch * rows * cols);
  for (int64_t b = 0; b < batch; ++b) {
    const T* s = src + b * rows * cols;
    T* d = t.data() + b * rows * cols;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) d[c * rows + r] = s[r * cols + c];
    }
  }
  return t;
}

// Maps a flat index into a tensor of dims `to` onto the flat index of a tensor of dims
// `from` broadcast to it (right-aligned; dims of 1 stretch). `from` must broadcast to `to`.
class BroadcastMap {
 public:
  BroadcastMap(const Dims& from, const Dims& to);
  int64_t operator()(int64_t to_index) const;

 private:
  Dims to_;
  std::vector<int64_t> from_strides_;  // per dim of `to`; 0 where broadcast
};

// Runs body(T{}) for f32 or f64 (16-bit floats arrive converted by WithHalfAsFloat); the
// matmul family and the fused epilogues.
template <typename Body>
Status DispatchF32F64(KernelContext& ctx, DType dt, Body body) {
  switch (dt) {
    case DType::kF32: return body(float{});
    case DType::kF64: return body(double{});
    default: return Unimplemented("{}: dtype {} is not supported", ctx.label, DTypeName(dt));
  }
}

}  // namespace edgec::ref
