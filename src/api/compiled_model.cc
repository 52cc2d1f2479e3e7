// edgec::CompiledModel (include/edgec/compiled_model.h): loading, saving and the placement
// report; compiling is in compiled_model_compile.cc (not part of libedgec_runtime).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "api/convert.h"
#include "api/handle.h"
#include "api/impl.h"
#include "lower/npu_layers.h"

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
  std::map<std::string, const Node*> node_of;
  for (const Node* n : impl_->loaded.graph.nodes()) node_of[n->name()] = n;
  std::vector<NodePlacement> r;
  for (const auto& p : impl_->loaded.meta.placements) {
    NodePlacement q;
    q.node = p.node;
    q.unit = api::FromUnit(p.unit);
    q.reason = p.reason;
    q.code = p.code;
    if (auto it = node_of.find(p.node); it != node_of.end()) {
      q.op = std::string(OpName(it->second->op()));
      q.macs = lower::MacsOf(*it->second);  // as the partitioner counts them
    }
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

std::vector<SegmentInfo> CompiledModel::segments() const {
  std::vector<SegmentInfo> r;
  const auto& segs = impl_->loaded.meta.segments;
  for (size_t k = 0; k < segs.size(); ++k) {
    const artifact_io::Segment& s = segs[k];
    SegmentInfo i;
    i.unit = api::FromUnit(s.unit);
    i.nodes = s.nodes;
    i.inputs = s.inputs;
    i.outputs = s.outputs;
    if (s.unit == artifact_io::Unit::kNpu) {
      i.npu_layers = static_cast<int>(s.layer_plan.size());
      i.npu_cores = s.npu.instructions.empty() ? 0 : s.npu.cores_used;
      i.npu_constant_bytes = static_cast<int64_t>(impl_->file->npu_dram_init(k).size());
      // The stored program (npu/isa.h EncodeProgram) carries the constant image too.
      i.npu_program_bytes = std::max<int64_t>(0, static_cast<int64_t>(s.npu.instructions.size()) - i.npu_constant_bytes);
      for (const artifact_io::LayerSram& l : s.layer_plan) i.sram_peak = std::max(i.sram_peak, l.occupancy);
      // By the reasons the plan writes (npu/sram_plan.cc, lower/npu_cascade.cc: "cascaded: ...").
      for (const artifact_io::TensorSram& t : s.sram_plan) {
        auto [n, bytes] = t.in_sram                          ? std::tie(i.tensors_on_chip, i.bytes_on_chip)
                          : t.reason.starts_with("cascaded") ? std::tie(i.tensors_in_bands, i.bytes_in_bands)
                          : t.reason.starts_with("spilled")  ? std::tie(i.tensors_spilled, i.bytes_spilled)
                                                             : std::tie(i.tensors_in_dram, i.bytes_in_dram);
        n += 1;
        bytes += t.bytes;
      }
      i.hand_over_steps = static_cast<int>(s.hand_over.size());
    }
    r.push_back(std::move(i));
  }
  return r;
}

const std::string& CompiledModel::source_model() const { return impl_->loaded.meta.source_model; }
const std::string& CompiledModel::producer() const { return impl_->loaded.meta.producer; }

int CompiledModel::segment_count() const { return static_cast<int>(impl_->loaded.meta.segments.size()); }
int CompiledModel::npu_segment_count() const {
  int n = 0;
  for (const auto& s : impl_->loaded.meta.segments) n += s.unit == artifact_io::Unit::kNpu;
  return n;
}

}  // namespace v1
}  // namespace edgec
