#include "lower/cpu_lower.h"

namespace edgec::lower {

StatusOr<std::unique_ptr<Plan>> BuildCpuPlan(Graph g, const PlanOptions& options) {
  passes::PassStats stats;
  RETURN_IF_ERROR(FuseOutputTable(g, stats));
  RETURN_IF_ERROR(FuseInputQuantize(g, stats));
  return Plan::Build(std::move(g), options);
}

}  // namespace edgec::lower
