// Shape inference for the text family (see ops.def):
//   TfIdfVectorizer(X i32/i64 [C] or [N, C]) -> f32 [W] or [N, W], W = max(ngram_indexes) + 1
#include "ir/infer.h"
#include "ir/tfidf.h"

namespace edgec::infer {

Status TfIdfVectorizer(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kI32, DType::kI64}));
  ASSIGN_OR_RETURN(TfIdfPool pool, ParseTfIdfPool(ctx.attrs(), ctx.label()));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(DType::kF32);
    return Status::Ok();
  }
  if (x.rank() == 1) {
    ctx.output(0) = MakeType(DType::kF32, {pool.width});
  } else if (x.rank() == 2) {
    ctx.output(0) = MakeType(DType::kF32, {x.dims[0], pool.width});
  } else {
    return ctx.Error("input 0 is {}, expected [C] or [N, C]", x.ToString());
  }
  return Status::Ok();
}

}  // namespace edgec::infer
