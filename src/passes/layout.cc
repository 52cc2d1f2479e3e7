// layout: not written yet.
#include "passes/pass.h"

namespace edgec::passes {

Status RunLayout(Graph& g, PassContext& ctx, const PassOptions& options) {
  return Unimplemented("pass layout is not written yet");
}

}  // namespace edgec::passes
