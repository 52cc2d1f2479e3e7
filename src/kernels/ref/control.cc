// The control family (If, Loop, Scan, SequenceMap) has no kernel here: a kernel never sees a Graph, and
// these ops run subgraphs. The executors run them (runtime/control_flow.h); reaching this
// table is a bug in the caller, reported as such.
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {
Status NotAKernel(KernelContext& ctx) {
  return Internal("{}: control flow runs its subgraphs in the executor, not as a kernel", ctx.label);
}
}  // namespace

Status If(KernelContext& ctx) { return NotAKernel(ctx); }
Status Loop(KernelContext& ctx) { return NotAKernel(ctx); }
Status Scan(KernelContext& ctx) { return NotAKernel(ctx); }
Status SequenceMap(KernelContext& ctx) { return NotAKernel(ctx); }

}  // namespace edgec::ref
