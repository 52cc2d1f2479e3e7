// fuse-rmsnorm: x / sqrt(mean(x²) + eps) [· scale] in the forms exporters write becomes
// RmsNormalization. x² is Pow(x, 2) or Mul(x, x); the division is Div(x, s), or
// Mul(x, r) with r = Reciprocal(s), Div(1, s) or Pow(mean + eps, -0.5). The mean must run
// over the trailing dims; a following Mul by a value that broadcasts to x is the scale
// (otherwise the scale is a scalar 1).
//
// Before:  %p = Pow(%x, 2.0); %m = ReduceMean(%p, [-1]); %a = Add(%m, 1e-6); %s = Sqrt(%a)
//          %r = Reciprocal(%s); %n = Mul(%x, %r); %y = Mul(%n, %weight)
// After:   %y = RmsNormalization(%x, %weight) {axis=2, epsilon=1e-6}
#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

using RmsMatch = NormalizationMatch;

// Matches mean(x²) + eps at the value `a` for the given x; appends its nodes.
bool MatchMeanSquarePlusEps(Value* a, Value* x, RmsMatch* m, std::string* why) {
  auto eps = ScalarOperandOf(ProducerOf(a, OpKind::kAdd));
  if (!eps) {
    *why = "the root's input is not an Add of a scalar constant (epsilon)";
    return false;
  }
  Node* mean = ProducerOf(eps->other, OpKind::kReduceMean);
  if (!mean) {
    *why = "epsilon is not added to a ReduceMean";
    return false;
  }
  Node* square = mean->input(0)->producer();
  if (!IsSquareOf(square, x)) {
    *why = "the mean is not of Pow(x, 2) or Mul(x, x) of the normalized x";
    return false;
  }
  if (!IsFloat(x->type.dtype) || !x->type.rank_known || x->type.rank() == 0) {
    *why = fmt::format("x is {}, expected a float tensor of known rank", x->type.ToString());
    return false;
  }
  auto axes = KeptReducedAxes(mean, x->type.rank(), why);
  if (!axes) return false;
  auto axis = TrailingAxisOf(*axes, x->type.rank());
  if (!axis) {
    *why = "the reduced axes are not the trailing dims";
    return false;
  }
  m->x = x;
  m->axis = *axis;
  m->epsilon = eps->value;
  m->nodes.insert(m->nodes.begin(), {square, mean, a->producer()});
  return true;
}

// Matches `r` = 1 / sqrt(mean(x²) + eps) in its three forms.
bool MatchInverseRms(Value* r, Value* x, RmsMatch* m, std::string* why) {
  Node* rn = r->producer();
  if (!rn) {
    *why = "no reciprocal root";
    return false;
  }
  if (auto p = ScalarOperandOf(rn, OpKind::kPow); p && p->other_index == 0 && p->value == -0.5) {
    m->nodes = {rn};
    return MatchMeanSquarePlusEps(p->other, x, m, why);
  }
  Value* s = nullptr;
  if (rn->op() == OpKind::kReciprocal) {
    s = rn->input(0);
  } else if (auto one = ScalarOperandOf(rn, OpKind::kDiv); one && one->other_index == 1 && one->value == 1.0) {
    s = one->other;
  }
  Node* sqrt = s ? ProducerOf(s, OpKind::kSqrt) : nullptr;
  if (!sqrt) {
    *why = "the other factor is not Reciprocal(Sqrt), Div(1, Sqrt) or Pow(·, -0.5)";
    return false;
  }
  m->nodes = {sqrt, rn};
  return MatchMeanSquarePlusEps(sqrt->input(0), x, m, why);
}

std::optional<RmsMatch> MatchRms(Node* root, std::string* why) {
  RmsMatch m;
  if (root->op() == OpKind::kDiv) {
    Node* sqrt = ProducerOf(root->input(1), OpKind::kSqrt);
    if (!sqrt) {
      *why = "the divisor is not a Sqrt";
      return std::nullopt;
    }
    m.nodes = {sqrt};
    if (!MatchMeanSquarePlusEps(sqrt->input(0), root->input(0), &m, why)) return std::nullopt;
  } else {
    bool found = false;
    std::string reason;
    for (int i = 0; i < 2 && !found; ++i) {
      m = RmsMatch();
      found = MatchInverseRms(root->input(1 - i), root->input(i), &m, i == 0 ? why : &reason);
    }
    if (!found) return std::nullopt;
  }
  m.nodes.push_back(root);
  // Every value between x and the root is read inside the pattern only.
  for (size_t i = 0; i + 1 < m.nodes.size(); ++i) {
    if (!UsedOnlyBy(m.nodes[i]->output(0), m.nodes)) {
      *why = fmt::format("intermediate '{}' is also used outside the pattern", m.nodes[i]->output(0)->name());
      return std::nullopt;
    }
  }
  return m;
}

bool FuseRmsNorm(Graph& g, Node* root, PassContext& ctx, std::string* why) {
  auto m = MatchRms(root, why);
  if (!m) return false;
  Value* out = root->output(0);
  Value* scale = nullptr;
  if (Node* mul = SoleConsumer(out); mul && mul->op() == OpKind::kMul &&
                                     mul->output(0)->type.dims == out->type.dims) {
    Value* w = OtherInput(mul, out);
    if (w && w != out && w->type.dtype == m->x->type.dtype) {
      scale = w;
      m->nodes.push_back(mul);
      out = mul->output(0);
    }
  }
  if (!scale) scale = g.AddConstant(g.FreshName(root->name() + ".one"), ScalarOf(m->x->type.dtype, 1.0));
  Attributes attrs;
  attrs.Set("axis", int64_t{m->axis});
  attrs.Set("epsilon", static_cast<float>(m->epsilon));
  auto fused = AddInferredNode(g, OpKind::kRmsNormalization, FusedNodeName(m->nodes, "RmsNormalization"),
                               {m->x, scale}, std::move(attrs), 1, m->nodes[0]);
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  AbsorbAllProvenance(*fused, m->nodes);
  return CommitFusion(g, ctx, out, *fused, static_cast<int>(m->nodes.size()), why);
}

}  // namespace

Status RunFuseRmsNorm(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"RMSNorm", {OpKind::kDiv, OpKind::kMul}, FuseRmsNorm}}, ctx);
}

}  // namespace edgec::passes
