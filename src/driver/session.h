// Session: a model loaded once and run many times on the CPU. Plans are static: the first
// run with a given set of input shapes binds them, optimizes and builds the plan for those
// shapes; later runs with the same shapes reuse it (a small cache keyed by input dims).
//
// Shapes that depend on input values: a small input whose value decides shapes (the target
// shape of a Reshape, a Slice's starts, a Resize's sizes, a Range's limits) is a
// shape input; its value is part of the key, and the plan for it is built with the value
// as a constant, so every shape it decides is static and folded. Sizes known only after
// running (NonZero, Compress) run in the plan's dynamic part (runtime/plan.h).
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
  // The shape inputs found so far (names), once the first Run has looked.
  const std::vector<std::string>& shape_inputs() const { return shape_inputs_; }

 private:
  struct Entry {
    std::unique_ptr<Plan> plan;
    std::unique_ptr<PlanExecutor> executor;
    const Plan& plan_ref() const { return *plan; }
  };
  StatusOr<Entry*> EntryFor(const std::map<std::string, Dims>& shapes,
                            const std::map<std::string, Tensor>& shape_values = {});

  Graph source_;
  std::string what_;
  SessionOptions options_;
  std::map<std::string, std::unique_ptr<Entry>> cache_;
  std::vector<std::string> order_;  // oldest first, for eviction
  Entry* last_ = nullptr;
  int plans_built_ = 0;
  std::vector<std::string> shape_inputs_;
  bool shape_inputs_found_ = false;
};

// The inputs of `g` whose values decide shapes, given one set of input values: small
// integer inputs (at most 64 values) or float ones (at most 8) such that binding the value
// as a constant makes more of the graph's shapes static than binding the dims alone.
StatusOr<std::vector<std::string>> FindShapeInputs(const Graph& g, const std::map<std::string, Tensor>& inputs);

}  // namespace edgec
