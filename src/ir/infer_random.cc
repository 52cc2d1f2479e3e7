// Shape inference for the random family (see ops.def):
//   RandomUniform, RandomNormal ()        -> dtype (default f32), dims = attribute `shape`
//   RandomUniformLike, RandomNormalLike (x) -> x's dims, dtype (default x's)
//   Bernoulli (p)                          -> p's dims, dtype (default p's): 1 with probability p
//   Multinomial (logits [batch, classes])  -> [batch, sample_size] of dtype (default i32)
//
// The seed rule (kernels/ref/random.cc): every run of a node draws from a generator seeded by
// its `seed` attribute, or by 0 when it has none, so a model's random values are the same on
// every run, every path and every machine (tests/kernels/random_test.cc). ONNX leaves the
// sequence to the runtime: values equal ONNX Runtime's or numpy's only in distribution.
#include "ir/infer.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

DType OutputDType(InferContext& ctx, DType fallback) {
  return ctx.attrs().Has("dtype") ? static_cast<DType>(ctx.attrs().GetInt("dtype")) : fallback;
}

Status ExpectFloatOut(InferContext& ctx, DType t) {
  if (t != DType::kF32 && t != DType::kF64 && t != DType::kF16 && t != DType::kBF16) {
    return ctx.Error("dtype {} is not a float type", DTypeName(t));
  }
  return Status::Ok();
}

Status FromShapeAttr(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(0, 0));
  if (!ctx.attrs().Has("shape")) return ctx.Error("attribute 'shape' is required");
  Dims dims = ctx.attrs().GetInts("shape");
  for (int64_t d : dims) {
    if (d < 0) return ctx.Error("shape {} has a negative dim", DimsToString(dims));
  }
  const DType t = OutputDType(ctx, DType::kF32);
  RETURN_IF_ERROR(ExpectFloatOut(ctx, t));
  ctx.output(0) = MakeType(t, dims);
  return Status::Ok();
}

Status Like(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  TensorType t = ctx.input_type(0);
  t.dtype = OutputDType(ctx, t.dtype);
  RETURN_IF_ERROR(ExpectFloatOut(ctx, t.dtype));
  ctx.output(0) = t;
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(InferContext, FromShapeAttr, RandomUniform, RandomNormal)
EDGEC_SHARED_RULE(InferContext, Like, RandomUniformLike, RandomNormalLike)

Status Bernoulli(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  TensorType t = ctx.input_type(0);
  t.dtype = OutputDType(ctx, t.dtype);
  ctx.output(0) = t;
  return Status::Ok();
}

Status Multinomial(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 2));
  const int64_t samples = ctx.attrs().GetInt("sample_size", 1);
  if (samples < 1) return ctx.Error("sample_size {} must be at least 1", samples);
  const DType t = OutputDType(ctx, DType::kI32);
  if (t != DType::kI32 && t != DType::kI64) return ctx.Error("dtype {} must be int32 or int64", DTypeName(t));
  const TensorType& x = ctx.input_type(0);
  ctx.output(0) = MakeType(t, {x.rank_known ? x.dims[0] : kUnknownDim, samples});
  return Status::Ok();
}

}  // namespace edgec::infer
