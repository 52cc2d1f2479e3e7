// Shape inference for the movement family, shape queries and constants (see ops.def):
// Shape, Size, Constant, ConstantOfShape, Range.
#include <numeric>

#include "ir/infer.h"
#include "ir/infer_movement_util.h"

namespace edgec::infer {

// --- shape queries and constants: Shape, Size, Constant, ConstantOfShape, Range ---

Status Shape(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const TensorType& in = ctx.input_type(0);
  if (!in.rank_known) {
    ctx.output(0) = MakeType(DType::kI64, {kUnknownDim});
    return Status::Ok();
  }
  ShapeBounds b = ClampShapeBounds(ctx.attrs(), in.rank());
  ctx.output(0) = MakeType(DType::kI64, {b.end - b.start});
  return Status::Ok();
}

Status Size(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  ctx.output(0) = MakeType(DType::kI64, {});
  return Status::Ok();
}

Status Constant(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(0, 0));
  const Attributes& a = ctx.attrs();
  if (a.Has("value")) {
    Tensor t = a.GetTensor("value");
    if (!t.defined()) return ctx.Error("attribute value is not a tensor");
    ctx.output(0) = MakeType(t.dtype(), t.dims());
  } else if (a.Has("value_float")) {
    ctx.output(0) = MakeType(DType::kF32, {});
  } else if (a.Has("value_floats")) {
    ctx.output(0) = MakeType(DType::kF32, {static_cast<int64_t>(a.GetFloats("value_floats").size())});
  } else if (a.Has("value_int")) {
    ctx.output(0) = MakeType(DType::kI64, {});
  } else if (a.Has("value_ints")) {
    ctx.output(0) = MakeType(DType::kI64, {static_cast<int64_t>(a.GetInts("value_ints").size())});
  } else {
    for (const char* name : {"sparse_value", "value_string", "value_strings"}) {
      if (a.Has(name)) return ctx.Unsupported("attribute {} is not supported", name);
    }
    return ctx.Error("has no value attribute");
  }
  return Status::Ok();
}

Status ConstantOfShape(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 0));
  DType dtype = DType::kF32;
  if (ctx.attrs().Has("value")) {
    Tensor v = ctx.attrs().GetTensor("value");
    if (!v.defined() || v.numel() != 1) {
      return ctx.Error("attribute value must be a tensor of one element, got {}",
                       v.defined() ? v.TypeString() : "no tensor");
    }
    dtype = v.dtype();
  }
  auto shape = KnownInts(ctx, 0);
  if (!shape) {
    ctx.output(0) = UnknownShape(dtype, KnownLength(ctx, 0));
    return Status::Ok();
  }
  RETURN_IF_ERROR(CheckNonNegative(ctx, *shape, "shape"));
  if (auto n = CheckedNumElements(*shape, DTypeSize(dtype)); !n.ok()) {
    return ctx.Error("{}", n.status().message());
  }
  ctx.output(0) = MakeType(dtype, *shape);
  return Status::Ok();
}

Status Range(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  DType dtype = ctx.input_type(0).dtype;
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kI16, DType::kI32,
                                      DType::kI64}));
  for (int i = 0; i < 3; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.dtype != dtype) {
      return ctx.Error("input {} has dtype {}, input 0 has {}", i, DTypeName(t.dtype),
                       DTypeName(dtype));
    }
    if (t.rank_known && NumElements(t.dims) != 1 && t.IsStatic()) {
      return ctx.Error("input {} {} is not a scalar", i, t.ToString());
    }
  }
  const Tensor* start = ctx.input_value(0);
  const Tensor* limit = ctx.input_value(1);
  const Tensor* delta = ctx.input_value(2);
  if (!start || !limit || !delta) {
    ctx.output(0) = MakeType(dtype, {kUnknownDim});
    return Status::Ok();
  }
  int64_t count = 0;
  if (IsFloat(dtype)) {
    double s = start->ToDoubleVector()[0], l = limit->ToDoubleVector()[0];
    double d = delta->ToDoubleVector()[0];
    if (d == 0) return ctx.Error("delta is 0");
    double steps = dtype == DType::kF32
                       ? std::ceil(static_cast<double>((static_cast<float>(l) - static_cast<float>(s)) /
                                                       static_cast<float>(d)))
                       : std::ceil((l - s) / d);
    if (!std::isfinite(steps)) return ctx.Error("the number of elements is not finite");
    if (steps > static_cast<double>(int64_t{1} << 40)) return ctx.Error("{} elements is too many", steps);
    count = std::max<int64_t>(static_cast<int64_t>(steps), 0);
  } else {
    int64_t s = start->ToInt64Vector()[0], l = limit->ToInt64Vector()[0];
    int64_t d = delta->ToInt64Vector()[0];
    if (d == 0) return ctx.Error("delta is 0");
    // ceil((l - s) / d) with integers; l - s fits since the inputs are at most int64.
    __int128 span = static_cast<__int128>(l) - s;
    __int128 q = span / d;
    if (q * d != span && ((span > 0) == (d > 0))) ++q;
    count = q > 0 ? static_cast<int64_t>(q) : 0;
  }
  ctx.output(0) = MakeType(dtype, {count});
  return Status::Ok();
}

}  // namespace edgec::infer
