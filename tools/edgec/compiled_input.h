// A model given to profile, diff or soak as a compiled file (.edgec) or as a QDQ ONNX model,
// compiled here for the target (with --set overrides) first.
#pragma once

#include <string>
#include <vector>

#include "edgec/compiled_model.h"
#include "edgec/status.h"

namespace edgec::cli {

// `target`/`sets` apply to an ONNX model only; a .edgec keeps the target it was compiled for
// (giving --target with one is an error naming the file).
StatusOr<CompiledModel> OpenCompiled(const std::string& model, const std::string& target,
                                     const std::vector<std::string>& sets);

// A target by name or file, with `--set FIELD=VALUE` overrides applied in order.
StatusOr<Target> TargetWithSets(const std::string& name, const std::vector<std::string>& sets);

}  // namespace edgec::cli
