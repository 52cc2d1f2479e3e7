// Reference kernels for the epilogue family (see ops.def).
#include "kernels/ref/kernel.h"

namespace edgec::ref {

Status FusedConv(KernelContext& ctx) { return Unimplemented("{}: reference kernel not written yet", ctx.label); }
Status FusedMatMul(KernelContext& ctx) { return Unimplemented("{}: reference kernel not written yet", ctx.label); }
Status FusedAdd(KernelContext& ctx) { return Unimplemented("{}: reference kernel not written yet", ctx.label); }

}  // namespace edgec::ref
