// Reference kernels for the epilogue family (see ops.def): y = act(op(inputs) + bias +
// residual). The op part is the conv and matmul loops the standalone kernels use
// (conv_util.h, matmul_util.h); the activation is activation.h. 16-bit floats compute in f32.
#include "kernels/ref/activation.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/elementwise_util.h"
#include "kernels/ref/kernel.h"
#include "kernels/ref/matmul_util.h"

namespace edgec::ref {

namespace {


StatusOr<ActivationSpec> ReadKernelActivation(const KernelContext& ctx) {
  auto spec = ReadActivation(ctx.attrs);
  if (!spec.ok()) return spec.status().WithContext(ctx.label);
  return spec;
}

// Flat index into a tensor of dims `from` that broadcasts to `to`: the identity when they
// are equal, else BroadcastMap.
class BroadcastIndex {
 public:
  BroadcastIndex(const Dims& from, const Dims& to) : same_(from == to), map_(from, to) {}
  int64_t operator()(int64_t i) const { return same_ ? i : map_(i); }

 private:
  bool same_;
  BroadcastMap map_;
};

// --- FusedConv ---

template <typename T>
void RunFusedConv(const ConvProblem& p, const ActivationSpec& act, const Tensor& x,
                  const Tensor& w, const Tensor* bias, const Tensor* residual, Tensor& y) {
  T* yp = y.data<T>();
  ConvForward<T>(p, /*transpose=*/false, x.data<T>(), w.data<T>(),
                 bias ? bias->data<T>() : nullptr, yp);
  if (residual) {
    const T* r = residual->data<T>();  // inference checked it has Y's shape
    for (int64_t i = 0; i < y.numel(); ++i) yp[i] += r[i];
  }
  ApplyActivation(act, yp, y.numel());
}

// --- FusedMatMul ---

template <typename T>
void RunFusedMatMul(const Attributes& attrs, const ActivationSpec& act, const Tensor& a,
                    const Tensor& b, const Tensor* bias, const Tensor* residual, Tensor& y) {
  // Transposes are applied to copies, so the matmul loop sees plain (.., M, K) x (.., K, N).
  Dims a_dims = a.dims(), b_dims = b.dims();
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  std::vector<T> at, bt;
  auto transpose_last_two = [](const T* src, Dims& dims, std::vector<T>& store) {
    const size_t r = dims.size();
    const int64_t rows = dims[r - 2], cols = dims[r - 1];
    store = TransposedMatrices(src, NumElements(dims) / std::max<int64_t>(rows * cols, 1), rows, cols);
    std::swap(dims[r - 2], dims[r - 1]);
    return store.data();
  };
  if (attrs.GetInt("transA", 0) != 0) ap = transpose_last_two(ap, a_dims, at);
  if (attrs.GetInt("transB", 0) != 0) bp = transpose_last_two(bp, b_dims, bt);
  const MatMulProblem p = MakeMatMulProblem(a_dims, b_dims);
  std::vector<double> prod(y.numel());
  MatMulBatched<T, double>(p, ap, bp, prod.data());

  // As Gemm: the sum is formed in double and rounded once, then activated in T.
  const double alpha = attrs.GetFloat("alpha", 1.0f);
  T* yp = y.data<T>();
  const T* biasp = bias ? bias->data<T>() : nullptr;
  const T* resp = residual ? residual->data<T>() : nullptr;
  const BroadcastIndex bias_at(bias ? bias->dims() : y.dims(), y.dims());
  const BroadcastIndex res_at(residual ? residual->dims() : y.dims(), y.dims());
  for (int64_t i = 0; i < y.numel(); ++i) {
    double v = alpha == 1.0 ? prod[i] : alpha * prod[i];
    if (biasp) v += static_cast<double>(biasp[bias_at(i)]);
    if (resp) v += static_cast<double>(resp[res_at(i)]);
    yp[i] = static_cast<T>(v);
  }
  ApplyActivation(act, yp, y.numel());
}

}  // namespace

Status FusedConv(KernelContext& ctx) {
  ASSIGN_OR_RETURN(ActivationSpec act, ReadKernelActivation(ctx));
  ASSIGN_OR_RETURN(ConvProblem p, MakeConvProblem(ctx.label, ctx.attrs, ctx.inputs[0]->dims(),
                                                  ctx.inputs[1]->dims(), /*transpose=*/false));
  return WithHalfAsFloat(ctx, [&](const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    auto opt = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
    return DispatchF32F64(ctx, in[0]->dtype(), [&](auto tag) {
      RunFusedConv<decltype(tag)>(p, act, *in[0], *in[1], opt(2), opt(3), out[0]);
      return Status::Ok();
    });
  });
}

Status FusedMatMul(KernelContext& ctx) {
  ASSIGN_OR_RETURN(ActivationSpec act, ReadKernelActivation(ctx));
  return WithHalfAsFloat(ctx, [&](const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
    auto opt = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
    return DispatchF32F64(ctx, in[0]->dtype(), [&](auto tag) {
      RunFusedMatMul<decltype(tag)>(ctx.attrs, act, *in[0], *in[1], opt(2), opt(3), out[0]);
      return Status::Ok();
    });
  });
}

// FusedAdd(A, B) = act(A + B), numpy broadcasting; the sum and the activation are computed
// in the math type (f32 for 16-bit floats) and rounded once.
Status FusedAdd(KernelContext& ctx) {
  ASSIGN_OR_RETURN(ActivationSpec act, ReadKernelActivation(ctx));
  const Tensor& a = *ctx.inputs[0];
  const Tensor& b = *ctx.inputs[1];
  Tensor& y = ctx.outputs[0];
  return VisitFloat(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ap = a.data<T>();
    const T* bp = b.data<T>();
    T* yp = y.data<T>();
    const Dims* ins[] = {&a.dims(), &b.dims()};
    WithActivation(act, [&](auto fn) {
      ForEachBroadcast(y.dims(), ins, [&](int64_t o, const int64_t* idx) {
        yp[o] = FromMath<T>(fn(ToMath(ap[idx[0]]) + ToMath(bp[idx[1]])));
      });
    });
    return Status::Ok();
  });
}

}  // namespace edgec::ref
