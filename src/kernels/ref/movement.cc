// Reference kernels for the movement family (see ops.def).
//
// Every kernel here moves elements by byte size (one code path for every dtype), mostly
// through CopyStrided. Inference has already checked shapes and attribute values; the
// output tensors arrive allocated with the inferred dims.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "ir/infer_movement_util.h"
#include "kernels/ref/kernel.h"
#include "kernels/ref/movement_util.h"
#include "support/name_list.h"

namespace edgec::ref {

namespace {

size_t ElemSize(const Tensor& t) { return DTypeSize(t.dtype()); }

// Same elements, new dims: a byte copy.
Status CopyAll(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  if (out.nbytes() != in.nbytes()) {
    return ctx.Error("output {} does not hold the {} elements of input {}", out.TypeString(),
                     in.numel(), in.TypeString());
  }
  if (in.nbytes()) std::memcpy(out.raw(), in.raw(), in.nbytes());
  return Status::Ok();
}

int NormalizedAxis(int64_t axis, int rank) {
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// Element offset of (index...) in a contiguous tensor, with the index along `axis` only.
StridedView ShiftedAlong(std::span<const int64_t> dims, int axis, int64_t position) {
  StridedView v = Contiguous(dims);
  v.offset = position * v.strides[axis];
  return v;
}

}  // namespace

// --- reshaping views: Reshape, Flatten, Squeeze, Unsqueeze ---

EDGEC_SHARED_RULE(KernelContext, CopyAll, Reshape, Flatten, Squeeze, Unsqueeze)

// --- permutations: Transpose, DepthToSpace, SpaceToDepth ---

Status Transpose(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  std::vector<int64_t> perm = ctx.attrs.GetInts("perm");
  if (!ctx.attrs.Has("perm")) {
    for (int i = in.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  PermuteCopy(in.raw(), in.dims(), perm, ElemSize(in), ctx.outputs[0].raw());
  return Status::Ok();
}

// DCR: channels are (block_row, block_col, c); CRD: (c, block_row, block_col).
Status DepthToSpace(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  int64_t b = ctx.attrs.GetInt("blocksize");
  int64_t n = in.dim(0), c = in.dim(1) / (b * b), h = in.dim(2), w = in.dim(3);
  bool crd = ctx.attrs.GetString("mode", "DCR") == "CRD";
  Dims view = crd ? Dims{n, c, b, b, h, w} : Dims{n, b, b, c, h, w};
  std::vector<int64_t> perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3}
                                  : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
  PermuteCopy(in.raw(), view, perm, ElemSize(in), ctx.outputs[0].raw());
  return Status::Ok();
}

Status SpaceToDepth(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  int64_t b = ctx.attrs.GetInt("blocksize");
  int64_t n = in.dim(0), c = in.dim(1), h = in.dim(2) / b, w = in.dim(3) / b;
  Dims view = {n, c, h, b, w, b};
  PermuteCopy(in.raw(), view, std::vector<int64_t>{0, 3, 5, 1, 2, 4}, ElemSize(in),
              ctx.outputs[0].raw());
  return Status::Ok();
}

// --- joining and splitting: Concat, Split ---

Status Concat(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  int axis = NormalizedAxis(ctx.attrs.GetInt("axis"), out.rank());
  int64_t position = 0;
  for (const Tensor* in : ctx.inputs) {
    CopyStrided(in->dims(), ElemSize(*in), in->raw(), Contiguous(in->dims()), out.raw(),
                ShiftedAlong(out.dims(), axis, position));
    position += in->dim(axis);
  }
  return Status::Ok();
}

Status Split(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  int axis = NormalizedAxis(ctx.attrs.GetInt("axis", 0), in.rank());
  int64_t position = 0;
  for (Tensor& out : ctx.outputs) {
    CopyStrided(out.dims(), ElemSize(in), in.raw(), ShiftedAlong(in.dims(), axis, position),
                out.raw(), Contiguous(out.dims()));
    position += out.dim(axis);
  }
  return Status::Ok();
}

// --- selecting: Slice, Gather, GatherElements ---

Status Slice(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  std::vector<int64_t> starts = ctx.inputs[1]->ToInt64Vector();
  std::vector<int64_t> ends = ctx.inputs[2]->ToInt64Vector();
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.input(3)) axes = ctx.input(3)->ToInt64Vector();
  std::vector<int64_t> steps(starts.size(), 1);
  if (ctx.input(4)) steps = ctx.input(4)->ToInt64Vector();

  StridedView from = Contiguous(in.dims());
  for (size_t i = 0; i < axes.size(); ++i) {
    int a = NormalizedAxis(axes[i], in.rank());
    infer::SliceAxisRange r = infer::ClampSliceAxis(in.dim(a), starts[i], ends[i], steps[i]);
    if (r.length == 0) return Status::Ok();  // empty output
    from.offset += r.start * from.strides[a];
    from.strides[a] *= r.step;
  }
  Tensor& out = ctx.outputs[0];
  CopyStrided(out.dims(), ElemSize(in), in.raw(), from, out.raw(), Contiguous(out.dims()));
  return Status::Ok();
}

Status Gather(KernelContext& ctx) {
  const Tensor& data = *ctx.inputs[0];
  const Tensor& indices = *ctx.inputs[1];
  int axis = NormalizedAxis(ctx.attrs.GetInt("axis", 0), data.rank());
  const int64_t dim = data.dim(axis);
  std::vector<int64_t> idx = indices.ToInt64Vector();
  for (size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < -dim || idx[j] >= dim) {
      return ctx.Error("indices element {} = {} is out of range for axis {} of size {}", j,
                       idx[j], axis, dim);
    }
    if (idx[j] < 0) idx[j] += dim;
  }
  const int64_t outer = NumElements(std::span(data.dims()).first(axis));
  const int64_t inner = NumElements(std::span(data.dims()).subspan(axis + 1));
  const size_t block = static_cast<size_t>(inner) * ElemSize(data);
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  const int64_t count = static_cast<int64_t>(idx.size());
  if (block == 0) return Status::Ok();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      std::memcpy(dst + (o * count + j) * block, src + (o * dim + idx[j]) * block, block);
    }
  }
  return Status::Ok();
}

Status GatherElements(KernelContext& ctx) {
  const Tensor& data = *ctx.inputs[0];
  const Tensor& indices = *ctx.inputs[1];
  Tensor& out = ctx.outputs[0];
  const int rank = data.rank();
  const int axis = NormalizedAxis(ctx.attrs.GetInt("axis", 0), rank);
  const int64_t dim = data.dim(axis);
  const std::vector<int64_t> data_strides = ContiguousStrides(data.dims());
  const size_t es = ElemSize(data);
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  std::vector<int64_t> index(rank, 0);  // position in `indices`, odometer order
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t v = LoadAsInt64(indices.dtype(), indices.raw(), i);
    if (v < -dim || v >= dim) {
      return ctx.Error("indices element {} = {} is out of range for axis {} of size {}", i, v,
                       axis, dim);
    }
    if (v < 0) v += dim;
    int64_t offset = 0;
    for (int k = 0; k < rank; ++k) offset += (k == axis ? v : index[k]) * data_strides[k];
    std::memcpy(dst + i * es, src + offset * es, es);
    for (int k = rank - 1; k >= 0 && ++index[k] == indices.dim(k); --k) index[k] = 0;
  }
  return Status::Ok();
}

// --- shape queries and constants: Shape, Size, Constant, ConstantOfShape, Range ---

Status Shape(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  infer::ShapeBounds b = infer::ClampShapeBounds(ctx.attrs, in.rank());
  int64_t* out = ctx.outputs[0].data<int64_t>();
  for (int64_t i = b.start; i < b.end; ++i) out[i - b.start] = in.dim(static_cast<int>(i));
  return Status::Ok();
}

Status Size(KernelContext& ctx) {
  ctx.outputs[0].data<int64_t>()[0] = ctx.inputs[0]->numel();
  return Status::Ok();
}

Status Constant(KernelContext& ctx) {
  std::optional<Tensor> found = ConstantAttributeValue(ctx.attrs);
  if (!found) return Unimplemented("{}: no supported value attribute", ctx.label);
  const Tensor& value = *found;
  Tensor& out = ctx.outputs[0];
  if (out.nbytes() != value.nbytes()) {
    return ctx.Error("output {} does not match the value {}", out.TypeString(), value.TypeString());
  }
  if (value.nbytes()) std::memcpy(out.raw(), value.raw(), value.nbytes());
  return Status::Ok();
}

Status ConstantOfShape(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  Tensor value = ctx.attrs.Has("value") ? ctx.attrs.GetTensor("value") : Tensor::Scalar(0.f);
  FillWithElement(out, value.raw());
  return Status::Ok();
}

Status Range(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  DType dt = out.dtype();
  if (IsFloat(dt)) {
    double start = ctx.inputs[0]->ToDoubleVector()[0];
    double delta = ctx.inputs[2]->ToDoubleVector()[0];
    for (int64_t i = 0; i < out.numel(); ++i) {
      StoreFromDouble(dt, out.raw(), i, start + static_cast<double>(i) * delta);
    }
    return Status::Ok();
  }
  int64_t start = ctx.inputs[0]->ToInt64Vector()[0];
  int64_t delta = ctx.inputs[2]->ToInt64Vector()[0];
  EDGEC_DISPATCH_NUMERIC(dt, {
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<T>(start + i * delta);
  }, return ctx.Error("dtype {} is not supported", DTypeName(dt)))
  return Status::Ok();
}

// --- broadcasting and padding: Expand, Tile, Pad ---

Status Expand(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  const int lead = out.rank() - in.rank();
  std::vector<int64_t> in_strides = ContiguousStrides(in.dims());
  StridedView from;
  from.strides.assign(out.rank(), 0);  // missing leading dims and size-1 dims broadcast
  for (int k = 0; k < in.rank(); ++k) {
    if (in.dim(k) != 1) from.strides[lead + k] = in_strides[k];
  }
  CopyStrided(out.dims(), ElemSize(in), in.raw(), from, out.raw(), Contiguous(out.dims()));
  return Status::Ok();
}

// The output viewed as dims (r_0, d_0, r_1, d_1, ...): repeat index t_k and input index i_k
// land at (t_k * d_k + i_k) along output axis k.
Status Tile(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  std::vector<int64_t> repeats = ctx.inputs[1]->ToInt64Vector();
  std::vector<int64_t> in_strides = ContiguousStrides(in.dims());
  std::vector<int64_t> out_strides = ContiguousStrides(out.dims());
  Dims extent;
  StridedView from, to;
  for (int k = 0; k < in.rank(); ++k) {
    extent.insert(extent.end(), {repeats[k], in.dim(k)});
    from.strides.insert(from.strides.end(), {0, in_strides[k]});
    to.strides.insert(to.strides.end(), {in.dim(k) * out_strides[k], out_strides[k]});
  }
  CopyStrided(extent, ElemSize(in), in.raw(), from, out.raw(), to);
  return Status::Ok();
}

namespace {

// Position inside a kept interior of `length` elements that padding position `i` (relative
// to the interior start, may be negative or past the end) copies.
int64_t EdgeIndex(int64_t i, int64_t length) { return std::clamp<int64_t>(i, 0, length - 1); }
int64_t ReflectIndex(int64_t i, int64_t length) {
  if (length == 1) return 0;
  const int64_t period = 2 * (length - 1);
  int64_t m = i % period;
  if (m < 0) m += period;
  return m < length ? m : period - m;
}

}  // namespace

// Negative pads crop. The kept interior is copied first; for reflect and edge the padding
// is then filled axis by axis, each padding slab copied from a slab of the output interior
// (axes before the current one are already complete, axes after it hold only the interior).
Status Pad(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  const int r = in.rank();
  const size_t es = ElemSize(in);
  std::vector<int64_t> pads = ctx.inputs[1]->ToInt64Vector();
  std::string mode = ctx.attrs.GetString("mode", "constant");

  if (mode == "constant" && ctx.input(2) && ctx.input(2)->numel() > 0) {
    FillWithElement(out, ctx.input(2)->raw());
  }
  Dims kept(r), dst_begin(r);
  StridedView from = Contiguous(in.dims()), to = Contiguous(out.dims());
  for (int k = 0; k < r; ++k) {
    int64_t before = pads[k], after = pads[k + r];
    kept[k] = in.dim(k) - std::max<int64_t>(0, -before) - std::max<int64_t>(0, -after);
    dst_begin[k] = std::max<int64_t>(0, before);
    from.offset += std::max<int64_t>(0, -before) * from.strides[k];
    to.offset += dst_begin[k] * to.strides[k];
  }
  CopyStrided(kept, es, in.raw(), from, out.raw(), to);
  if (mode == "constant") return Status::Ok();

  const std::vector<int64_t> out_strides = ContiguousStrides(out.dims());
  for (int axis = 0; axis < r; ++axis) {
    if (kept[axis] == 0) continue;  // only possible when the output axis is empty too
    // The slab: full extent on earlier axes, one position on `axis`, interior after it.
    Dims extent(r);
    int64_t base = 0;
    for (int k = 0; k < r; ++k) {
      extent[k] = k < axis ? out.dim(k) : k == axis ? 1 : kept[k];
      if (k > axis) base += dst_begin[k] * out_strides[k];
    }
    for (int64_t p = 0; p < out.dim(axis); ++p) {
      int64_t rel = p - dst_begin[axis];
      if (rel >= 0 && rel < kept[axis]) continue;  // interior
      int64_t q = dst_begin[axis] + (mode == "edge" ? EdgeIndex(rel, kept[axis])
                                                    : ReflectIndex(rel, kept[axis]));
      CopyStrided(extent, es, out.raw(), {base + q * out_strides[axis], out_strides}, out.raw(),
                  {base + p * out_strides[axis], out_strides});
    }
  }
  return Status::Ok();
}

// ReverseSequence: element [t, b, rest] (time axis first; swapped when time_axis is 1) comes
// from [len[b] - 1 - t, b, rest] for t < len[b], else from itself.
Status ReverseSequence(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  const int64_t* lens = ctx.inputs[1]->data<int64_t>();
  Tensor& out = ctx.outputs[0];
  const bool time_first = ctx.attrs.GetInt("time_axis", 0) == 0;
  const int64_t steps = in.dim(time_first ? 0 : 1), batch = in.dim(time_first ? 1 : 0);
  const size_t row = ElemSize(in) * static_cast<size_t>(in.rank() > 2 ? in.numel() / (steps * batch) : 1);
  auto offset = [&](int64_t t, int64_t b) { return (time_first ? t * batch + b : b * steps + t) * row; };
  const auto* src = static_cast<const std::byte*>(in.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] < 0 || lens[b] > steps) return ctx.Error("sequence_lens[{}] = {} is outside [0, {}]", b, lens[b], steps);
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      std::memcpy(dst + offset(t, b), src + offset(from, b), row);
    }
  }
  return Status::Ok();
}

}  // namespace edgec::ref
