// Static cost facts of a node computed from its value types: multiply-accumulates and
// parameter counts. -1 when a needed dim is unknown.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace edgec {

// MACs of one inference of the node (Conv, ConvTranspose, Gemm, MatMul, Einsum and their
// quantized forms); 0 for ops that do no multiply-accumulate work.
int64_t NodeMacs(const Node& n);

}  // namespace edgec
