// StepProfile: where a plan's time goes. It sums the per-step wall times PlanExecutor
// records (set_profiling) over many runs and ranks the steps: op, node, kernel (the fast
// kernel's description, or "reference: <why no fast kernel fits>"), mean ms per run and
// share of the plan's total. Views are not steps that run and are left out. The nodes of the
// plan's dynamic part follow the static steps (index steps().size() + k), with the kernel
// their last run chose (tests/runtime/dynamic_step_test.cc: ProfileListsTheDynamicSteps).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/plan.h"

namespace edgec {

class StepProfile {
 public:
  struct Row {
    size_t step = 0;       // index into Plan::steps()
    std::string op;        // "Conv", "FusedConv", ...
    std::string node;      // the node's name
    std::string kernel;    // "onednn conv nhwc f32 ..." or "reference: <reason>"
    double ms = 0;         // mean per run
    double share = 0;      // of the sum over all steps, 0..1
  };
  struct OpRow {
    std::string op;
    int steps = 0;
    double ms = 0;
    double share = 0;
  };

  explicit StepProfile(const Plan& plan);

  // One run's PlanExecutor::step_nanos() (one entry per plan step) and, with a dynamic
  // part, its dynamic_nanos() and dynamic_kernels().
  void Add(const std::vector<int64_t>& step_nanos, const std::vector<int64_t>& dynamic_nanos = {},
           const std::vector<std::string>& dynamic_kernels = {});
  int runs() const { return runs_; }

  // Steps that run, slowest first.
  std::vector<Row> Rows() const;
  // Time per op kind, slowest first.
  std::vector<OpRow> ByOp() const;
  // Mean ms per run over all steps.
  double TotalMs() const;

  // A text table of the `top` slowest steps (0 = all) and the time per op.
  std::string Table(int top) const;
  nlohmann::json ToJson() const;

 private:
  const Plan& plan_;
  std::vector<int64_t> total_nanos_;  // static steps, then the dynamic nodes
  std::vector<std::string> dynamic_kernels_;
  int runs_ = 0;
};

}  // namespace edgec
