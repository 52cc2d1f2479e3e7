// Runs control-flow nodes (If, Loop, Scan, SequenceMap: ir/control_flow.h) by running their subgraphs on
// the reference executor, one run per branch taken, iteration or scan step. Output shapes
// come from the values the subgraphs produce, so they may differ from run to run; the CPU
// plan therefore runs these nodes in its dynamic part (runtime/plan.h).
// tests/runtime/control_flow_test.cc and the ONNX node tests (if, loop, scan, range_*_expanded).
#pragma once

#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace edgec {

// Evaluates one control-flow node on its input values (nullptr for an absent optional input).
StatusOr<std::vector<Tensor>> RunControlFlow(const Node& n, const std::vector<const Tensor*>& inputs);

}  // namespace edgec
