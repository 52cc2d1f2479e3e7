// CompiledModel::Compile: what `edgec compile` does, as a call. A model compiled in this
// process is written to a temporary `.edgec` file and mapped back (then unlinked), so it runs
// from exactly the bytes Save writes.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "api/impl.h"
#include "edgec/session.h"
#include "lower/npu_compile.h"
#include "lower/npu_epilogue.h"
#include "partition/partition.h"
#include "quant/pipeline.h"
#include "report/sram_svg.h"
#include "runtime/shape_binding.h"

namespace edgec {
inline namespace v1 {
bool HasQuantizeOps(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kQLinearConv || n->op() == OpKind::kQLinearMatMul)
      return true;
  return false;
}

std::string CompiledModel::PlacementTable() const { return impl_->placement_table; }
std::string CompiledModel::PlacementJson() const { return impl_->placement_json; }
std::string CompiledModel::NpuListing() const { return impl_->listing; }
std::string CompiledModel::SramSummary() const { return impl_->sram_summary; }
std::string CompiledModel::MemorySummary() const { return impl_->memory_summary; }

namespace {

// The NPU segment with the most layers, or null.
const artifact_io::Segment* WidestNpuSegment(const artifact_io::CompiledModel& m) {
  const artifact_io::Segment* widest = nullptr;
  for (const auto& s : m.segments)
    if (s.unit == artifact_io::Unit::kNpu && (!widest || s.layer_plan.size() > widest->layer_plan.size())) widest = &s;
  return widest;
}

}  // namespace

int CompiledModel::widest_npu_segment_layers() const {
  const artifact_io::Segment* w = WidestNpuSegment(impl_->loaded.meta);
  return w ? static_cast<int>(w->layer_plan.size()) : 0;
}

StatusOr<std::string> CompiledModel::SramOccupancySvg(const std::string& title) const {
  const artifact_io::Segment* w = WidestNpuSegment(impl_->loaded.meta);
  if (!w) return InvalidArgument("no NPU segment on {}", impl_->loaded.target.name);
  return report::SramOccupancySvg(title, report::SramSteps(*w), impl_->loaded.target.shared_sram.bytes);
}

StatusOr<CompiledModel> CompiledModel::Compile(const Model& model, const CompileOptions& options) {
  const Graph& g = model.impl().graph;
  const std::string& name = model.name();
  if (!HasQuantizeOps(g))
    return InvalidArgument("{}: a float model: quantize it first (Model::Quantize) to compile it for an NPU", name);
  Graph bound = g.Clone();
  RETURN_IF_ERROR(BindInputShapes(bound, {}, 1).WithContext(name));
  auto folded = quant::Int8Executable(bound);
  if (!folded.ok()) return folded.status().WithContext(name);
  // Channel shuffles as one move, lookups as their conv's epilogue (lower/npu_epilogue.h).
  if (Status st = lower::PrepareNpuGraph(*folded, options.target.impl().target); !st.ok()) return st.WithContext(name);
  partition::PartitionOptions po;
  po.cpu.int8_macs_per_s = options.cpu_gmacs * 1e9;
  po.tiler.allow_double = !options.single_buffer;
  po.cost_rule = !options.all_npu;
  for (const auto& [node, npu] : options.pins) po.pins[node] = npu ? artifact_io::Unit::kNpu : artifact_io::Unit::kCpu;
  auto r = lower::CompileGraph(*folded, options.target.impl().target, name, po);
  if (!r.ok()) return r.status().WithContext(name);
  r->model.producer = fmt::format("edgec {}", Version());

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
  for (const partition::NodePlacement& p : r->placements) {
    NodePlacement q;
    q.node = p.node ? p.node->name() : "";
    q.op = p.node ? std::string(OpName(p.node->op())) : "";
    q.unit = p.unit == artifact_io::Unit::kNpu ? Unit::kNpu : Unit::kCpu;
    q.reason = p.reason;
    q.code = partition::ReasonCodeName(p.code);
    q.hint = p.hint;
    q.macs = p.macs;
    (*impl)->compile_placements.push_back(std::move(q));
  }
  (*impl)->placement_table = partition::FormatPlacements(r->placements);
  (*impl)->placement_json = partition::PlacementJson(r->placements).dump();
  (*impl)->listing = std::move(r->listing);
  (*impl)->memory_summary = std::move(r->memory_summary);
  (*impl)->sram_summary = std::move(r->sram_summary);
  return CompiledModel(std::move(impl).value());
}

}  // namespace v1
}  // namespace edgec
