// fuse-layernorm: the decomposed LayerNorm exporters write (torch's nn.LayerNorm below
// opset 17) becomes one LayerNormalization (opset 17). The reduced axes must be the
// trailing dims; gamma (Mul) and beta (Add) are absorbed when they vary only over the
// normalized dims; without gamma the Scale is a constant of ones, without beta B is absent.
// Every intermediate must be read only inside the pattern (a mean used elsewhere stays).
//
// A mean is a ReduceMean or, after canonicalize, a GlobalAveragePool (the mean over dims 2..:
// the last dim of a rank-3 [batch, tokens, features] tensor).
//
// Before:  %m = ReduceMean(%x, [-1]); %d = Sub(%x, %m); %p = Pow(%d, 2.0)   (or Mul(%d, %d))
//          %v = ReduceMean(%p, [-1]); %a = Add(%v, 1e-5); %s = Sqrt(%a); %n = Div(%d, %s)
//          %g = Mul(%n, %gamma); %y = Add(%g, %beta)
// After:   %y = LayerNormalization(%x, %gamma, %beta) {axis=-1 (as a dim index), epsilon=1e-5}
#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

// The decomposed normalization (x - mean) / sqrt(var + eps), without gamma and beta.
using Normalization = NormalizationMatch;

// A ReduceMean or GlobalAveragePool producing v.
Node* MeanOf(const Value* v) {
  Node* m = ProducerOf(v, OpKind::kReduceMean);
  return m ? m : ProducerOf(v, OpKind::kGlobalAveragePool);
}

// The dims a mean reduces (keeping them), as KeptReducedAxes.
std::optional<std::vector<int>> MeanAxes(const Node* mean, int rank, std::string* why) {
  if (mean->op() == OpKind::kReduceMean) return KeptReducedAxes(mean, rank, why);
  std::vector<int> axes;
  for (int d = 2; d < rank; ++d) axes.push_back(d);
  if (axes.empty()) *why = fmt::format("{} of a rank-{} tensor", mean->Label(), rank);
  return axes.empty() ? std::nullopt : std::optional(axes);
}

std::optional<Normalization> MatchNormalization(Node* div, std::string* why) {
  Value* d = div->input(0);
  Node* sqrt = ProducerOf(div->input(1), OpKind::kSqrt);
  if (!sqrt) {
    *why = "the divisor is not a Sqrt";
    return std::nullopt;
  }
  auto eps = ScalarOperandOf(ProducerOf(sqrt->input(0), OpKind::kAdd));
  if (!eps) {
    *why = "Sqrt's input is not an Add of a scalar constant (epsilon)";
    return std::nullopt;
  }
  Node* add_eps = sqrt->input(0)->producer();
  Node* var = MeanOf(eps->other);
  if (!var) {
    *why = "epsilon is not added to a ReduceMean (the variance)";
    return std::nullopt;
  }
  Node* square = var->input(0)->producer();
  if (!IsSquareOf(square, d)) {
    *why = "the variance is not the mean of Pow(d, 2) or Mul(d, d) of the numerator d";
    return std::nullopt;
  }
  Node* sub = ProducerOf(d, OpKind::kSub);
  Node* mean = sub ? MeanOf(sub->input(1)) : nullptr;
  if (!mean || mean->input(0) != sub->input(0)) {
    *why = "the numerator is not Sub(x, ReduceMean(x))";
    return std::nullopt;
  }
  Normalization n;
  n.x = sub->input(0);
  n.epsilon = eps->value;
  n.nodes = {mean, sub, square, var, add_eps, sqrt, div};
  if (!IsFloat(n.x->type.dtype) || !n.x->type.rank_known || n.x->type.rank() == 0) {
    *why = fmt::format("x is {}, expected a float tensor of known rank", n.x->type.ToString());
    return std::nullopt;
  }
  const int rank = n.x->type.rank();
  auto mean_axes = MeanAxes(mean, rank, why);
  auto var_axes = MeanAxes(var, rank, why);
  if (!mean_axes || !var_axes) return std::nullopt;
  if (*mean_axes != *var_axes) {
    *why = "mean and variance reduce different axes";
    return std::nullopt;
  }
  auto axis = TrailingAxisOf(*mean_axes, rank);
  if (!axis) {
    *why = "the reduced axes are not the trailing dims";
    return std::nullopt;
  }
  n.axis = *axis;
  // Every intermediate is read only inside the pattern.
  const std::vector<std::pair<Value*, std::vector<Node*>>> readers = {
      {mean->output(0), {sub}},    {d, {square, div}},          {square->output(0), {var}},
      {var->output(0), {add_eps}}, {add_eps->output(0), {sqrt}}, {sqrt->output(0), {div}}};
  for (auto& [v, by] : readers) {
    if (!UsedOnlyBy(v, by)) {
      *why = fmt::format("intermediate '{}' is also used outside the pattern", v->name());
      return std::nullopt;
    }
  }
  return n;
}

// A LayerNormalization Scale/B of exactly the normalized dims made from the gamma/beta
// operand `w` (which broadcasts to x), or nullptr with the reason.
Value* NormalizedParam(Graph& g, Value* w, const Normalization& n, const std::string& name,
                       std::string* why) {
  const Dims& xd = n.x->type.dims;
  const Dims norm(xd.begin() + n.axis, xd.end());
  const TensorType& t = w->type;
  if (t.dtype != n.x->type.dtype || !t.rank_known) {
    *why = fmt::format("{} '{}' is {}, expected {} of known rank", name, w->name(), t.ToString(),
                       DTypeName(n.x->type.dtype));
    return nullptr;
  }
  if (t.dims == norm) return w;
  const int k = static_cast<int>(norm.size());
  // Leading dims beyond the normalized ones must be 1 (w varies only over normalized dims).
  for (int i = 0; i + k < t.rank(); ++i) {
    if (t.dims[i] != 1) {
      *why = fmt::format("{} '{}' {} varies over dims that are not normalized", name, w->name(), t.ToString());
      return nullptr;
    }
  }
  const Tensor* c = ConstantOf(w);
  if (!c || !TensorType{DType::kF32, norm}.IsStatic()) {
    *why = fmt::format("{} '{}' {} is not of the normalized shape {} and not a constant to reshape",
                       name, w->name(), t.ToString(), DimsToString(norm));
    return nullptr;
  }
  // Broadcast the constant to the normalized dims.
  const Dims tail(t.dims.begin() + std::max(0, t.rank() - k), t.dims.end());
  Tensor out(c->dtype(), norm);
  const std::vector<double> src = c->ToDoubleVector();
  const std::vector<int64_t> out_strides = ContiguousStrides(norm), src_strides = ContiguousStrides(tail);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t s = 0;
    for (size_t dd = 0; dd < tail.size(); ++dd) {
      const size_t od = norm.size() - tail.size() + dd;
      if (tail[dd] != 1) s += (i / out_strides[od] % norm[od]) * src_strides[dd];
    }
    StoreFromDouble(out.dtype(), out.raw(), i, src[s]);
  }
  return g.AddConstant(g.FreshName(w->name() + ".normalized"), std::move(out));
}

bool FuseLayerNorm(Graph& g, Node* div, PassContext& ctx, std::string* why) {
  auto n = MatchNormalization(div, why);
  if (!n) return false;
  std::vector<Node*> nodes = n->nodes;
  Value* out = div->output(0);
  Value* gamma = nullptr;
  Value* beta = nullptr;
  // Gamma and beta, when they are the only readers and keep the shape.
  auto affine = [&](OpKind op, const char* what, Value** param) {
    Node* next = SoleConsumer(out);
    if (!next || next->op() != op || next->output(0)->type.dims != out->type.dims) return;
    std::string reason;
    Value* p = NormalizedParam(g, OtherInput(next, out), *n, what, &reason);
    if (!p) {
      ctx.Explain("LayerNorm", *next, reason + "; not absorbed");
      return;
    }
    *param = p;
    nodes.push_back(next);
    out = next->output(0);
  };
  affine(OpKind::kMul, "gamma", &gamma);
  affine(OpKind::kAdd, "beta", &beta);
  const Dims& xd = n->x->type.dims;
  if (!gamma) {
    const Dims norm(xd.begin() + n->axis, xd.end());
    if (!TensorType{DType::kF32, norm}.IsStatic()) {
      *why = "no gamma and the normalized dims are not static (for a Scale of ones)";
      return false;
    }
    gamma = g.AddConstant(g.FreshName(div->name() + ".ones"), FilledOf(n->x->type.dtype, norm, 1.0));
  }
  Attributes attrs;
  attrs.Set("axis", int64_t{n->axis});
  attrs.Set("epsilon", static_cast<float>(n->epsilon));
  attrs.Set("stash_type", int64_t{n->x->type.dtype == DType::kF64 ? 11 : 1});
  std::vector<Value*> inputs = {n->x, gamma};
  if (beta) inputs.push_back(beta);
  auto fused = AddInferredNode(g, OpKind::kLayerNormalization, FusedNodeName(nodes, "LayerNormalization"),
                               inputs, std::move(attrs), 1, nodes[0]);
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  AbsorbAllProvenance(*fused, nodes);
  return CommitFusion(g, ctx, out, *fused, static_cast<int>(nodes.size()), why);
}

}  // namespace

Status RunFuseLayerNorm(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"LayerNorm", {OpKind::kDiv}, FuseLayerNorm}}, ctx);
}

}  // namespace edgec::passes
