// The control family (If, Loop, Scan, SequenceMap) has no kernel here: a kernel never sees a Graph, and
// these ops run subgraphs. The executors run them (runtime/control_flow.h); reaching this
// table is a bug in the caller, reported as such.
#include "kernels/ref/kernel.h"
#include "support/name_list.h"

namespace edgec::ref {

namespace {
Status NotAKernel(KernelContext& ctx) {
  return Internal("{}: control flow runs its subgraphs in the executor, not as a kernel", ctx.label);
}
}  // namespace

EDGEC_SHARED_RULE(KernelContext, NotAKernel, If, Loop, Scan, SequenceMap)

}  // namespace edgec::ref
