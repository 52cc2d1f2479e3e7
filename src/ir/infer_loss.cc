// Shape inference for the loss family (see ops.def), opset-13 meaning:
//   NegativeLogLikelihoodLoss(input [N, C, d...], target int [N, d...], weight? [C])
//       -> loss: [N, d...] with reduction "none", else a scalar
//   SoftmaxCrossEntropyLoss(scores [N, C, d...], labels int [N, d...], weights? [C])
//       -> output (as above), log_prob? [N, C, d...]
// attributes: reduction ("mean" by default, "sum", "none"), ignore_index (a target that
// counts for nothing).
#include "ir/infer.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

Status Loss(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  const int max_outputs = ctx.op() == OpKind::kSoftmaxCrossEntropyLoss ? 2 : 1;
  if (ctx.num_outputs() < 1 || ctx.num_outputs() > max_outputs) {
    return ctx.Error("has {} outputs, expected 1 to {}", ctx.num_outputs(), max_outputs);
  }
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI32, DType::kI64}));
  const std::string reduction = ctx.attrs().GetString("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    return ctx.Error("reduction '{}' is not one of mean, sum, none", reduction);
  }
  const TensorType& x = ctx.input_type(0);
  const TensorType& t = ctx.input_type(1);
  if (ctx.has_input(2)) {
    RETURN_IF_ERROR(ctx.ExpectRank(2, 1));
    if (ctx.input_type(2).dtype != x.dtype) return ctx.Error("weight dtype differs from input 0's");
  }
  if (x.rank_known && x.rank() < 2) return ctx.Error("input 0 is {}; expected [N, C, ...]", x.ToString());
  if (x.rank_known && t.rank_known) {
    if (t.rank() != x.rank() - 1) return ctx.Error("target {} must have rank {} for input {}", t.ToString(), x.rank() - 1, x.ToString());
    for (int i = 0; i < t.rank(); ++i) {
      const int64_t a = x.dims[i == 0 ? 0 : i + 1], b = t.dims[i];
      if (a >= 0 && b >= 0 && a != b) return ctx.Error("target {} does not match input {}", t.ToString(), x.ToString());
    }
    if (ctx.has_input(2) && x.dims[1] >= 0 && ctx.input_type(2).dims[0] >= 0 && ctx.input_type(2).dims[0] != x.dims[1]) {
      return ctx.Error("weight has {} entries for {} classes", ctx.input_type(2).dims[0], x.dims[1]);
    }
  }
  if (reduction == "none") {
    ctx.output(0) = t.rank_known ? MakeType(x.dtype, t.dims) : UnknownRank(x.dtype);
  } else {
    ctx.output(0) = MakeType(x.dtype, {});
  }
  if (ctx.num_outputs() == 2) ctx.output(1) = x;
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(InferContext, Loss, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss)

}  // namespace edgec::infer
