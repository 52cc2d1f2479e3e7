// Where a zero-copy view (memory::Placement::kView) starts inside its input's buffer: what
// Plan::Build checks and PlanExecutor binds (plan_build.cc, plan_run.cc).
#pragma once

#include <cstdint>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec {

// Element offset, inside its input's buffer, of output `output`'s element 0; an error when
// the node is marked a view but is no view the executor can place.
StatusOr<int64_t> ViewOffset(const Node& n, int output);

}  // namespace edgec
