// fuse-layernorm: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseLayerNorm(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-layernorm is not written yet");
}

}  // namespace edgec::passes
