// views: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunViews(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass views is not written yet");
}

}  // namespace edgec::passes
