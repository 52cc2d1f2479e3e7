#include "lower/npu_compile.h"

#include <set>

#include "frontend/onnx/exporter.h"
#include "memory/liveness.h"
#include "npu/isa.h"
#include "lower/npu_layers.h"

namespace edgec::lower {
namespace {

using artifact_io::Unit;

artifact_io::NpuProgramData ToData(const npu::Program& p) {
  artifact_io::NpuProgramData d;
  d.instructions = npu::EncodeProgram(p);
  d.task_names = p.task_names;
  for (const auto& r : p.regions) d.regions.push_back({r.name, r.addr, r.bytes});
  d.dram_bytes = p.dram_bytes;
  d.dram_init = p.dram_init;
  d.cores_used = p.cores_used;
  d.semaphores = p.semaphores;
  return d;
}

// Values crossing the boundary of the CPU segment `nodes`.
void Boundary(const std::vector<const Node*>& nodes, artifact_io::Segment& s) {
  std::set<const Node*> in(nodes.begin(), nodes.end());
  std::set<std::string> seen_in;
  for (const Node* n : nodes) {
    s.nodes.push_back(n->name());
    for (const Value* v : n->inputs()) {
      if (!v || v->is_constant() || (v->producer() && in.count(v->producer()))) continue;
      if (seen_in.insert(v->name()).second) s.inputs.push_back(v->name());
    }
    for (const Value* v : n->outputs()) {
      bool outside = v->is_graph_output();
      for (const auto& u : v->uses()) outside |= !in.count(u.node);
      if (outside) s.outputs.push_back(v->name());
    }
  }
}

// The NPU program of a node placed on the NPU, with its data, for the tiling chosen.
StatusOr<npu::Program> LowerNode(const Node& n, const npu::Target& t, const partition::NodePlacement& p) {
  StatusOr<npu::Program> prog = Internal("no lowering");
  if (partition::IsDramView(n)) {
    prog = npu::Program{};  // no instructions: the runtime aliases the DRAM tensor
  } else if (IsVectorNode(n)) {
    ASSIGN_OR_RETURN(VectorLayer v, VectorLayerOf(n));
    const npu::VectorTiling& vt = p.vector_tiling;
    int64_t a, b, y;
    switch (v.kind) {
      case VectorLayer::Kind::kEltwise:
        prog = npu::LowerEltwise(v.eltwise, t, vt.chunk, vt.double_buffer, &a, &b, &y);
        break;
      case VectorLayer::Kind::kMove: prog = npu::LowerMove(v.move, t, vt.chunk, vt.double_buffer); break;
      case VectorLayer::Kind::kNorm: prog = npu::LowerNorm(v.norm, t, vt.chunk, vt.double_buffer); break;
      case VectorLayer::Kind::kPool:
        prog = npu::LowerPool(v.pool, t, vt.tile_rows, vt.tile_c, vt.double_buffer, nullptr);
        break;
      case VectorLayer::Kind::kDepthwise:
        prog = npu::LowerDepthwise(v.depthwise, t, vt.tile_rows, vt.tile_c, vt.double_buffer);
        break;
    }
  } else {
    ASSIGN_OR_RETURN(QuantizedLayer q, QuantizedLayerOf(n));
    npu::LayerImage img;
    prog = npu::LowerConv(q.layer, t, p.tiling.best.tiling, &img);
  }
  if (!prog.ok()) return prog.status().WithContext(n.Label());
  return prog;
}

}  // namespace

StatusOr<CompileResult> CompileGraph(const Graph& g, const npu::Target& t, const std::string& source_model,
                                     const partition::PartitionOptions& o) {
  CompileResult r;
  ASSIGN_OR_RETURN(r.placements, partition::Partition(g, t, o));
  artifact_io::CompiledModel& m = r.model;
  m.source_model = source_model;
  m.target_json = npu::TargetToJson(t).dump();
  onnx_fe::ExportOptions eo;
  eo.keep_fused = true;
  ASSIGN_OR_RETURN(onnx::ModelProto proto, onnx_fe::ExportOnnxModel(g, eo));
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) return Internal("{}: cannot serialize the compiled graph", source_model);
  m.graph_onnx.assign(bytes.begin(), bytes.end());
  std::vector<const Node*> cpu_run;
  auto flush = [&] {
    if (cpu_run.empty()) return;
    artifact_io::Segment s;
    s.unit = Unit::kCpu;
    Boundary(cpu_run, s);
    m.segments.push_back(std::move(s));
    cpu_run.clear();
  };
  for (const partition::NodePlacement& p : r.placements) {
    m.placements.push_back({p.node->name(), p.unit, p.reason});
    if (p.unit == Unit::kCpu) {
      cpu_run.push_back(p.node);
      continue;
    }
    flush();
    ASSIGN_OR_RETURN(npu::Program prog, LowerNode(*p.node, t, p));
    r.listing += fmt::format("; {} on {}: {}\n{}", p.node->Label(), t.name, p.plan, npu::FormatProgram(prog));
    artifact_io::Segment s;
    s.unit = Unit::kNpu;
    s.nodes = {p.node->name()};
    // The data inputs in order: the program's regions "<node>.input", "<node>.input1", ...
    for (const Value* v : p.node->inputs())
      if (v && !v->is_constant()) s.inputs.push_back(v->name());
    for (const Value* v : p.node->outputs())  // regions "<node>.output", "<node>.output1", ...
      if (v) s.outputs.push_back(v->name());
    if (!partition::IsDramView(*p.node)) s.npu = ToData(prog);  // a view has no program
    m.segments.push_back(std::move(s));
  }
  flush();
  ASSIGN_OR_RETURN(memory::MemoryPlan plan, memory::PlanMemory(g));
  m.arena_bytes = plan.arena_bytes;
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs())
      if (const memory::ValueMemory* vm = v ? plan.Find(v) : nullptr) m.values.push_back({v->name(), vm->offset, vm->bytes});
  for (const Value* v : g.inputs())
    if (const memory::ValueMemory* vm = plan.Find(v)) m.values.push_back({v->name(), vm->offset, vm->bytes});
  r.memory_summary = plan.Summary();
  return r;
}

}  // namespace edgec::lower
