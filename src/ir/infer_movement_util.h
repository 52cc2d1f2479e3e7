// Helpers shared by the shape inference of the reduce, movement and resize families, and
// the index arithmetic their reference kernels must agree on (Slice bounds, Shape bounds).
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/infer.h"

namespace edgec::infer {

// Elements of input i as integers when its value is known now, nullopt otherwise (also
// when the input is absent: check has_input first where absence means something).
inline std::optional<std::vector<int64_t>> KnownInts(const InferContext& ctx, int i) {
  const Tensor* v = ctx.input_value(i);
  if (!v) return std::nullopt;
  return v->ToInt64Vector();
}

// Element count of a 1-D input according to its type; -1 when the type does not say.
inline int64_t KnownLength(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return -1;
  if (const Tensor* v = ctx.input_value(i)) return v->numel();
  const TensorType& t = ctx.input_type(i);
  if (!t.rank_known) return -1;
  if (t.rank() == 0) return 1;
  if (t.rank() == 1) return t.dims[0];
  return -1;
}

inline Dims UnknownDims(int64_t rank) { return Dims(static_cast<size_t>(rank), kUnknownDim); }

// Inputs that carry shapes, axes or indices: int32 or int64.
inline Status ExpectIndexDType(const InferContext& ctx, int i) {
  return ctx.ExpectDType(i, {DType::kI32, DType::kI64});
}

// Rejects repeated axes (already normalized to [0, rank)).
inline Status ExpectUniqueAxes(const InferContext& ctx, const std::vector<int>& axes,
                               std::string_view what = "axes") {
  for (size_t i = 0; i < axes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (axes[i] == axes[j]) return ctx.Error("{} names axis {} twice", what, axes[i]);
    }
  }
  return Status::Ok();
}

// Normalizes every axis against `rank`, with the node label in the error.
inline StatusOr<std::vector<int>> NormalizeAxes(const InferContext& ctx,
                                                const std::vector<int64_t>& axes, int rank,
                                                std::string_view what = "axes") {
  std::vector<int> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = NormalizeAxis(axes[i], rank, fmt::format("{}[{}]", what, i));
    if (!a.ok()) return ctx.Error("{}", a.status().message());
    out.push_back(*a);
  }
  RETURN_IF_ERROR(ExpectUniqueAxes(ctx, out, what));
  return out;
}

// One axis of a Slice after the ONNX clamping rules: read `length` elements starting at
// `start`, moving `step` each time.
struct SliceAxisRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t length = 0;
};

// `step` must not be 0. Starts/ends may be anything (INT64_MIN/MAX included). When at most
// one element is read the step is reported as 1, so that callers multiplying it by strides
// cannot overflow on a huge step.
inline SliceAxisRange ClampSliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceAxisRange r;
  if (dim <= 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) r.length = 1 + (end - start - 1) / step;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    uint64_t magnitude = static_cast<uint64_t>(-(step + 1)) + 1;  // |step| without overflow
    if (start > end) r.length = 1 + static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude);
  }
  r.start = start;
  r.step = r.length > 1 ? step : 1;
  return r;
}

// Shape (opset 15) start/end attributes, clamped to [0, rank].
struct ShapeBounds {
  int64_t start = 0;
  int64_t end = 0;
};
inline ShapeBounds ClampShapeBounds(const Attributes& attrs, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  ShapeBounds b;
  b.start = clamp(attrs.GetInt("start", 0));
  b.end = std::max(b.start, clamp(attrs.GetInt("end", rank)));
  return b;
}

// --- shared by the movement family's files (infer_movement.cc, infer_select.cc,
// infer_shape_ops.cc) ---

// a * b of two dims, 0 when either is 0, else kUnknownDim when either is unknown.
inline int64_t MulOrUnknown(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a < 0 || b < 0) return kUnknownDim;
  return a * b;
}

// A 1-D shape-like input (Reshape's shape, Expand's shape, Tile's repeats, ...).
inline Status ExpectShapeInput(const InferContext& ctx, int i) {
  RETURN_IF_ERROR(ExpectIndexDType(ctx, i));
  return ctx.ExpectRank(i, 1);
}

// Output of a value-dependent op whose value is not known: `rank` unknown dims, or an
// unknown rank when rank < 0.
inline TensorType UnknownShape(DType dtype, int64_t rank) {
  return rank >= 0 ? MakeType(dtype, UnknownDims(rank)) : UnknownRank(dtype);
}

// Rejects a negative entry of an input's value (sizes, repeats, counts).
inline Status CheckNonNegative(const InferContext& ctx, const std::vector<int64_t>& v, std::string_view what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0) return ctx.Error("{}[{}] = {} is negative", what, i, v[i]);
  }
  return Status::Ok();
}


}  // namespace edgec::infer
