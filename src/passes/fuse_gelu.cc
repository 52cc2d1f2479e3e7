// fuse-gelu: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseGelu(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-gelu is not written yet");
}

}  // namespace edgec::passes
