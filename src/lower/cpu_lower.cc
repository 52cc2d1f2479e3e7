#include "lower/cpu_lower.h"

#include "support/limits.h"

namespace edgec::lower {

StatusOr<std::unique_ptr<Plan>> BuildCpuPlan(Graph g, const PlanOptions& options) {
  passes::PassStats stats;
  RETURN_IF_ERROR(FuseOutputTable(g, stats));
  RETURN_IF_ERROR(FuseInputQuantize(g, stats));
  const std::string name = g.name.empty() ? std::string("the model") : fmt::format("graph '{}'", g.name);
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Plan::Build(std::move(g), options));
  // The arena cap (support/limits.h): refused before the executor allocates it.
  // tests/runtime/limits_test.cc: ArenaCapRefusesThePlan.
  RETURN_IF_ERROR(CheckArenaBytes(plan->memory().arena_bytes, fmt::format("CPU plan of {}", name)));
  return plan;
}

}  // namespace edgec::lower
