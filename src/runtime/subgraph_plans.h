// SubgraphPlans: the subgraphs of one control-flow node (If, Loop, Scan, SequenceMap) run on fast CPU
// plans instead of the reference executor.
//
// Each subgraph is prepared once: a capture whose value is a constant of the enclosing graph
// (the weights of a loop body) becomes a constant of the subgraph, so its kernels pack it at
// creation. A plan is built per subgraph and set of input shapes (bound, then the
// enclosing plan's PlanOptions::prepare_subgraph, then Plan::Build) and kept with its own
// executor and arena; every branch taken, iteration or scan step reuses it. Its inputs (a
// loop's carried values among them) are read in place, not copied into the arena, when they
// are 64-byte aligned, as every tensor a plan returns is. Shapes that change per iteration
// get a plan each (kMaxPlans per subgraph, then the cache starts over). A sequence or
// optional value given to a subgraph is part of the key by its kind and element type only:
// the plan's dynamic part reads its items (runtime/sequence_step.h), and the executor hands
// sequence outputs back with their items shared (PlanExecutor::set_share_sequence_items), so
// a loop carrying a sequence copies no item per iteration. SequenceMap bodies run here too,
// a plan per item shape.
// tests/runtime/dynamic_step_test.cc: refine_loop, generated If/Loop/Scan graphs and a loop
// whose carried value grows per iteration, against the reference executor;
// tests/runtime/sequence_step_test.cc: SequenceMap and a loop carrying a sequence.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"
#include "support/status.h"

namespace edgec {

class SubgraphPlans {
 public:
  SubgraphPlans(const Node& n, const PlanOptions& options);
  ~SubgraphPlans();

  // The node's outputs (runtime/control_flow.h semantics) with its subgraphs on fast plans.
  StatusOr<std::vector<Tensor>> Run(const std::vector<const Tensor*>& inputs);

  // Of the last Run: "subgraph body: 3 runs on a plan of 4 steps (4 fast); ..." or, when a
  // subgraph step ran a reference kernel, "reference: <the first such step>".
  std::string Describe() const;
  // The subgraph steps of the last Run that ran reference kernels (nested ones too).
  std::vector<std::string> ReferenceSteps() const;

 private:
  struct Entry {
    std::unique_ptr<Plan> plan;
    std::unique_ptr<PlanExecutor> executor;
  };
  struct Body {
    std::string attr;
    Graph graph;  // the subgraph with its constant captures bound
    std::map<std::string, std::unique_ptr<Entry>> plans;  // by input shapes
    int runs = 0;                // in the last Run
    std::vector<Entry*> used;    // plans the last Run used
    std::string reference;       // why the last Run used the reference executor ("" if it did not)
  };
  StatusOr<std::vector<Tensor>> RunBody(const Graph& body, const std::map<std::string, Tensor>& given);

  const Node& node_;
  PlanOptions options_;
  std::map<const Graph*, Body> bodies_;  // by the node's own subgraph
};

}  // namespace edgec
