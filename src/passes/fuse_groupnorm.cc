// fuse-groupnorm: torch's GroupNorm as exported below opset 21 becomes one GroupNormalization
// (edgec's internal op, ops.def). The InstanceNormalization's Scale and B must be ones and
// zeros (torch writes them so); gamma and beta must vary only over the channels; every
// intermediate must be read only inside the pattern. Without the Add, B is zeros.
//
// Before:  %g = Reshape(%x [N, C, H, W], [N, G, -1])
//          %n = InstanceNormalization(%g, ones[G], zeros[G]) {epsilon}
//          %r = Reshape(%n, [N, C, H, W]); %s = Mul(%r, %gamma [C, 1, 1]); %y = Add(%s, %beta [C, 1, 1])
// After:   %y = GroupNormalization(%x, %gamma [C], %beta [C]) {num_groups = G, epsilon}
// tests/passes/fuse_groupnorm_test.cc guards the rewrite and the non-matches.
#include "passes/fuse_composite_util.h"
#include "passes/groupnorm_pattern.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

bool AllEqual(const Tensor* t, double v) {
  if (!t) return false;
  for (double d : t->ToDoubleVector())
    if (d != v) return false;
  return true;
}

// The per-channel values [C] of a constant that broadcasts to x [N, C, spatial...] varying only
// over C (dims [C, 1, ...] or [1, C, 1, ...] or a scalar); nullopt otherwise.
std::optional<Tensor> PerChannel(const Value* v, const Dims& x) {
  const Tensor* t = ConstantOf(v);
  if (!t || !v->type.rank_known || v->type.rank() > static_cast<int>(x.size())) return std::nullopt;
  const int64_t c = x[1];
  Dims al(x.size() - v->type.rank(), 1);
  al.insert(al.end(), v->type.dims.begin(), v->type.dims.end());
  for (size_t i = 0; i < al.size(); ++i)
    if (al[i] != 1 && (i != 1 || al[i] != c)) return std::nullopt;
  const std::vector<double> vals = t->ToDoubleVector();
  Tensor out(v->type.dtype, {c});
  for (int64_t i = 0; i < c; ++i) StoreFromDouble(out.dtype(), out.raw(), i, vals[vals.size() == 1 ? 0 : i]);
  return out;
}

}  // namespace

std::optional<GroupNormMatch> MatchGroupNorm(const Node* inorm, std::string* why) {
  auto fail = [&](std::string s) -> std::optional<GroupNormMatch> {
    *why = std::move(s);
    return std::nullopt;
  };
  if (inorm->op() != OpKind::kInstanceNormalization) return fail("not an InstanceNormalization");
  GroupNormMatch m;
  m.inorm = const_cast<Node*>(inorm);
  m.grouped = ProducerOf(inorm->input(0), OpKind::kReshape);
  if (!m.grouped) return fail("input is not a Reshape");
  m.x = m.grouped->input(0);
  const TensorType& xt = m.x->type;
  if (!IsFloat(xt.dtype) || !xt.IsStatic() || xt.rank() < 3) return fail(fmt::format("x is {}, expected a static float [N, C, spatial...]", xt.ToString()));
  const Dims& gd = inorm->input(0)->type.dims;
  if (gd.size() != 3 || gd[0] != xt.dims[0] || xt.dims[1] % gd[1] != 0 || NumElements(gd) != NumElements(xt.dims))
    return fail(fmt::format("the Reshape to {} does not group the channels of {}", DimsToString(gd), DimsToString(xt.dims)));
  m.groups = gd[1];
  if (!AllEqual(ConstantOf(inorm->input(1)), 1.0) || !AllEqual(ConstantOf(inorm->input(2)), 0.0))
    return fail("InstanceNormalization's Scale and B are not constant ones and zeros");
  m.epsilon = inorm->attrs.GetFloat("epsilon", 1e-5f);
  Node* back = SoleConsumer(inorm->output(0));
  if (!back || back->op() != OpKind::kReshape || back->output(0)->type.dims != xt.dims)
    return fail("the normalized value is not reshaped back to x's shape alone");
  Node* mul = SoleConsumer(back->output(0));
  if (!mul || mul->op() != OpKind::kMul) return fail("no Mul by gamma after the Reshape back");
  m.gamma = PerChannel(OtherInput(mul, back->output(0)), xt.dims);
  if (!m.gamma || mul->output(0)->type.dims != xt.dims) return fail("gamma is not a per-channel constant");
  m.nodes = {m.grouped, m.inorm, back, mul};
  m.output = mul->output(0);
  Node* add = SoleConsumer(mul->output(0));
  if (add && add->op() == OpKind::kAdd && add->output(0)->type.dims == xt.dims) {
    m.beta = PerChannel(OtherInput(add, mul->output(0)), xt.dims);
    if (m.beta) {
      m.nodes.push_back(add);
      m.output = add->output(0);
    }
  }
  if (!m.beta) m.beta = FilledOf(xt.dtype, {xt.dims[1]}, 0.0);
  if (!HasSingleUse(m.grouped->output(0))) return fail("the grouped Reshape has other readers");
  return m;
}

namespace {

bool FuseGroupNorm(Graph& g, Node* inorm, PassContext& ctx, std::string* why) {
  auto m = MatchGroupNorm(inorm, why);
  if (!m) return false;
  Attributes attrs;
  attrs.Set("num_groups", m->groups);
  attrs.Set("epsilon", m->epsilon);
  Value* gamma = g.AddConstant(g.FreshName(m->nodes[3]->name() + ".gamma"), *m->gamma);
  Value* beta = g.AddConstant(g.FreshName(m->nodes.back()->name() + ".beta"), *m->beta);
  auto fused = AddInferredNode(g, OpKind::kGroupNormalization, FusedNodeName(m->nodes, "GroupNormalization"),
                               {m->x, gamma, beta}, std::move(attrs), 1, m->nodes[0]);
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  AbsorbAllProvenance(*fused, m->nodes);
  return CommitFusion(g, ctx, m->output, *fused, static_cast<int>(m->nodes.size()), why);
}

}  // namespace

Status RunFuseGroupNorm(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"GroupNorm", {OpKind::kInstanceNormalization}, FuseGroupNorm}}, ctx);
}

}  // namespace edgec::passes
