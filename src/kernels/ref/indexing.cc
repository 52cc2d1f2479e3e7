// Reference kernels for the indexing family (see ops.def). Elements move as bytes, so the
// gathers, masks and selections serve every dtype; only the scatter reductions compute,
// in the math type of the element (wrapping for integers, as the other integer kernels).
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/ref/elementwise_util.h"
#include "ir/unique_slices.h"
#include "kernels/ref/kernel.h"
#include "kernels/ref/movement_util.h"

namespace edgec::ref {

namespace {

size_t ElemSize(const Tensor& t) { return DTypeSize(t.dtype()); }

// An index value checked against a dim of `dim` entries, negative values counting from the
// end; `what` names it in the error ("indices element 3").
StatusOr<int64_t> ResolveIndex(const KernelContext& ctx, int64_t v, int64_t dim,
                               const std::string& what) {
  if (v < -dim || v >= dim) {
    return ctx.Error("{} = {} is out of range for a dim of size {}", what, v, dim);
  }
  return v < 0 ? v + dim : v;
}

void CopyInput0ToOutput(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  if (x.nbytes() > 0) std::memcpy(ctx.outputs[0].raw(), x.raw(), x.nbytes());
}

// The element offset in `data` of each index tuple in `indices` (last dim k), tuple entry j
// indexing data dim first_dim + j; `batch_stride` is added per batch of `tuples_per_batch`.
StatusOr<std::vector<int64_t>> TupleOffsets(const KernelContext& ctx, const Tensor& data,
                                            const Tensor& indices, int first_dim,
                                            int64_t tuples_per_batch, int64_t batch_stride) {
  const std::vector<int64_t> idx = indices.ToInt64Vector();
  const int64_t k = indices.dims().back();
  const std::vector<int64_t> strides = ContiguousStrides(data.dims());
  const int64_t tuples = k == 0 ? NumElements(std::span(indices.dims()).first(indices.rank() - 1))
                                : static_cast<int64_t>(idx.size()) / k;
  std::vector<int64_t> offsets(tuples, 0);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = tuples_per_batch > 0 ? (t / tuples_per_batch) * batch_stride : 0;
    for (int64_t j = 0; j < k; ++j) {
      const int dim = first_dim + static_cast<int>(j);
      ASSIGN_OR_RETURN(int64_t i, ResolveIndex(ctx, idx[t * k + j], data.dim(dim),
                                               fmt::format("indices tuple {} entry {}", t, j)));
      offset += i * strides[dim];
    }
    offsets[t] = offset;
  }
  return offsets;
}

// --- scatter reductions ---

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction ReductionOf(const KernelContext& ctx) {
  const std::string r = ctx.attrs.GetString("reduction", "none");
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  return Reduction::kNone;
}

template <typename T>
T ApplyReduction(Reduction r, T dst, T src) {
  if constexpr (std::is_same_v<T, bool>) {
    return src;  // inference allows only "none" for bool
  } else {
    using M = MathT<T>;
    const M a = ToMath(dst), b = ToMath(src);
    switch (r) {
      case Reduction::kNone: return src;
      case Reduction::kAdd:
        if constexpr (std::is_integral_v<M>) return WrapAdd(a, b);
        else return FromMath<T>(a + b);
      case Reduction::kMul:
        if constexpr (std::is_integral_v<M>) return WrapMul(a, b);
        else return FromMath<T>(a * b);
      case Reduction::kMax: return b > a ? src : dst;
      case Reduction::kMin: return b < a ? src : dst;
    }
    return src;
  }
}

// out[dst_offsets[u] + s] = reduce(out[...], updates[u * slice + s]) for every update slice.
Status ScatterSlices(KernelContext& ctx, const std::vector<int64_t>& dst_offsets, int64_t slice) {
  const Tensor& updates = *ctx.inputs[2];
  Tensor& out = ctx.outputs[0];
  const Reduction r = ReductionOf(ctx);
  return VisitAll(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = updates.data<T>();
    T* dst = out.data<T>();
    for (size_t u = 0; u < dst_offsets.size(); ++u) {
      for (int64_t s = 0; s < slice; ++s) {
        T& d = dst[dst_offsets[u] + s];
        d = ApplyReduction(r, d, src[static_cast<int64_t>(u) * slice + s]);
      }
    }
    return Status::Ok();
  });
}

}  // namespace

// --- gather and scatter by index tuples or elements ---

Status GatherND(KernelContext& ctx) {
  const Tensor& data = *ctx.inputs[0];
  const Tensor& indices = *ctx.inputs[1];
  const int b = static_cast<int>(ctx.attrs.GetInt("batch_dims", 0));
  const int64_t k = indices.dims().back();
  const int64_t batches = NumElements(std::span(data.dims()).first(b));
  const int64_t tuples = NumElements(std::span(indices.dims()).first(indices.rank() - 1));
  const int64_t per_batch = batches == 0 ? 0 : tuples / batches;
  const int64_t batch_stride = NumElements(std::span(data.dims()).subspan(b));
  const int64_t slice = NumElements(std::span(data.dims()).subspan(b + k));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                   TupleOffsets(ctx, data, indices, b, per_batch, batch_stride));
  const size_t bytes = static_cast<size_t>(slice) * ElemSize(data);
  const auto* src = static_cast<const std::byte*>(data.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  if (bytes == 0) return Status::Ok();
  for (size_t t = 0; t < offsets.size(); ++t) {
    std::memcpy(dst + t * bytes, src + offsets[t] * ElemSize(data), bytes);
  }
  return Status::Ok();
}

Status ScatterElements(KernelContext& ctx) {
  const Tensor& data = *ctx.inputs[0];
  const Tensor& indices = *ctx.inputs[1];
  CopyInput0ToOutput(ctx);
  const int rank = data.rank();
  int64_t axis = ctx.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  const std::vector<int64_t> strides = ContiguousStrides(data.dims());
  const std::vector<int64_t> idx = indices.ToInt64Vector();
  std::vector<int64_t> offsets(idx.size());
  std::vector<int64_t> at(rank, 0);  // position in `indices`, odometer order
  for (size_t i = 0; i < idx.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t v, ResolveIndex(ctx, idx[i], data.dim(static_cast<int>(axis)),
                                             fmt::format("indices element {}", i)));
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += (d == axis ? v : at[d]) * strides[d];
    offsets[i] = offset;
    for (int d = rank - 1; d >= 0 && ++at[d] == indices.dim(d); --d) at[d] = 0;
  }
  return ScatterSlices(ctx, offsets, 1);
}

Status ScatterND(KernelContext& ctx) {
  const Tensor& data = *ctx.inputs[0];
  const Tensor& indices = *ctx.inputs[1];
  CopyInput0ToOutput(ctx);
  const int64_t k = indices.dims().back();
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, TupleOffsets(ctx, data, indices, 0, 0, 0));
  return ScatterSlices(ctx, offsets, NumElements(std::span(data.dims()).subspan(k)));
}

// --- encodings and masks ---

Status OneHot(KernelContext& ctx) {
  const Tensor& indices = *ctx.inputs[0];
  const Tensor& values = *ctx.inputs[2];
  Tensor& out = ctx.outputs[0];
  int64_t axis = ctx.attrs.GetInt("axis", -1);
  if (axis < 0) axis += out.rank();
  const int64_t depth = out.dim(static_cast<int>(axis));
  const size_t es = ElemSize(out);
  const auto* off_on = static_cast<const std::byte*>(values.raw());
  FillWithElement(out, off_on);
  const int64_t outer = NumElements(std::span(indices.dims()).first(axis));
  const int64_t inner = NumElements(std::span(indices.dims()).subspan(axis));
  auto* dst = static_cast<std::byte*>(out.raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      // Non-integer indices are truncated as a cast to int64; out-of-range ones stay "off".
      const int64_t at = o * inner + i;
      int64_t v = IsFloat(indices.dtype())
                      ? FloatToInt<int64_t>(LoadAsDouble(indices.dtype(), indices.raw(), at))
                      : LoadAsInt64(indices.dtype(), indices.raw(), at);
      if (v < 0) v += depth;
      if (v < 0 || v >= depth) continue;
      std::memcpy(dst + ((o * depth + v) * inner + i) * es, off_on + es, es);
    }
  }
  return Status::Ok();
}

Status Trilu(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t k = ctx.input(1) ? ctx.input(1)->ToInt64Vector()[0] : 0;
  const bool upper = ctx.attrs.GetInt("upper", 1) != 0;
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const int64_t matrices = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
  const size_t es = ElemSize(x);
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());  // zero-filled
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        const bool keep = upper ? j - i >= k : j - i <= k;
        const int64_t at = (m * rows + i) * cols + j;
        if (keep) std::memcpy(dst + at * es, src + at * es, es);
      }
    }
  }
  return Status::Ok();
}

Status EyeLike(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];  // zero-filled
  const int64_t k = ctx.attrs.GetInt("k", 0);
  const int64_t rows = out.dim(0), cols = out.dim(1);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < cols) StoreFromDouble(out.dtype(), out.raw(), i * cols + j, 1.0);
  }
  return Status::Ok();
}

// --- selections whose size depends on values ---

Status NonZero(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  const Dims dims = x.rank() == 0 ? Dims{1} : x.dims();
  const int rank = static_cast<int>(dims.size());
  const int64_t count = out.dim(1);
  int64_t* rows = out.data<int64_t>();
  std::vector<int64_t> at(rank, 0);
  int64_t n = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (LoadAsDouble(x.dtype(), x.raw(), i) != 0.0) {
      for (int d = 0; d < rank; ++d) rows[d * count + n] = at[d];
      ++n;
    }
    for (int d = rank - 1; d >= 0 && ++at[d] == dims[d]; --d) at[d] = 0;
  }
  return Status::Ok();
}

Status Compress(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const Tensor& condition = *ctx.inputs[1];
  const bool* cond = condition.data<bool>();
  const bool has_axis = ctx.attrs.Has("axis");
  int64_t axis = ctx.attrs.GetInt("axis", 0);
  if (axis < 0) axis += x.rank();
  // The input as [outer, dim, inner] around the axis (flattened: [1, numel, 1]).
  const int64_t outer = has_axis ? NumElements(std::span(x.dims()).first(axis)) : 1;
  const int64_t dim = has_axis ? x.dim(static_cast<int>(axis)) : x.numel();
  const int64_t inner = has_axis ? NumElements(std::span(x.dims()).subspan(axis + 1)) : 1;
  const int64_t len = std::min(dim, condition.numel());
  const size_t block = static_cast<size_t>(inner) * ElemSize(x);
  const auto* src = static_cast<const std::byte*>(x.raw());
  auto* dst = static_cast<std::byte*>(ctx.outputs[0].raw());
  if (block == 0) return Status::Ok();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < len; ++j) {
      if (!cond[j]) continue;
      std::memcpy(dst, src + (o * dim + j) * block, block);
      dst += block;
    }
  }
  return Status::Ok();
}

// Unique: the grouping of ir/unique_slices.h; Y copies each unique slice's first occurrence.
Status Unique(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  std::optional<int> axis;
  if (ctx.attrs.Has("axis")) {
    const int64_t a = ctx.attrs.GetInt("axis", 0);
    axis = static_cast<int>(a < 0 ? a + x.rank() : a);
  }
  const UniqueSlices u = FindUniqueSlices(x, axis, ctx.attrs.GetInt("sorted", 1) != 0);
  int64_t outer = 1, n = x.numel(), inner = 1;
  if (axis) {
    n = x.dim(*axis);
    for (int d = 0; d < *axis; ++d) outer *= x.dim(d);
    for (int d = *axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  const int64_t groups = static_cast<int64_t>(u.first.size());
  Tensor& y = ctx.outputs[0];
  if (y.numel() != outer * groups * inner) return ctx.Error("output {} does not hold {} unique slices", y.TypeString(), groups);
  const size_t row = DTypeSize(x.dtype()) * static_cast<size_t>(inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t g = 0; g < groups; ++g) {
      std::memcpy(static_cast<std::byte*>(y.raw()) + (o * groups + g) * row,
                  static_cast<const std::byte*>(x.raw()) + (o * n + u.first[g]) * row, row);
    }
  }
  const std::vector<int64_t>* vectors[] = {&u.first, &u.inverse, &u.counts};
  for (size_t i = 1; i < ctx.outputs.size() && i < 4; ++i) {
    const std::vector<int64_t>& v = *vectors[i - 1];
    if (ctx.outputs[i].numel() != static_cast<int64_t>(v.size())) {
      return ctx.Error("output {} {} does not hold {} values", i, ctx.outputs[i].TypeString(), v.size());
    }
    std::copy(v.begin(), v.end(), ctx.outputs[i].data<int64_t>());
  }
  return Status::Ok();
}

}  // namespace edgec::ref
