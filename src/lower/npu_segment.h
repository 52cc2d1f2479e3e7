// An NPU segment of the graph — a maximal run of consecutive nodes placed on the NPU — as one
// NPU program (npu/segment.h): each node lowered alone by its one per-layer lowering
// (LowerNode, npu_compile.h), the SRAM residency plan over the run's order (npu/sram_plan.h), and the
// assembly into one task with tokens across layers.
//
// Tensors: every non-constant value the run's nodes read or write. A view (a reshape-like
// node placed on the NPU as a view of its input, partition::IsDramView) is no layer: its
// output is its input's tensor under a second name. A tensor read outside the run (by a CPU
// node, a later segment, or as a graph output) or coming from outside stays in DRAM, its
// region named after the value (and after each view of it); the others may stay in SRAM.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "npu/lower_attention.h"
#include "npu/segment.h"
#include "npu/sram_plan.h"
#include "partition/partition.h"

namespace edgec::lower {

struct NpuSegmentBuild {
  npu::Program program;                       // one task; layer_names = the nodes lowered, in order
  std::vector<std::string> inputs, outputs;   // values crossing the segment's boundary
  std::vector<std::string> nodes;             // every node of the run (views included)
  std::vector<npu::SramPlanLayer> plan_layers;
  std::vector<npu::SramPlanTensor> plan_tensors;
  npu::SramPlan plan;
  std::string listing;  // the SRAM plan and the per-node tilings, as text
  // What the segment made of a node beyond its placement (node name -> text): the nodes of an
  // attention layer name it, its tiling, cycles, scores' SRAM and the segment's DRAM bytes.
  std::map<std::string, std::string> notes;
};

// `run`: consecutive NPU placements (graph order); `opt`: the tiler's options for re-tiling.
//
// Attention: a chain scores MatMul -> Softmax -> context MatMul with only views between
// (npu_attention.h) is one layer (npu/lower_attention.h) when its fused program simulates
// faster than the three layers alone and the whole segment simulates faster with it (the
// segment is built both ways); the listing names it with its tiling, the SRAM its scores take
// and the DRAM bytes the unfused chain would move for them. Guarded by
// tests/lower/npu_attention_segment_test.cc.
//
// Schedule: consecutive layers none of which reads another's output form a parallel group
// (a fire module's expand convs, a residual block's side conv beside its first conv); its
// members run at once on disjoint core sets, each re-tiled for its share of the cores, when
// that beats running them one after another (npu_segment.cc: PlanParallelGroups).
// `keep_weights`: weights that fit stay in SRAM between calls (the target's
// shared_sram.resident_weights, for a model whose SRAM this segment alone uses).
StatusOr<NpuSegmentBuild> BuildNpuSegment(const std::vector<const partition::NodePlacement*>& run,
                                          const npu::Target& t, const std::string& name,
                                          const npu::TilerOptions& opt = {}, bool keep_weights = false);

// The target as one layer of a segment sees it: `cores` of the AI cores and `sram_bytes` of
// the shared SRAM (a layer lowered for it is relocated by the segment assembler).
npu::Target SubTarget(const npu::Target& t, int cores, int64_t sram_bytes);

// A node's tiling chosen again for target `t` (the tiler's or the vector tiler's choice).
struct RetiledNode {
  partition::NodePlacement placement;  // `base` with the new tiling and plan text
  double cycles = 0;                   // simulated alone, dispatch included
  int64_t dram_bytes = 0;              // GEMM-class layers: DRAM bytes of the choice
  npu::AttentionTiling attention;      // an attention layer's choice (npu_attention.h)
};
StatusOr<RetiledNode> RetileNode(const Node& n, const npu::Target& t, const npu::TilerOptions& opt,
                                 const partition::NodePlacement& base);

}  // namespace edgec::lower
