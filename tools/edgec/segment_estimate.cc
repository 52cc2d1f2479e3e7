#include "tools/edgec/segment_estimate.h"

#include "frontend/onnx/importer.h"
#include "quant/pipeline.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/inputs.h"

namespace edgec::cli {

bool IsQdqModel(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kQLinearConv || n->op() == OpKind::kQLinearMatMul)
      return true;
  return false;
}

StatusOr<Graph> IntegerGraphOf(const std::string& model, const std::vector<std::string>& shapes) {
  ASSIGN_OR_RETURN(Graph g, onnx_fe::ImportOnnxFile(model));
  ASSIGN_OR_RETURN(auto text, ParseAssignments(shapes, "--shape"));
  std::map<std::string, Dims> bound;
  for (auto& [name, t] : text) {
    ASSIGN_OR_RETURN(Dims d, ParseDims(t));
    bound[name] = d;
  }
  RETURN_IF_ERROR(BindInputShapes(g, bound, 1).WithContext(model));
  if (!IsQdqModel(g)) return InvalidArgument("{}: not a quantized (QDQ) model", model);
  auto folded = quant::Int8Executable(g);
  if (!folded.ok()) return folded.status().WithContext(model);
  return std::move(*folded);
}

StatusOr<lower::SegmentEstimate> EstimateWithSegments(const Graph& g, const npu::Target& t,
                                                      const npu::TilerOptions& opt, lower::CompileResult* compiled) {
  partition::PartitionOptions po;
  po.tiler = opt;
  ASSIGN_OR_RETURN(lower::CompileResult r, lower::CompileGraph(g, t, "estimate", po));
  ASSIGN_OR_RETURN(lower::SegmentEstimate e, lower::EstimateSegments(r, t));
  if (compiled) *compiled = std::move(r);
  return e;
}

}  // namespace edgec::cli
