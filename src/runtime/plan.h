// Plan: what compiling a Graph for the CPU yields — an ordered list of kernel instances
// prepared once (weights packed, shapes bound, scratch sized) over one arena laid out by
// the memory planner. A PlanExecutor owns the arena and runs the plan many times with no
// allocation on the hot path.
//
// Each step runs a fast kernel (src/kernels/cpu) when one fits the node, else the reference
// kernel on views into the arena; the reason for every fallback is kept for reports.
// Zero-copy views (memory::Placement::kView) are not steps that run.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "kernels/cpu/kernel.h"
#include "kernels/ref/kernel.h"
#include "memory/liveness.h"

namespace edgec {

struct PlanOptions {
  int threads = 0;            // 0: all cores
  bool fast_kernels = true;   // false: reference kernels only (for differential tests)
  bool in_place = true;
  cpu::KernelTuning tuning;   // the fast kernels' choices (cpu/kernel.h)
  // Run on a subgraph (a Loop body, an If branch) after its input shapes are bound and
  // before its own plan is built (runtime/subgraph_plans.h): the driver's pass pipeline.
  // Unset: the subgraph is planned as it is.
  std::function<Status(Graph&)> prepare_subgraph;
};

class DynamicStep;

struct PlanStepInfo {
  const Node* node = nullptr;
  std::string kernel;           // "onednn conv nhwc f32 (post-ops: sum, relu)" or "reference"
  std::string fallback_reason;  // why no fast kernel fits (empty when one does)
  bool view = false;            // zero-copy: nothing runs
  bool in_place = false;
  // Staging copies around the kernel: inputs copied into dense buffers before it runs,
  // outputs copied out after it, because the kernel cannot read or write the layout the
  // optimizer chose (a strided view, padded channels, NHWC for a reference kernel).
  std::vector<std::string> staged;  // "input 0 strided -> row-major"
  int64_t staged_bytes = 0;         // bytes copied per run
};

// A staging copy between the arena buffer of a step's input/output `index` and a private
// dense buffer the kernel reads or writes instead.
struct PlanStage {
  int index = 0;
  std::unique_ptr<cpu::Kernel> copy;  // input: arena -> staging; output: staging -> arena
  DType dtype = DType::kF32;
  Dims dims;
};

class Plan {
 public:
  // Takes ownership of a graph whose input shapes are static. Nodes whose output sizes are
  // known only after running (NonZero, NonMaxSuppression: the data selects), control flow,
  // and every node that reads such a value, form the dynamic part: they run after the
  // static steps, each on a fast kernel made for the shapes it meets at run time (or a fast
  // plan per subgraph; runtime/dynamic_step.h), their outputs allocated then. Everything
  // else is planned in the arena (tests/runtime/plan_test.cc: DynamicTailAfterNonZero).
  static StatusOr<std::unique_ptr<Plan>> Build(Graph g, const PlanOptions& options);

  const Graph& graph() const { return graph_; }
  const memory::MemoryPlan& memory() const { return memory_; }
  const std::vector<PlanStepInfo>& steps() const { return info_; }
  size_t scratch_bytes() const { return scratch_bytes_; }
  int threads() const { return threads_; }
  // "12 steps: 9 fast, 2 reference, 1 view, ..."
  std::string Summary() const;
  // Bytes the staging copies move per run (0 when every kernel reads the chosen layouts).
  int64_t staged_bytes() const;
  // The nodes of the dynamic part, in order (empty when every shape is static).
  std::vector<const Node*> dynamic_nodes() const;
  // The graph outputs the plan returns (graph() also lists the values the dynamic part
  // reads from the static steps).
  const std::vector<Value*>& outputs() const { return tail_ ? tail_->graph.outputs() : graph_.outputs(); }

 private:
  friend class PlanExecutor;
  using Stage = PlanStage;
  struct Step {
    const Node* node = nullptr;
    std::unique_ptr<cpu::Kernel> fast;
    ref::KernelFn ref = nullptr;
    bool view = false;
    bool in_place = false;
    std::vector<Stage> stage_in, stage_out;
    // Outputs whose buffer has padding gaps (channels padded for alignment): the whole
    // extent is zeroed before the kernel runs, so the gaps read as zeros.
    std::vector<std::pair<int, int64_t>> zero_extent;  // (output index, bytes)
  };
  // A graph output that is not dense row-major in the arena: copied out with `copy`.
  struct OutputCopy {
    std::unique_ptr<cpu::Kernel> copy;
  };
  // The dynamic part: the whole graph the plan was built from, its dynamic nodes, and where
  // each value they read from the static part is among graph_'s outputs.
  struct DynamicTail {
    Graph graph;
    std::vector<const Node*> nodes;
    std::vector<std::pair<const Value*, int>> from_static;
    std::vector<int> static_output;  // per graph output: index among graph_'s outputs, -1 if dynamic
    std::vector<std::string> placeholder_inputs;  // sequence/optional inputs: u8[0] in graph_
  };
  Graph graph_;
  std::unique_ptr<DynamicTail> tail_;
  memory::MemoryPlan memory_;
  std::vector<Step> steps_;
  std::vector<PlanStepInfo> info_;
  std::vector<OutputCopy> output_copies_;  // per graph output; copy null when dense
  size_t scratch_bytes_ = 0;
  int threads_ = 1;
  PlanOptions options_;  // for the dynamic part's kernels and subgraph plans
};

class PlanExecutor {
 public:
  // Allocates the arena and scratch and prepares every step's buffer pointers.
  explicit PlanExecutor(const Plan& plan);
  ~PlanExecutor();

  // Inputs must match the plan's input types exactly. `outputs` is resized to the graph's
  // outputs; tensors already of the right type are reused (no allocation).
  Status Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs);

  // Per step wall time of the last Run, in nanoseconds (profiling on when enabled), and when
  // each step began (steady clock, nanoseconds since its epoch: cpu_thread_trace.h's clock).
  void set_profiling(bool on) { profiling_ = on; }
  const std::vector<int64_t>& step_nanos() const { return step_nanos_; }
  const std::vector<int64_t>& step_begin_nanos() const { return step_begin_nanos_; }
  // The dynamic part (Plan::dynamic_nodes(), in order): per node the wall time of the last
  // Run (with profiling on) and the kernel it ran ("reference: <why>" when no fast one fit).
  const std::vector<int64_t>& dynamic_nanos() const { return dynamic_nanos_; }
  std::vector<std::string> dynamic_kernels() const;
  // The steps of the last Run that ran reference kernels, in the static steps, the dynamic
  // part and the subgraph plans ("Cast '/Cast': <reason>"); empty when every step was fast.
  std::vector<std::string> ReferenceSteps() const;

  // Sequence outputs of the dynamic part keep their items (no deep copy) and the static values
  // the dynamic part read are let go instead of reused by the next Run, so an item returned
  // stays as it was. Set by subgraph plans (a loop carrying a sequence would otherwise copy
  // every item every iteration); a top-level Run copies its outputs.
  void set_share_sequence_items(bool on) { share_sequence_items_ = on; }

  // Per graph input: whether Run reads the caller's tensor itself (when it is 64-byte
  // aligned) instead of copying it into the arena. Inputs read by a reference kernel, or
  // whose buffer a step writes, are always copied.
  const std::vector<bool>& inputs_read_in_place() const { return in_place_input_; }

 private:
  struct Bound {
    std::vector<const void*> in;   // what the kernel reads (staging buffers where staged)
    std::vector<void*> out;
    std::vector<const void*> stage_src;  // per Step::stage_in: the arena buffer
    std::vector<void*> stage_dst;        // per Step::stage_out: the arena buffer
    std::vector<std::pair<void*, size_t>> zero_first;  // per Step::zero_extent
    std::vector<const Tensor*> ref_in;  // views, for reference kernels
    std::vector<Tensor> ref_out;
    std::vector<size_t> zero_bytes;     // reference outputs are zero-filled before running
  };
  const Plan& plan_;
  Tensor arena_;
  Tensor scratch_;
  std::deque<Tensor> views_;  // reference views and private buffers (stable addresses)
  std::vector<Bound> bound_;
  std::vector<std::pair<std::string, std::pair<void*, size_t>>> input_slots_;
  std::vector<std::pair<const void*, size_t>> output_slots_;
  // A bound pointer that reads graph input `input` at byte `offset` (BindInputsInPlace).
  struct Redirect {
    const void** loc;
    int input;
    std::ptrdiff_t offset;
  };
  void BindInputsInPlace();
  // `checked`: Run has checked the inputs against the whole graph already.
  Status RunStatic(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs, bool checked = false);
  Status RunDynamic(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs);
  std::vector<Tensor> static_outputs_;  // with a dynamic part: the static steps' outputs
  std::vector<Redirect> redirects_;
  std::vector<bool> in_place_input_;        // per graph input: read from the caller's tensor
  std::vector<const std::byte*> input_base_;  // per graph input: this Run's base address
  bool profiling_ = false;
  bool share_sequence_items_ = false;
  std::vector<int64_t> step_nanos_, step_begin_nanos_;
  std::vector<std::unique_ptr<DynamicStep>> dynamic_;  // per dynamic node
  std::vector<int64_t> dynamic_nanos_;
};

}  // namespace edgec
