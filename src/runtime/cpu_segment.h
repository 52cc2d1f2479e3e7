// The CPU side of a compiled model (artifact_run.h): every maximal run of consecutive CPU
// nodes, in the artifact graph's order, becomes a graph of its own and one fast CPU plan
// (lower::BuildCpuPlan: the CPU-only fusions, kernel selection, one arena), the same
// machinery an `.onnx` run uses. The run's graph inputs are the values it reads from
// earlier nodes (or the model's inputs), its graph outputs the values later nodes or the
// model read; names are the artifact's, so the executor hands tensors over by name.
// Both devices (npu-sim, cpu) run the same plans, so their CPU nodes agree bit for bit
// (tests/runtime/cpu_segment_test.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "runtime/plan.h"

namespace edgec {

struct CpuSegment {
  std::vector<const Node*> nodes;     // in the artifact graph, in order
  std::vector<const Value*> inputs;   // artifact values the segment reads (its graph inputs)
  std::vector<const Value*> outputs;  // artifact values read after it (its graph outputs)
  std::unique_ptr<Plan> plan;
  std::unique_ptr<PlanExecutor> exec;
  std::unordered_map<std::string, int> step_of;  // node name -> plan step (fused nodes absent)
  std::vector<Tensor> results;                   // PlanExecutor::Run's output buffers
  bool warm = false;                             // ran once untimed (RunCpuSegment)
};

// `nodes` (topologically ordered, all of `g`) as a graph of their own: constants shared,
// every value read from outside an input, every value read outside (or a graph output of
// `g`) an output, all under their names in `g` and with their types and quantization.
StatusOr<Graph> ExtractSegmentGraph(const Graph& g, const std::vector<const Node*>& nodes,
                                    std::vector<const Value*>* inputs, std::vector<const Value*>* outputs);

// One segment (and plan) per maximal run of consecutive nodes for which `on_cpu` holds.
StatusOr<std::vector<CpuSegment>> BuildCpuSegments(const Graph& g, const std::function<bool(const Node&)>& on_cpu,
                                                   const PlanOptions& options);

// Runs `s` on the tensors of `env` (by name) and puts its outputs there. `node_seconds`
// gets each node's measured kernel time (0 for fused nodes and views); `seconds` the whole
// run's wall time (copies into and out of the arena included). The first call runs the plan
// once more before the timed run (first-touch page faults, kernel and thread-pool set-up),
// so the times are the steady state's.
// With `record_threads` set by the caller, `node_threads` gets each node's parallel-region
// shares (cpu_thread_trace.h) from the timed run: the OS thread and [begin, end) in seconds
// from the node's step start; `caller` is the thread that ran the steps.
struct CpuThreadShare {
  int64_t tid = 0;
  double begin_s = 0, end_s = 0;
};
struct CpuSegmentTiming {
  std::unordered_map<std::string, double> node_seconds;
  double seconds = 0;
  bool record_threads = false;
  int64_t caller = 0;
  std::unordered_map<std::string, std::vector<CpuThreadShare>> node_threads;
};
Status RunCpuSegment(CpuSegment& s, std::unordered_map<std::string, Tensor>& env, CpuSegmentTiming* timing);

// What runs `node` in `s`: the plan's kernel description, "view", or "fused" (a CPU-only
// fusion took it into another step).
std::string CpuSegmentKernel(const CpuSegment& s, const std::string& node);

}  // namespace edgec
