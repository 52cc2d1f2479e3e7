// Reference kernels for the composite family (see ops.def).
#include "kernels/ref/kernel.h"

namespace edgec::ref {

Status Gelu(KernelContext& ctx) { return Unimplemented("{}: reference kernel not written yet", ctx.label); }
Status RmsNormalization(KernelContext& ctx) { return Unimplemented("{}: reference kernel not written yet", ctx.label); }
Status Attention(KernelContext& ctx) { return Unimplemented("{}: reference kernel not written yet", ctx.label); }

}  // namespace edgec::ref
