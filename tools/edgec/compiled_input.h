// A model given to profile, diff or soak as a compiled file (.edgec) or as a QDQ ONNX model,
// compiled here for the target (with --set overrides) into a temporary .edgec first.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/artifact_run.h"

namespace edgec::cli {

struct CompiledInput {
  std::string path;  // the .edgec file read
  std::unique_ptr<artifact_io::MappedArtifact> file;
  LoadedArtifact loaded;
};

// `target`/`sets` apply to an ONNX model only; a .edgec keeps the target it was compiled for
// (giving --target with one is an error naming the file).
StatusOr<std::unique_ptr<CompiledInput>> OpenCompiled(const std::string& model, const std::string& target,
                                                      const std::vector<std::string>& sets);

}  // namespace edgec::cli
