#include "tools/edgec/compiled_input.h"

#include <unistd.h>

#include <filesystem>

#include "frontend/onnx/importer.h"
#include "lower/npu_compile.h"
#include "quant/pipeline.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {

StatusOr<std::unique_ptr<CompiledInput>> OpenCompiled(const std::string& model, const std::string& target,
                                                      const std::vector<std::string>& sets) {
  auto in = std::make_unique<CompiledInput>();
  const bool onnx = model.size() > 5 && model.substr(model.size() - 5) == ".onnx";
  if (!onnx && (!target.empty() || !sets.empty()))
    return InvalidArgument("{}: a compiled file keeps its target; --target/--set apply to an .onnx model", model);
  in->path = model;
  if (onnx) {
    ASSIGN_OR_RETURN(Graph g, onnx_fe::ImportOnnxFile(model));
    RETURN_IF_ERROR(BindInputShapes(g, {}, 1).WithContext(model));
    bool qdq = false;
    for (const Node* n : g.nodes()) qdq |= n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kQLinearConv;
    if (!qdq)
      return InvalidArgument("{}: a float model: quantize it first (edgec quantize MODEL --calib DIR -o Q.onnx)", model);
    ASSIGN_OR_RETURN(npu::Target t, TargetFor(target.empty() ? "default" : target, sets));
    ASSIGN_OR_RETURN(Graph folded, quant::Int8Executable(g));
    auto r = lower::CompileGraph(folded, t, model);
    if (!r.ok()) return r.status().WithContext(model);
    in->path = (std::filesystem::temp_directory_path() /
                fmt::format("edgec-{}-{}.edgec", getpid(), std::filesystem::path(model).stem().string()))
                   .string();
    RETURN_IF_ERROR(artifact_io::WriteArtifact(in->path, r->model));
  }
  auto mapped = artifact_io::MappedArtifact::Open(in->path);
  if (onnx) std::filesystem::remove(in->path);  // the mapping keeps the bytes
  if (!mapped.ok()) return mapped.status();
  in->file = std::move(*mapped);
  ASSIGN_OR_RETURN(in->loaded, LoadArtifact(*in->file));
  if (onnx) in->path = model;
  return in;
}

}  // namespace edgec::cli
