// Folding an If whose condition is a constant: the taken branch's nodes move into the
// enclosing graph, its captures (ir/control_flow.h) replaced by the values they stand for.
// fold-constants calls it (tests/frontend/control_flow_test.cc: ConstantConditionInlined).
#pragma once

#include "ir/graph.h"
#include "support/status.h"

namespace edgec::passes {

// `n` is an If whose input 0 is constant. Leaves the graph topologically sorted.
Status InlineIfBranch(Graph& g, Node* n);

}  // namespace edgec::passes
