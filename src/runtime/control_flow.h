// Runs control-flow nodes (If, Loop, Scan, SequenceMap: ir/control_flow.h) by running their subgraphs
// (on the reference executor, or as a BodyRunner says), one run per branch taken, iteration
// or scan step. Output shapes
// come from the values the subgraphs produce, so they may differ from run to run; the CPU
// plan therefore runs these nodes in its dynamic part (runtime/plan.h).
// tests/runtime/control_flow_test.cc and the ONNX node tests (if, loop, scan, range_*_expanded).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace edgec {

// Runs one subgraph of a control-flow node on its inputs by name (the op's subgraph inputs,
// then the captures) and returns its outputs in order. The default runs the reference
// executor; a CPU plan passes one that runs fast plans (runtime/subgraph_plans.h).
using BodyRunner = std::function<StatusOr<std::vector<Tensor>>(const Graph& body, const std::map<std::string, Tensor>& given)>;

// Evaluates one control-flow node on its input values (nullptr for an absent optional input).
StatusOr<std::vector<Tensor>> RunControlFlow(const Node& n, const std::vector<const Tensor*>& inputs,
                                             const BodyRunner& run_body = {});

}  // namespace edgec
