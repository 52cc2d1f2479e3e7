// fuse-rmsnorm: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseRmsNorm(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-rmsnorm is not written yet");
}

}  // namespace edgec::passes
