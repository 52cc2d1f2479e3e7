// CompiledModel::Compile: what `edgec compile` does, as a call. A model compiled in this
// process is written to a temporary `.edgec` file and mapped back (then unlinked), so it runs
// from exactly the bytes Save writes.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "api/impl.h"
#include "lower/npu_compile.h"
#include "quant/pipeline.h"
#include "runtime/shape_binding.h"

namespace edgec {
inline namespace v1 {
namespace {

bool HasQdq(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kQLinearConv || n->op() == OpKind::kQLinearMatMul)
      return true;
  return false;
}

}  // namespace

StatusOr<CompiledModel> CompiledModel::Compile(const Model& model, const CompileOptions& options) {
  const Graph& g = model.impl().graph;
  const std::string& name = model.name();
  if (!HasQdq(g))
    return InvalidArgument("{}: a float model: quantize it first (Model::Quantize) to compile it for an NPU", name);
  Graph bound = g.Clone();
  RETURN_IF_ERROR(BindInputShapes(bound, {}, 1).WithContext(name));
  auto folded = quant::Int8Executable(bound);
  if (!folded.ok()) return folded.status().WithContext(name);
  partition::PartitionOptions po;
  po.cpu.int8_macs_per_s = options.cpu_gmacs * 1e9;
  po.tiler.allow_double = !options.single_buffer;
  po.cost_rule = !options.all_npu;
  auto r = lower::CompileGraph(*folded, options.target.impl().target, name, po);
  if (!r.ok()) return r.status().WithContext(name);

  std::error_code ec;
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "edgec-compiled-XXXXXX").string();
  if (ec) pattern = "/tmp/edgec-compiled-XXXXXX";
  const int fd = mkstemp(pattern.data());
  if (fd < 0) return IoError("{}: cannot create a temporary file for the compiled model", pattern);
  close(fd);
  const std::string tmp = pattern;
  Status st = artifact_io::WriteArtifact(tmp, r->model);
  StatusOr<std::shared_ptr<Impl>> impl = st.ok() ? MapCompiledModel(tmp) : StatusOr<std::shared_ptr<Impl>>(st);
  StatusOr<std::vector<uint8_t>> bytes = impl.ok() ? ReadFileBytes(tmp) : StatusOr<std::vector<uint8_t>>(impl.status());
  std::remove(tmp.c_str());  // the mapping stays valid
  if (!bytes.ok()) return bytes.status();
  (*impl)->bytes = std::move(bytes).value();
  return CompiledModel(std::move(impl).value());
}

}  // namespace v1
}  // namespace edgec
