// Shape inference for the epilogue family (see ops.def).
#include "ir/infer.h"

namespace edgec::infer {

Status FusedConv(InferContext& ctx) { return ctx.Unsupported("shape inference not written yet"); }
Status FusedMatMul(InferContext& ctx) { return ctx.Unsupported("shape inference not written yet"); }
Status FusedAdd(InferContext& ctx) { return ctx.Unsupported("shape inference not written yet"); }

}  // namespace edgec::infer
