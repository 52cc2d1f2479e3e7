// Partitioning an integer graph (after quant::FoldQdqToInteger) between the NPU and the CPU.
//
// Legalization, per node, in this order; the first rule that fails keeps the node on the CPU
// with its reason:
//   1. the target lists the op (`supported_ops`)            "unsupported op Softmax"
//   2. every non-constant input and output has a dtype the target lists (`supported_dtypes`;
//      u8 tensors enter the NPU shifted by -128 to i8, exact, when "u8" is listed)
//                                                           "dtype f32 not supported"
//   3. static shapes                                        "dynamic shape"
//   4. the lowering takes the op and its attributes         "depthwise conv not lowered (group=32)"
//      (a Gather of computed indices fails here before rule 2: the DMA reads no index list)
//   5. the tiler finds a tiling that fits SRAM and the accumulators (GEMM-class nodes on the
//      MAC array; QLinearAdd/Mul, QuantizedLookup, pools and depthwise convs on the vector
//      cores, data movement as DMA, npu/vector_tiler.h)
// Cost rule for the nodes that pass (all times in seconds), each node costed as part of the
// segment it would join:
//   npu = simulated cycles of the chosen tiling / clock, without the task's dispatch overhead
//         when a node next to it in graph order is legal too (it joins that segment, one
//         dispatch for all), with it when it would be a segment alone; beside a legal
//         predecessor it reads nothing from, only the cycles beyond that predecessor's (the
//         segment runs the two at once on disjoint cores)
//       + transfers: every input produced on the CPU (or a graph input) and every output with a
//         CPU consumer (or a graph output) crosses DRAM once: bytes / DRAM bandwidth, plus the
//         NCHW <-> NHWC layout change as COPY work on the CPU: bytes / cpu.copy_bytes_per_s
//   cpu = MACs / cpu.int8_macs_per_s, or for nodes without MACs (adds, pools) the bytes they
//         read and write / cpu.copy_bytes_per_s (CpuSeconds)
//       + transfers: the same crossing for every input produced and every output read by a
//         legal node, and one dispatch when both graph-order neighbours are legal (the CPU
//         node splits their segment in two)
//   the node runs on the NPU when npu <= cpu, else on the CPU ("cost: cpu 0.010 ms + transfers
//   ... < npu ...").
// Whether a neighbour is on the CPU is decided from rules 1-5 alone (one pass, no iteration).
// Reshape-like views of an NPU value skip rules 1-5 (IsDramView): no program, no copy.
// Between two NPU nodes the tensor stays in DRAM in the NPU's layout (no copy).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"
#include "ir/graph.h"
#include "npu/tiler.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact.h"

namespace edgec::partition {

// The CPU the partitioner weighs the NPU against (defaults: a few-core edge application CPU
// with int8 dot-product instructions).
struct CpuCost {
  double int8_macs_per_s = 20e9;
  double copy_bytes_per_s = 4e9;
};

struct PartitionOptions {
  CpuCost cpu;
  npu::TilerOptions tiler;
  bool cost_rule = true;  // false: every legal node goes to the NPU
  // `--pin NODE=cpu|npu`: a node pinned to the CPU stays there (its neighbours count the
  // transfers); pinned to the NPU it skips the cost rule, and fails when rules 1-5 do not pass.
  std::map<std::string, artifact_io::Unit> pins;
};

// Why a node is where it is (the placement report's `code`; docs/profiling.md lists them).
enum class ReasonCode {
  kNpuCheaper,        // legal and the cost rule chose the NPU
  kNpuForced,         // legal, the cost rule off (--all-npu)
  kNpuView,           // a view of an NPU value's DRAM bytes
  kPinnedNpu,         // --pin NODE=npu
  kPinnedCpu,         // --pin NODE=cpu
  kUnsupportedOp,     // rule 1
  kUnsupportedDtype,  // rule 2
  kBoundary,          // the model's own float input/output conversion (Q of a graph input, DQ
                      // of a graph output) on the CPU: its vector cores take no f32 (rule 2),
                      // or the cost rule keeps it there: not a fallback, --strict ignores it
  kDynamicShape,      // rule 3
  kNotLowered,        // rule 4
  kNoTiling,          // rule 5
  kCpuCheaper,        // legal, but the cost rule chose the CPU
};
const char* ReasonCodeName(ReasonCode c);  // "npu_cheaper", "unsupported_op", ...

struct NodePlacement {
  const Node* node = nullptr;
  artifact_io::Unit unit = artifact_io::Unit::kCpu;
  std::string reason;        // why CPU, or the NPU's cost line
  ReasonCode code = ReasonCode::kCpuCheaper;
  // The violated constraint (the target field or rule) with the node's value and what the
  // target allows, and a fix hint (a --set, a dtype, a pin); empty when on the NPU.
  std::string constraint, actual, allowed, hint;
  bool legal = false;        // passed rules 1-5
  npu::TilerResult tiling;   // legal GEMM-class nodes
  npu::VectorTiling vector_tiling;  // legal vector-core nodes (QLinearAdd, MaxPool)
  double npu_cycles = 0;     // simulated, of the chosen tiling
  std::string plan;          // the chosen tiling, as text
  int64_t macs = 0;
  double npu_s = 0, transfer_s = 0, cpu_s = 0;
  double cpu_transfer_s = 0;  // on the CPU: its crossings to legal neighbours (+ a split segment's dispatch)
  int64_t transfer_bytes = 0;
  int64_t moved_bytes = 0;    // data movement nodes: bytes the DMA copies
  bool element_rows = false;  // ... in rows of one byte (the innermost dim changes)
};

// Every node of `g` (topological order) with its unit and reason.
StatusOr<std::vector<NodePlacement>> Partition(const Graph& g, const npu::Target& t, const PartitionOptions& o = {});

// A reshape-like node (Reshape, Flatten, Squeeze, Unsqueeze, Identity) on an int8 value whose
// bytes in the NPU's DRAM layout are the same before and after (NHWC = row-major: one pixel
// or one channel), or any data movement node (a Transpose too) whose strided copy keeps
// every byte in place (lower::MoveLayerOf(...).identity()): when its input comes from an NPU
// node it is placed on the NPU as a view of that DRAM tensor, with no program and no copy.
bool IsDramView(const Node& n);

// The cost rule's CPU time of a node.
double CpuSeconds(const Node& n, const CpuCost& cpu);

// Legality alone (rules 1-4): "" when the NPU may take the node, else the reason.
std::string NpuSupport(const Node& n, const npu::Target& t);

// Rules 1-4 with the violated constraint (code, constraint, actual, allowed, hint filled);
// returns the reason ("" when legal).
std::string NpuSupportDetail(const Node& n, const npu::Target& t, NodePlacement* p);

// The placement report: per node its unit, code, reason, constraint, costs on each unit, hint.
nlohmann::json PlacementJson(const std::vector<NodePlacement>& p);

// Table: node, op, unit, reason; the node counts; the data movement summary.
std::string FormatPlacements(const std::vector<NodePlacement>& p);

// Data movement nodes (Concat, Transpose, Slice, Split, reshape-likes) by where they ended:
// views of the DRAM tensor (no work), strided DMA copies on the NPU (the transposes among
// them are the ones that remain real data movement), or on the CPU.
struct DataMovementSummary {
  int views = 0, npu_copies = 0, npu_transposes = 0, element_rows = 0, cpu_moves = 0, cpu_transposes = 0;
  int64_t npu_bytes = 0;
};
DataMovementSummary SummarizeDataMovement(const std::vector<NodePlacement>& p);

}  // namespace edgec::partition
