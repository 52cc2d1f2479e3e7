// merge-chains: merges a node into the node of the same kind (or reshape family) that
// feeds it, when the intermediate value has no other use.
//   Reshape/Flatten/Squeeze/Unsqueeze chains -> one Reshape to the final (static or
//     constant) shape, or nothing when it is the input's shape; Squeeze/Unsqueeze pairs
//     with the same constant axes cancel also when shapes are dynamic;
//   Transpose∘Transpose -> one Transpose with the composed permutation, or nothing;
//   Cast∘Cast -> one Cast (or nothing) when the middle type holds every source value
//     exactly (f32->f64->f32 is the identity; i64->i32->i64 truncates and stays);
//   Mul(Mul(x, c1), c2) -> Mul(x, c1·c2) and Add(Add(x, c1), c2) -> Add(x, c1+c2) for float
//     x, the constants combined in double and broadcast as the two nodes did.
//
// Before:  %a = Reshape(%x, [1, 64, 49]); %b = Reshape(%a, [64, 49])
//          %t = Transpose(%b) {perm=[1, 0]}; %u = Transpose(%t) {perm=[1, 0]}
//          %c = Cast(%u) {to=f64}; %d = Cast(%c) {to=f32}
//          %m = Mul(%d, 2.0); %n = Mul(%m, 0.5); %p = Add(%n, 1.0); %y = Add(%p, [1, 2, ...])
// After:   %r = Reshape(%x, [64, 49]); %n = Mul(%r, 1.0); %y = Add(%n, [2, 3, ...])
#include <algorithm>
#include <numeric>

#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

// The input of `outer` when it is produced by a node of one of `kinds` and read by `outer`
// alone; else nullptr with the reason.
Node* MergeableProducer(const Node* outer, std::initializer_list<OpKind> kinds, std::string* why) {
  Value* mid = outer->input(0);
  Node* inner = mid ? mid->producer() : nullptr;
  if (!inner || std::find(kinds.begin(), kinds.end(), inner->op()) == kinds.end()) {
    *why = "input is not produced by a node it merges with";
    return nullptr;
  }
  if (!HasSingleUse(mid)) {
    *why = fmt::format("intermediate '{}' has other uses{}", mid->name(),
                       mid->is_graph_output() ? " (graph output)" : "");
    return nullptr;
  }
  return inner;
}

// Replaces outer's output by `to` (removing `outer` later as dead).
bool Bypass(Graph& g, Node* outer, Value* to, std::string* why) {
  if (!ReplaceValue(g, outer->output(0), to)) {
    *why = fmt::format("output '{}' is a graph output and '{}' cannot take its name",
                       outer->output(0)->name(), to->name());
    return false;
  }
  return true;
}

// Adds the node replacing `inner` and `outer`, with both provenances, and rewires.
bool Replace(Graph& g, PassContext& ctx, Node* inner, Node* outer, OpKind op,
             std::vector<Value*> inputs, Attributes attrs, std::string* why) {
  auto n = AddInferredNode(g, op, outer->name(), std::move(inputs), std::move(attrs), 1, inner);
  if (!n.ok()) {
    *why = n.status().message();
    return false;
  }
  AbsorbProvenance(*n, outer);
  if ((*n)->output(0)->type.rank_known && outer->output(0)->type.rank_known &&
      (*n)->output(0)->type.dims != outer->output(0)->type.dims) {
    *why = fmt::format("merged node would have type {} instead of {}",
                       (*n)->output(0)->type.ToString(), outer->output(0)->type.ToString());
    g.RemoveNode(*n);
    return false;
  }
  if (!CommitFusion(g, ctx, outer->output(0), *n, 2, why)) return false;
  return true;
}

// --- reshape family ---

// Normalized, sorted constant axes of a Squeeze/Unsqueeze against `rank`.
std::optional<std::vector<int64_t>> ConstantAxes(const Node* n, int rank) {
  const Tensor* t = ConstantOf(n->input(1));
  if (!t || t->numel() == 0) return std::nullopt;
  std::vector<int64_t> axes;
  for (int64_t a : t->ToInt64Vector()) {
    if (a < -rank || a >= rank) return std::nullopt;
    axes.push_back(a < 0 ? a + rank : a);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// Unsqueeze(x, A) then Squeeze(A), or Squeeze(x, A) then Unsqueeze(A), with A constant.
bool SqueezePairCancels(const Node* inner, const Node* outer) {
  const bool pair = (inner->op() == OpKind::kUnsqueeze && outer->op() == OpKind::kSqueeze) ||
                    (inner->op() == OpKind::kSqueeze && outer->op() == OpKind::kUnsqueeze);
  if (!pair) return false;
  // Both axes lists refer to the rank of the larger of the three values.
  const Value* big = inner->op() == OpKind::kUnsqueeze ? inner->output(0) : inner->input(0);
  if (!big->type.rank_known) return false;
  auto a = ConstantAxes(inner, big->type.rank());
  auto b = ConstantAxes(outer, big->type.rank());
  return a && b && *a == *b;
}

// The constant target the merged Reshape gets, and its allowzero.
std::optional<std::pair<Dims, int64_t>> MergedTarget(const Node* outer) {
  const TensorType& y = outer->output(0)->type;
  if (y.IsStatic()) {
    const bool has_zero = std::find(y.dims.begin(), y.dims.end(), 0) != y.dims.end();
    return std::make_pair(y.dims, int64_t{has_zero ? 1 : 0});
  }
  if (outer->op() != OpKind::kReshape) return std::nullopt;
  const Tensor* shape = ConstantOf(outer->input(1));
  if (!shape) return std::nullopt;
  const int64_t allowzero = outer->attrs.GetInt("allowzero", 0);
  Dims d = shape->ToInt64Vector();
  // A 0 copies a dim of the intermediate value, which the merged node no longer sees.
  if (!allowzero && std::find(d.begin(), d.end(), 0) != d.end()) return std::nullopt;
  return std::make_pair(d, allowzero);
}

bool MergeReshapeChain(Graph& g, Node* outer, PassContext& ctx, std::string* why) {
  Node* inner = MergeableProducer(
      outer, {OpKind::kReshape, OpKind::kFlatten, OpKind::kSqueeze, OpKind::kUnsqueeze}, why);
  if (!inner) return false;
  Value* x = inner->input(0);
  const TensorType& y = outer->output(0)->type;
  if ((x->type.IsStatic() && y.IsStatic() && x->type == y) || SqueezePairCancels(inner, outer)) {
    return Bypass(g, outer, x, why);
  }
  auto target = MergedTarget(outer);
  if (!target) {
    *why = "the final shape is neither static nor a constant without 0 entries";
    return false;
  }
  Value* shape = g.AddConstant(g.FreshName(outer->name() + ".shape"), Tensor::VectorI64(target->first));
  Attributes attrs;
  if (target->second) attrs.Set("allowzero", target->second);
  return Replace(g, ctx, inner, outer, OpKind::kReshape, {x, shape}, std::move(attrs), why);
}

// --- Transpose ---

std::optional<std::vector<int64_t>> PermOf(const Node* t, const Value* input) {
  std::vector<int64_t> perm = t->attrs.GetInts("perm");
  if (!perm.empty()) return perm;
  if (!input->type.rank_known) return std::nullopt;
  perm.resize(input->type.rank());
  std::iota(perm.rbegin(), perm.rend(), 0);  // the default reverses the dims
  return perm;
}

bool MergeTransposes(Graph& g, Node* outer, PassContext& ctx, std::string* why) {
  Node* inner = MergeableProducer(outer, {OpKind::kTranspose}, why);
  if (!inner) return false;
  Value* x = inner->input(0);
  auto p1 = PermOf(inner, x), p2 = PermOf(outer, inner->output(0));
  if (!p1 || !p2 || p1->size() != p2->size()) {
    *why = "permutations unknown (default perm with unknown rank) or of different lengths";
    return false;
  }
  // y[i] = mid[p2[i]] = x[p1[p2[i]]].
  std::vector<int64_t> composed(p2->size());
  bool identity = true;
  for (size_t i = 0; i < composed.size(); ++i) {
    if ((*p2)[i] < 0 || (*p2)[i] >= static_cast<int64_t>(p1->size())) {
      *why = "permutation out of range";
      return false;
    }
    composed[i] = (*p1)[(*p2)[i]];
    identity &= composed[i] == static_cast<int64_t>(i);
  }
  if (identity) return Bypass(g, outer, x, why);
  Attributes attrs;
  attrs.Set("perm", composed);
  return Replace(g, ctx, inner, outer, OpKind::kTranspose, {x}, std::move(attrs), why);
}

// --- Cast ---

// True when every value of `from` is exactly a value of `to`.
bool HoldsExactly(DType from, DType to) {
  if (from == to) return true;
  using D = DType;
  auto in = [to](std::initializer_list<D> l) { return std::find(l.begin(), l.end(), to) != l.end(); };
  switch (from) {
    case D::kBool: return to != D::kUndefined;
    case D::kU8: return in({D::kU16, D::kU32, D::kU64, D::kI16, D::kI32, D::kI64, D::kF16, D::kBF16, D::kF32, D::kF64});
    case D::kI8: return in({D::kI16, D::kI32, D::kI64, D::kF16, D::kBF16, D::kF32, D::kF64});
    case D::kU16: return in({D::kU32, D::kU64, D::kI32, D::kI64, D::kF32, D::kF64});
    case D::kI16: return in({D::kI32, D::kI64, D::kF32, D::kF64});
    case D::kU32: return in({D::kU64, D::kI64, D::kF64});
    case D::kI32: return in({D::kI64, D::kF64});
    case D::kF16: case D::kBF16: return in({D::kF32, D::kF64});
    case D::kF32: return in({D::kF64});
    default: return false;
  }
}

bool MergeCasts(Graph& g, Node* outer, PassContext& ctx, std::string* why) {
  Node* inner = MergeableProducer(outer, {OpKind::kCast}, why);
  if (!inner) return false;
  Value* x = inner->input(0);
  const DType from = x->type.dtype;
  const DType mid = static_cast<DType>(inner->attrs.GetInt("to"));
  const DType to = static_cast<DType>(outer->attrs.GetInt("to"));
  if (!HoldsExactly(from, mid)) {
    *why = fmt::format("the middle type {} does not hold every {} value", DTypeName(mid), DTypeName(from));
    return false;
  }
  // An integer narrowing wraps; through a float it would become a float-to-int conversion.
  if (IsFloat(mid) && !IsFloat(from) && !IsFloat(to) && to != DType::kBool) {
    *why = fmt::format("{} -> {} -> {} turns an integer conversion into a float one",
                       DTypeName(from), DTypeName(mid), DTypeName(to));
    return false;
  }
  if (to == from) return Bypass(g, outer, x, why);
  Attributes attrs = outer->attrs;
  return Replace(g, ctx, inner, outer, OpKind::kCast, {x}, std::move(attrs), why);
}

// --- Mul and Add by constants ---

// The constant input of a two-input node whose other input is not constant.
struct ConstOperand {
  Value* other;
  const Tensor* constant;
};
std::optional<ConstOperand> ConstOperandOf(const Node* n) {
  if (n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return std::nullopt;
  for (int c = 0; c < 2; ++c) {
    if (n->input(c)->is_constant() && !n->input(1 - c)->is_constant()) {
      return ConstOperand{n->input(1 - c), &n->input(c)->constant()};
    }
  }
  return std::nullopt;
}

// Flat index into a tensor of dims `in` broadcast to `out` (right-aligned).
int64_t BroadcastIndex(const Dims& in, const Dims& out, int64_t out_index) {
  int64_t index = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t o = out.size() - 1 - k;
    const int64_t coord = out_index % out[o];
    out_index /= out[o];
    if (k < in.size()) {
      const int64_t d = in[in.size() - 1 - k];
      if (d != 1) index += coord * stride;
      stride *= d;
    }
  }
  return index;
}

bool MergeConstantChain(Graph& g, Node* outer, PassContext& ctx, std::string* why) {
  auto c2 = ConstOperandOf(outer);
  if (!c2) {
    *why = "no constant operand";
    return false;
  }
  Node* inner = c2->other->producer();
  if (!inner || inner->op() != outer->op()) {
    *why = fmt::format("the other operand is not produced by {}", OpName(outer->op()));
    return false;
  }
  if (!HasSingleUse(c2->other)) {
    *why = fmt::format("intermediate '{}' has other uses", c2->other->name());
    return false;
  }
  auto c1 = ConstOperandOf(inner);
  if (!c1) {
    *why = "the inner node has no constant operand";
    return false;
  }
  const DType dt = outer->output(0)->type.dtype;
  if (!IsFloat(dt) || c1->constant->dtype() != dt || c2->constant->dtype() != dt) {
    *why = fmt::format("{} is not a float type (integer chains stay)", DTypeName(dt));
    return false;
  }
  auto dims = BroadcastDims(c1->constant->dims(), c2->constant->dims());
  if (!dims.ok()) {
    *why = "the constants do not broadcast";
    return false;
  }
  // A product of a column and a row would be a new, larger constant.
  if (NumElements(*dims) > std::max(c1->constant->numel(), c2->constant->numel())) {
    *why = "the combined constant would be larger than both";
    return false;
  }
  const bool mul = outer->op() == OpKind::kMul;
  Tensor combined(dt, *dims);
  const std::vector<double> a = c1->constant->ToDoubleVector(), b = c2->constant->ToDoubleVector();
  for (int64_t i = 0; i < combined.numel(); ++i) {
    const double u = a[BroadcastIndex(c1->constant->dims(), *dims, i)];
    const double v = b[BroadcastIndex(c2->constant->dims(), *dims, i)];
    StoreFromDouble(dt, combined.raw(), i, mul ? u * v : u + v);
  }
  Value* c = g.AddConstant(g.FreshName(outer->name() + ".combined"), std::move(combined));
  return Replace(g, ctx, inner, outer, outer->op(), {c1->other, c}, Attributes(), why);
}

}  // namespace

Status RunMergeChains(Graph& g, PassContext& ctx, const PassOptions&) {
  const std::vector<Pattern> patterns = {
      {"Reshape chain", {OpKind::kReshape, OpKind::kFlatten, OpKind::kSqueeze, OpKind::kUnsqueeze}, MergeReshapeChain},
      {"Transpose+Transpose", {OpKind::kTranspose}, MergeTransposes},
      {"Cast+Cast", {OpKind::kCast}, MergeCasts},
      {"Mul+Mul by constants", {OpKind::kMul}, MergeConstantChain},
      {"Add+Add by constants", {OpKind::kAdd}, MergeConstantChain},
  };
  return ApplyPatterns(g, patterns, ctx);
}

}  // namespace edgec::passes
