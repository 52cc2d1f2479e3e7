// CPU lowering: the rewrites only the CPU wants, run on the graph a CPU plan is built from,
// then the plan (runtime/plan.h). They are not graph passes: the NPU has no lookup and no
// fused input quantize, so they run after partitioning, on the CPU's own copy of the graph.
// Both keep the node order topological and the outputs bit for bit
// (tests/runtime/plan_test.cc: FusesOutputTable, FusesInputQuantize).
#pragma once

#include <memory>

#include "support/status.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "runtime/plan.h"

namespace edgec::lower {

// A QuantizedLookup that alone reads a QLinearConv/QLinearMatMul output becomes the op's
// `edgec_output_table` (cpu_fuse_output_table.cc).
Status FuseOutputTable(Graph& g, passes::PassStats& stats);
// A QuantizeLinear that alone feeds a QLinearConv with the conv's own input parameters goes
// into the conv: `edgec_quantize_input` (cpu_fuse_input_quantize.cc).
Status FuseInputQuantize(Graph& g, passes::PassStats& stats);

// Both fusions on `g`, then the plan's steps, kernels and arena.
StatusOr<std::unique_ptr<Plan>> BuildCpuPlan(Graph g, const PlanOptions& options);

}  // namespace edgec::lower
