// fuse-gelu: GELU as exporters decompose it becomes one Gelu.
//   erf form:  x · 0.5 · (1 + erf(x / √2)), the inner scaling as Div(x, 1.4142) or
//              Mul(x, 0.7071);
//   tanh form: x · 0.5 · (1 + tanh(√(2/π) · (x + 0.044715 · x³))), x³ as Pow(x, 3),
//              Mul(x, Mul(x, x)) or Mul(Mul(x, x), x).
// The halving may come first (Mul(Mul(x, 0.5), 1 + erf)), last (Mul(Mul(x, 1 + erf), 0.5)),
// or on the bracket (Mul(x, Mul(1 + erf, 0.5))); Div by 2 counts as Mul by 0.5.
// Constants match within a relative 1e-4; intermediates must have no other readers.
//
// Before:  %h = Mul(%x, 0.5); %u = Div(%x, 1.4142135); %e = Erf(%u); %p = Add(%e, 1.0)
//          %y = Mul(%h, %p)
// After:   %y = Gelu(%x) {approximate="none"}
#include <cmath>

#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

// True when n is Mul(v, 0.5) or Div(v, 2) (v may be null: any operand).
bool IsHalving(const Node* n, const Value* v) {
  if (auto m = ScalarOperandOf(n, OpKind::kMul, v)) return NearConstant(m->value, 0.5);
  if (auto d = ScalarOperandOf(n, OpKind::kDiv, v)) return d->other_index == 0 && NearConstant(d->value, 2.0);
  return false;
}

// Matches 0.5 · x · bracket where `bracket` (1 + erf or 1 + tanh) has one reader; appends
// the nodes and returns the result value.
Value* MatchHalfXTimes(Value* bracket, Value* x, std::vector<Node*>* nodes, std::string* why) {
  Node* c = SoleConsumer(bracket);
  if (!c || (c->op() != OpKind::kMul && c->op() != OpKind::kDiv)) {
    *why = "1 + f(x) is not read by one Mul or Div";
    return nullptr;
  }
  Value* other = OtherInput(c, bracket);
  nodes->push_back(c);
  Node* next = SoleConsumer(c->output(0));
  // 0.5 on the bracket: Mul(x, Mul(bracket, 0.5)).
  if (IsHalving(c, bracket)) {
    if (next && next->op() == OpKind::kMul && OtherInput(next, c->output(0)) == x) {
      nodes->push_back(next);
      return next->output(0);
    }
    *why = "(1 + f(x)) / 2 is not multiplied by x";
    return nullptr;
  }
  if (c->op() != OpKind::kMul) {
    *why = "1 + f(x) is divided by something other than 2";
    return nullptr;
  }
  // 0.5 first: Mul(Mul(x, 0.5), bracket).
  if (Node* h = other->producer(); h && IsHalving(h, x) && SoleConsumer(other) == c) {
    nodes->push_back(h);
    return c->output(0);
  }
  // 0.5 last: Mul(Mul(x, bracket), 0.5).
  if (other == x && next && IsHalving(next, c->output(0))) {
    nodes->push_back(next);
    return next->output(0);
  }
  *why = "1 + f(x) is not multiplied by x and 0.5";
  return nullptr;
}

// Matches 1 + f where f is the output of `fn`; returns the bracket value.
Value* MatchOnePlus(Node* fn, std::vector<Node*>* nodes, std::string* why) {
  Node* add = SoleConsumer(fn->output(0));
  auto one = ScalarOperandOf(add, OpKind::kAdd, fn->output(0));
  if (!one || !NearConstant(one->value, 1.0)) {
    *why = fmt::format("{}'s only reader is not Add(·, 1)", OpName(fn->op()));
    return nullptr;
  }
  nodes->push_back(add);
  return add->output(0);
}

bool Commit(Graph& g, PassContext& ctx, Value* x, Value* out, std::vector<Node*>& nodes,
            const char* approximate, std::string* why) {
  if (!IsFloat(x->type.dtype)) {
    *why = fmt::format("x is {}, expected a float type", x->type.ToString());
    return false;
  }
  for (Node* n : nodes) {
    if (n->output(0) != out && !UsedOnlyBy(n->output(0), nodes)) {
      *why = fmt::format("intermediate '{}' is also used outside the pattern", n->output(0)->name());
      return false;
    }
  }
  Attributes attrs;
  attrs.Set("approximate", std::string(approximate));
  auto fused = AddInferredNode(g, OpKind::kGelu, FusedNodeName(nodes, "Gelu"), {x}, std::move(attrs), 1, nodes[0]);
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  AbsorbAllProvenance(*fused, nodes);
  return CommitFusion(g, ctx, out, *fused, static_cast<int>(nodes.size()), why);
}

bool FuseErfGelu(Graph& g, Node* erf, PassContext& ctx, std::string* why) {
  Node* scaling = erf->input(0)->producer();
  Value* x = nullptr;
  if (auto d = ScalarOperandOf(scaling, OpKind::kDiv); d && d->other_index == 0 && NearConstant(d->value, std::sqrt(2.0))) {
    x = d->other;
  } else if (auto m = ScalarOperandOf(scaling, OpKind::kMul); m && NearConstant(m->value, std::sqrt(0.5))) {
    x = m->other;
  } else {
    *why = "Erf's input is not Div(x, 1.4142) or Mul(x, 0.7071)";
    return false;
  }
  std::vector<Node*> nodes = {scaling, erf};
  Value* bracket = MatchOnePlus(erf, &nodes, why);
  if (!bracket) return false;
  Value* out = MatchHalfXTimes(bracket, x, &nodes, why);
  return out && Commit(g, ctx, x, out, nodes, "none", why);
}

// x³ as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x); returns x.
Value* MatchCube(Value* v, std::vector<Node*>* nodes) {
  Node* n = v->producer();
  if (auto p = ScalarOperandOf(n, OpKind::kPow); p && p->other_index == 0 && p->value == 3.0) {
    nodes->push_back(n);
    return p->other;
  }
  if (!n || n->op() != OpKind::kMul) return nullptr;
  for (int i = 0; i < 2; ++i) {
    Node* sq = n->input(1 - i)->producer();
    Value* x = n->input(i);
    if (sq && sq->op() == OpKind::kMul && sq->input(0) == x && sq->input(1) == x) {
      nodes->push_back(n);
      nodes->push_back(sq);
      return x;
    }
  }
  return nullptr;
}

bool FuseTanhGelu(Graph& g, Node* tanh, PassContext& ctx, std::string* why) {
  Node* scaling = tanh->input(0)->producer();
  auto k = ScalarOperandOf(scaling, OpKind::kMul);
  if (!k || !NearConstant(k->value, std::sqrt(2.0 / M_PI))) {
    *why = "Tanh's input is not Mul(·, sqrt(2/pi) = 0.79788)";
    return false;
  }
  Node* inner = ProducerOf(k->other, OpKind::kAdd);
  if (!inner) {
    *why = "sqrt(2/pi) does not multiply an Add (x + 0.044715 x³)";
    return false;
  }
  std::vector<Node*> nodes = {inner, scaling, tanh};
  Value* x = nullptr;
  for (int i = 0; i < 2 && !x; ++i) {
    Node* term = inner->input(1 - i)->producer();
    auto c = ScalarOperandOf(term, OpKind::kMul);
    if (!c || !NearConstant(c->value, 0.044715)) continue;
    std::vector<Node*> cube;
    if (MatchCube(c->other, &cube) == inner->input(i)) {
      x = inner->input(i);
      nodes.push_back(term);
      nodes.insert(nodes.end(), cube.begin(), cube.end());
    }
  }
  if (!x) {
    *why = "the Add is not x + 0.044715 · x³ of one x";
    return false;
  }
  Value* bracket = MatchOnePlus(tanh, &nodes, why);
  if (!bracket) return false;
  Value* out = MatchHalfXTimes(bracket, x, &nodes, why);
  return out && Commit(g, ctx, x, out, nodes, "tanh", why);
}

}  // namespace

Status RunFuseGelu(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"Gelu (erf)", {OpKind::kErf}, FuseErfGelu},
                           {"Gelu (tanh)", {OpKind::kTanh}, FuseTanhGelu}}, ctx);
}

}  // namespace edgec::passes
