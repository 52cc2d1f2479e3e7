// Lowering of internal ops to standard ONNX ops, one function per family. Each returns
// true when it replaced `n` (then `n` is dead), false when `n` is not of its family.
#pragma once

#include "passes/pass.h"

namespace edgec::passes {

StatusOr<bool> UnfuseEpilogue(Graph& g, Node* n);   // unfuse_epilogue.cc
StatusOr<bool> UnfuseComposite(Graph& g, Node* n);  // unfuse_composite.cc

}  // namespace edgec::passes
