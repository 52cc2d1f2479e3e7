// fuse-conv-bn: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseConvBn(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-conv-bn is not written yet");
}

}  // namespace edgec::passes
