// Shape inference for the movement family (see ops.def).
//
// Many of these ops take their output shape from the VALUE of an input (Reshape's shape,
// Slice's starts, ...). When that value is known (always at runtime) the output dims are
// exact; when it is not (compile time), the rank is given when it can be known and the
// dims stay unknown.
#include <numeric>

#include "ir/infer.h"
#include "ir/infer_movement_util.h"

namespace edgec::infer {

namespace {

// Product of dims[begin, end), or kUnknownDim if one of them is unknown (0 wins).
int64_t ProductOrUnknown(const Dims& dims, size_t begin, size_t end) {
  int64_t p = 1;
  bool unknown = false;
  for (size_t i = begin; i < end; ++i) {
    if (dims[i] == 0) return 0;
    if (dims[i] < 0) unknown = true;
    else p *= dims[i];
  }
  return unknown ? kUnknownDim : p;
}

int64_t MulOrUnknown(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a < 0 || b < 0) return kUnknownDim;
  return a * b;
}

// A 1-D shape-like input (Reshape's shape, Expand's shape, Tile's repeats, ...).
Status ExpectShapeInput(const InferContext& ctx, int i) {
  RETURN_IF_ERROR(ExpectIndexDType(ctx, i));
  return ctx.ExpectRank(i, 1);
}

// Output of a value-dependent op whose value is not known: `rank` unknown dims, or an
// unknown rank when rank < 0.
TensorType UnknownShape(DType dtype, int64_t rank) {
  return rank >= 0 ? MakeType(dtype, UnknownDims(rank)) : UnknownRank(dtype);
}

Status CheckNonNegative(const InferContext& ctx, const std::vector<int64_t>& v,
                        std::string_view what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0) return ctx.Error("{}[{}] = {} is negative", what, i, v[i]);
  }
  return Status::Ok();
}

StatusOr<Dims> ResolveReshape(const InferContext& ctx, const TensorType& data,
                              const std::vector<int64_t>& shape, bool allow_zero) {
  Dims out(shape.size());
  int infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == -1) {
      if (infer_at >= 0) return ctx.Error("shape {} has more than one -1", DimsToString(shape));
      infer_at = static_cast<int>(i);
      out[i] = kUnknownDim;
    } else if (v < -1) {
      return ctx.Error("shape[{}] = {} is invalid", i, v);
    } else if (v == 0 && !allow_zero) {
      if (!data.rank_known) {
        out[i] = kUnknownDim;
      } else if (static_cast<int>(i) >= data.rank()) {
        return ctx.Error("shape[{}] is 0 (copy the input dim) but the input {} has only {} dims",
                         i, data.ToString(), data.rank());
      } else {
        out[i] = data.dims[i];
      }
    } else {
      has_zero |= v == 0;
      out[i] = v;
    }
  }
  if (allow_zero && has_zero && infer_at >= 0) {
    return ctx.Error("shape {} has both 0 and -1 with allowzero=1", DimsToString(shape));
  }
  if (!data.IsStatic()) return out;

  int64_t numel = NumElements(data.dims);
  Dims known = out;
  if (infer_at >= 0) known.erase(known.begin() + infer_at);
  auto product = CheckedNumElements(known);
  if (!product.ok()) return ctx.Error("shape {}: {}", DimsToString(shape), product.status().message());
  if (infer_at >= 0) {
    if (*product == 0 || numel % *product != 0) {
      return ctx.Error("cannot reshape {} ({} elements) to {}: -1 has no integer value",
                       data.ToString(), numel, DimsToString(shape));
    }
    out[infer_at] = numel / *product;
  } else if (*product != numel) {
    return ctx.Error("cannot reshape {} ({} elements) to {} ({} elements)", data.ToString(), numel,
                     DimsToString(out), *product);
  }
  return out;
}

// Common part of DepthToSpace and SpaceToDepth: a 4-D input and a positive blocksize.
StatusOr<int64_t> BlockSize(const InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 4));
  if (!ctx.attrs().Has("blocksize")) return ctx.Error("attribute blocksize is required");
  int64_t b = ctx.attrs().GetInt("blocksize");
  if (b <= 0) return ctx.Error("blocksize {} must be positive", b);
  return b;
}

}  // namespace

// --- reshaping views: Reshape, Flatten, Squeeze, Unsqueeze ---

Status Reshape(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
  const TensorType& data = ctx.input_type(0);
  auto shape = KnownInts(ctx, 1);
  if (!shape) {
    ctx.output(0) = UnknownShape(data.dtype, KnownLength(ctx, 1));
    return Status::Ok();
  }
  bool allow_zero = ctx.attrs().GetInt("allowzero", 0) != 0;
  ASSIGN_OR_RETURN(Dims dims, ResolveReshape(ctx, data, *shape, allow_zero));
  ctx.output(0) = MakeType(data.dtype, std::move(dims));
  return Status::Ok();
}

Status Flatten(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const TensorType& in = ctx.input_type(0);
  if (!in.rank_known) {
    ctx.output(0) = MakeType(in.dtype, {kUnknownDim, kUnknownDim});
    return Status::Ok();
  }
  int64_t r = in.rank();
  int64_t axis = ctx.attrs().GetInt("axis", 1);
  if (axis < -r || axis > r) return ctx.Error("axis {} out of range [{}, {}]", axis, -r, r);
  if (axis < 0) axis += r;
  ctx.output(0) = MakeType(in.dtype, {ProductOrUnknown(in.dims, 0, axis),
                                      ProductOrUnknown(in.dims, axis, in.dims.size())});
  return Status::Ok();
}

Status Squeeze(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const TensorType& in = ctx.input_type(0);
  // An empty axes tensor means the same as no axes: every size-1 dim goes.
  if (!ctx.has_input(1) || KnownLength(ctx, 1) == 0) {
    if (!in.IsStatic()) {
      ctx.output(0) = UnknownRank(in.dtype);
      return Status::Ok();
    }
    Dims out;
    for (int64_t d : in.dims) {
      if (d != 1) out.push_back(d);
    }
    ctx.output(0) = MakeType(in.dtype, std::move(out));
    return Status::Ok();
  }
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
  auto axes = KnownInts(ctx, 1);
  if (!axes || !in.rank_known) {
    int64_t n = KnownLength(ctx, 1);
    ctx.output(0) = UnknownShape(in.dtype, in.rank_known && n >= 0 ? in.rank() - n : -1);
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(ctx, *axes, in.rank()));
  std::vector<bool> removed(in.rank(), false);
  for (int a : norm) {
    if (in.dims[a] >= 0 && in.dims[a] != 1) {
      return ctx.Error("cannot squeeze axis {} of {}: its size is {}, not 1", a, in.ToString(),
                       in.dims[a]);
    }
    removed[a] = true;
  }
  Dims out;
  for (int i = 0; i < in.rank(); ++i) {
    if (!removed[i]) out.push_back(in.dims[i]);
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

Status Unsqueeze(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
  const TensorType& in = ctx.input_type(0);
  auto axes = KnownInts(ctx, 1);
  if (!axes || !in.rank_known) {
    int64_t n = KnownLength(ctx, 1);
    ctx.output(0) = UnknownShape(in.dtype, in.rank_known && n >= 0 ? in.rank() + n : -1);
    return Status::Ok();
  }
  int out_rank = in.rank() + static_cast<int>(axes->size());
  ASSIGN_OR_RETURN(std::vector<int> norm, NormalizeAxes(ctx, *axes, out_rank));
  Dims out(out_rank, 0);
  std::vector<bool> inserted(out_rank, false);
  for (int a : norm) inserted[a] = true;
  for (int i = 0, src = 0; i < out_rank; ++i) out[i] = inserted[i] ? 1 : in.dims[src++];
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

// --- permutations: Transpose, DepthToSpace, SpaceToDepth ---

Status Transpose(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  const TensorType& in = ctx.input_type(0);
  bool has_perm = ctx.attrs().Has("perm");
  std::vector<int64_t> perm = ctx.attrs().GetInts("perm");
  if (!in.rank_known && !has_perm) {
    ctx.output(0) = UnknownRank(in.dtype);
    return Status::Ok();
  }
  int r = in.rank_known ? in.rank() : static_cast<int>(perm.size());
  if (!has_perm) {
    for (int i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != r) {
    return ctx.Error("perm {} has {} entries for an input of rank {}", DimsToString(perm),
                     perm.size(), r);
  }
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[p]) {
      return ctx.Error("perm {} is not a permutation of 0..{}", DimsToString(perm), r - 1);
    }
    seen[p] = true;
  }
  Dims out(r, kUnknownDim);
  if (in.rank_known) {
    for (int i = 0; i < r; ++i) out[i] = in.dims[perm[i]];
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

Status DepthToSpace(InferContext& ctx) {
  ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx));
  const TensorType& in = ctx.input_type(0);
  std::string mode = ctx.attrs().GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.Error("mode '{}' is not DCR or CRD", mode);
  if (!in.rank_known) {
    ctx.output(0) = MakeType(in.dtype, UnknownDims(4));
    return Status::Ok();
  }
  int64_t c = in.dims[1];
  if (c >= 0 && c % (b * b) != 0) {
    return ctx.Error("channels {} of {} are not a multiple of blocksize^2 = {}", c,
                     in.ToString(), b * b);
  }
  ctx.output(0) = MakeType(in.dtype, {in.dims[0], c < 0 ? kUnknownDim : c / (b * b),
                                      MulOrUnknown(in.dims[2], b), MulOrUnknown(in.dims[3], b)});
  return Status::Ok();
}

Status SpaceToDepth(InferContext& ctx) {
  ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx));
  const TensorType& in = ctx.input_type(0);
  if (!in.rank_known) {
    ctx.output(0) = MakeType(in.dtype, UnknownDims(4));
    return Status::Ok();
  }
  Dims out = {in.dims[0], MulOrUnknown(in.dims[1], b * b), kUnknownDim, kUnknownDim};
  for (int i = 2; i < 4; ++i) {
    if (in.dims[i] < 0) continue;
    if (in.dims[i] % b != 0) {
      return ctx.Error("dim {} of {} is not a multiple of blocksize {}", i, in.ToString(), b);
    }
    out[i] = in.dims[i] / b;
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

// --- joining and splitting: Concat, Split ---

Status Concat(InferContext& ctx) {
  int n = ctx.num_inputs();
  if (n < 1) return ctx.Error("expected at least 1 input, got 0");
  for (int i = 0; i < n; ++i) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  if (!ctx.attrs().Has("axis")) return ctx.Error("attribute axis is required");
  DType dtype = ctx.input_type(0).dtype;
  int rank = -1;
  for (int i = 0; i < n; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.dtype != dtype) {
      return ctx.Error("input {} has dtype {}, input 0 has {}", i, DTypeName(t.dtype),
                       DTypeName(dtype));
    }
    if (!t.rank_known) continue;
    if (rank < 0) rank = t.rank();
    if (t.rank() != rank) return ctx.Error("input {} has rank {}, expected {}", i, t.rank(), rank);
  }
  if (rank < 0) {
    ctx.output(0) = UnknownRank(dtype);
    return Status::Ok();
  }
  auto axis_or = NormalizeAxis(ctx.attrs().GetInt("axis"), rank);
  if (!axis_or.ok()) return ctx.Error("{}", axis_or.status().message());
  int axis = *axis_or;
  Dims out(rank, kUnknownDim);
  out[axis] = 0;
  for (int i = 0; i < n; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (!t.rank_known) {
      out[axis] = kUnknownDim;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == axis) {
        out[d] = (out[d] < 0 || t.dims[d] < 0) ? kUnknownDim : out[d] + t.dims[d];
      } else if (t.dims[d] >= 0) {
        if (out[d] >= 0 && out[d] != t.dims[d]) {
          return ctx.Error("input {} {} has dim {} = {}, other inputs have {}", i, t.ToString(),
                           d, t.dims[d], out[d]);
        }
        out[d] = t.dims[d];
      }
    }
  }
  ctx.output(0) = MakeType(dtype, std::move(out));
  return Status::Ok();
}

Status Split(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  const TensorType& in = ctx.input_type(0);
  int n = ctx.num_outputs();
  if (n < 1) return ctx.Error("has no outputs");
  if (!in.rank_known) {
    for (int i = 0; i < n; ++i) ctx.output(i) = UnknownRank(in.dtype);
    return Status::Ok();
  }
  auto axis_or = NormalizeAxis(ctx.attrs().GetInt("axis", 0), in.rank());
  if (!axis_or.ok()) return ctx.Error("{}", axis_or.status().message());
  int axis = *axis_or;
  int64_t dim = in.dims[axis];

  std::vector<int64_t> sizes(n, kUnknownDim);
  if (ctx.has_input(1)) {
    RETURN_IF_ERROR(ExpectShapeInput(ctx, 1));
    if (auto split = KnownInts(ctx, 1)) {
      if (static_cast<int>(split->size()) != n) {
        return ctx.Error("split {} has {} entries for {} outputs", DimsToString(*split),
                         split->size(), n);
      }
      RETURN_IF_ERROR(CheckNonNegative(ctx, *split, "split"));
      int64_t total = std::accumulate(split->begin(), split->end(), int64_t{0});
      if (dim >= 0 && total != dim) {
        return ctx.Error("split {} sums to {}, but axis {} of {} has size {}",
                         DimsToString(*split), total, axis, in.ToString(), dim);
      }
      sizes = *split;
    }
  } else if (dim >= 0) {
    if (dim % n != 0) {
      return ctx.Error("axis {} of {} (size {}) does not split into {} equal parts", axis,
                       in.ToString(), dim, n);
    }
    sizes.assign(n, dim / n);
  }
  for (int i = 0; i < n; ++i) {
    Dims d = in.dims;
    d[axis] = sizes[i];
    ctx.output(i) = MakeType(in.dtype, std::move(d));
  }
  return Status::Ok();
}

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
