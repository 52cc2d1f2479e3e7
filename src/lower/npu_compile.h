// Compiling an integer graph for a target: partition (partition.h), lower every NPU node
// (the tiler's choice), assemble each run of consecutive NPU nodes into one NPU segment
// program (npu_segment.h: one task, the SRAM residency plan), and assemble the compiled
// model file's contents (runtime/artifact.h).
//
// The artifact's graph is the whole integer graph (weights included): the CPU runs its CPU
// nodes from it, and `edgec run --device cpu` runs every node from it. An NPU segment's
// program reads the values entering the segment from DRAM regions named after them and
// writes the values leaving it (read by the CPU, a later segment, or graph outputs) to
// regions named after them, NHWC int8; weights and requantization parameters are in the
// image's constant part (dram_init); tensors inside the segment stay in SRAM where the plan
// keeps them. CPU nodes are grouped into maximal CPU segments.
//
// The activation memory plan (memory/liveness.h over the graph's order: one arena for every
// non-constant value, CPU and NPU alike, views sharing their input's buffer) is stored with
// it: each value's offset and bytes, the arena size; the result also keeps the lower bound
// and the naive size for the report.
#pragma once

#include <string>

#include "ir/graph.h"
#include "partition/partition.h"
#include "runtime/artifact.h"

namespace edgec::lower {

struct CompileResult {
  artifact_io::CompiledModel model;
  std::vector<partition::NodePlacement> placements;
  std::string listing;  // the NPU programs as assembly (--emit=asm)
  std::string memory_summary;  // "arena 1.2 MiB (lower bound 1.2 MiB, naive 9.8 MiB), ..."
  std::string sram_summary;    // each NPU segment's SRAM plan (occupancy per layer, tensors' places)
};

// The NPU program of one node placed on the NPU, lowered alone (regions "<node>.input", ...,
// every DMA tagged with its region) for the tiling the partitioner chose; a view: an empty
// program. The one place a layer kind's lowering is called; segments assemble these
// (npu_segment.h).
StatusOr<npu::Program> LowerNode(const Node& n, const npu::Target& t, const partition::NodePlacement& p);

// The NPU side of a compiled model as the segment scheduler made it, timing only: every NPU
// segment's program simulated (the same programs `edgec run --device npu-sim` runs), with
// the SRAM plan's resident and spilled bytes. `edgec estimate` and `edgec sweep` report it
// for quantized models.
struct SegmentEstimate {
  double cycles = 0;  // NPU segments, one after another
  int64_t dram_read = 0, dram_written = 0, macs = 0;
  int64_t resident_bytes = 0;  // tensors kept in SRAM from producer to last consumer
  int64_t spilled_bytes = 0;   // tensors the plan wanted on chip but spilled to DRAM
  int segments = 0, layers = 0;
};
StatusOr<SegmentEstimate> EstimateSegments(const CompileResult& r, const npu::Target& t);

StatusOr<CompileResult> CompileGraph(const Graph& g, const npu::Target& t, const std::string& source_model,
                                     const partition::PartitionOptions& o = {});

}  // namespace edgec::lower
