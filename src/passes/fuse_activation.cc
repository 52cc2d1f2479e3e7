// fuse-activation: an activation that is the only reader of a Conv, Gemm, MatMul or of an
// epilogue node without activation becomes that node's epilogue. Recognized forms: Relu,
// Clip (constant bounds; ReLU6), LeakyRelu, HardSigmoid, HardSwish, x*HardSigmoid(x) (alpha
// 1/6, beta 1/2: HardSwish as opset-13 exports write it), x*Sigmoid(x) (SiLU), the
// composite Gelu op, Tanh, Sigmoid. A producer whose output has other readers keeps it.
//
// Before:  %c = Conv(%x, %w, %b); %y = Clip(%c, 0, 6)
//          %m = MatMul(%a, %k); %s = Sigmoid(%m); %z = Mul(%m, %s)
// After:   %y = FusedConv(%x, %w, %b) {activation="Clip", activation_alpha=0, activation_beta=6}
//          %z = FusedMatMul(%a, %k) {activation="Silu"}
#include "passes/epilogue_util.h"
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseActivation(Graph& g, PassContext& ctx, const PassOptions&) {
  static const std::vector<Pattern> patterns = ActivationPatterns(
      {OpKind::kConv, OpKind::kGemm, OpKind::kMatMul, OpKind::kFusedConv, OpKind::kFusedMatMul,
       OpKind::kFusedAdd});
  const int before = g.num_nodes();
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  ctx.stats().nodes_fused += before - g.num_nodes();
  return Status::Ok();
}

}  // namespace edgec::passes
