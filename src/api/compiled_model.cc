// edgec::CompiledModel (include/edgec/compiled_model.h): loading, saving and the placement
// report; compiling is in compiled_model_compile.cc (not part of libedgec_runtime).
#include <filesystem>
#include <fstream>
#include <iterator>

#include "api/convert.h"
#include "api/handle.h"
#include "api/impl.h"

namespace edgec {
inline namespace v1 {

StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("{}: cannot open", path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes;
}

StatusOr<std::shared_ptr<CompiledModel::Impl>> MapCompiledModel(const std::string& path) {
  auto impl = std::make_shared<CompiledModel::Impl>();
  ASSIGN_OR_RETURN(impl->file, artifact_io::MappedArtifact::Open(path));
  ASSIGN_OR_RETURN(impl->loaded, LoadArtifact(*impl->file));
  return impl;
}

CompiledModel::CompiledModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
EDGEC_HANDLE_MOVES(CompiledModel)

StatusOr<CompiledModel> CompiledModel::Load(const std::string& path) {
  ASSIGN_OR_RETURN(auto impl, MapCompiledModel(path));
  impl->path = path;
  return CompiledModel(std::move(impl));
}

Status CompiledModel::Save(const std::string& path) const {
  std::vector<uint8_t> from_file;
  const std::vector<uint8_t>* bytes = &impl_->bytes;
  if (!impl_->path.empty()) {
    ASSIGN_OR_RETURN(from_file, ReadFileBytes(impl_->path));
    bytes = &from_file;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("{}: cannot write", path);
    out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    if (!out) return IoError("{}: write failed", path);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return IoError("{}: {}", path, ec.message());
  return Status::Ok();
}

const std::string& CompiledModel::target_name() const { return impl_->loaded.target.name; }
std::vector<ValueInfo> CompiledModel::inputs() const { return api::InputsOf(impl_->loaded.graph); }
std::vector<ValueInfo> CompiledModel::outputs() const { return api::OutputsOf(impl_->loaded.graph); }

std::vector<NodePlacement> CompiledModel::placements() const {
  if (!impl_->compile_placements.empty()) return impl_->compile_placements;
  std::map<std::string, std::string> op_of;
  for (const Node* n : impl_->loaded.graph.nodes()) op_of[n->name()] = std::string(OpName(n->op()));
  std::vector<NodePlacement> r;
  for (const auto& p : impl_->loaded.meta.placements) {
    NodePlacement q;
    q.node = p.node;
    q.op = op_of.count(p.node) ? op_of[p.node] : "";
    q.unit = api::FromUnit(p.unit);
    q.reason = p.reason;
    r.push_back(std::move(q));
  }
  return r;
}

std::string CompiledModel::PlacementReport() const {
  std::string s;
  int npu = 0, cpu = 0;
  for (const auto& p : placements()) {
    (p.unit == Unit::kNpu ? npu : cpu) += 1;
    s += fmt::format("{:<4} {:<22} {:<40} {}\n", UnitName(p.unit), p.op, "'" + p.node + "'", p.reason);
  }
  s += fmt::format("{} node(s) on the NPU, {} on the CPU; {} segment(s), {} on the NPU (target {})\n", npu, cpu,
                   segment_count(), npu_segment_count(), target_name());
  return s;
}

int CompiledModel::segment_count() const { return static_cast<int>(impl_->loaded.meta.segments.size()); }
int CompiledModel::npu_segment_count() const {
  int n = 0;
  for (const auto& s : impl_->loaded.meta.segments) n += s.unit == artifact_io::Unit::kNpu;
  return n;
}

}  // namespace v1
}  // namespace edgec
