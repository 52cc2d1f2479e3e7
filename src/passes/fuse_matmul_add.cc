// fuse-matmul-add: every Gemm becomes a FusedMatMul (beta folded into the bias), and a
// MatMul (or a FusedMatMul with an empty epilogue) whose only reader is an Add of a
// constant that broadcasts to its output without enlarging it takes that constant as bias.
//
// Before:  %g = Gemm(%a, %w, %c) {transB=1, beta=0.5}     (%c constant)
//          %m = MatMul(%x, %k); %y = Add(%m, %bias)        (%bias constant f32[768])
// After:   %g = FusedMatMul(%a, %w, %c') {transB=1}        (%c' = 0.5 * %c)
//          %y = FusedMatMul(%x, %k, %bias)
#include "passes/epilogue_util.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {

namespace {

bool GemmToFusedMatMul(Graph& g, Node* gemm, PassContext&, std::string* why) {
  auto form = ToFusedForm(g, gemm, why);
  if (!form) return false;
  return ReplaceWithFused(g, gemm->output(0), *form, {gemm}, why);
}

// True when `bias` broadcasts to `out` and every dim of `out` it does not stretch over is
// known to equal its own: then out + bias has out's shape.
bool BroadcastsWithoutEnlarging(const TensorType& bias, const TensorType& out, std::string* why) {
  bool ok = bias.rank_known && out.rank_known && bias.rank() <= out.rank();
  for (int d = 0; ok && d < bias.rank(); ++d) {
    const int64_t b = bias.dims[bias.rank() - 1 - d], o = out.dims[out.rank() - 1 - d];
    ok = b == 1 || (o != kUnknownDim && b == o);
  }
  if (!ok) *why = fmt::format("bias {} does not broadcast to the product {}", bias.ToString(), out.ToString());
  return ok;
}

// The constant side of the Add becomes the product's bias.
bool FoldBias(Graph& g, Node* add, Node* mm, Value* bias, std::string* why) {
  if (!ConstantOf(bias)) {
    *why = "the other input is not a constant (see fuse-residual-add)";
    return false;
  }
  if (!HasSingleUse(mm->output(0))) {
    *why = fmt::format("{} output has other uses", mm->Label());
    return false;
  }
  if (bias->type.dtype != mm->output(0)->type.dtype ||
      !BroadcastsWithoutEnlarging(bias->type, mm->output(0)->type, why)) {
    if (bias->type.dtype != mm->output(0)->type.dtype) *why = "bias dtype differs";
    return false;
  }
  auto form = ToFusedForm(g, mm, why);
  if (!form) return false;
  if (form->bias() || form->residual() || form->activation().kind != Activation::kNone) {
    *why = fmt::format("{} already has an epilogue", mm->Label());
    return false;
  }
  form->inputs[2] = bias;
  return ReplaceWithFused(g, add->output(0), *form, {mm, add}, why);
}

Pattern MatMulBiasPattern(OpKind producer_op) {
  return AddIntoProducerPattern(fmt::format("{}+Add", OpName(producer_op)), producer_op, FoldBias);
}

}  // namespace

Status RunFuseMatMulAdd(Graph& g, PassContext& ctx, const PassOptions&) {
  static const std::vector<Pattern> patterns = {
      MatMulBiasPattern(OpKind::kMatMul),
      MatMulBiasPattern(OpKind::kFusedMatMul),
      Pattern{"Gemm", {OpKind::kGemm}, GemmToFusedMatMul},
  };
  const int before = g.num_nodes();
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  ctx.stats().nodes_fused += before - g.num_nodes();
  return Status::Ok();
}

}  // namespace edgec::passes
