// Shape inference for the movement family, selecting and padding (see ops.def): Slice,
// Gather, GatherElements, Expand, Tile, Pad, ReverseSequence. Value-dependent outputs as
// in infer_movement.cc: exact dims when the value is known, else the rank when it can be.
#include <numeric>

#include "ir/infer.h"
#include "ir/infer_movement_util.h"

namespace edgec::infer {

// --- selecting: Slice, Gather, GatherElements ---

Status Slice(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 5));
  for (int i = 1; i < 5; ++i) {
    if (ctx.has_input(i)) RETURN_IF_ERROR(ExpectShapeInput(ctx, i));
  }
  const TensorType& in = ctx.input_type(0);
  if (!in.rank_known) {
    ctx.output(0) = UnknownRank(in.dtype);
    return Status::Ok();
  }
  int r = in.rank();
  auto starts = KnownInts(ctx, 1);
  auto ends = KnownInts(ctx, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.has_input(3)) axes = KnownInts(ctx, 3);
  if (ctx.has_input(4)) steps = KnownInts(ctx, 4);
  int64_t count = starts ? static_cast<int64_t>(starts->size()) : KnownLength(ctx, 1);

  // Which axes are sliced, when known; the others keep their dims even if the bounds are
  // not known yet.
  std::optional<std::vector<int>> sliced;
  if (ctx.has_input(3)) {
    if (axes) {
      ASSIGN_OR_RETURN(sliced, NormalizeAxes(ctx, *axes, r));
    }
  } else if (count >= 0) {
    if (count > r) return ctx.Error("{} starts for an input of rank {}", count, r);
    sliced = std::vector<int>(count);
    std::iota(sliced->begin(), sliced->end(), 0);
  }
  if (!sliced) {
    ctx.output(0) = MakeType(in.dtype, UnknownDims(r));
    return Status::Ok();
  }
  Dims out = in.dims;
  bool bounds_known = starts && ends && (!ctx.has_input(4) || steps);
  if (!bounds_known) {
    for (int a : *sliced) out[a] = kUnknownDim;
    ctx.output(0) = MakeType(in.dtype, std::move(out));
    return Status::Ok();
  }
  size_t n = sliced->size();
  if (starts->size() != n || ends->size() != n || (steps && steps->size() != n)) {
    return ctx.Error("starts, ends, axes and steps have different lengths ({}, {}, {}, {})",
                     starts->size(), ends->size(), n, steps ? steps->size() : n);
  }
  for (size_t i = 0; i < n; ++i) {
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) return ctx.Error("steps[{}] is 0", i);
    int a = (*sliced)[i];
    if (in.dims[a] < 0) continue;
    out[a] = ClampSliceAxis(in.dims[a], (*starts)[i], (*ends)[i], step).length;
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

Status Gather(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectIndexDType(ctx, 1));
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (!data.rank_known || !indices.rank_known) {
    ctx.output(0) = UnknownRank(data.dtype);
    return Status::Ok();
  }
  if (data.rank() == 0) return ctx.Error("input 0 is a scalar; Gather needs rank >= 1");
  auto axis_or = NormalizeAxis(ctx.attrs().GetInt("axis", 0), data.rank());
  if (!axis_or.ok()) return ctx.Error("{}", axis_or.status().message());
  int axis = *axis_or;
  int64_t dim = data.dims[axis];
  if (auto values = KnownInts(ctx, 1); values && dim >= 0) {
    for (size_t i = 0; i < values->size(); ++i) {
      int64_t v = (*values)[i];
      if (v < -dim || v >= dim) {
        return ctx.Error("indices element {} = {} is out of range for axis {} of size {}", i, v,
                         axis, dim);
      }
    }
  }
  Dims out(data.dims.begin(), data.dims.begin() + axis);
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.dims.begin() + axis + 1, data.dims.end());
  ctx.output(0) = MakeType(data.dtype, std::move(out));
  return Status::Ok();
}

Status GatherElements(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectIndexDType(ctx, 1));
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  if (!indices.rank_known) {
    ctx.output(0) = UnknownRank(data.dtype);
    return Status::Ok();
  }
  if (data.rank_known) {
    if (data.rank() != indices.rank()) {
      return ctx.Error("indices {} and data {} have different ranks", indices.ToString(),
                       data.ToString());
    }
    if (data.rank() == 0) return ctx.Error("input 0 is a scalar; GatherElements needs rank >= 1");
    auto axis_or = NormalizeAxis(ctx.attrs().GetInt("axis", 0), data.rank());
    if (!axis_or.ok()) return ctx.Error("{}", axis_or.status().message());
    for (int d = 0; d < data.rank(); ++d) {
      if (d == *axis_or || data.dims[d] < 0 || indices.dims[d] < 0) continue;
      if (indices.dims[d] > data.dims[d]) {
        return ctx.Error("indices {} is larger than data {} in dim {}", indices.ToString(),
                         data.ToString(), d);
      }
    }
  }
  ctx.output(0) = MakeType(data.dtype, indices.dims);
  return Status::Ok();
}

// --- broadcasting and padding: Expand, Tile, Pad ---

Status Expand(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
  const TensorType& in = ctx.input_type(0);
  auto shape = KnownInts(ctx, 1);
  if (!shape || !in.rank_known) {
    int64_t n = shape ? static_cast<int64_t>(shape->size()) : KnownLength(ctx, 1);
    ctx.output(0) = UnknownShape(in.dtype, in.rank_known && n >= 0 ? std::max<int64_t>(n, in.rank()) : -1);
    return Status::Ok();
  }
  RETURN_IF_ERROR(CheckNonNegative(ctx, *shape, "shape"));
  auto out = BroadcastDims(in.dims, *shape);
  if (!out.ok()) return ctx.Error("{}", out.status().message());
  ctx.output(0) = MakeType(in.dtype, std::move(*out));
  return Status::Ok();
}

Status Tile(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
  const TensorType& in = ctx.input_type(0);
  if (!in.rank_known) {
    ctx.output(0) = UnknownRank(in.dtype);
    return Status::Ok();
  }
  auto repeats = KnownInts(ctx, 1);
  if (!repeats) {
    ctx.output(0) = MakeType(in.dtype, UnknownDims(in.rank()));
    return Status::Ok();
  }
  if (static_cast<int>(repeats->size()) != in.rank()) {
    return ctx.Error("repeats {} has {} entries for an input of rank {}", DimsToString(*repeats),
                     repeats->size(), in.rank());
  }
  RETURN_IF_ERROR(CheckNonNegative(ctx, *repeats, "repeats"));
  Dims out(in.rank());
  for (int i = 0; i < in.rank(); ++i) out[i] = MulOrUnknown(in.dims[i], (*repeats)[i]);
  if (auto n = CheckedNumElements(out, DTypeSize(in.dtype)); in.IsStatic() && !n.ok()) {
    return ctx.Error("{}", n.status().message());
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

Status Pad(InferContext& ctx) {
  if (ctx.has_input(3)) return ctx.Unsupported("the axes input (opset 18) is not supported");
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
  const TensorType& in = ctx.input_type(0);
  std::string mode = ctx.attrs().GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return ctx.Unsupported("mode '{}' is not supported (constant, reflect, edge)", mode);
  }
  if (ctx.has_input(2)) {
    const TensorType& cv = ctx.input_type(2);
    if (cv.dtype != in.dtype) {
      return ctx.Error("constant_value has dtype {}, data has {}", DTypeName(cv.dtype),
                       DTypeName(in.dtype));
    }
    if (cv.IsStatic() && NumElements(cv.dims) != 1) {
      return ctx.Error("constant_value {} is not a scalar", cv.ToString());
    }
  }
  if (!in.rank_known) {
    ctx.output(0) = UnknownRank(in.dtype);
    return Status::Ok();
  }
  int r = in.rank();
  auto pads = KnownInts(ctx, 1);
  if (!pads) {
    ctx.output(0) = MakeType(in.dtype, UnknownDims(r));
    return Status::Ok();
  }
  if (static_cast<int>(pads->size()) != 2 * r) {
    return ctx.Error("pads {} has {} entries, expected 2 * rank = {}", DimsToString(*pads),
                     pads->size(), 2 * r);
  }
  Dims out(r);
  for (int i = 0; i < r; ++i) {
    int64_t before = (*pads)[i], after = (*pads)[i + r];
    if (in.dims[i] < 0) {
      out[i] = kUnknownDim;
      continue;
    }
    out[i] = in.dims[i] + before + after;
    if (out[i] < 0) {
      return ctx.Error("pads {} crop axis {} of {} below zero", DimsToString(*pads), i,
                       in.ToString());
    }
    int64_t kept = in.dims[i] - std::max<int64_t>(0, -before) - std::max<int64_t>(0, -after);
    if (mode != "constant" && kept <= 0 && out[i] > 0) {
      return ctx.Error("{} padding needs at least one element on axis {} of {}", mode, i,
                       in.ToString());
    }
  }
  if (auto n = CheckedNumElements(out, DTypeSize(in.dtype)); in.IsStatic() && !n.ok()) {
    return ctx.Error("{}", n.status().message());
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

// ReverseSequence(input, sequence_lens): input of rank >= 2 with a time axis and a batch axis
// (attributes time_axis, default 0, and batch_axis, default 1: 0 and 1 in either order);
// sequence_lens i64 [batch]. Each batch entry's first sequence_lens[b] steps are reversed.
Status ReverseSequence(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI64}));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 1));
  const int64_t time = ctx.attrs().GetInt("time_axis", 0), batch = ctx.attrs().GetInt("batch_axis", 1);
  if (!((time == 0 && batch == 1) || (time == 1 && batch == 0))) {
    return ctx.Error("time_axis {} and batch_axis {}: expected 0 and 1 in either order", time, batch);
  }
  const TensorType& in = ctx.input_type(0);
  if (in.rank_known && in.rank() < 2) return ctx.Error("input is {}, expected rank >= 2", in.ToString());
  const TensorType& lens = ctx.input_type(1);
  if (in.rank_known && lens.rank_known && in.dims[batch] >= 0 && lens.dims[0] >= 0 && lens.dims[0] != in.dims[batch]) {
    return ctx.Error("sequence_lens has {} entries, the batch axis {}", lens.dims[0], in.dims[batch]);
  }
  if (const Tensor* v = ctx.input_value(1); v && in.rank_known && in.dims[time] >= 0) {
    for (int64_t b = 0; b < v->numel(); ++b) {
      const int64_t n = v->data<int64_t>()[b];
      if (n < 0 || n > in.dims[time]) {
        return ctx.Error("sequence_lens[{}] = {} is outside [0, {}] (the time axis)", b, n, in.dims[time]);
      }
    }
  }
  ctx.output(0) = in;
  return Status::Ok();
}

}  // namespace edgec::infer
