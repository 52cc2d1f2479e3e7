// fuse-activation: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseActivation(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-activation is not written yet");
}

}  // namespace edgec::passes
