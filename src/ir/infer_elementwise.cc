// Shape inference for the elementwise family (see ops.def).
#include <climits>
#include <span>

#include "ir/infer.h"

namespace edgec::infer {

namespace {

constexpr DType kFloats[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
constexpr DType kSignedAndFloats[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                      DType::kI8,  DType::kI16, DType::kI32, DType::kI64};
constexpr DType kNumeric[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                              DType::kI16, DType::kI32, DType::kI64, DType::kU8,   DType::kU16,
                              DType::kU32, DType::kU64};
constexpr DType kNumericAndBool[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                     DType::kI8,  DType::kI16, DType::kI32, DType::kI64,
                                     DType::kU8,  DType::kU16, DType::kU32, DType::kU64,
                                     DType::kBool};
constexpr DType kBoolOnly[] = {DType::kBool};
constexpr DType kUnsigned[] = {DType::kU8, DType::kU16, DType::kU32, DType::kU64};

Status ExpectDTypeIn(const InferContext& ctx, int i, std::span<const DType> allowed) {
  RETURN_IF_ERROR(ctx.ExpectRequired(i));
  DType d = ctx.input_type(i).dtype;
  for (DType a : allowed) {
    if (a == d) return Status::Ok();
  }
  std::string names;
  for (DType a : allowed) names += (names.empty() ? "" : ", ") + std::string(DTypeName(a));
  return ctx.Unsupported("input {} has dtype {}, expected one of {}", i, DTypeName(d), names);
}

// Input i must have the dtype of input `ref` (ONNX type constraints bind them together).
Status ExpectSameDType(const InferContext& ctx, int i, int ref) {
  RETURN_IF_ERROR(ctx.ExpectRequired(i));
  DType d = ctx.input_type(i).dtype, r = ctx.input_type(ref).dtype;
  if (d != r) {
    return ctx.Error("input {} has dtype {}, expected {} (the dtype of input {})", i,
                     DTypeName(d), DTypeName(r), ref);
  }
  return Status::Ok();
}

// Output 0 has the shape of input 0 and the given dtype.
void ShapeOfInput0(InferContext& ctx, DType dtype) {
  TensorType t = ctx.input_type(0);
  t.dtype = dtype;
  ctx.output(0) = std::move(t);
}

Status ExpectOutputs(const InferContext& ctx, int min, int max) {
  if (ctx.num_outputs() < min || ctx.num_outputs() > max) {
    return ctx.Error("has {} outputs, expected {} to {}", ctx.num_outputs(), min, max);
  }
  return Status::Ok();
}

// One input of an allowed dtype; the output has its type.
Status Unary(InferContext& ctx, std::span<const DType> allowed) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, allowed));
  ShapeOfInput0(ctx, ctx.input_type(0).dtype);
  return Status::Ok();
}

// Output 0 gets `dtype` and the numpy broadcast of the shapes of inputs [first, end).
Status BroadcastOutput(InferContext& ctx, int first, int end, DType dtype) {
  for (int i = first; i < end; ++i) {
    if (!ctx.input_type(i).rank_known) {
      ctx.output(0) = UnknownRank(dtype);
      return Status::Ok();
    }
  }
  Dims dims = ctx.input_type(first).dims;
  for (int i = first + 1; i < end; ++i) {
    auto merged = BroadcastDims(dims, ctx.input_type(i).dims);
    if (!merged.ok()) {
      return ctx.Error("input {} {}: {}", i, ctx.input_type(i).ToString(),
                       merged.status().message());
    }
    dims = std::move(*merged);
  }
  ctx.output(0) = MakeType(dtype, std::move(dims));
  return Status::Ok();
}

// Inputs [0, n) all required, all of one dtype from `allowed`, broadcast together; the
// output has `out_dtype` (kUndefined: the inputs' dtype).
Status Broadcasting(InferContext& ctx, int min_inputs, int max_inputs,
                    std::span<const DType> allowed, DType out_dtype = DType::kUndefined) {
  RETURN_IF_ERROR(ctx.ExpectInputs(min_inputs, max_inputs));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  const int n = ctx.num_inputs();
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, allowed));
  for (int i = 1; i < n; ++i) RETURN_IF_ERROR(ExpectSameDType(ctx, i, 0));
  DType dtype = out_dtype == DType::kUndefined ? ctx.input_type(0).dtype : out_dtype;
  return BroadcastOutput(ctx, 0, n, dtype);
}

// Number of elements of a type when every dim is known, else -1.
int64_t KnownNumElements(const TensorType& t) {
  if (!t.IsStatic()) return -1;
  return NumElements(t.dims);
}

Status ExpectScalarInput(const InferContext& ctx, int i, std::string_view what) {
  int64_t n = KnownNumElements(ctx.input_type(i));
  if (n != -1 && n != 1) {
    return ctx.Error("input {} ({}) must hold one value, got {}", i, what,
                     ctx.input_type(i).ToString());
  }
  return Status::Ok();
}

}  // namespace

// unary math and activations
Status Relu(InferContext& ctx) { return Unary(ctx, kNumeric); }
Status LeakyRelu(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Sigmoid(InferContext& ctx) { return Unary(ctx, kFloats); }
Status HardSigmoid(InferContext& ctx) { return Unary(ctx, kFloats); }
Status HardSwish(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Tanh(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Erf(InferContext& ctx) { return Unary(ctx, kNumeric); }
Status Exp(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Log(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Sqrt(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Reciprocal(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Neg(InferContext& ctx) { return Unary(ctx, kSignedAndFloats); }
Status Abs(InferContext& ctx) { return Unary(ctx, kNumeric); }
Status Floor(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Ceil(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Not(InferContext& ctx) { return Unary(ctx, kBoolOnly); }
Status Identity(InferContext& ctx) { return Unary(ctx, kNumericAndBool); }
Status Sign(InferContext& ctx) { return Unary(ctx, kNumeric); }
Status Round(InferContext& ctx) { return Unary(ctx, kFloats); }

// IsNaN / IsInf: float input, bool output of its shape.
Status IsNaN(InferContext& ctx) {
  RETURN_IF_ERROR(Unary(ctx, kFloats));
  ctx.output(0).dtype = DType::kBool;
  return Status::Ok();
}
Status IsInf(InferContext& ctx) { return IsNaN(ctx); }

// more activations (float only, except Shrink which ONNX defines for every numeric type)
Status Elu(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Selu(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Softplus(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Softsign(InferContext& ctx) { return Unary(ctx, kFloats); }
Status ThresholdedRelu(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Shrink(InferContext& ctx) { return Unary(ctx, kNumeric); }
Status Celu(InferContext& ctx) {
  if (ctx.attrs().GetFloat("alpha", 1.f) == 0.f) return ctx.Error("attribute alpha is 0");
  return Unary(ctx, kFloats);
}

// trigonometric and hyperbolic functions
Status Sin(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Cos(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Tan(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Asin(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Acos(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Atan(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Sinh(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Cosh(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Asinh(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Acosh(InferContext& ctx) { return Unary(ctx, kFloats); }
Status Atanh(InferContext& ctx) { return Unary(ctx, kFloats); }

// PRelu: the slope broadcasts to x (unidirectionally); the output has x's shape.
Status PRelu(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kNumeric));
  RETURN_IF_ERROR(ExpectSameDType(ctx, 1, 0));
  const TensorType& x = ctx.input_type(0);
  const TensorType& slope = ctx.input_type(1);
  if (x.rank_known && slope.rank_known) {
    bool fits = slope.rank() <= x.rank();
    for (int i = 0; fits && i < slope.rank(); ++i) {
      int64_t s = slope.dims[slope.rank() - 1 - i], d = x.dims[x.rank() - 1 - i];
      fits = s == 1 || s < 0 || d < 0 || s == d;
    }
    if (!fits) {
      return ctx.Error("slope {} does not broadcast to x {}", slope.ToString(), x.ToString());
    }
  }
  ShapeOfInput0(ctx, x.dtype);
  return Status::Ok();
}

// Clip(x, min?, max?): bounds are one-element tensors of x's dtype.
Status Clip(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 3));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kNumeric));
  const char* names[] = {"", "min", "max"};
  for (int i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    RETURN_IF_ERROR(ExpectSameDType(ctx, i, 0));
    RETURN_IF_ERROR(ExpectScalarInput(ctx, i, names[i]));
  }
  ShapeOfInput0(ctx, ctx.input_type(0).dtype);
  return Status::Ok();
}

// Dropout(x, ratio?, training_mode?) -> (y, mask?): inference is the identity. Training mode
// with a non-zero ratio is random, which edgec does not reproduce.
Status Dropout(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 3));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 2));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kFloats));
  double ratio = 0.5;
  bool ratio_known = true;
  if (ctx.has_input(1)) {
    RETURN_IF_ERROR(ExpectDTypeIn(ctx, 1, kFloats));
    RETURN_IF_ERROR(ExpectScalarInput(ctx, 1, "ratio"));
    const Tensor* r = ctx.input_value(1);
    ratio_known = r != nullptr && r->numel() == 1;
    if (ratio_known) {
      ratio = r->ToDoubleVector()[0];
      if (!(ratio >= 0.0 && ratio < 1.0)) return ctx.Error("ratio {} is outside [0, 1)", ratio);
    }
  }
  if (ctx.has_input(2)) {
    RETURN_IF_ERROR(ExpectDTypeIn(ctx, 2, kBoolOnly));
    RETURN_IF_ERROR(ExpectScalarInput(ctx, 2, "training_mode"));
    const Tensor* t = ctx.input_value(2);
    bool training = t != nullptr && t->numel() == 1 && t->data<bool>()[0];
    if (training && ratio_known && ratio > 0.0) {
      return ctx.Unsupported(
          "training-mode Dropout with ratio {} drops random elements; edgec runs inference only",
          ratio);
    }
  }
  ShapeOfInput0(ctx, ctx.input_type(0).dtype);
  if (ctx.num_outputs() == 2) {
    TensorType mask = ctx.input_type(0);
    mask.dtype = DType::kBool;
    ctx.output(1) = std::move(mask);
  }
  return Status::Ok();
}

// Cast: attribute `to` is an edgec DType number.
Status Cast(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kNumericAndBool));
  if (!ctx.attrs().Has("to")) return ctx.Error("attribute 'to' is required");
  int64_t to = ctx.attrs().GetInt("to", 0);
  if (to <= static_cast<int64_t>(DType::kUndefined) || to > static_cast<int64_t>(DType::kBool)) {
    return ctx.Error("attribute 'to' = {} is not a dtype", to);
  }
  ShapeOfInput0(ctx, static_cast<DType>(to));
  return Status::Ok();
}

// CastLike(input, target_type): Cast to the dtype of input 1 (only its dtype is read).
Status CastLike(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kNumericAndBool));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 1, kNumericAndBool));
  ShapeOfInput0(ctx, ctx.input_type(1).dtype);
  return Status::Ok();
}

// broadcasting binary arithmetic
Status Add(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric); }
Status Sub(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric); }
Status Mul(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric); }
Status Div(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric); }

// Mod: fmod=0 is the integer remainder with the divisor's sign (Python's %); fmod=1 is C's
// fmod (the dividend's sign). ONNX requires fmod=1 for floating-point inputs.
Status Mod(InferContext& ctx) {
  RETURN_IF_ERROR(Broadcasting(ctx, 2, 2, kNumeric));
  const int64_t fmod = ctx.attrs().GetInt("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.Error("attribute fmod = {}, expected 0 or 1", fmod);
  if (fmod == 0 && IsFloat(ctx.input_type(0).dtype)) {
    return ctx.Error("fmod must be 1 for floating-point inputs ({})",
                     DTypeName(ctx.input_type(0).dtype));
  }
  return Status::Ok();
}

// Pow: the exponent may have another numeric dtype; the result has the base's.
Status Pow(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kNumeric));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 1, kNumeric));
  return BroadcastOutput(ctx, 0, 2, ctx.input_type(0).dtype);
}

// variadic
Status Max(InferContext& ctx) { return Broadcasting(ctx, 1, INT_MAX, kNumeric); }
Status Min(InferContext& ctx) { return Broadcasting(ctx, 1, INT_MAX, kNumeric); }
Status Sum(InferContext& ctx) { return Broadcasting(ctx, 1, INT_MAX, kNumeric); }
Status Mean(InferContext& ctx) { return Broadcasting(ctx, 1, INT_MAX, kFloats); }

// comparison and logic: bool outputs
Status Equal(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumericAndBool, DType::kBool); }
Status Less(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric, DType::kBool); }
Status Greater(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric, DType::kBool); }
Status LessOrEqual(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kNumeric, DType::kBool); }
Status GreaterOrEqual(InferContext& ctx) {
  return Broadcasting(ctx, 2, 2, kNumeric, DType::kBool);
}
Status And(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kBoolOnly); }
Status Or(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kBoolOnly); }
Status Xor(InferContext& ctx) { return Broadcasting(ctx, 2, 2, kBoolOnly); }

// BitShift(X, Y): X shifted by Y bits (numpy broadcasting), unsigned integers of one dtype;
// attribute direction "LEFT" | "RIGHT". A shift by at least the width gives 0.
Status BitShift(InferContext& ctx) {
  RETURN_IF_ERROR(Broadcasting(ctx, 2, 2, kUnsigned));
  const std::string d = ctx.attrs().GetString("direction", "");
  if (d != "LEFT" && d != "RIGHT") return ctx.Error("attribute direction is '{}', expected LEFT or RIGHT", d);
  return Status::Ok();
}

// Where(condition, x, y): three-way broadcast; the output has x's dtype.
Status Where(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(ExpectOutputs(ctx, 1, 1));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 0, kBoolOnly));
  RETURN_IF_ERROR(ExpectDTypeIn(ctx, 1, kNumericAndBool));
  RETURN_IF_ERROR(ExpectSameDType(ctx, 2, 1));
  return BroadcastOutput(ctx, 0, 3, ctx.input_type(1).dtype);
}

}  // namespace edgec::infer
