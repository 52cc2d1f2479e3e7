// fuse-attention: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseAttention(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-attention is not written yet");
}

}  // namespace edgec::passes
