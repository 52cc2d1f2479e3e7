// Model::Optimize with a report (include/edgec/model.h): the pass pipeline as `edgec optimize`
// runs it, with --verify-each, --explain and --print-after.
#include "api/impl.h"
#include "passes/pass.h"
#include "runtime/reference_executor.h"
#include "support/status.h"

namespace edgec {
inline namespace v1 {

std::vector<std::string> PassNames() {
  std::vector<std::string> names;
  for (const passes::PassInfo& p : passes::AllPasses()) names.emplace_back(p.name);
  return names;
}

Status Model::Optimize(const OptimizeOptions& options, OptimizeReport* report) {
  passes::Pipeline pipeline;
  if (!options.pipeline.empty()) {
    ASSIGN_OR_RETURN(pipeline, passes::ParsePipeline(options.pipeline));
  } else {
    if (options.level < 0 || options.level > 3) return InvalidArgument("optimize: level {} is not 0-3", options.level);
    pipeline = passes::NamedPipeline(options.level);
  }
  passes::PassContext ctx;
  ctx.opt_level = options.level;
  ctx.verify_each = options.verify_each;
  ctx.explain = options.explain;
  ctx.evaluator = EvaluateNode;
  for (const auto& p : options.print_after) {
    if (p != "all" && !passes::FindPass(p)) return InvalidArgument("print after: unknown pass '{}'", p);
    ctx.print_after.insert(p);
  }
  Status st = passes::RunPipeline(impl_->graph, pipeline, ctx);
  if (report) {
    report->pipeline = pipeline.ToString();
    report->passes.clear();
    for (const passes::PassRecord& r : ctx.records())
      report->passes.push_back({r.pass, r.milliseconds, r.nodes_before, r.nodes_after, r.stats.rewrites,
                                r.stats.copy_bytes_removed});
    report->explanations = ctx.explanations();
  }
  return st.WithContext(impl_->name);
}

}  // namespace v1
}  // namespace edgec
