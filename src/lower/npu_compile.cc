#include "lower/npu_compile.h"

#include <map>
#include <set>

#include "support/limits.h"
#include "runtime/graph_io.h"
#include "memory/liveness.h"
#include "npu/isa.h"
#include "npu/sim.h"
#include "lower/npu_islands.h"
#include "lower/npu_layers.h"
#include "lower/npu_segment.h"

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

// Cache maintenance around an NPU segment on a target whose CPU cache is not coherent: the
// CPU cleans the lines of every value it wrote for the segment (an input not produced by an
// NPU node), a barrier, the segment, then it drops the lines of every value it will read (an
// output with a CPU consumer or a graph output) and a barrier. Guarded by
// tests/lower/npu_segment_test.cc (dropping the flush gives stale input, wrong output).
std::vector<artifact_io::HandOver> HandOverSteps(const Graph& g, const NpuSegmentBuild& b, const npu::Target& t,
                                                 const std::set<const Node*>& on_npu) {
  std::map<std::string, const Value*> by_name;
  for (const Value* v : g.inputs()) by_name[v->name()] = v;
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs())
      if (v) by_name[v->name()] = v;
  const npu::CacheSpec& c = t.cpu_cache;
  auto step = [&](artifact_io::HandOverKind kind, const std::string& value, int64_t bytes, bool after) {
    const int64_t lines = bytes > 0 ? (bytes + c.line_bytes - 1) / c.line_bytes : 0;
    const double cycles = kind == artifact_io::HandOverKind::kBarrier ? c.barrier_cycles : lines * c.cycles_per_line;
    return artifact_io::HandOver{kind, value, bytes, cycles, after};
  };
  auto bytes_of = [](const Value* v) {  // the region's bytes (an f32 boundary value: 4 per element)
    int64_t n = static_cast<int64_t>(DTypeSize(v->type.dtype));
    for (int64_t d : v->type.dims) n *= d;
    return n;
  };
  std::vector<artifact_io::HandOver> steps;
  for (const std::string& name : b.inputs) {
    const Value* v = by_name.count(name) ? by_name[name] : nullptr;
    if (v && (!v->producer() || !on_npu.count(v->producer())))
      steps.push_back(step(artifact_io::HandOverKind::kFlush, name, bytes_of(v), false));
  }
  if (!steps.empty()) steps.push_back(step(artifact_io::HandOverKind::kBarrier, "", 0, false));
  bool any_after = false;
  for (const std::string& name : b.outputs) {
    const Value* v = by_name.count(name) ? by_name[name] : nullptr;
    if (!v) continue;
    bool cpu = v->is_graph_output();
    for (const auto& u : v->uses()) cpu |= !on_npu.count(u.node);
    if (!cpu) continue;
    steps.push_back(step(artifact_io::HandOverKind::kInvalidate, name, bytes_of(v), true));
    any_after = true;
  }
  if (any_after) steps.push_back(step(artifact_io::HandOverKind::kBarrier, "", 0, true));
  return steps;
}

}  // namespace

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
      case VectorLayer::Kind::kGather: prog = npu::LowerGather(v.gather, t, vt.chunk, vt.double_buffer); break;
      case VectorLayer::Kind::kArgMax: prog = npu::LowerArgMax(v.argmax, t, vt.chunk, vt.double_buffer); break;
      case VectorLayer::Kind::kNorm: prog = npu::LowerNorm(v.norm, t, vt.chunk, vt.double_buffer); break;
      case VectorLayer::Kind::kPool:
        prog = npu::LowerPool(v.pool, t, vt.tile_rows, vt.tile_c, vt.double_buffer, nullptr);
        break;
      case VectorLayer::Kind::kDepthwise:
        prog = npu::LowerDepthwise(v.depthwise, t, vt.tile_rows, vt.tile_c, vt.double_buffer);
        break;
      case VectorLayer::Kind::kResize:
        prog = npu::LowerResize(v.resize, t, vt.tile_rows, vt.tile_c, vt.double_buffer);
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

StatusOr<SegmentEstimate> EstimateSegments(const CompileResult& r, const npu::Target& t) {
  SegmentEstimate e;
  for (const artifact_io::Segment& s : r.model.segments) {
    if (s.unit != Unit::kNpu || s.npu.instructions.empty()) continue;
    ASSIGN_OR_RETURN(npu::Program p, npu::DecodeProgram(s.npu.instructions));
    p.cores_used = s.npu.cores_used;
    p.semaphores = s.npu.semaphores;
    p.dram_bytes = s.npu.dram_bytes;
    ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(p, t));
    e.cycles += sim.total.cycles;
    e.dram_read += sim.total.dram_read;
    e.dram_written += sim.total.dram_written;
    e.macs += sim.total.macs;
    ++e.segments;
    e.layers += static_cast<int>(s.layer_plan.size());
    for (const artifact_io::TensorSram& x : s.sram_plan) {
      if (x.in_sram) e.resident_bytes += x.bytes;
      else if (x.reason.rfind("spilled", 0) == 0) e.spilled_bytes += x.bytes;
    }
  }
  return e;
}

StatusOr<CompileResult> CompileGraph(const Graph& g, const npu::Target& t, const std::string& source_model,
                                     const partition::PartitionOptions& o) {
  CompileResult r;
  ASSIGN_OR_RETURN(r.placements, partition::Partition(g, t, o));
  if (o.cost_rule) RETURN_IF_ERROR(PlaceIslandsBySegmentTime(r.placements, t, o));
  artifact_io::CompiledModel& m = r.model;
  m.source_model = source_model;
  m.target_json = npu::TargetToJson(t).dump();
  m.graph_ir = graph_io::SerializeGraph(g);
  std::set<const Node*> on_npu;
  for (const partition::NodePlacement& p : r.placements)
    if (p.unit == Unit::kNpu) on_npu.insert(p.node);
  std::vector<const Node*> cpu_run;
  auto flush = [&] {
    if (cpu_run.empty()) return;
    artifact_io::Segment s;
    s.unit = Unit::kCpu;
    Boundary(cpu_run, s);
    m.segments.push_back(std::move(s));
    cpu_run.clear();
  };
  // Consecutive NPU nodes form one segment: one program, one dispatch (npu_segment.h).
  // Weights stay in SRAM between calls only when one segment has the SRAM to itself.
  int npu_runs = 0;
  for (size_t i = 0; i < r.placements.size(); ++i)
    npu_runs += r.placements[i].unit == Unit::kNpu && (i == 0 || r.placements[i - 1].unit != Unit::kNpu);
  const bool keep_weights = t.shared_sram.resident_weights && npu_runs == 1;
  std::vector<const partition::NodePlacement*> npu_run;
  auto flush_npu = [&]() -> Status {
    if (npu_run.empty()) return Status::Ok();
    const std::string name = fmt::format("segment {}", m.segments.size());
    ASSIGN_OR_RETURN(NpuSegmentBuild b, BuildNpuSegment(npu_run, t, name, o.tiler, keep_weights));
    // The segment's notes (an attention layer) join the nodes' placement reasons.
    for (partition::NodePlacement& p : r.placements)
      if (auto it = b.notes.find(p.node->name()); it != b.notes.end()) p.reason += "; " + it->second;
    for (artifact_io::Placement& p : m.placements)
      if (auto it = b.notes.find(p.node); it != b.notes.end()) p.reason += "; " + it->second;
    r.listing += fmt::format("; {} on {}: {} node(s)\n{}{}", name, t.name, b.nodes.size(), b.listing,
                             npu::FormatProgram(b.program));
    r.sram_summary += fmt::format("{}: {} node(s)\n{}", name, b.nodes.size(),
                                  npu::FormatSramPlan(b.plan, b.plan_layers, b.plan_tensors));
    artifact_io::Segment s;
    s.unit = Unit::kNpu;
    s.nodes = b.nodes;
    s.inputs = b.inputs;
    s.outputs = b.outputs;
    if (!b.program.instrs.empty()) s.npu = ToData(b.program);  // views alone have no program
    if (!b.program.instrs.empty() && !t.cpu_cache.coherent) s.hand_over = HandOverSteps(g, b, t, on_npu);
    for (size_t i = 0; i < b.plan_layers.size(); ++i)
      s.layer_plan.push_back({b.plan_layers[i].name, b.plan.work_base[i], b.plan_layers[i].work_bytes,
                              b.plan.occupancy[i] + b.plan.weight_occupancy[i],
                              static_cast<bool>(b.plan.prefetch[i]),
                              b.plan.weights_resident[i] ? b.plan_layers[i].const_bytes : 0});
    for (size_t x = 0; x < b.plan_tensors.size(); ++x)
      s.sram_plan.push_back({b.plan_tensors[x].name, b.plan.tensors[x].in_sram, b.plan.tensors[x].addr,
                             b.plan_tensors[x].bytes, b.plan_tensors[x].first, b.plan_tensors[x].last,
                             b.plan.tensors[x].reason});
    m.segments.push_back(std::move(s));
    npu_run.clear();
    return Status::Ok();
  };
  for (const partition::NodePlacement& p : r.placements) {
    m.placements.push_back({p.node->name(), p.unit, p.reason, std::string(partition::ReasonCodeName(p.code))});
    if (p.unit == Unit::kCpu) {
      RETURN_IF_ERROR(flush_npu());
      cpu_run.push_back(p.node);
      continue;
    }
    flush();
    npu_run.push_back(&p);
  }
  RETURN_IF_ERROR(flush_npu());
  flush();
  // The plan holds the static values; a dynamic part (values whose shape the data decides, the
  // detections after a NonMaxSuppression) is allocated when it runs, as on the CPU path.
  std::vector<std::string> dynamic;
  const Graph planned = memory::StaticPart(g, &dynamic);
  ASSIGN_OR_RETURN(memory::MemoryPlan plan, memory::PlanMemory(planned));
  m.arena_bytes = plan.arena_bytes;
  // A model whose plan needs more than the arena cap is refused at compile time, with the
  // planned figure (tests/bad_models/run.py: "arena over the cap").
  RETURN_IF_ERROR(CheckArenaBytes(plan.arena_bytes, "the compiled model's memory plan", plan.Largest()));
  for (const Node* n : planned.nodes())
    for (const Value* v : n->outputs())
      if (const memory::ValueMemory* vm = v ? plan.Find(v) : nullptr) m.values.push_back({v->name(), vm->offset, vm->bytes});
  for (const Value* v : planned.inputs())
    if (const memory::ValueMemory* vm = plan.Find(v)) m.values.push_back({v->name(), vm->offset, vm->bytes});
  r.memory_summary = plan.Summary();
  if (!dynamic.empty())
    r.memory_summary += fmt::format("; {} value(s) of data-dependent shape allocated when they are made", dynamic.size());
  return r;
}

}  // namespace edgec::lower
