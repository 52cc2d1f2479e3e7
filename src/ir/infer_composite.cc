// Shape inference for the composite family (see ops.def).
#include "ir/infer.h"

namespace edgec::infer {

Status Gelu(InferContext& ctx) { return ctx.Unsupported("shape inference not written yet"); }
Status RmsNormalization(InferContext& ctx) { return ctx.Unsupported("shape inference not written yet"); }
Status Attention(InferContext& ctx) { return ctx.Unsupported("shape inference not written yet"); }

}  // namespace edgec::infer
