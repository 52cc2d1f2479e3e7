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
#include <map>
#include <memory>
#include <string>
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
};

struct PlanStepInfo {
  const Node* node = nullptr;
  std::string kernel;           // "onednn conv nhwc f32 (post-ops: sum, relu)" or "reference"
  std::string fallback_reason;  // why no fast kernel fits (empty when one does)
  bool view = false;            // zero-copy: nothing runs
  bool in_place = false;
};

class Plan {
 public:
  // Takes ownership of a graph whose shapes are all static.
  static StatusOr<std::unique_ptr<Plan>> Build(Graph g, const PlanOptions& options);

  const Graph& graph() const { return graph_; }
  const memory::MemoryPlan& memory() const { return memory_; }
  const std::vector<PlanStepInfo>& steps() const { return info_; }
  size_t scratch_bytes() const { return scratch_bytes_; }
  int threads() const { return threads_; }
  // "12 steps: 9 fast, 2 reference, 1 view"
  std::string Summary() const;

 private:
  friend class PlanExecutor;
  struct Step {
    const Node* node = nullptr;
    std::unique_ptr<cpu::Kernel> fast;
    ref::KernelFn ref = nullptr;
    bool view = false;
    bool in_place = false;
  };
  Graph graph_;
  memory::MemoryPlan memory_;
  std::vector<Step> steps_;
  std::vector<PlanStepInfo> info_;
  size_t scratch_bytes_ = 0;
  int threads_ = 1;
};

class PlanExecutor {
 public:
  // Allocates the arena and scratch and prepares every step's buffer pointers.
  explicit PlanExecutor(const Plan& plan);

  // Inputs must match the plan's input types exactly. `outputs` is resized to the graph's
  // outputs; tensors already of the right type are reused (no allocation).
  Status Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs);

  // Per step wall time of the last Run, in nanoseconds (profiling on when enabled).
  void set_profiling(bool on) { profiling_ = on; }
  const std::vector<int64_t>& step_nanos() const { return step_nanos_; }

 private:
  struct Bound {
    std::vector<const void*> in;
    std::vector<void*> out;
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
  bool profiling_ = false;
  std::vector<int64_t> step_nanos_;
};

}  // namespace edgec
