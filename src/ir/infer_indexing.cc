// Shape inference for the indexing family (see ops.def): gathering and scattering by index
// tuples or elements, one-hot encoding, triangular masks, and the ops whose output size is
// the number of selected elements (NonZero, Compress). The latter give exact dims when the
// deciding value is known and an unknown dim otherwise.
#include <tuple>

#include "ir/infer.h"
#include "ir/infer_movement_util.h"
#include "ir/unique_slices.h"

namespace edgec::infer {

namespace {

Status ExpectOneOutput(const InferContext& ctx) {
  if (ctx.num_outputs() != 1) return ctx.Error("has {} outputs, expected 1", ctx.num_outputs());
  return Status::Ok();
}

// A scalar-like input: rank 0, or rank 1 with one element.
Status ExpectOneValue(const InferContext& ctx, int i, std::string_view what) {
  const TensorType& t = ctx.input_type(i);
  if (t.rank_known && t.rank() > 1) {
    return ctx.Error("input {} ({}) is {}, expected a scalar", i, what, t.ToString());
  }
  const int64_t n = KnownLength(ctx, i);
  if (n >= 0 && n != 1) return ctx.Error("input {} ({}) holds {} values, expected 1", i, what, n);
  return Status::Ok();
}

// Scatter* reduction attribute: "none" (replace), "add", "mul", "max", "min".
Status ExpectReduction(const InferContext& ctx, DType data) {
  const std::string r = ctx.attrs().GetString("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") {
    return ctx.Error("attribute reduction is '{}', expected none, add, mul, max or min", r);
  }
  if (r != "none" && data == DType::kBool) {
    return ctx.Unsupported("reduction '{}' on bool data", r);
  }
  return Status::Ok();
}

Status ExpectUpdatesDType(const InferContext& ctx) {
  if (ctx.input_type(2).dtype != ctx.input_type(0).dtype) {
    return ctx.Error("input 2 (updates) has dtype {}, expected data's dtype {}",
                     DTypeName(ctx.input_type(2).dtype), DTypeName(ctx.input_type(0).dtype));
  }
  return Status::Ok();
}

bool DimsDiffer(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

// Number of non-zero elements of a tensor (NaN counts as non-zero).
int64_t CountNonZero(const Tensor& t) {
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (LoadAsDouble(t.dtype(), t.raw(), i) != 0.0) ++n;
  }
  return n;
}

}  // namespace

// --- gather and scatter by index tuples or elements ---

// GatherND(data, indices), attribute batch_dims b: the last dim k of indices holds tuples
// indexing data's dims [b, b + k); output indices.shape[:-1] + data.shape[b + k:].
Status GatherND(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  RETURN_IF_ERROR(ExpectIndexDType(ctx, 1));
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  const int64_t b = ctx.attrs().GetInt("batch_dims", 0);
  if (b < 0) return ctx.Error("attribute batch_dims is {}, expected >= 0", b);
  if (!data.rank_known || !indices.rank_known) {
    ctx.output(0) = UnknownRank(data.dtype);
    return Status::Ok();
  }
  const int64_t r = data.rank(), q = indices.rank();
  if (r < 1 || q < 1) return ctx.Error("data {} and indices {} need rank >= 1", data.ToString(), indices.ToString());
  if (b >= std::min(r, q)) {
    return ctx.Error("batch_dims {} must be less than the ranks of data {} and indices {}", b,
                     data.ToString(), indices.ToString());
  }
  for (int64_t d = 0; d < b; ++d) {
    if (DimsDiffer(data.dims[d], indices.dims[d])) {
      return ctx.Error("batch dim {} differs: data {} vs indices {}", d, data.ToString(),
                       indices.ToString());
    }
  }
  const int64_t k = indices.dims[q - 1];
  if (k < 0) {
    ctx.output(0) = UnknownRank(data.dtype);
    return Status::Ok();
  }
  if (k > r - b) {
    return ctx.Error("indices {} index {} dims, but data {} has only {} after batch_dims {}",
                     indices.ToString(), k, data.ToString(), r - b, b);
  }
  Dims out(indices.dims.begin(), indices.dims.end() - 1);
  out.insert(out.end(), data.dims.begin() + b + k, data.dims.end());
  ctx.output(0) = MakeType(data.dtype, std::move(out));
  return Status::Ok();
}

namespace {

// What ScatterElements and ScatterND check first: three inputs (data, indices, updates),
// one output, integer indices, updates of data's dtype and a reduction that dtype allows.
Status ExpectScatterInputs(const InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  RETURN_IF_ERROR(ExpectIndexDType(ctx, 1));
  RETURN_IF_ERROR(ExpectUpdatesDType(ctx));
  return ExpectReduction(ctx, ctx.input_type(0).dtype);
}

}  // namespace

// ScatterElements(data, indices, updates), attributes axis and reduction: indices and
// updates have one shape, of data's rank; the output has data's type.
Status ScatterElements(InferContext& ctx) {
  RETURN_IF_ERROR(ExpectScatterInputs(ctx));
  const auto [data, indices, updates] = std::tie(ctx.input_type(0), ctx.input_type(1), ctx.input_type(2));
  if (indices.rank_known && updates.rank_known) {
    bool same = indices.rank() == updates.rank();
    for (int d = 0; same && d < indices.rank(); ++d) same = !DimsDiffer(indices.dims[d], updates.dims[d]);
    if (!same) {
      return ctx.Error("indices {} and updates {} must have one shape", indices.ToString(),
                       updates.ToString());
    }
  }
  if (data.rank_known) {
    if (data.rank() == 0) return ctx.Error("input 0 is a scalar; ScatterElements needs rank >= 1");
    auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", 0), data.rank());
    if (!axis.ok()) return ctx.Error("{}", axis.status().message());
    if (indices.rank_known) {
      if (indices.rank() != data.rank()) {
        return ctx.Error("indices {} and data {} have different ranks", indices.ToString(),
                         data.ToString());
      }
      for (int d = 0; d < data.rank(); ++d) {
        if (d != *axis && data.dims[d] >= 0 && indices.dims[d] > data.dims[d]) {
          return ctx.Error("indices {} is larger than data {} in dim {}", indices.ToString(),
                           data.ToString(), d);
        }
      }
    }
  }
  ctx.output(0) = data;
  return Status::Ok();
}

// ScatterND(data, indices, updates), attribute reduction: the last dim k of indices holds
// tuples indexing data's first k dims; updates is indices.shape[:-1] + data.shape[k:].
Status ScatterND(InferContext& ctx) {
  RETURN_IF_ERROR(ExpectScatterInputs(ctx));
  const auto [data, indices, updates] = std::tie(ctx.input_type(0), ctx.input_type(1), ctx.input_type(2));
  if (data.rank_known && indices.rank_known) {
    if (data.rank() < 1 || indices.rank() < 1) {
      return ctx.Error("data {} and indices {} need rank >= 1", data.ToString(), indices.ToString());
    }
    const int64_t k = indices.dims.back();
    if (k > data.rank()) {
      return ctx.Error("indices {} index {} dims, but data {} has only {}", indices.ToString(), k,
                       data.ToString(), data.rank());
    }
    if (k >= 0 && updates.rank_known) {
      Dims want(indices.dims.begin(), indices.dims.end() - 1);
      want.insert(want.end(), data.dims.begin() + k, data.dims.end());
      bool fits = updates.rank() == static_cast<int>(want.size());
      for (int d = 0; fits && d < updates.rank(); ++d) fits = !DimsDiffer(updates.dims[d], want[d]);
      if (!fits) {
        return ctx.Error("updates {} must have shape {} (indices.shape[:-1] + data.shape[{}:])",
                         updates.ToString(), DimsToString(want), k);
      }
    }
  }
  ctx.output(0) = data;
  return Status::Ok();
}

// --- encodings and masks ---

// OneHot(indices, depth, values), attribute axis: a new dim of size depth at `axis`; the
// output has values' dtype. A non-integer depth is truncated, as ONNX casts it to int64.
Status OneHot(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  for (int i = 0; i < 2; ++i) {
    if (ctx.input_type(i).dtype == DType::kBool) {
      return ctx.Error("input {} is bool, expected a numeric dtype", i);
    }
  }
  RETURN_IF_ERROR(ExpectOneValue(ctx, 1, "depth"));
  const TensorType& values = ctx.input_type(2);
  if (values.rank_known && values.rank() != 1) {
    return ctx.Error("input 2 (values) is {}, expected [off_value, on_value]", values.ToString());
  }
  if (const int64_t n = KnownLength(ctx, 2); n >= 0 && n != 2) {
    return ctx.Error("input 2 (values) holds {} values, expected 2 (off_value, on_value)", n);
  }
  int64_t depth = kUnknownDim;
  if (const Tensor* d = ctx.input_value(1)) {
    const double v = d->ToDoubleVector()[0];
    if (!(v >= 0) || v >= 9.2e18) return ctx.Error("depth {} is not a valid dim", v);
    depth = static_cast<int64_t>(v);
  }
  const TensorType& indices = ctx.input_type(0);
  if (!indices.rank_known) {
    ctx.output(0) = UnknownRank(values.dtype);
    return Status::Ok();
  }
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), indices.rank() + 1);
  if (!axis.ok()) return ctx.Error("{}", axis.status().message());
  Dims out = indices.dims;
  out.insert(out.begin() + *axis, depth);
  ctx.output(0) = MakeType(values.dtype, std::move(out));
  return Status::Ok();
}

// Trilu(input, k?), attribute upper: keeps the upper (j - i >= k) or lower (j - i <= k)
// triangle of the last two dims; the output has input's type.
Status Trilu(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  const TensorType& x = ctx.input_type(0);
  if (x.rank_known && x.rank() < 2) {
    return ctx.Error("input 0 is {}, expected at least 2 dims", x.ToString());
  }
  if (ctx.has_input(1)) {
    RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI64}));
    RETURN_IF_ERROR(ExpectOneValue(ctx, 1, "k"));
  }
  const int64_t upper = ctx.attrs().GetInt("upper", 1);
  if (upper != 0 && upper != 1) return ctx.Error("attribute upper is {}, expected 0 or 1", upper);
  ctx.output(0) = x;
  return Status::Ok();
}

// EyeLike(input), attributes dtype (an edgec DType number; default input's) and k: ones on
// the k-th diagonal of a 2-D tensor of input's shape.
Status EyeLike(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 2));
  const TensorType& x = ctx.input_type(0);
  DType dtype = x.dtype;
  if (ctx.attrs().Has("dtype")) {
    const int64_t d = ctx.attrs().GetInt("dtype", 0);
    if (d <= static_cast<int64_t>(DType::kUndefined) || d > static_cast<int64_t>(DType::kBool)) {
      return ctx.Error("attribute dtype = {} is not a dtype", d);
    }
    dtype = static_cast<DType>(d);
  }
  ctx.output(0) = x.rank_known ? MakeType(dtype, x.dims) : MakeType(dtype, UnknownDims(2));
  return Status::Ok();
}

// --- selections whose size depends on values ---

// NonZero(x): int64 [rank, count] of the indices of non-zero elements (a scalar counts as
// one element of a 1-D tensor, as numpy).
Status NonZero(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  const TensorType& x = ctx.input_type(0);
  const int64_t rows = x.rank_known ? std::max(x.rank(), 1) : kUnknownDim;
  const Tensor* v = ctx.input_value(0);
  ctx.output(0) = MakeType(DType::kI64, {rows, v ? CountNonZero(*v) : kUnknownDim});
  return Status::Ok();
}

// Compress(input, condition), attribute axis (absent: input flattened): keeps the slices
// (elements) whose condition is true. condition may be shorter than the axis (the rest is
// dropped); a true entry beyond the axis is an error.
Status Compress(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kBool}));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 1));
  const TensorType& x = ctx.input_type(0);
  const bool has_axis = ctx.attrs().Has("axis");
  if (!x.rank_known) {
    ctx.output(0) = has_axis ? UnknownRank(x.dtype) : MakeType(x.dtype, {kUnknownDim});
    return Status::Ok();
  }
  int axis = 0;
  int64_t extent = kUnknownDim;  // the length condition selects along
  if (has_axis) {
    auto a = NormalizeAxis(ctx.attrs().GetInt("axis", 0), x.rank(), "attribute axis");
    if (!a.ok()) return ctx.Error("{}", a.status().message());
    axis = *a;
    extent = x.dims[axis];
  } else if (x.IsStatic()) {
    extent = NumElements(x.dims);
  }
  int64_t selected = kUnknownDim;
  if (const Tensor* c = ctx.input_value(1)) {
    const bool* cond = c->data<bool>();
    selected = 0;
    for (int64_t i = 0; i < c->numel(); ++i) {
      if (!cond[i]) continue;
      if (extent >= 0 && i >= extent) {
        return ctx.Error("condition[{}] is true but the selected axis has only {} entries", i, extent);
      }
      ++selected;
    }
  }
  Dims out = has_axis ? x.dims : Dims{kUnknownDim};
  out[axis] = selected;
  ctx.output(0) = MakeType(x.dtype, std::move(out));
  return Status::Ok();
}

// Unique(X) -> Y, indices?, inverse_indices?, counts?; attributes axis (absent: X flattened)
// and sorted (default 1). Y has the unique slices along the axis (or the unique elements);
// the others are i64 vectors: per unique slice its first index and count, per slice of X its
// unique slice. The number of unique slices is known when X's value is.
Status Unique(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (ctx.num_outputs() < 1 || ctx.num_outputs() > 4) return ctx.Error("has {} outputs, expected 1 to 4", ctx.num_outputs());
  const TensorType& x = ctx.input_type(0);
  const bool has_axis = ctx.attrs().Has("axis");
  std::optional<int> axis;
  if (has_axis && x.rank_known) {
    auto a = NormalizeAxis(ctx.attrs().GetInt("axis", 0), x.rank(), "attribute axis");
    if (!a.ok()) return ctx.Error("{}", a.status().message());
    axis = *a;
  }
  int64_t unique = kUnknownDim, slices = kUnknownDim;
  if (const Tensor* v = ctx.input_value(0)) {
    const UniqueSlices u = FindUniqueSlices(*v, axis, ctx.attrs().GetInt("sorted", 1) != 0);
    unique = static_cast<int64_t>(u.first.size());
    slices = u.slice_count;
  } else if (x.rank_known) {
    slices = axis ? x.dims[*axis] : (x.IsStatic() ? NumElements(x.dims) : kUnknownDim);
  }
  if (!has_axis) {
    ctx.output(0) = MakeType(x.dtype, {unique});
  } else if (!x.rank_known) {
    ctx.output(0) = UnknownRank(x.dtype);
  } else {
    Dims out = x.dims;
    out[*axis] = unique;
    ctx.output(0) = MakeType(x.dtype, std::move(out));
  }
  if (ctx.num_outputs() > 1) ctx.output(1) = MakeType(DType::kI64, {unique});
  if (ctx.num_outputs() > 2) ctx.output(2) = MakeType(DType::kI64, {slices});
  if (ctx.num_outputs() > 3) ctx.output(3) = MakeType(DType::kI64, {unique});
  return Status::Ok();
}

}  // namespace edgec::infer
