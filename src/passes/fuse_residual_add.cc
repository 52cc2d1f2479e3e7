// fuse-residual-add: an Add of a Conv/MatMul-like output (no residual or activation yet, read
// only by the Add) and another tensor of exactly that shape makes the other tensor the
// node's residual input. An activation reading the result is then absorbed too (the
// epilogue adds the residual before activating, so this is exact). A plain Add read only by
// an activation becomes FusedAdd.
//
// Before:  %c = Conv(%x, %w, %b); %s = Add(%c, %identity); %y = Relu(%s)
//          %t = Add(%p, %q); %z = Relu(%t)                (p not fusable, q broadcasts)
// After:   %y = FusedConv(%x, %w, %b, %identity) {activation="Relu"}
//          %z = FusedAdd(%p, %q) {activation="Relu"}
#include "passes/epilogue_util.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {

namespace {

// The other side of the Add, of exactly the producer's output type, becomes its residual.
bool FoldResidual(Graph& g, Node* add, Node* producer, Value* other, std::string* why) {
  const Value* out = producer->output(0);
  if (!HasSingleUse(out)) {
    *why = fmt::format("{} output has other uses", producer->Label());
    return false;
  }
  if (!out->type.IsStatic() || !other->type.IsStatic() || out->type.dims != other->type.dims ||
      out->type.dtype != other->type.dtype) {
    *why = fmt::format("the other input {} is not exactly the {} output's type {}",
                       other->type.ToString(), producer->Label(), out->type.ToString());
    return false;
  }
  auto form = ToFusedForm(g, producer, why);
  if (!form) return false;
  if (form->op == OpKind::kFusedAdd) return false;
  if (form->residual() || form->activation().kind != Activation::kNone) {
    *why = fmt::format("{} already has a residual or an activation", producer->Label());
    return false;
  }
  form->inputs[3] = other;
  return ReplaceWithFused(g, add->output(0), *form, {producer, add}, why);
}

Pattern ResidualPattern(OpKind producer_op) {
  return AddIntoProducerPattern(fmt::format("{}+Add(residual)", OpName(producer_op)), producer_op, FoldResidual);
}

bool HasResidual(const Node* n, std::string* why) {
  if (n->num_inputs() < 4 || !n->input(3)) {
    *why = fmt::format("{} has no residual (fuse-activation's case)", n->Label());
    return false;
  }
  return true;
}

std::vector<Pattern> ResidualPatterns() {
  std::vector<Pattern> patterns;
  for (OpKind op : {OpKind::kConv, OpKind::kFusedConv, OpKind::kMatMul, OpKind::kGemm, OpKind::kFusedMatMul}) {
    patterns.push_back(ResidualPattern(op));
  }
  // The activation after a residual Add, and Add + activation -> FusedAdd. The rewriter
  // visits nodes in topological order, so an Add is tried as a residual before the
  // activation reading it could turn it into a FusedAdd.
  for (Pattern& p : ActivationPatterns({OpKind::kFusedConv, OpKind::kFusedMatMul}, HasResidual)) {
    patterns.push_back(std::move(p));
  }
  for (Pattern& p : ActivationPatterns({OpKind::kAdd})) patterns.push_back(std::move(p));
  return patterns;
}

}  // namespace

Status RunFuseResidualAdd(Graph& g, PassContext& ctx, const PassOptions&) {
  static const std::vector<Pattern> patterns = ResidualPatterns();
  const int before = g.num_nodes();
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  ctx.stats().nodes_fused += before - g.num_nodes();
  return Status::Ok();
}

}  // namespace edgec::passes
