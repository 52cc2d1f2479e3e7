// Shape inference for the movement family (see ops.def): the reshaping views, the
// permutations, Concat and Split. Selecting, broadcasting and padding ops are in
// infer_select.cc, shape queries and constants in infer_shape_ops.cc.
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
  // A scalar axes is one axis: ONNX's own node tests (loop13_seq, loop16_seq_none) give one.
  const bool scalar_axes = ctx.has_input(1) && ctx.input_type(1).rank_known && ctx.input_type(1).rank() == 0;
  RETURN_IF_ERROR(scalar_axes ? ExpectIndexDType(ctx, 1) : ExpectShapeInput(ctx, 1));
  const TensorType& in = ctx.input_type(0);
  auto axes = KnownInts(ctx, 1);
  if (!axes || !in.rank_known) {
    int64_t n = scalar_axes ? 1 : KnownLength(ctx, 1);
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
        if (out[d] < 0 || t.dims[d] < 0) {
          out[d] = kUnknownDim;
        } else if (__builtin_add_overflow(out[d], t.dims[d], &out[d])) {
          return ctx.Error("the inputs' dims along axis {} sum past 2^63", axis);
        }
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

}  // namespace edgec::infer
