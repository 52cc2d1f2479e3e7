// Reference kernels for the conv family (see ops.def).
#include <algorithm>

#include "kernels/ref/conv_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

template <typename T>
void RunConv(const ConvProblem& p, bool transpose, const Tensor& x, const Tensor& w,
             const Tensor* bias, Tensor& y) {
  ConvForward<T>(p, transpose, x.data<T>(), w.data<T>(), bias ? bias->data<T>() : nullptr,
                 y.data<T>());
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
