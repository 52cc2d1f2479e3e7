// Epilogues fused into the NPU's MAC and depthwise layers: a conv or matmul and the lookup
// activation after it run as one layer (one instruction sequence per output tile: MATMUL or
// VEC dwconv, VEC requantize, VEC lut, store), with no DRAM round trip between them.
#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "npu/target.h"
#include "quant/output_table.h"

namespace edgec::lower {

// fuse-npu-epilogue: a QuantizedLookup that is the only reader of an 8-bit QLinearConv (any
// group), QLinearMatMul with a constant right operand, QLinearGroupNormalization or
// QLinearLayerNormalization (with at least one item per vector core: npu_fuse_epilogue.cc
// NormSpreads) becomes that op's
// `edgec_output_table` (quant/output_table.h), the attribute the reference kernels and the
// fast CPU requantization apply to each output value, so the fused node means
// what the pair meant and `--device npu-sim` equals `--device cpu` bit for bit. Runs on the
// integer graph before partitioning, for targets that run lookups on the NPU (a target
// without QuantizedLookup keeps the pair, and its fallbacks stay tested). Neither value may
// be a graph output. Returns the number of lookups fused. Guarded by
// tests/lower/npu_epilogue_test.cc.
int FuseNpuEpilogues(Graph& g, const npu::Target& t);

// The integer graph as the NPU compile takes it (CompiledModel::Compile, NpuWorkload's
// segment estimate): shufflenet's Reshape -> Transpose -> Reshape channel shuffles as one
// ChannelShuffle (passes/fuse_channel_shuffle.cc), a per-pixel permutation of the channels
// that the NPU runs as one move (npu_move_layer.cc), then the fused epilogues above.
Status PrepareNpuGraph(Graph& g, const npu::Target& t);

// The node's `edgec_output_table` in the NPU's i8 terms (npu::ConvLayer::output_table),
// empty without the attribute: the index is the reference's (value - lowest) for u8 and i8
// alike, a u8 output's values shifted by -128. Inline: the runtime library's layer mapping
// (npu_layers.cc) reads it without the compiler's passes.
inline StatusOr<std::vector<int8_t>> NpuOutputTable(const Node& n) {
  const DType dt = n.output(0)->type.dtype;
  auto table = quant::ReadOutputTable(n.attrs, dt);
  if (!table.ok()) return table.status().WithContext(n.Label());
  std::vector<int8_t> npu;
  npu.reserve(table->size());
  for (int64_t v : *table) npu.push_back(static_cast<int8_t>(dt == DType::kU8 ? v - 128 : v));
  return npu;
}

}  // namespace edgec::lower
