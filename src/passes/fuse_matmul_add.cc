// fuse-matmul-add: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunFuseMatMulAdd(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass fuse-matmul-add is not written yet");
}

}  // namespace edgec::passes
