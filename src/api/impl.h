// What the public API's handles hold (include/edgec/*.h declare them opaque). Internal to
// src/api; the one header of the API that sees the library's types.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "edgec/compiled_model.h"
#include "edgec/model.h"
#include "edgec/target.h"
#include "ir/graph.h"
#include "npu/target.h"
#include "runtime/artifact.h"
#include "runtime/artifact_run.h"

namespace edgec {
inline namespace v1 {

struct Model::Impl {
  Graph graph;
  std::string name;  // the file it came from, for messages
};

struct Target::Impl {
  npu::Target target;
};

struct CompiledModel::Impl {
  std::unique_ptr<artifact_io::MappedArtifact> file;
  LoadedArtifact loaded;  // points into `file`
  std::string path;       // the file loaded, or empty when compiled in this process
  std::vector<uint8_t> bytes;  // compiled in this process: the file's bytes (what Save writes)
  // Compiled in this process: what the compiler reported (empty after Load).
  std::vector<NodePlacement> compile_placements;
  std::string placement_table, placement_json, listing, memory_summary, sram_summary;
};

// Whether the graph carries quantization (QuantizeLinear / QLinear ops): what Compile and the
// NPU estimates take (compiled_model_compile.cc).
bool HasQuantizeOps(const Graph& g);

// A `.edgec` file mapped and loaded (compiled_model.cc).
StatusOr<std::shared_ptr<CompiledModel::Impl>> MapCompiledModel(const std::string& path);
StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path);

}  // namespace v1
}  // namespace edgec
