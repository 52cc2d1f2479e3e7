// fuse-hard-activation: the hard activations as exporters decompose them become one op, so
// that they run in any layout (HardSigmoid and HardSwish are elementwise in ops.def: the
// layout pass keeps them in NHWC regions) and fuse-activation can fold them into a Conv.
//   clip(x + b, 0, c) / c          -> HardSigmoid(x) {alpha = 1/c, beta = b/c}   (c > 0)
//   x · clip(x + 3, 0, 6) / 6      -> HardSwish(x)   (the division first or last)
//   x · HardSigmoid(x) {1/6, 1/2}  -> HardSwish(x)   (opset < 14 exports of hardswish)
// Division by c may be Mul by 1/c; Add and Mul take either operand order. Constants match
// within a relative 1e-4; intermediates must have no other readers. Guarded by
// tests/passes/fuse_hard_activation_test.cc.
//
// Before:  %u = Add(%x, 3); %c = Clip(%u, 0, 6); %m = Mul(%x, %c); %y = Div(%m, 6)
// After:   %y = HardSwish(%x)
// Before:  %u = Add(%x, 3); %c = Clip(%u, 0, 6); %y = Div(%c, 6)
// After:   %y = HardSigmoid(%x) {alpha=0.16667, beta=0.5}
#include <cmath>

#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

// clip(x + b, 0, c) with c > 0.
struct ShiftedClip {
  Value* x;
  double b, c;
};

std::optional<ShiftedClip> MatchShiftedClip(Node* clip, std::vector<Node*>* nodes, std::string* why) {
  auto lo = ConstantScalar(clip->input(1));
  auto hi = ConstantScalar(clip->input(2));
  if (!lo || !hi || *lo != 0.0 || !(*hi > 0.0)) {
    *why = "Clip's bounds are not constants 0 and c > 0";
    return std::nullopt;
  }
  auto add = ScalarOperandOf(clip->input(0)->producer(), OpKind::kAdd);
  if (!add || SoleConsumer(clip->input(0)) != clip) {
    *why = "Clip's input is not Add(x, constant) read only by the Clip";
    return std::nullopt;
  }
  nodes->push_back(clip->input(0)->producer());
  nodes->push_back(clip);
  return ShiftedClip{add->other, add->value, *hi};
}

// True when n computes v / c, as Div(v, c) or Mul(v, 1/c).
bool IsDivisionBy(const Node* n, const Value* v, double c) {
  if (auto d = ScalarOperandOf(n, OpKind::kDiv, v)) return d->other_index == 0 && NearConstant(d->value, c);
  if (auto m = ScalarOperandOf(n, OpKind::kMul, v)) return NearConstant(m->value, 1.0 / c);
  return false;
}

bool IsHardSwishShape(double alpha, double beta) { return NearConstant(alpha, 1.0 / 6.0) && NearConstant(beta, 0.5); }

bool Commit(Graph& g, PassContext& ctx, OpKind op, Attributes attrs, Value* x, Value* out,
            const std::vector<Node*>& nodes, std::string* why) {
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
  if (out->type.dims != x->type.dims) {
    *why = fmt::format("the result {} does not have x's shape {}", out->type.ToString(), x->type.ToString());
    return false;
  }
  auto fused = AddInferredNode(g, op, FusedNodeName(nodes, OpName(op)), {x}, std::move(attrs), 1, nodes.front());
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  AbsorbAllProvenance(*fused, nodes);
  return CommitFusion(g, ctx, out, *fused, static_cast<int>(nodes.size()), why);
}

Attributes HardSigmoidAttrs(double alpha, double beta) {
  Attributes a;
  a.Set("alpha", static_cast<float>(alpha));
  a.Set("beta", static_cast<float>(beta));
  return a;
}

bool FuseClipForms(Graph& g, Node* clip, PassContext& ctx, std::string* why) {
  std::vector<Node*> nodes;
  auto sc = MatchShiftedClip(clip, &nodes, why);
  if (!sc) return false;
  const double alpha = 1.0 / sc->c, beta = sc->b / sc->c;
  Node* next = SoleConsumer(clip->output(0));
  if (!next) {
    *why = "Clip's output has more than one reader";
    return false;
  }
  nodes.push_back(next);
  if (IsDivisionBy(next, clip->output(0), sc->c)) {
    // clip(x + b, 0, c) / c, maybe then multiplied by x.
    Node* mul = SoleConsumer(next->output(0));
    if (mul && mul->op() == OpKind::kMul && OtherInput(mul, next->output(0)) == sc->x && IsHardSwishShape(alpha, beta)) {
      nodes.push_back(mul);
      return Commit(g, ctx, OpKind::kHardSwish, {}, sc->x, mul->output(0), nodes, why);
    }
    return Commit(g, ctx, OpKind::kHardSigmoid, HardSigmoidAttrs(alpha, beta), sc->x, next->output(0), nodes, why);
  }
  if (next->op() == OpKind::kMul && OtherInput(next, clip->output(0)) == sc->x) {
    // x · clip(x + b, 0, c), then / c.
    Node* div = SoleConsumer(next->output(0));
    if (!div || !IsDivisionBy(div, next->output(0), sc->c)) {
      *why = "x · clip(x + b, 0, c) is not divided by c";
      return false;
    }
    if (!IsHardSwishShape(alpha, beta)) {
      *why = fmt::format("x · clip(x + {}, 0, {}) / {} is not HardSwish (b = 3, c = 6)", sc->b, sc->c, sc->c);
      return false;
    }
    nodes.push_back(div);
    return Commit(g, ctx, OpKind::kHardSwish, {}, sc->x, div->output(0), nodes, why);
  }
  *why = "clip(x + b, 0, c) is neither divided by c nor multiplied by x";
  return false;
}

bool FuseGatedHardSigmoid(Graph& g, Node* mul, PassContext& ctx, std::string* why) {
  for (int side = 0; side < 2; ++side) {
    Node* gate = ProducerOf(mul->input(side), OpKind::kHardSigmoid);
    if (!gate || gate->input(0) != mul->input(1 - side)) continue;
    const double alpha = gate->attrs.GetFloat("alpha", 0.2f), beta = gate->attrs.GetFloat("beta", 0.5f);
    if (!IsHardSwishShape(alpha, beta)) {
      *why = fmt::format("{} has alpha={} beta={}, not 1/6 and 1/2", gate->Label(), alpha, beta);
      return false;
    }
    return Commit(g, ctx, OpKind::kHardSwish, {}, gate->input(0), mul->output(0), {gate, mul}, why);
  }
  *why = "not x · HardSigmoid(x)";
  return false;
}

}  // namespace

Status RunFuseHardActivation(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"HardSigmoid/HardSwish (clip)", {OpKind::kClip}, FuseClipForms},
                           {"x*HardSigmoid(x)", {OpKind::kMul}, FuseGatedHardSigmoid}}, ctx);
}

}  // namespace edgec::passes
