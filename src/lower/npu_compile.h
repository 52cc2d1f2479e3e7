// Compiling an integer graph for a target: partition (partition.h), lower every NPU node to
// one NPU program (one task, the tiler's choice), and assemble the compiled model file's
// contents (runtime/artifact.h).
//
// The artifact's graph is the whole integer graph (weights included): the CPU runs its CPU
// nodes from it, and `edgec run --device cpu` runs every node from it. Each NPU node is one
// NPU segment whose program reads its inputs from the regions "<node>.input", "<node>.input1",
// ... and writes "<node>.output" (and "<node>.output1", ... for a Split) of its DRAM image, NHWC
// int8; weights and requantization parameters are
// in the image's constant part (dram_init). Consecutive NPU nodes hand their tensors over in
// DRAM in that layout (no copy); CPU nodes are grouped into maximal CPU segments.
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
};

StatusOr<CompileResult> CompileGraph(const Graph& g, const npu::Target& t, const std::string& source_model,
                                     const partition::PartitionOptions& o = {});

}  // namespace edgec::lower
