// fuse-attention: scaled dot-product attention as exporters write it becomes one Attention.
//   scores = MatMul(Q', K') with Q' = Q scaled and K' = K or Kᵀ (through a Transpose),
//   each side and the scores possibly scaled by Mul/Div with scalar constants (the scale
//   attribute is their product, computed in double); then an optional additive mask
//   (Add of a value that broadcasts to the scores without growing them); Softmax over the
//   last axis; MatMul(probabilities, V).
// A Transpose that feeds K' only and swaps its last two dims (after any other permutation)
// is absorbed: when the rest of its permutation is the identity it disappears, else it is
// replaced by the Transpose without the swap (e.g. the head split [0, 2, 1, 3]), and the
// Attention gets k_transposed=0. Without such a Transpose, K' is [..., D, Sk] as given and
// k_transposed=1. The Reshape/Transpose nodes that split and merge heads stay.
//
// Before:  %kt = Transpose(%k4) {perm=[0, 2, 3, 1]}; %s = MatMul(%q, %kt); %d = Div(%s, 8.0)
//          %m = Add(%d, %mask); %p = Softmax(%m) {axis=-1}; %y = MatMul(%p, %v)
// After:   %k = Transpose(%k4) {perm=[0, 2, 1, 3]}
//          %y = Attention(%q, %k, %v, %mask) {scale=0.125, k_transposed=0}
#include <cmath>

#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

// Walks back from v through Mul/Div by scalar constants whose outputs have one reader,
// multiplying their factors into *scale; returns the unscaled value.
Value* StripScaling(Value* v, double* scale, std::vector<Node*>* nodes) {
  for (;;) {
    Node* n = v->producer();
    if (!n || !HasSingleUse(v)) return v;
    if (auto m = ScalarOperandOf(n, OpKind::kMul); m && m->value != 0) {
      *scale *= m->value;
      v = m->other;
    } else if (auto d = ScalarOperandOf(n, OpKind::kDiv); d && d->other_index == 0 && d->value != 0) {
      *scale /= d->value;
      v = d->other;
    } else {
      return v;
    }
    nodes->push_back(n);
  }
}

// The additive mask of `add` (an Add of the scores and a value that broadcasts to them
// unidirectionally), or nullptr.
Value* MaskOf(const Node* add, Value* scores) {
  Value* mask = OtherInput(add, scores);
  if (!mask || mask == scores) return nullptr;
  const TensorType &s = scores->type, &m = mask->type, &y = add->output(0)->type;
  if (!s.rank_known || !m.rank_known || !y.rank_known || y.dims != s.dims || m.dtype != s.dtype) return nullptr;
  if (m.rank() > s.rank()) return nullptr;
  for (int i = 0; i < m.rank(); ++i) {
    const int64_t md = m.dims[m.rank() - 1 - i], sd = s.dims[s.rank() - 1 - i];
    if (md != 1 && (md == kUnknownDim || md != sd)) return nullptr;
  }
  return mask;
}

struct KeyInput {
  Value* k = nullptr;
  bool transposed = true;             // K is [..., D, Sk]
  Node* absorbed_transpose = nullptr;  // the Transpose folded into k_transposed
  std::vector<int64_t> remaining_perm;  // its permutation without the swap (empty: none)
};

// K' of the scores MatMul (after scaling was stripped).
KeyInput MatchKey(Value* kp) {
  KeyInput key{kp};
  Node* t = ProducerOf(kp, OpKind::kTranspose);
  if (!t || !HasSingleUse(kp) || !t->input(0)->type.rank_known) return key;
  const int rank = t->input(0)->type.rank();
  std::vector<int64_t> perm = t->attrs.GetInts("perm");
  if (perm.empty()) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (rank < 2 || static_cast<int>(perm.size()) != rank) return key;
  std::swap(perm[rank - 1], perm[rank - 2]);
  bool identity = true;
  for (int i = 0; i < rank; ++i) identity &= perm[i] == i;
  key.k = t->input(0);
  key.transposed = false;
  key.absorbed_transpose = t;
  if (!identity) key.remaining_perm = perm;
  return key;
}

bool FuseAttention(Graph& g, Node* softmax, PassContext& ctx, std::string* why) {
  Value* probs = softmax->output(0);
  const TensorType& st = probs->type;
  if (!st.rank_known || st.rank() < 2 || !IsFloat(st.dtype)) {
    *why = fmt::format("softmax output is {}, expected a float tensor of rank >= 2", st.ToString());
    return false;
  }
  const int64_t axis = softmax->attrs.GetInt("axis", -1);
  if (axis != -1 && axis != st.rank() - 1) {
    *why = fmt::format("softmax axis {} is not the last axis", axis);
    return false;
  }
  Node* out_mm = SoleConsumer(probs);
  if (!out_mm || out_mm->op() != OpKind::kMatMul || out_mm->input(0) != probs) {
    *why = "the probabilities are not read only by MatMul(probabilities, V)";
    return false;
  }
  std::vector<Node*> nodes = {softmax, out_mm};
  double scale = 1.0;
  Value* logits = softmax->input(0);
  Value* mask = nullptr;
  if (Node* add = ProducerOf(logits, OpKind::kAdd); add && HasSingleUse(logits)) {
    // The scores side leads to the MatMul (through scaling); the other side is the mask.
    for (int i = 0; i < 2 && !mask; ++i) {
      double s = 1.0;
      std::vector<Node*> tmp;
      Value* root = StripScaling(add->input(i), &s, &tmp);
      if (ProducerOf(root, OpKind::kMatMul) && (mask = MaskOf(add, add->input(i)))) logits = add->input(i);
    }
    if (!mask) {
      *why = "softmax input is an Add, but not scores + a mask that broadcasts to them";
      return false;
    }
    nodes.push_back(add);
  }
  Value* scores = StripScaling(logits, &scale, &nodes);
  Node* qk = ProducerOf(scores, OpKind::kMatMul);
  if (!qk || !HasSingleUse(scores)) {
    *why = "softmax input is not (scaled) MatMul(Q, K) read only by the softmax chain";
    return false;
  }
  nodes.push_back(qk);
  Value* q = StripScaling(qk->input(0), &scale, &nodes);
  Value* kp = StripScaling(qk->input(1), &scale, &nodes);
  KeyInput key = MatchKey(kp);
  if (key.absorbed_transpose) {
    // Scaling may also sit before the Transpose.
    key.k = StripScaling(key.k, &scale, &nodes);
    nodes.push_back(key.absorbed_transpose);
  }
  Value* v = out_mm->input(1);
  for (Value* t : {q, key.k, v}) {
    if (!t->type.rank_known || t->type.rank() < 2) {
      *why = fmt::format("'{}' is {}, expected rank >= 2", t->name(), t->type.ToString());
      return false;
    }
  }
  Value* k = key.k;
  std::vector<Node*> added;
  if (!key.remaining_perm.empty()) {
    Attributes perm;
    perm.Set("perm", key.remaining_perm);
    auto t = AddInferredNode(g, OpKind::kTranspose, key.absorbed_transpose->name(), {k}, std::move(perm), 1,
                             key.absorbed_transpose);
    if (!t.ok()) {
      *why = t.status().message();
      return false;
    }
    k = (*t)->output(0);
    added.push_back(*t);
  }
  Attributes attrs;
  attrs.Set("scale", static_cast<float>(scale));
  attrs.Set("k_transposed", int64_t{key.transposed ? 1 : 0});
  std::vector<Value*> inputs = {q, k, v};
  if (mask) inputs.push_back(mask);
  auto undo = [&](Node* fused) {
    if (fused) g.RemoveNode(fused);
    for (Node* n : added) g.RemoveNode(n);
    return false;
  };
  auto fused = AddInferredNode(g, OpKind::kAttention, FusedNodeName({qk, softmax, out_mm}, "Attention"), inputs,
                               std::move(attrs), 1, qk);
  if (!fused.ok()) {
    *why = fused.status().message();
    return undo(nullptr);
  }
  const TensorType& want = out_mm->output(0)->type;
  if ((*fused)->output(0)->type.dims != want.dims) {
    *why = fmt::format("Attention would be {} instead of {}", (*fused)->output(0)->type.ToString(), want.ToString());
    return undo(*fused);
  }
  AbsorbAllProvenance(*fused, nodes);
  // CommitFusion removes the fused node itself when it fails.
  if (!CommitFusion(g, ctx, out_mm->output(0), *fused, static_cast<int>(nodes.size()), why)) return undo(nullptr);
  ctx.stats().nodes_added += static_cast<int64_t>(added.size());
  if (key.absorbed_transpose) ctx.stats().rewrites["Attention: K transpose folded"]++;
  return true;
}

}  // namespace

Status RunFuseAttention(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"Attention", {OpKind::kSoftmax}, FuseAttention}}, ctx);
}

}  // namespace edgec::passes
