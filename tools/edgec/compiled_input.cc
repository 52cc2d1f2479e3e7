#include "tools/edgec/compiled_input.h"

#include "edgec/model.h"
#include "tools/edgec/inputs.h"

namespace edgec::cli {

StatusOr<Target> TargetWithSets(const std::string& name, const std::vector<std::string>& sets) {
  EDGEC_ASSIGN_OR_RETURN(Target t, Target::Load(name));
  for (const std::string& s : sets) EDGEC_RETURN_IF_ERROR(t.Set(s));
  return t;
}

StatusOr<CompiledModel> OpenCompiled(const std::string& model, const std::string& target,
                                     const std::vector<std::string>& sets) {
  const bool onnx = model.size() > 5 && model.substr(model.size() - 5) == ".onnx";
  if (!onnx && (!target.empty() || !sets.empty()))
    return BadInput("{}: a compiled file keeps its target; --target/--set apply to an .onnx model", model);
  if (!onnx) return CompiledModel::Load(model);
  EDGEC_ASSIGN_OR_RETURN(Model m, Model::Load(model));
  EDGEC_RETURN_IF_ERROR(m.BindInputShapes({}, 1));
  if (!m.quantized())
    return BadInput("{}: a float model: quantize it first (edgec quantize MODEL --calib DIR -o Q.onnx)", model);
  CompileOptions options;
  EDGEC_ASSIGN_OR_RETURN(options.target, TargetWithSets(target.empty() ? "default" : target, sets));
  return CompiledModel::Compile(m, options);
}

}  // namespace edgec::cli
