// Sequence steps on the runtime's sequence values (sequence_step.h).
#include "runtime/sequence_step.h"

#include <algorithm>
#include <cstring>

#include "ir/infer.h"
#include "support/status.h"

namespace edgec {

namespace {

// A tensor as an item: itself when it owns its buffer, else a copy (the rule of sequence_step.h).
Tensor Owned(const Tensor& t) { return t.owns_memory() ? t : t.Clone(); }

// The sequence (or none) at input `i`, or an error naming the node.
StatusOr<const Tensor*> SequenceInput(const Node& n, const std::vector<const Tensor*>& in, size_t i) {
  if (i >= in.size() || !in[i]) return InvalidArgument("{}: input {} is missing", n.Label(), i);
  if (!in[i]->is_sequence()) return InvalidArgument("{}: input {} is {}, not a sequence", n.Label(), i, in[i]->TypeString());
  return in[i];
}

// A position input (a one-element integer) as an index into `count` items: [0, count] when
// `at_end` allows the position after the last item (an insertion), else [0, count).
StatusOr<int64_t> PositionOf(const Node& n, const Tensor* t, int64_t count, int64_t absent, bool at_end) {
  if (!t) return absent;
  if (t->numel() != 1 || !IsInteger(t->dtype())) {
    return InvalidArgument("{}: position must be one integer, got {}", n.Label(), t->TypeString());
  }
  const int64_t p = LoadAsInt64(t->dtype(), t->raw(), 0);
  const int64_t last = at_end ? count : count - 1;
  if (p < -count || p > last) return InvalidArgument("{}: position {} is outside a sequence of {} item(s)", n.Label(), p, count);
  return p < 0 ? p + count : p;
}

// Elements before the axis (rows), along it, and after it (per row and step).
struct Rows {
  int64_t rows = 1, len = 1, inner = 1;
};
Rows RowsOf(const Dims& d, int axis) {
  Rows r;
  for (int i = 0; i < axis; ++i) r.rows *= d[i];
  r.len = d[axis];
  for (int i = axis + 1; i < static_cast<int>(d.size()); ++i) r.inner *= d[i];
  return r;
}

StatusOr<std::vector<Tensor>> Split(const Node& n, const std::vector<const Tensor*>& in, std::string* kernel) {
  if (in.empty() || !in[0] || !in[0]->is_dense()) return InvalidArgument("{}: input 0 must be a tensor", n.Label());
  const Tensor& x = *in[0];
  if (x.rank() == 0) return InvalidArgument("{}: cannot split a scalar", n.Label());
  ASSIGN_OR_RETURN(const int axis, NormalizeAxis(n.attrs.GetInt("axis", 0), x.rank()));
  const Rows r = RowsOf(x.dims(), axis);
  const Tensor* split = in.size() > 1 ? in[1] : nullptr;
  std::vector<int64_t> sizes;
  if (!split) {
    sizes.assign(r.len, 1);
  } else if (split->rank() == 0) {
    const int64_t part = LoadAsInt64(split->dtype(), split->raw(), 0);
    if (part <= 0) return InvalidArgument("{}: split {} must be positive", n.Label(), part);
    for (int64_t at = 0; at < r.len; at += part) sizes.push_back(std::min(part, r.len - at));
  } else {
    sizes = split->ToInt64Vector();
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return InvalidArgument("{}: split has a negative size {}", n.Label(), s);
      sum += s;
    }
    if (sum != r.len) return InvalidArgument("{}: split sums to {}, axis {} has {}", n.Label(), sum, axis, r.len);
  }
  const bool drop_axis = !split && n.attrs.GetInt("keepdims", 1) == 0;
  // One row: every part is a contiguous range of x's elements.
  const bool shared = r.rows == 1;
  const size_t elem = DTypeSize(x.dtype());
  const Tensor base = shared ? Owned(x) : Tensor();
  std::vector<Tensor> items;
  items.reserve(sizes.size());
  int64_t at = 0;
  for (int64_t size : sizes) {
    Dims d = x.dims();
    d[axis] = size;
    Tensor part;
    if (shared) {
      part = base.Part(at * r.inner, d);
    } else {
      ASSIGN_OR_RETURN(part, Tensor::Create(x.dtype(), d));
      const size_t row = static_cast<size_t>(size * r.inner) * elem;
      const auto* src = static_cast<const std::byte*>(x.raw()) + at * r.inner * elem;
      auto* dst = static_cast<std::byte*>(part.raw());
      for (int64_t o = 0; o < r.rows; ++o) std::memcpy(dst + o * row, src + o * r.len * r.inner * elem, row);
    }
    if (drop_axis) d.erase(d.begin() + axis);
    items.push_back(part.Reshaped(std::move(d)));
    at += size;
  }
  *kernel = shared ? "own split-to-sequence (parts share the input)" : "own split-to-sequence (parts copied)";
  std::vector<Tensor> out;
  out.push_back(Tensor::Sequence(x.dtype(), std::move(items)));
  return out;
}

StatusOr<std::vector<Tensor>> Concat(const Node& n, const std::vector<const Tensor*>& in) {
  ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(n, in, 0));
  const auto& items = s->items();
  if (items.empty()) return InvalidArgument("{}: the sequence is empty", n.Label());
  const bool stack = n.attrs.GetInt("new_axis", 0) != 0;
  const Dims& first = items[0].dims();
  const int rank = static_cast<int>(first.size()) + (stack ? 1 : 0);
  ASSIGN_OR_RETURN(const int axis, NormalizeAxis(n.attrs.GetInt("axis", 0), rank));
  Dims out_dims = first;
  if (stack) out_dims.insert(out_dims.begin() + axis, 0);
  else out_dims[axis] = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    const Tensor& x = items[k];
    bool fits = x.rank() == static_cast<int>(first.size()) && x.dtype() == s->dtype();
    for (int i = 0; fits && i < x.rank(); ++i) fits = stack || i == axis || x.dim(i) == first[i];
    if (stack) fits = fits && x.dims() == first;
    if (!fits) {
      return InvalidArgument("{}: item {} is {}, item 0 is {}: they cannot be joined along axis {}", n.Label(), k,
                             x.TypeString(), items[0].TypeString(), axis);
    }
    out_dims[axis] += stack ? 1 : x.dim(axis);
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Create(s->dtype(), out_dims));
  const Rows r = RowsOf(out_dims, axis);
  const size_t elem = DTypeSize(s->dtype());
  auto* dst = static_cast<std::byte*>(out.raw());
  int64_t at = 0;
  for (const Tensor& x : items) {
    const int64_t size = stack ? 1 : x.dim(axis);
    const size_t row = static_cast<size_t>(size * r.inner) * elem;
    const auto* src = static_cast<const std::byte*>(x.raw());
    for (int64_t o = 0; o < r.rows && row; ++o) std::memcpy(dst + (o * r.len + at) * r.inner * elem, src + o * row, row);
    at += size;
  }
  std::vector<Tensor> result;
  result.push_back(std::move(out));
  return result;
}

}  // namespace

bool IsSequenceStep(const Node& n, const std::vector<const Tensor*>& inputs) {
  if (OpFamily(n.op()) == "sequence") return true;
  if (n.op() != OpKind::kIdentity) return false;
  return !inputs.empty() && inputs[0] && !inputs[0]->is_dense();
}

StatusOr<std::vector<Tensor>> RunSequenceStep(const Node& n, const std::vector<const Tensor*>& in, std::string* kernel) {
  auto input = [&](size_t i) -> const Tensor* { return i < in.size() ? in[i] : nullptr; };
  std::vector<Tensor> out(1);
  *kernel = "own sequence (items shared)";
  switch (n.op()) {
    case OpKind::kSequenceEmpty:
      out[0] = Tensor::Sequence(static_cast<DType>(n.attrs.GetInt("dtype", static_cast<int64_t>(DType::kF32))), {});
      return out;
    case OpKind::kSequenceConstruct: {
      std::vector<Tensor> items;
      for (size_t i = 0; i < in.size(); ++i) {
        if (!in[i] || !in[i]->is_dense()) return InvalidArgument("{}: input {} must be a tensor", n.Label(), i);
        if (in[i]->dtype() != in[0]->dtype()) {
          return InvalidArgument("{}: input {} is {}, input 0 is {}", n.Label(), i, in[i]->TypeString(), in[0]->TypeString());
        }
        items.push_back(Owned(*in[i]));
      }
      if (items.empty()) return InvalidArgument("{}: needs at least one input", n.Label());
      out[0] = Tensor::Sequence(in[0]->dtype(), std::move(items));
      return out;
    }
    case OpKind::kSequenceInsert: {
      ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(n, in, 0));
      const Tensor* x = input(1);
      if (!x || !x->is_dense() || x->dtype() != s->dtype()) {
        return InvalidArgument("{}: the inserted value must be a {} tensor", n.Label(), DTypeName(s->dtype()));
      }
      std::vector<Tensor> items = s->items();
      ASSIGN_OR_RETURN(const int64_t p, PositionOf(n, input(2), static_cast<int64_t>(items.size()),
                                                   static_cast<int64_t>(items.size()), /*at_end=*/true));
      items.insert(items.begin() + p, Owned(*x));
      out[0] = Tensor::Sequence(s->dtype(), std::move(items));
      return out;
    }
    case OpKind::kSequenceErase: {
      ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(n, in, 0));
      std::vector<Tensor> items = s->items();
      const int64_t count = static_cast<int64_t>(items.size());
      if (count == 0) return InvalidArgument("{}: cannot erase from an empty sequence", n.Label());
      ASSIGN_OR_RETURN(const int64_t p, PositionOf(n, input(1), count, count - 1, /*at_end=*/false));
      items.erase(items.begin() + p);
      out[0] = Tensor::Sequence(s->dtype(), std::move(items));
      return out;
    }
    case OpKind::kSequenceAt: {
      ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(n, in, 0));
      const int64_t count = static_cast<int64_t>(s->items().size());
      if (!input(1)) return InvalidArgument("{}: position is missing", n.Label());
      ASSIGN_OR_RETURN(const int64_t p, PositionOf(n, input(1), count, 0, /*at_end=*/false));
      out[0] = s->items()[p];
      return out;
    }
    case OpKind::kSequenceLength: {
      ASSIGN_OR_RETURN(const Tensor* s, SequenceInput(n, in, 0));
      out[0] = Tensor::ScalarI64(static_cast<int64_t>(s->items().size()));
      return out;
    }
    case OpKind::kSplitToSequence: return Split(n, in, kernel);
    case OpKind::kConcatFromSequence:
      *kernel = "own concat-from-sequence";
      return Concat(n, in);
    case OpKind::kOptional:
      if (const Tensor* x = input(0)) {
        out[0] = x->is_dense() ? Owned(*x) : *x;
      } else {
        const auto dtype = static_cast<DType>(n.attrs.GetInt("edgec_dtype", static_cast<int64_t>(DType::kF32)));
        out[0] = Tensor::None(dtype, n.attrs.GetInt("edgec_sequence", 0) ? ValueKind::kSequence : ValueKind::kTensor);
      }
      return out;
    case OpKind::kOptionalHasElement: {
      Tensor b(DType::kBool, {});
      b.data<bool>()[0] = input(0) && !input(0)->is_none();
      out[0] = std::move(b);
      return out;
    }
    case OpKind::kOptionalGetElement:
    case OpKind::kIdentity:
      if (!input(0)) return InvalidArgument("{}: input 0 is missing", n.Label());
      if (n.op() == OpKind::kOptionalGetElement && input(0)->is_none()) {
        return InvalidArgument("{}: the optional holds nothing", n.Label());
      }
      out[0] = input(0)->is_dense() ? Owned(*input(0)) : *input(0);
      return out;
    default: return Internal("{} is not a sequence step", n.Label());
  }
}

}  // namespace edgec
