// Shape inference of the integer normalizations, softmax and requantize (ops.def, family
// quant_internal).
#include "ir/infer.h"

namespace edgec::infer {
namespace {

bool IsScalar(const TensorType& t) { return t.rank_known && (t.rank() == 0 || (t.rank() == 1 && t.dims[0] == 1)); }

// Inputs `scales` and `zps` per tensor; X (input 0) u8/i8/i16 (i16: the quantizer's mixed
// precision, quant/int16_norm.h); the zero points of X's / Y's dtype. Returns Y's dtype (that
// of input `y_zp`, else X's).
StatusOr<DType> CheckQuantParams(const InferContext& ctx, std::initializer_list<int> scales, int x_zp, int y_zp) {
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kU8, DType::kI8, DType::kI16}));
  for (int i : scales) {
    RETURN_IF_ERROR(ctx.ExpectRequired(i));
    if (!IsScalar(ctx.input_type(i))) return ctx.Error("input {} (scale) is {}, expected a scalar", i, ctx.input_type(i).ToString());
  }
  for (int i : {x_zp, y_zp}) {
    if (!ctx.has_input(i)) continue;
    if (!IsScalar(ctx.input_type(i)))
      return ctx.Error("input {} (zero point) is {}, expected a scalar", i, ctx.input_type(i).ToString());
  }
  const DType x = ctx.input_type(0).dtype;
  if (ctx.has_input(x_zp) && ctx.input_type(x_zp).dtype != x)
    return ctx.Error("input {} (X zero point) has dtype {}, expected {}", x_zp, DTypeName(ctx.input_type(x_zp).dtype),
                     DTypeName(x));
  const DType y = ctx.has_input(y_zp) ? ctx.input_type(y_zp).dtype : x;
  if (y != DType::kU8 && y != DType::kI8 && y != DType::kI16)
    return ctx.Error("input {} (Y zero point) has dtype {}, expected u8, i8 or i16", y_zp, DTypeName(y));
  return y;
}

// Scale (input 3) and B (input 4) f32 with `count` values (unknown: not checked).
Status CheckAffine(const InferContext& ctx, int64_t count, const char* of) {
  RETURN_IF_ERROR(ctx.ExpectRequired(3));
  for (int i : {3, 4}) {
    if (!ctx.has_input(i)) continue;
    RETURN_IF_ERROR(ctx.ExpectDType(i, {DType::kF32}));
    const TensorType& t = ctx.input_type(i);
    if (count != kUnknownDim && t.IsStatic() && NumElements(t.dims) != count)
      return ctx.Error("input {} ({}) is {}, expected {} values ({})", i, i == 3 ? "Scale" : "B", t.ToString(), count, of);
  }
  return Status::Ok();
}

// 6 or 7 inputs, of which X, X_scale, Scale and Y_scale must be present (B and the zero points
// are optional).
Status ExpectNormInputs(const InferContext& ctx) {
  if (ctx.num_inputs() < 6 || ctx.num_inputs() > 7) return ctx.Error("expected 6 to 7 inputs, got {}", ctx.num_inputs());
  for (int i : {0, 1, 3, 5}) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  return Status::Ok();
}

// The checks both quantized norms start with; the output's dtype. The output is set to that
// dtype of unknown rank, for the caller to refine when X's rank is known.
StatusOr<DType> NormInputsAndOutputType(InferContext& ctx) {
  RETURN_IF_ERROR(ExpectNormInputs(ctx));
  ASSIGN_OR_RETURN(DType y, CheckQuantParams(ctx, {1, 5}, 2, 6));
  ctx.output(0) = UnknownRank(y);
  return y;
}

}  // namespace

Status QLinearLayerNormalization(InferContext& ctx) {
  ASSIGN_OR_RETURN(DType y, NormInputsAndOutputType(ctx));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) return Status::Ok();
  ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx.attrs().GetInt("axis", -1), x.rank(), "attribute axis"));
  int64_t count = 1;
  for (int d = axis; d < x.rank(); ++d) count = x.dims[d] == kUnknownDim || count == kUnknownDim ? kUnknownDim : count * x.dims[d];
  RETURN_IF_ERROR(CheckAffine(ctx, count, "the normalized dims"));
  ctx.output(0) = MakeType(y, x.dims);
  return Status::Ok();
}

Status QLinearGroupNormalization(InferContext& ctx) {
  ASSIGN_OR_RETURN(DType y, NormInputsAndOutputType(ctx));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) return Status::Ok();
  if (x.rank() < 3) return ctx.Error("input 0 is {}, expected [N, C, spatial...]", x.ToString());
  const int64_t groups = ctx.attrs().GetInt("num_groups", 0);
  const int64_t c = x.dims[1];
  if (groups < 1 || (c != kUnknownDim && c % groups != 0))
    return ctx.Error("num_groups {} does not divide the {} channels", groups, c);
  RETURN_IF_ERROR(CheckAffine(ctx, c, "one per channel"));
  ctx.output(0) = MakeType(y, x.dims);
  return Status::Ok();
}

Status QLinearSoftmax(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(4, 5));
  ASSIGN_OR_RETURN(DType y, CheckQuantParams(ctx, {1, 3}, 2, 4));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(y);
    return Status::Ok();
  }
  if (x.rank() == 0) return ctx.Error("input 0 is a scalar");
  ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx.attrs().GetInt("axis", -1), x.rank(), "attribute axis"));
  if (axis != x.rank() - 1) return ctx.Unsupported("softmax over axis {} of {} (only the last axis)", axis, x.ToString());
  ctx.output(0) = MakeType(y, x.dims);
  return Status::Ok();
}

Status QLinearRequantize(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(4, 5));
  ASSIGN_OR_RETURN(DType y, CheckQuantParams(ctx, {1, 3}, 2, 4));
  const TensorType& x = ctx.input_type(0);
  ctx.output(0) = x.rank_known ? MakeType(y, x.dims) : UnknownRank(y);
  return Status::Ok();
}

}  // namespace edgec::infer
