// Fast CPU kernel registry. No fast kernel has landed yet: every node falls back to the
// reference kernel, and the plan reports this reason for each.
#include "kernels/cpu/kernel.h"

namespace edgec::cpu {

StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelRequest& req) {
  return Unimplemented("{}: no fast CPU kernel for {} yet", req.label, OpName(req.op));
}

std::vector<Layout> PreferredLayouts(OpKind) { return {Layout::kRowMajor}; }

void SetThreads(int) {}

}  // namespace edgec::cpu
