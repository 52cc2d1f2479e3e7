// A Model's CPU session over the driver's Session (driver/session.h: one plan per set of
// input shapes, cached). Kept apart so that no file of the API sees both the library's
// Session and the public one.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernels/cpu/kernel.h"

namespace edgec::api {

struct CpuStepTime {
  const Node* node = nullptr;
  std::string kernel;
  int64_t nanos = 0;
};

class CpuRunner {
 public:
  struct Options {
    int opt_level = 3;
    int threads = 0;
    cpu::KernelTuning tuning;
    bool profiling = true;
    std::string pipeline;        // explicit pass list instead of opt_level
    bool fast_kernels = true;    // false: the reference kernels only
    bool verbose = false;        // plans built, fallbacks and staged copies (stderr)
  };
  struct PlanFigures {
    int threads = 0;
    int64_t arena_bytes = 0, lower_bound = 0, naive_bytes = 0;
    std::string summary;
  };
  static StatusOr<std::unique_ptr<CpuRunner>> Create(Graph g, const std::string& what, const Options& o);
  ~CpuRunner();

  Status Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs);
  // Wall time of the last Run's execution (not of building a plan for new shapes).
  double last_seconds() const;
  // The steps of the last Run's plan with their times (views and all).
  std::vector<CpuStepTime> LastSteps() const;
  // Builds (or finds) the plan for these input dims without running.
  StatusOr<PlanFigures> Prepare(const std::map<std::string, Dims>& shapes);
  // Per-step timing of the next runs; switching on restarts the step profile, which sums
  // the step times of every run while it is on.
  void SetProfiling(bool on);
  bool profiling() const;
  std::string StepProfileTable(int top) const;
  std::string StepProfileJson() const;

 private:
  CpuRunner();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace edgec::api
