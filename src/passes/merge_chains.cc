// merge-chains: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunMergeChains(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass merge-chains is not written yet");
}

}  // namespace edgec::passes
