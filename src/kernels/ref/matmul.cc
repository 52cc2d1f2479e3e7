// Reference kernels for the matmul family (see ops.def).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ir/einsum_equation.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/kernel.h"
#include "kernels/ref/matmul_util.h"

namespace edgec::ref {

namespace {

// Runs `body(tag)` with a value of the element type (16-bit floats never get here).
template <typename Body>
Status DispatchMatMulType(KernelContext& ctx, DType dt, Body body) {
  if (dt == DType::kI32) return body(int32_t{});
  if (dt == DType::kI64) return body(int64_t{});
  if (dt == DType::kU32) return body(uint32_t{});
  if (dt == DType::kU64) return body(uint64_t{});
  return DispatchF32F64(ctx, dt, body);
}

template <typename T>
void RunGemm(const Tensor& a, const Tensor& b, const Tensor* c, bool trans_a, bool trans_b,
             double alpha, double beta, Tensor& y) {
  MatMulProblem p;
  p.m = trans_a ? a.dim(1) : a.dim(0);
  p.k = trans_a ? a.dim(0) : a.dim(1);
  p.n = trans_b ? b.dim(0) : b.dim(1);
  p.a_offset = {0};
  p.b_offset = {0};
  std::vector<T> at, bt;
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  if (trans_a) ap = (at = TransposedMatrices(ap, 1, p.k, p.m)).data();
  if (trans_b) bp = (bt = TransposedMatrices(bp, 1, p.n, p.k)).data();
  // Floats keep the double sums until alpha and beta are applied.
  using Product = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  std::vector<Product> prod(p.m * p.n);
  MatMulBatched<T, Product>(p, ap, bp, prod.data());

  // C broadcasts unidirectionally: a dim of 1 (or a missing one) stretches.
  int64_t c_rows = 1, c_cols = 1;
  if (c && c->rank() == 2) c_rows = c->dim(0), c_cols = c->dim(1);
  if (c && c->rank() == 1) c_cols = c->dim(0);
  const T* cp = c ? c->data<T>() : nullptr;
  T* yp = y.data<T>();
  const bool plain = alpha == 1.0 && (beta == 1.0 || !cp);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      const Product v = prod[i * p.n + j];
      const T cv = cp ? cp[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)] : T(0);
      if (plain) {
        yp[i * p.n + j] = static_cast<T>(v + static_cast<Product>(cv));  // exact for integers
      } else {
        yp[i * p.n + j] = static_cast<T>(alpha * static_cast<double>(v) +
                                         (cp ? beta * static_cast<double>(cv) : 0.0));
      }
    }
  }
}

// --- einsum: a plain loop over the whole index space ---

template <typename Acc>
void RunEinsum(const EinsumBinding& eb, const std::vector<std::vector<Acc>>& operands,
               const std::vector<const Tensor*>& tensors, std::vector<Acc>& out) {
  const int num_ops = static_cast<int>(operands.size());
  // Loop order: output labels (outer), then the summed labels.
  std::vector<int> order = eb.output_labels;
  std::vector<bool> in_output(eb.num_labels(), false);
  for (int l : eb.output_labels) in_output[l] = true;
  for (int l = 0; l < eb.num_labels(); ++l) {
    if (!in_output[l]) order.push_back(l);
  }
  // stride[op][position in order]: a repeated label adds its strides (the diagonal); a
  // broadcast dim of size 1 has stride 0.
  const int depth = static_cast<int>(order.size());
  std::vector<int> position(eb.num_labels());
  for (int i = 0; i < depth; ++i) position[order[i]] = i;
  std::vector<std::vector<int64_t>> stride(num_ops, std::vector<int64_t>(depth, 0));
  for (int op = 0; op < num_ops; ++op) {
    const Dims& dims = tensors[op]->dims();
    const std::vector<int64_t> contiguous = ContiguousStrides(dims);
    for (size_t d = 0; d < dims.size(); ++d) {
      const int l = eb.operand_labels[op][d];
      if (dims[d] == 1 && eb.label_sizes[l] != 1) continue;
      stride[op][position[l]] += contiguous[d];
    }
  }
  std::vector<int64_t> size(depth);
  for (int i = 0; i < depth; ++i) size[i] = eb.label_sizes[order[i]];
  const int out_depth = static_cast<int>(eb.output_labels.size());
  int64_t sum_count = 1;
  for (int i = out_depth; i < depth; ++i) sum_count *= size[i];

  std::vector<int64_t> index(depth, 0), offset(num_ops, 0);
  for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
    // Decompose o over the output labels (last fastest).
    int64_t rest = o;
    for (int i = out_depth; i-- > 0;) {
      index[i] = rest % size[i];
      rest /= size[i];
    }
    for (int i = out_depth; i < depth; ++i) index[i] = 0;
    for (int op = 0; op < num_ops; ++op) {
      offset[op] = 0;
      for (int i = 0; i < out_depth; ++i) offset[op] += index[i] * stride[op][i];
    }
    Acc acc = 0;
    for (int64_t s = 0; s < sum_count; ++s) {
      Acc prod = 1;
      for (int op = 0; op < num_ops; ++op) prod *= operands[op][offset[op]];
      acc += prod;
      for (int i = depth; i-- > out_depth;) {  // next summed index, updating offsets
        for (int op = 0; op < num_ops; ++op) offset[op] += stride[op][i];
        if (++index[i] < size[i]) break;
        for (int op = 0; op < num_ops; ++op) offset[op] -= size[i] * stride[op][i];
        index[i] = 0;
      }
    }
    out[o] = acc;
  }
}

}  // namespace

// --- Gemm and MatMul ---

Status Gemm(KernelContext& ctx) {
  const bool trans_a = ctx.attrs.GetInt("transA", 0) != 0;
  const bool trans_b = ctx.attrs.GetInt("transB", 0) != 0;
  const double alpha = ctx.attrs.GetFloat("alpha", 1.0f);
  const double beta = ctx.attrs.GetFloat("beta", 1.0f);
  return WithHalfAsFloat(ctx, [&](const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    const Tensor* c = in.size() > 2 ? in[2] : nullptr;
    return DispatchMatMulType(ctx, in[0]->dtype(), [&](auto tag) {
      using T = decltype(tag);
      RunGemm<T>(*in[0], *in[1], c, trans_a, trans_b, alpha, beta, out[0]);
      return Status::Ok();
    });
  });
}

Status MatMul(KernelContext& ctx) {
  return WithHalfAsFloat(ctx, [&](const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    const MatMulProblem p = MakeMatMulProblem(in[0]->dims(), in[1]->dims());
    return DispatchMatMulType(ctx, in[0]->dtype(), [&](auto tag) {
      using T = decltype(tag);
      MatMulBatched<T, T>(p, in[0]->data<T>(), in[1]->data<T>(), out[0].data<T>());
      return Status::Ok();
    });
  });
}

// --- Einsum ---

Status Einsum(KernelContext& ctx) {
  std::vector<Dims> dims;
  for (const Tensor* t : ctx.inputs) dims.push_back(t->dims());
  auto binding = BindEinsum(ctx.attrs.GetString("equation"), dims);
  if (!binding.ok()) return binding.status().WithContext(ctx.label);
  Tensor& y = ctx.outputs[0];
  if (IsFloat(y.dtype())) {
    std::vector<std::vector<double>> operands;
    for (const Tensor* t : ctx.inputs) operands.push_back(t->ToDoubleVector());
    std::vector<double> out(y.numel());
    RunEinsum<double>(*binding, operands, ctx.inputs, out);
    for (int64_t i = 0; i < y.numel(); ++i) StoreFromDouble(y.dtype(), y.raw(), i, out[i]);
  } else {
    // Integers wrap as the element type would: sums of products modulo 2^64, then narrowed.
    std::vector<std::vector<uint64_t>> operands;
    for (const Tensor* t : ctx.inputs) {
      std::vector<uint64_t> v;
      for (int64_t x : t->ToInt64Vector()) v.push_back(static_cast<uint64_t>(x));
      operands.push_back(std::move(v));
    }
    std::vector<uint64_t> out(y.numel());
    RunEinsum<uint64_t>(*binding, operands, ctx.inputs, out);
    EDGEC_DISPATCH_NUMERIC(
        y.dtype(),
        {
          T* yp = y.data<T>();
          for (int64_t i = 0; i < y.numel(); ++i) yp[i] = static_cast<T>(out[i]);
        },
        return ctx.Error("dtype {} is not supported", DTypeName(y.dtype())))
  }
  return Status::Ok();
}

// Det: Gaussian elimination with partial pivoting in double, per matrix.
Status Det(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t m = x.dim(x.rank() - 1);
  const std::vector<double> v = x.ToDoubleVector();
  Tensor& out = ctx.outputs[0];
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t k = 0; k < out.numel(); ++k) {
    std::copy(v.begin() + k * m * m, v.begin() + (k + 1) * m * m, a.begin());
    double det = 1;
    for (int64_t c = 0; c < m && det != 0; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < m; ++r) {
        if (std::fabs(a[r * m + c]) > std::fabs(a[pivot * m + c])) pivot = r;
      }
      if (a[pivot * m + c] == 0) {
        det = 0;
        break;
      }
      if (pivot != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[pivot * m + j]);
        det = -det;
      }
      det *= a[c * m + c];
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[r * m + c] / a[c * m + c];
        for (int64_t j = c; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
      }
    }
    StoreFromDouble(out.dtype(), out.raw(), k, det);
  }
  return Status::Ok();
}

}  // namespace edgec::ref
