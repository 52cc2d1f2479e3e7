// unfuse: lowers every internal op (FusedConv, FusedMatMul, FusedAdd, Gelu,
// RmsNormalization, Attention, ChannelShuffle) to standard ONNX ops, so that an exported model runs in any
// runtime. The lowered nodes keep the fused node's provenance.
//
// Before:  %y = FusedConv(%x, %w, %b, %r) {activation="Relu"}
// After:   %c = Conv(%x, %w, %b); %s = Add(%c, %r); %y = Relu(%s)
#include "passes/pass_util.h"
#include "passes/unfuse.h"

namespace edgec::passes {

Status RunUnfuse(Graph& g, PassContext& ctx, const PassOptions&) {
  for (Node* n : g.nodes()) {
    ASSIGN_OR_RETURN(bool done, UnfuseEpilogue(g, n));
    if (!done) {
      ASSIGN_OR_RETURN(done, UnfuseComposite(g, n));
    }
    if (done) ctx.stats().rewrites[std::string("unfused ") + std::string(OpName(n->op()))]++;
  }
  ctx.stats().nodes_removed += RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
