// horizontal-fusion: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunHorizontalFusion(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass horizontal-fusion is not written yet");
}

}  // namespace edgec::passes
