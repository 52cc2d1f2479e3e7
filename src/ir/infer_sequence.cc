// Shape inference for the sequence family (see ops.def): sequences of tensors and optionals.
// A sequence's type is its elements' (ir/types.h): the dims they share, unknown where they
// differ. With the values known (at run time) the element types are exact.
//   SequenceConstruct(x...)            -> seq(merge of x's types)
//   SequenceEmpty()                    -> seq(dtype[*]), attribute dtype (edgec DType, default f32)
//   SequenceInsert(s, x, position?)    -> seq(merge(s, x))
//   SequenceErase(s, position?)        -> s's type
//   SequenceAt(s, position)            -> the element (exact when s is known)
//   SequenceLength(s)                  -> i64[]
//   SplitToSequence(x, split?)         -> seq(x's type with the axis dim unknown, or dropped
//                                         when keepdims=0 and split is absent)
//   ConcatFromSequence(s)              -> a tensor: axis (and new_axis) as Concat/Stack
//   Optional(x?)                       -> opt(x's type), or opt(edgec_dtype, edgec_sequence)
//   OptionalHasElement(o?)             -> bool[]
//   OptionalGetElement(o)              -> the element's type
#include "ir/infer.h"

namespace edgec::infer {

namespace {

// The type both `a` and `b` satisfy (element types of a sequence).
TensorType MergeElement(const TensorType& a, const TensorType& b) {
  TensorType t = a;
  if (!a.rank_known || !b.rank_known || a.rank() != b.rank()) {
    t.dims.clear();
    t.dim_names.clear();
    t.rank_known = false;
    return t;
  }
  for (int i = 0; i < t.rank(); ++i) {
    if (a.dims[i] != b.dims[i]) t.dims[i] = kUnknownDim;
  }
  t.dim_names.clear();
  return t;
}

TensorType SequenceOf(TensorType element) {
  element.kind = ValueKind::kSequence;
  element.optional = false;
  return element;
}

TensorType ElementOf(TensorType seq) {
  seq.kind = ValueKind::kTensor;
  seq.optional = false;
  return seq;
}

// The element type of a known sequence value: exact dims when all items agree.
TensorType KnownElement(const Tensor& s, const TensorType& declared) {
  if (s.items().empty()) return ElementOf(declared);
  TensorType t = MakeType(s.items()[0].dtype(), s.items()[0].dims());
  for (const Tensor& x : s.items()) t = MergeElement(t, MakeType(x.dtype(), x.dims()));
  return t;
}

Status ExpectSequence(const InferContext& ctx, int i) {
  RETURN_IF_ERROR(ctx.ExpectRequired(i));
  const TensorType& t = ctx.input_type(i);
  if (t.kind != ValueKind::kSequence || t.optional) {
    return ctx.Error("input {} is {}, expected a sequence", i, t.ToString());
  }
  return Status::Ok();
}

Status ExpectTensor(const InferContext& ctx, int i) {
  RETURN_IF_ERROR(ctx.ExpectRequired(i));
  const TensorType& t = ctx.input_type(i);
  if (!t.IsDenseTensor()) return ctx.Error("input {} is {}, expected a tensor", i, t.ToString());
  return Status::Ok();
}

// Input i, when given, must be an integer scalar (a position).
Status ExpectPosition(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return Status::Ok();
  RETURN_IF_ERROR(ExpectTensor(ctx, i));
  RETURN_IF_ERROR(ctx.ExpectDType(i, {DType::kI32, DType::kI64}));
  const TensorType& t = ctx.input_type(i);
  if (t.rank_known && t.rank() != 0 && !(t.rank() == 1 && t.dims[0] == 1)) {
    return ctx.Error("input {} (position) is {}, expected a scalar", i, t.ToString());
  }
  return Status::Ok();
}

}  // namespace

Status SequenceConstruct(InferContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.Error("expected at least 1 input, got 0");
  for (int i = 0; i < ctx.num_inputs(); ++i) RETURN_IF_ERROR(ExpectTensor(ctx, i));
  TensorType element = ctx.input_type(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.dtype != element.dtype) {
      return ctx.Error("input {} has dtype {}, input 0 has {}", i, DTypeName(t.dtype), DTypeName(element.dtype));
    }
    element = MergeElement(element, t);
  }
  ctx.output(0) = SequenceOf(element);
  return Status::Ok();
}

Status SequenceEmpty(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(0, 0));
  const auto dtype = static_cast<DType>(ctx.attrs().GetInt("dtype", static_cast<int64_t>(DType::kF32)));
  ctx.output(0) = SequenceOf(UnknownRank(dtype));
  return Status::Ok();
}

Status SequenceInsert(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ExpectSequence(ctx, 0));
  RETURN_IF_ERROR(ExpectTensor(ctx, 1));
  RETURN_IF_ERROR(ExpectPosition(ctx, 2));
  const TensorType& s = ctx.input_type(0);
  const TensorType& x = ctx.input_type(1);
  if (s.dtype != x.dtype) {
    return ctx.Error("the sequence holds {} but input 1 is {}", DTypeName(s.dtype), DTypeName(x.dtype));
  }
  const Tensor* known = ctx.input_value(0);
  // An empty sequence says nothing about its elements' shapes: the inserted tensor's type.
  ctx.output(0) = SequenceOf(known && known->items().empty() ? x : MergeElement(ElementOf(s), x));
  return Status::Ok();
}

Status SequenceErase(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  RETURN_IF_ERROR(ExpectSequence(ctx, 0));
  RETURN_IF_ERROR(ExpectPosition(ctx, 1));
  ctx.output(0) = ctx.input_type(0);
  return Status::Ok();
}

Status SequenceAt(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectSequence(ctx, 0));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ExpectPosition(ctx, 1));
  const Tensor* s = ctx.input_value(0);
  const Tensor* pos = ctx.input_value(1);
  if (s && pos && s->is_sequence()) {
    const int64_t n = static_cast<int64_t>(s->items().size());
    int64_t p = LoadAsInt64(pos->dtype(), pos->raw(), 0);
    if (p < -n || p >= n) return ctx.Error("position {} is out of range for a sequence of {}", p, n);
    const Tensor& x = s->items()[p < 0 ? p + n : p];
    ctx.output(0) = MakeType(x.dtype(), x.dims());
    return Status::Ok();
  }
  ctx.output(0) = ElementOf(ctx.input_type(0));
  return Status::Ok();
}

Status SequenceLength(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectSequence(ctx, 0));
  ctx.output(0) = MakeType(DType::kI64, {});
  return Status::Ok();
}

Status SplitToSequence(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  RETURN_IF_ERROR(ExpectTensor(ctx, 0));
  if (ctx.has_input(1)) {
    RETURN_IF_ERROR(ExpectTensor(ctx, 1));
    RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI32, DType::kI64}));
    if (ctx.input_type(1).rank_known && ctx.input_type(1).rank() > 1) {
      return ctx.Error("input 1 (split) is {}, expected a scalar or 1-d", ctx.input_type(1).ToString());
    }
  }
  TensorType element = ctx.input_type(0);
  if (element.rank_known) {
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx.attrs().GetInt("axis", 0), element.rank()));
    if (!ctx.has_input(1) && ctx.attrs().GetInt("keepdims", 1) == 0) {
      element.dims.erase(element.dims.begin() + axis);
    } else {
      element.dims[axis] = ctx.has_input(1) || element.dims[axis] < 0 ? kUnknownDim : 1;
    }
    element.dim_names.clear();
  }
  ctx.output(0) = SequenceOf(element);
  return Status::Ok();
}

Status ConcatFromSequence(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectSequence(ctx, 0));
  if (!ctx.attrs().Has("axis")) return ctx.Error("attribute axis is required");
  const bool new_axis = ctx.attrs().GetInt("new_axis", 0) != 0;
  const Tensor* s = ctx.input_value(0);
  TensorType element = s ? KnownElement(*s, ctx.input_type(0)) : ElementOf(ctx.input_type(0));
  if (!element.rank_known) {
    ctx.output(0) = UnknownRank(element.dtype);
    return Status::Ok();
  }
  const int rank = element.rank() + (new_axis ? 1 : 0);
  ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx.attrs().GetInt("axis"), rank));
  Dims out = element.dims;
  if (new_axis) out.insert(out.begin() + axis, kUnknownDim);
  out[axis] = kUnknownDim;
  if (s) {
    if (s->items().empty()) return ctx.Error("cannot concatenate an empty sequence");
    int64_t total = 0;
    for (const Tensor& x : s->items()) {
      if (x.rank() != element.rank()) return ctx.Error("sequence items have ranks {} and {}", x.rank(), element.rank());
      for (int d = 0; d < x.rank(); ++d) {
        if (!new_axis && d == axis) continue;
        if (element.dims[d] < 0) {
          return ctx.Error("sequence items differ in dim {} ({} and {})", d, x.TypeString(), s->items()[0].TypeString());
        }
      }
      total += new_axis ? 1 : x.dim(axis);
    }
    out[axis] = total;
  }
  ctx.output(0) = MakeType(element.dtype, out);
  return Status::Ok();
}

Status Optional(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(0, 1));
  TensorType t;
  if (ctx.has_input(0)) {
    t = ctx.input_type(0);
    if (t.optional) return ctx.Error("input 0 is {}, already an optional", t.ToString());
  } else {
    if (!ctx.attrs().Has("edgec_dtype")) return ctx.Error("attribute 'type' is required without an input");
    t = UnknownRank(static_cast<DType>(ctx.attrs().GetInt("edgec_dtype")));
    if (ctx.attrs().GetInt("edgec_sequence", 0) != 0) t.kind = ValueKind::kSequence;
  }
  t.optional = true;
  ctx.output(0) = t;
  return Status::Ok();
}

Status OptionalHasElement(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(0, 1));
  ctx.output(0) = MakeType(DType::kBool, {});
  return Status::Ok();
}

Status OptionalGetElement(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  const Tensor* o = ctx.input_value(0);
  if (o && o->is_none()) return ctx.Error("input 0 is an optional that holds nothing");
  TensorType t = ctx.input_type(0);
  t.optional = false;
  ctx.output(0) = t;
  return Status::Ok();
}

}  // namespace edgec::infer
