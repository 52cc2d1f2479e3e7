// The first part of the `layout` pass (layout.cc): logical transposes cancelled before any
// layout is assigned. Logical values stay as they were (the reference executor ignores
// physical layouts), guarded by the layout tests in tests/passes.
//
// Logical transposes are cancelled: Transpose(q)∘Transpose(p) with p∘q = identity
// disappears ("cancelled Transpose pair"; otherwise the two merge into one, "merged
// Transpose pair", when the inner one has no other reader); a Transpose followed by a
// single-use chain of elementwise ops that ends in its inverse Transpose is sunk through
// the chain and cancels: constants of binary ops are transposed (broadcast-aware), a
// second operand that is the same Transpose of another value loses its Transpose too.
//
// Before:  %t = Transpose(%x) {perm=[0, 2, 3, 1]}; %r = Relu(%t); %a = Add(%r, %c[C])
//          %y = Transpose(%a) {perm=[0, 3, 1, 2]}
// After:   %r = Relu(%x); %y = Add(%r, %c'[C, 1, 1])
#include "passes/layout_transposes.h"

#include <algorithm>
#include <numeric>

#include "ir/physical_layout.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {
namespace {

std::vector<int64_t> TransposePerm(const Node* t) {
  std::vector<int64_t> perm = t->attrs.GetInts("perm");
  if (perm.empty() && t->input(0)->type.rank_known) {
    perm.resize(t->input(0)->type.rank());
    std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the axes
  }
  return perm;
}

bool IsIdentityPerm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// A logical Transpose (not a layout conversion) whose input rank is known.
bool IsLogicalTranspose(const Node* n) {
  return n && n->op() == OpKind::kTranspose && !IsRelayout(*n) && n->input(0) &&
         n->input(0)->type.rank_known;
}


// Transposes a constant (any dtype) by `perm`: out axis i is input axis perm[i].
Tensor TransposeConstant(const Tensor& t, const std::vector<int64_t>& perm) {
  const int r = t.rank();
  Dims out_dims(r);
  for (int i = 0; i < r; ++i) out_dims[i] = t.dim(static_cast<int>(perm[i]));
  Tensor out(t.dtype(), out_dims);
  Strides read = TransposeStrides(RowMajorStrides(t.dims()), perm);
  const size_t es = DTypeSize(t.dtype());
  const char* src = static_cast<const char*>(t.raw());
  char* dst = static_cast<char*>(out.raw());
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < out.numel(); ++k) {
    int64_t off = 0;
    for (int i = 0; i < r; ++i) off += idx[i] * read[i];
    std::memcpy(dst + k * es, src + off * es, es);
    for (int i = r - 1; i >= 0; --i) {
      if (++idx[i] < out_dims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// The permutation of Transpose(q)∘Transpose(p) at `outer`, or nullopt with *why.
std::optional<std::vector<int64_t>> ComposedPerm(const Node* outer, std::string* why) {
  if (!IsLogicalTranspose(outer)) {
    *why = "a layout conversion";
    return std::nullopt;
  }
  Node* inner = outer->input(0)->producer();
  if (!IsLogicalTranspose(inner)) {
    *why = "input is not produced by a Transpose";
    return std::nullopt;
  }
  std::vector<int64_t> p = TransposePerm(inner), q = TransposePerm(outer);
  if (p.size() != q.size()) {
    *why = "permutations of different ranks";
    return std::nullopt;
  }
  std::vector<int64_t> composed(q.size());
  for (size_t i = 0; i < q.size(); ++i) composed[i] = p[q[i]];
  return composed;
}

bool CancelTransposePair(Graph& g, Node* outer, PassContext&, std::string* why) {
  auto composed = ComposedPerm(outer, why);
  if (!composed) return false;
  if (!IsIdentityPerm(*composed)) {
    *why = "the two permutations do not cancel";
    return false;
  }
  if (!ReplaceValue(g, outer->output(0), outer->input(0)->producer()->input(0))) {
    *why = "the result is a graph output and the Transpose's source cannot take its name";
    return false;
  }
  return true;
}

bool MergeTransposePair(Graph& g, Node* outer, PassContext&, std::string* why) {
  auto composed = ComposedPerm(outer, why);
  if (!composed) return false;
  Node* inner = outer->input(0)->producer();
  if (IsIdentityPerm(*composed)) {
    *why = "the pair cancels";
    return false;
  }
  if (!HasSingleUse(inner->output(0))) {
    *why = "the inner Transpose has other uses (merging would not remove it)";
    return false;
  }
  Attributes a;
  a.Set("perm", *composed);
  auto merged = AddInferredNode(g, OpKind::kTranspose, g.FreshName(outer->name()),
                                {inner->input(0)}, a, 1, inner);
  if (!merged.ok()) {
    *why = merged.status().message();
    return false;
  }
  AbsorbProvenance(*merged, outer);
  if (!ReplaceValue(g, outer->output(0), (*merged)->output(0))) {
    g.RemoveNode(*merged);
    *why = "the result is a graph output that cannot be renamed";
    return false;
  }
  return true;
}

// An elementwise node that commutes with a Transpose of its data input `from`: unary ops
// (other inputs constant scalars), and binary ops whose other inputs are constants
// (transposed on the way) or the same Transpose of another value.
bool CommutesWithTranspose(const Node* n, const Value* from, const std::vector<int64_t>& perm,
                           std::string* why) {
  if (n->num_outputs() != 1) {
    *why = fmt::format("{} has {} outputs", n->Label(), n->num_outputs());
    return false;
  }
  if (IsUnaryElementwise(n->op())) {
    for (int i = 1; i < n->num_inputs(); ++i) {
      const Tensor* c = ConstantOf(n->input(i));
      if (n->input(i) && (!c || c->numel() != 1)) {
        *why = fmt::format("{} input {} is not a constant scalar", n->Label(), i);
        return false;
      }
    }
    if (n->input(0) != from) {
      *why = fmt::format("{} reads the Transpose as a parameter", n->Label());
      return false;
    }
    return true;
  }
  if (!IsBinaryElementwise(n->op()) || n->op() == OpKind::kFusedAdd) {
    *why = fmt::format("{} is not elementwise", n->Label());
    return false;
  }
  const int r = static_cast<int>(perm.size());
  if (!n->output(0)->type.rank_known || n->output(0)->type.rank() != r) {
    *why = fmt::format("{} broadcasts to another rank", n->Label());
    return false;
  }
  int reads_from = 0;
  for (const Value* v : n->inputs()) {
    if (!v) continue;
    if (v == from) {
      ++reads_from;
      continue;
    }
    if (v->is_constant()) {
      if (v->type.rank() > r) {
        *why = "a constant of higher rank";
        return false;
      }
      continue;
    }
    Node* t = v->producer();
    if (!IsLogicalTranspose(t) || TransposePerm(t) != perm || !HasSingleUse(v) ||
        t->input(0)->type.rank() != r) {
      *why = fmt::format("{} reads '{}', which is not the same Transpose of another value",
                         n->Label(), v->name());
      return false;
    }
  }
  if (reads_from != 1) {
    *why = fmt::format("{} reads the value {} times", n->Label(), reads_from);
    return false;
  }
  return true;
}

bool SinkTransposeThroughElementwise(Graph& g, Node* t, PassContext& ctx, std::string* why) {
  if (!IsLogicalTranspose(t)) {
    *why = "a layout conversion";
    return false;
  }
  std::vector<int64_t> perm = TransposePerm(t);
  // Follow the single-use chain down to an inverse Transpose.
  std::vector<Node*> chain;
  Value* cur = t->output(0);
  Node* inverse = nullptr;
  while (true) {
    if (!HasSingleUse(cur)) {
      *why = fmt::format("'{}' has {} uses{}", cur->name(), cur->uses().size(),
                         cur->is_graph_output() ? " and is a graph output" : "");
      return false;
    }
    Node* next = cur->uses()[0].node;
    if (IsLogicalTranspose(next)) {
      std::vector<int64_t> q = TransposePerm(next);
      bool inv = q.size() == perm.size();
      for (size_t i = 0; inv && i < q.size(); ++i) inv = perm[q[i]] == static_cast<int64_t>(i);
      if (!inv) {
        *why = "the chain ends in a Transpose that is not the inverse";
        return false;
      }
      inverse = next;
      break;
    }
    if (!CommutesWithTranspose(next, cur, perm, why)) return false;
    chain.push_back(next);
    cur = next->output(0);
  }
  if (chain.empty()) {
    *why = "nothing between the Transposes (a pair)";
    return false;
  }
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  const int r = static_cast<int>(perm.size());
  // Rebuild the chain on the untransposed values.
  std::unordered_map<const Value*, Value*> mapped = {{t->output(0), t->input(0)}};
  std::vector<Node*> created;
  std::string names;
  auto undo = [&] {
    for (auto it = created.rbegin(); it != created.rend(); ++it) g.RemoveNode(*it);
  };
  for (Node* n : chain) {
    std::vector<Value*> ins;
    for (Value* v : n->inputs()) {
      if (!v) {
        ins.push_back(nullptr);
      } else if (mapped.count(v)) {
        ins.push_back(mapped[v]);
      } else if (v->is_constant() && (!IsBinaryElementwise(n->op()) || v->constant().numel() == 1)) {
        ins.push_back(v);
      } else if (v->is_constant()) {
        Dims expanded(r - v->type.rank(), 1);
        expanded.insert(expanded.end(), v->type.dims.begin(), v->type.dims.end());
        Tensor c = TransposeConstant(v->constant().Reshaped(expanded), inv);
        ins.push_back(g.AddConstant(g.FreshName(v->name() + ".transposed"), c));
      } else {
        ins.push_back(v->producer()->input(0));  // the same Transpose of another value
      }
    }
    auto made = AddInferredNode(g, n->op(), g.FreshName(n->name()), ins, n->attrs, 1, n);
    if (!made.ok()) {
      undo();
      *why = made.status().message();
      return false;
    }
    created.push_back(*made);
    mapped[n->output(0)] = (*made)->output(0);
    names += (names.empty() ? "" : ", ") + std::string(OpName(n->op()));
  }
  AbsorbProvenance(created.back(), t);
  AbsorbProvenance(created.back(), inverse);
  if (!ReplaceValue(g, inverse->output(0), created.back()->output(0))) {
    undo();
    *why = "the result is a graph output that cannot be renamed";
    return false;
  }
  ctx.ExplainLine(fmt::format("layout: {} sunk through {} and cancelled with {}", t->Label(),
                              names, inverse->Label()));
  return true;
}

}  // namespace

std::vector<Pattern> TransposeCancelPatterns() {
  return {
      {"cancelled Transpose pair", {OpKind::kTranspose}, CancelTransposePair},
      {"merged Transpose pair", {OpKind::kTranspose}, MergeTransposePair},
      {"Transpose sunk through elementwise and cancelled", {OpKind::kTranspose},
       SinkTransposeThroughElementwise},
  };
}

}  // namespace edgec::passes
