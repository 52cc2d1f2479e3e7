// fuse-residual-add: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseResidualAdd(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-residual-add is not written yet");
}

}  // namespace edgec::passes
