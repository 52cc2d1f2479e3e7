// Shape inference for the softmax family (see ops.def). Opset-13 meaning: the normalization
// (Hardmax: the one-hot of the maximum) runs along the single axis `axis` (default -1).
#include "ir/infer.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

Status SoftmaxLike(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.num_outputs() != 1) return ctx.Error("has {} outputs, expected 1", ctx.num_outputs());
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  const TensorType& x = ctx.input_type(0);
  if (x.rank_known) {
    auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), x.rank());
    if (!axis.ok()) return ctx.Error("{}", axis.status().message());
  }
  ctx.output(0) = x;
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(InferContext, SoftmaxLike, Softmax, LogSoftmax, Hardmax)

}  // namespace edgec::infer
