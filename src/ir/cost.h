// Static cost facts of a node computed from its value types: multiply-accumulates and
// parameter counts. -1 when a needed dim is unknown.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace edgec {

// MACs of one inference of the node (Conv, ConvTranspose, Gemm, MatMul, Einsum, their
// quantized forms, and the fused FusedConv and FusedMatMul); 0 for ops that do no
// multiply-accumulate work (composites such as Attention count 0 too).
int64_t NodeMacs(const Node& n);

// Bytes a data-movement node copies per inference: the output bytes of Transpose (layout
// conversions included: they are Transposes marked edgec_relayout), Concat, Pad and Cast,
// and of Reshape/Flatten/Squeeze/Unsqueeze when their input is not dense row-major in
// memory (ir/physical_layout.h; a reshape of dense row-major memory is a view, size-1 axes
// ignored). Nodes whose output is marked a view copy nothing (for Concat: inputs written in
// place). -1 when the output shape is unknown.
int64_t NodeCopyBytes(const Node& n);
// Sum over the graph (unknown sizes count as 0); `unknown` is set when any was unknown.
int64_t GraphCopyBytes(const Graph& g, bool* unknown = nullptr);

}  // namespace edgec
