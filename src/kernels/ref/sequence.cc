// Reference kernels of the sequence family (ops.def): they build and take apart sequence and
// optional values (ir/tensor.h: Tensor::Sequence, Tensor::None). A sequence's items are
// shared, never written: inserting or erasing makes a new item list. Outputs that are
// sequences or optionals are made here (the executor allocates only dense outputs).
// Guarded by tests/frontend/sequence_test.cc and the ONNX node tests (sequence_*, optional_*).
#include <algorithm>
#include <cstring>

#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// A position input (scalar i32/i64) normalized to [0, n] (`inclusive_end`: n is allowed, an
// insertion at the back) or [0, n); `fallback` when absent.
StatusOr<int64_t> Position(const KernelContext& ctx, int i, int64_t n, int64_t fallback, bool inclusive_end) {
  const Tensor* t = ctx.input(i);
  if (!t) return fallback;
  int64_t p = LoadAsInt64(t->dtype(), t->raw(), 0);
  const int64_t hi = inclusive_end ? n : n - 1;
  if (p < -n || p > hi) return ctx.Error("position {} is out of range for a sequence of {}", p, n);
  return p < 0 ? p + n : p;
}

// Bytes before, along and after `axis` of dims (outer count, axis length, inner bytes).
struct Blocks {
  int64_t outer = 1, len = 1, inner = 1;
};
Blocks BlocksOf(const Dims& d, int axis, size_t elem) {
  Blocks b;
  b.inner = static_cast<int64_t>(elem);
  for (int i = 0; i < axis; ++i) b.outer *= d[i];
  b.len = d[axis];
  for (int i = axis + 1; i < static_cast<int>(d.size()); ++i) b.inner *= d[i];
  return b;
}

}  // namespace

Status SequenceConstruct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (const Tensor* x : ctx.inputs) items.push_back(*x);
  ctx.outputs[0] = Tensor::Sequence(ctx.inputs[0]->dtype(), std::move(items));
  return Status::Ok();
}

Status SequenceEmpty(KernelContext& ctx) {
  ctx.outputs[0] = Tensor::Sequence(static_cast<DType>(ctx.attrs.GetInt("dtype", static_cast<int64_t>(DType::kF32))), {});
  return Status::Ok();
}

Status SequenceInsert(KernelContext& ctx) {
  const Tensor& s = *ctx.inputs[0];
  std::vector<Tensor> items = s.items();
  const int64_t n = static_cast<int64_t>(items.size());
  ASSIGN_OR_RETURN(int64_t p, Position(ctx, 2, n, n, /*inclusive_end=*/true));
  items.insert(items.begin() + p, *ctx.inputs[1]);
  ctx.outputs[0] = Tensor::Sequence(s.dtype(), std::move(items));
  return Status::Ok();
}

Status SequenceErase(KernelContext& ctx) {
  const Tensor& s = *ctx.inputs[0];
  std::vector<Tensor> items = s.items();
  const int64_t n = static_cast<int64_t>(items.size());
  if (n == 0) return ctx.Error("cannot erase from an empty sequence");
  ASSIGN_OR_RETURN(int64_t p, Position(ctx, 1, n, n - 1, /*inclusive_end=*/false));
  items.erase(items.begin() + p);
  ctx.outputs[0] = Tensor::Sequence(s.dtype(), std::move(items));
  return Status::Ok();
}

Status SequenceAt(KernelContext& ctx) {
  const Tensor& s = *ctx.inputs[0];
  const int64_t n = static_cast<int64_t>(s.items().size());
  ASSIGN_OR_RETURN(int64_t p, Position(ctx, 1, n, 0, /*inclusive_end=*/false));
  ctx.outputs[0] = s.items()[p];
  return Status::Ok();
}

Status SequenceLength(KernelContext& ctx) {
  ctx.outputs[0].data<int64_t>()[0] = static_cast<int64_t>(ctx.inputs[0]->items().size());
  return Status::Ok();
}

// SplitToSequence: by `split` (a scalar: equal parts of that size, the last smaller; a 1-d
// tensor: the part sizes), or without it into parts of 1 along axis, squeezed when keepdims=0.
Status SplitToSequence(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int rank = x.rank();
  int64_t axis = ctx.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  const int64_t len = x.dim(static_cast<int>(axis));
  std::vector<int64_t> sizes;
  const Tensor* split = ctx.input(1);
  if (!split) {
    sizes.assign(len, 1);
  } else if (split->rank() == 0) {
    const int64_t part = LoadAsInt64(split->dtype(), split->raw(), 0);
    if (part <= 0) return ctx.Error("split {} must be positive", part);
    for (int64_t at = 0; at < len; at += part) sizes.push_back(std::min(part, len - at));
  } else {
    sizes = split->ToInt64Vector();
    int64_t total = 0;
    for (int64_t v : sizes) {
      if (v < 0) return ctx.Error("split has a negative size {}", v);
      total += v;
    }
    if (total != len) return ctx.Error("split sums to {}, but axis {} has size {}", total, axis, len);
  }
  const bool squeeze = !split && ctx.attrs.GetInt("keepdims", 1) == 0;
  const Blocks b = BlocksOf(x.dims(), static_cast<int>(axis), DTypeSize(x.dtype()));
  std::vector<Tensor> items;
  int64_t at = 0;
  for (int64_t size : sizes) {
    Dims d = x.dims();
    d[axis] = size;
    ASSIGN_OR_RETURN(Tensor part, Tensor::Create(x.dtype(), d));
    auto* dst = static_cast<std::byte*>(part.raw());
    const auto* src = static_cast<const std::byte*>(x.raw());
    for (int64_t o = 0; o < b.outer; ++o) {
      std::memcpy(dst + o * size * b.inner, src + (o * b.len + at) * b.inner, size * b.inner);
    }
    if (squeeze) d.erase(d.begin() + axis);
    items.push_back(part.Reshaped(d));
    at += size;
  }
  ctx.outputs[0] = Tensor::Sequence(x.dtype(), std::move(items));
  return Status::Ok();
}

// ConcatFromSequence: Concat of the items along axis, or (new_axis=1) a stack of them.
// Inference sized the output; each item fills its slice along axis.
Status ConcatFromSequence(KernelContext& ctx) {
  const Tensor& s = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  const bool new_axis = ctx.attrs.GetInt("new_axis", 0) != 0;
  int64_t axis = ctx.attrs.GetInt("axis");
  if (axis < 0) axis += out.rank();
  const Blocks ob = BlocksOf(out.dims(), static_cast<int>(axis), DTypeSize(out.dtype()));
  auto* dst = static_cast<std::byte*>(out.raw());
  int64_t at = 0;
  for (const Tensor& x : s.items()) {
    const int64_t size = new_axis ? 1 : x.dim(static_cast<int>(axis));
    const auto* src = static_cast<const std::byte*>(x.raw());
    for (int64_t o = 0; o < ob.outer; ++o) {
      std::memcpy(dst + (o * ob.len + at) * ob.inner, src + o * size * ob.inner, size * ob.inner);
    }
    at += size;
  }
  return Status::Ok();
}

Status Optional(KernelContext& ctx) {
  if (const Tensor* x = ctx.input(0)) {
    ctx.outputs[0] = *x;
  } else {
    const auto dtype = static_cast<DType>(ctx.attrs.GetInt("edgec_dtype"));
    ctx.outputs[0] = Tensor::None(dtype, ctx.attrs.GetInt("edgec_sequence", 0) ? ValueKind::kSequence : ValueKind::kTensor);
  }
  return Status::Ok();
}

Status OptionalHasElement(KernelContext& ctx) {
  const Tensor* o = ctx.input(0);
  ctx.outputs[0].data<bool>()[0] = o && !o->is_none();
  return Status::Ok();
}

Status OptionalGetElement(KernelContext& ctx) {
  const Tensor& o = *ctx.inputs[0];
  if (o.is_none()) return ctx.Error("the optional holds nothing");
  ctx.outputs[0] = o;
  return Status::Ok();
}

}  // namespace edgec::ref
