// Shape inference for the reduce family (see ops.def).
#include "ir/infer.h"
#include "ir/infer_movement_util.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

Status ExpectNumeric(const InferContext& ctx, int i) {
  return ctx.ExpectDType(i, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                             DType::kI16, DType::kI32, DType::kI64, DType::kU8, DType::kU16,
                             DType::kU32, DType::kU64});
}

// Reduce*(data, axes?) with keepdims and noop_with_empty_axes. The axes come from the
// input (canonical form) or, for graphs built by hand, an `axes` attribute.
Status InferReduce(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  RETURN_IF_ERROR(ExpectNumeric(ctx, 0));
  const TensorType& in = ctx.input_type(0);
  bool keepdims = ctx.attrs().GetInt("keepdims", 1) != 0;
  bool noop_with_empty_axes = ctx.attrs().GetInt("noop_with_empty_axes", 0) != 0;

  std::optional<std::vector<int64_t>> axes;  // nullopt: not known yet
  if (ctx.has_input(1)) {
    RETURN_IF_ERROR(ExpectIndexDType(ctx, 1));
    RETURN_IF_ERROR(ctx.ExpectRank(1, 1));
    axes = KnownInts(ctx, 1);
    if (!axes && KnownLength(ctx, 1) == 0) axes.emplace();
  } else {
    axes = ctx.attrs().GetInts("axes");
  }

  if (axes && axes->empty()) {
    if (noop_with_empty_axes) {
      ctx.output(0) = in;
    } else if (!keepdims) {
      ctx.output(0) = MakeType(in.dtype, {});
    } else {
      ctx.output(0) = in.rank_known ? MakeType(in.dtype, Dims(in.rank(), 1)) : UnknownRank(in.dtype);
    }
    return Status::Ok();
  }
  if (!axes || !in.rank_known) {
    int64_t n = axes ? static_cast<int64_t>(axes->size()) : KnownLength(ctx, 1);
    int64_t rank = !in.rank_known ? -1 : keepdims ? in.rank() : n >= 0 ? in.rank() - n : -1;
    ctx.output(0) = rank >= 0 ? MakeType(in.dtype, UnknownDims(rank)) : UnknownRank(in.dtype);
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(ctx, *axes, in.rank()));
  std::vector<bool> reduced(in.rank(), false);
  for (int a : norm) reduced[a] = true;
  Dims out;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[i]) out.push_back(in.dims[i]);
    else if (keepdims) out.push_back(1);
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

// ArgMax / ArgMin: one axis, int64 indices.
Status InferArgReduce(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectNumeric(ctx, 0));
  const TensorType& in = ctx.input_type(0);
  bool keepdims = ctx.attrs().GetInt("keepdims", 1) != 0;
  if (!in.rank_known) {
    ctx.output(0) = UnknownRank(DType::kI64);
    return Status::Ok();
  }
  if (in.rank() == 0) return ctx.Error("input 0 is a scalar; {} needs rank >= 1", OpName(ctx.op()));
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), in.rank());
  if (!axis.ok()) return ctx.Error("{}", axis.status().message());
  if (in.dims[*axis] == 0) {
    return ctx.Error("axis {} of {} is empty: there is no index to return", *axis, in.ToString());
  }
  Dims out = in.dims;
  if (keepdims) out[*axis] = 1;
  else out.erase(out.begin() + *axis);
  ctx.output(0) = MakeType(DType::kI64, std::move(out));
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(InferContext, InferReduce, ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL2,
                  ReduceL1, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp)
EDGEC_SHARED_RULE(InferContext, InferArgReduce, ArgMax, ArgMin)

// CumSum(x, axis): running sums along one axis (attributes exclusive, reverse); the output
// has x's type. The axis is a one-element int32/int64 tensor.
Status CumSum(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectNumeric(ctx, 0));
  RETURN_IF_ERROR(ExpectIndexDType(ctx, 1));
  const TensorType& x = ctx.input_type(0);
  const TensorType& axis_type = ctx.input_type(1);
  if (axis_type.rank_known && axis_type.rank() > 1) {
    return ctx.Error("input 1 (axis) is {}, expected a scalar", axis_type.ToString());
  }
  const int64_t axis_len = KnownLength(ctx, 1);
  if (axis_len >= 0 && axis_len != 1) {
    return ctx.Error("input 1 (axis) holds {} values, expected 1", axis_len);
  }
  if (x.rank_known && x.rank() == 0) return ctx.Error("input 0 is a scalar; CumSum needs rank >= 1");
  if (auto axis = KnownInts(ctx, 1); axis && x.rank_known) {
    auto a = NormalizeAxis((*axis)[0], x.rank());
    if (!a.ok()) return ctx.Error("{}", a.status().message());
  }
  ctx.output(0) = x;
  return Status::Ok();
}

Status TopK(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectNumeric(ctx, 0));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI64, DType::kI32}));
  if (ctx.num_outputs() != 2) return ctx.Error("expected 2 outputs, got {}", ctx.num_outputs());
  const TensorType& in = ctx.input_type(0);
  int64_t k_len = KnownLength(ctx, 1);
  if (k_len >= 0 && k_len != 1) return ctx.Error("k must hold one value, got {}", k_len);
  if (!in.rank_known) {
    ctx.output(0) = UnknownRank(in.dtype);
    ctx.output(1) = UnknownRank(DType::kI64);
    return Status::Ok();
  }
  if (in.rank() == 0) return ctx.Error("input 0 is a scalar; TopK needs rank >= 1");
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), in.rank());
  if (!axis.ok()) return ctx.Error("{}", axis.status().message());
  Dims out = in.dims;
  out[*axis] = kUnknownDim;
  if (auto k = KnownInts(ctx, 1)) {
    int64_t kv = (*k)[0];
    int64_t dim = in.dims[*axis];
    if (kv < 0) return ctx.Error("k = {} is negative", kv);
    if (dim >= 0 && kv > dim) {
      return ctx.Error("k = {} is larger than axis {} of {}", kv, *axis, in.ToString());
    }
    out[*axis] = kv;
  }
  ctx.output(0) = MakeType(in.dtype, out);
  ctx.output(1) = MakeType(DType::kI64, std::move(out));
  return Status::Ok();
}

}  // namespace edgec::infer
