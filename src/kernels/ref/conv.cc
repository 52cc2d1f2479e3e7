// Reference kernels for the conv family (see ops.def).
#include <algorithm>

#include "kernels/ref/conv_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// y[n, oc, ...] = bias[oc] before accumulation.
template <typename T>
void FillBias(const ConvProblem& p, const Tensor* bias, T* y) {
  if (!bias) return;
  const T* b = bias->data<T>();
  const int64_t plane = p.out_plane();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      T* yp = y + (n * p.out_channels + oc) * plane;
      std::fill(yp, yp + plane, b[oc]);
    }
  }
}

template <typename T>
void RunConv(const ConvProblem& p, bool transpose, const Tensor& x, const Tensor& w,
             const Tensor* bias, Tensor& y) {
  T* yp = y.data<T>();
  std::fill(yp, yp + y.numel(), T(0));
  FillBias<T>(p, bias, yp);
  if (transpose) {
    ConvTransposeAccumulate<T>(p, x.data<T>(), w.data<T>(), yp);
  } else {
    ConvAccumulate<T>(p, x.data<T>(), w.data<T>(), yp);
  }
}

Status RunFloatConv(KernelContext& ctx, bool transpose) {
  const Tensor& x = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  const Tensor* bias = ctx.input(2);
  Tensor& y = ctx.outputs[0];
  ASSIGN_OR_RETURN(ConvProblem p,
                   MakeConvProblem(ctx.label, ctx.attrs, x.dims(), w.dims(), transpose));
  switch (x.dtype()) {
    case DType::kF32: RunConv<float>(p, transpose, x, w, bias, y); return Status::Ok();
    case DType::kF64: RunConv<double>(p, transpose, x, w, bias, y); return Status::Ok();
    case DType::kF16:
    case DType::kBF16: {
      const Tensor bias32 = bias ? bias->CastTo(DType::kF32) : Tensor();
      Tensor y32(DType::kF32, y.dims());
      RunConv<float>(p, transpose, x.CastTo(DType::kF32), w.CastTo(DType::kF32),
                     bias ? &bias32 : nullptr, y32);
      StoreConverted(y32, y);
      return Status::Ok();
    }
    default: return Unimplemented("{}: dtype {} is not supported", ctx.label, DTypeName(x.dtype()));
  }
}

}  // namespace

Status Conv(KernelContext& ctx) { return RunFloatConv(ctx, /*transpose=*/false); }
Status ConvTranspose(KernelContext& ctx) { return RunFloatConv(ctx, /*transpose=*/true); }

}  // namespace edgec::ref
