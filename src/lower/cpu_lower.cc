#include "lower/cpu_lower.h"

#include "support/limits.h"

namespace edgec::lower {

StatusOr<std::unique_ptr<Plan>> BuildCpuPlan(Graph g, const PlanOptions& options) {
  passes::PassStats stats;
  RETURN_IF_ERROR(FuseOutputTable(g, stats));
  RETURN_IF_ERROR(FuseInputQuantize(g, stats));
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Plan::Build(std::move(g), options));
  // The arena cap (support/limits.h): refused before the executor allocates it.
  // tests/runtime/limits_test.cc: ArenaCapRefusesThePlan.
  RETURN_IF_ERROR(CheckArenaBytes(plan->memory().arena_bytes, "the CPU plan", plan->memory().Largest()));
  return plan;
}

}  // namespace edgec::lower
