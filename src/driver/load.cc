#include "driver/load.h"

#include "frontend/onnx/importer.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"

namespace edgec::driver {

Status Optimize(Graph& g, int opt_level, const std::string& pipeline, passes::PassContext& ctx) {
  passes::Pipeline p;
  if (!pipeline.empty()) {
    ASSIGN_OR_RETURN(p, passes::ParsePipeline(pipeline));
  } else {
    p = passes::NamedPipeline(opt_level);
  }
  ctx.opt_level = opt_level;
  if (!ctx.evaluator) ctx.evaluator = EvaluateNode;
  return passes::RunPipeline(g, p, ctx);
}

StatusOr<Graph> LoadModel(const std::string& path, const LoadOptions& opt, passes::PassContext* ctx) {
  ASSIGN_OR_RETURN(Graph g, onnx_fe::ImportOnnxFile(path));
  Status bound = BindInputShapes(g, opt.shapes, opt.default_dim);
  if (!bound.ok()) return bound.WithContext(path);
  passes::PassContext local;
  passes::PassContext& c = ctx ? *ctx : local;
  Status st = Optimize(g, opt.opt_level, opt.pipeline, c);
  if (!st.ok()) return st.WithContext(path);
  return g;
}

}  // namespace edgec::driver
