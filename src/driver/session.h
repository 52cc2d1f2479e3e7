// Session: a model loaded once and run many times on the CPU. Plans are static: the first
// run with a given set of input shapes binds them, optimizes and builds the plan for those
// shapes; later runs with the same shapes reuse it (a small cache keyed by input dims).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"

namespace edgec {

struct SessionOptions {
  int opt_level = 3;
  std::string pipeline;      // explicit pass list instead of opt_level
  PlanOptions plan;
  bool verbose = false;      // say when a plan is built and what it holds (stderr)
  size_t max_cached_plans = 8;
};

class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Open(const std::string& model_path, const SessionOptions& options);
  // From a graph already imported (not yet bound or optimized).
  static StatusOr<std::unique_ptr<Session>> FromGraph(Graph g, std::string what, const SessionOptions& options);

  Status Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs);

  const Graph& source() const { return source_; }
  // The plan the last Run used (nullptr before the first run).
  const Plan* last_plan() const { return last_ ? &last_->plan_ref() : nullptr; }
  PlanExecutor* last_executor() { return last_ ? last_->executor.get() : nullptr; }
  int plans_built() const { return plans_built_; }
  // Builds (or finds) the plan for these input dims without running.
  StatusOr<const Plan*> Prepare(const std::map<std::string, Dims>& shapes);

 private:
  struct Entry {
    std::unique_ptr<Plan> plan;
    std::unique_ptr<PlanExecutor> executor;
    const Plan& plan_ref() const { return *plan; }
  };
  StatusOr<Entry*> EntryFor(const std::map<std::string, Dims>& shapes);

  Graph source_;
  std::string what_;
  SessionOptions options_;
  std::map<std::string, std::unique_ptr<Entry>> cache_;
  std::vector<std::string> order_;  // oldest first, for eviction
  Entry* last_ = nullptr;
  int plans_built_ = 0;
};

}  // namespace edgec
