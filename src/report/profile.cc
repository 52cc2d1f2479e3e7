// The profile of a compiled model's run (see profile.h).
#include "report/profile.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

#include <fmt/format.h>

#include "support/name_list.h"
#include "support/status.h"
#include "npu/isa.h"

namespace edgec::report {
namespace {

static_assert(kQueueTracks == npu::kNumQueues, "a track per NPU queue");
static_assert(npu::kNumQueues <= kDmaTracks, "at most a DMA per queue in flight: an engine track each");
const char* kQueueNames[kQueueTracks] = {"load", "execute", "vector", "store", "prefetch"};

// Energy of one op in microjoules (-1 when the target gives no figures).
double EnergyUj(const npu::Target& t, const OpProfile& o) {
  const npu::EnergySpec& e = t.energy;
  if (!e.given()) return -1;
  if (o.unit == "cpu") return o.macs * e.cpu_pj_per_mac * 1e-6;
  return (o.macs * e.pj_per_mac + o.dram_bytes * e.pj_per_dram_byte + o.onchip_bytes * e.pj_per_sram_byte) * 1e-6;
}

// One NPU segment's program, re-simulated for timing with its instruction trace.
StatusOr<std::pair<npu::Program, npu::SimResult>> TraceSegment(const artifact_io::Segment& s, const npu::Target& t) {
  ASSIGN_OR_RETURN(npu::Program p, npu::DecodeProgram(s.npu.instructions));
  p.dram_bytes = s.npu.dram_bytes;
  p.cores_used = s.npu.cores_used;
  p.semaphores = s.npu.semaphores;
  p.task_names = s.npu.task_names;
  npu::SimOptions so;
  so.trace = true;
  ASSIGN_OR_RETURN(npu::SimResult r, npu::Simulate(p, t, so));
  return std::make_pair(std::move(p), std::move(r));
}

// Lays one traced segment onto the timeline from `t0` (seconds).
void AddSegmentSpans(const npu::Program& p, const npu::SimResult& sim, const npu::Target& t, double t0,
                     const artifact_io::Segment& seg, Profile& out) {
  const double hz = t.clock_hz;
  std::vector<std::vector<double>> engine_free(p.cores_used, std::vector<double>(std::max(1, t.dma.engines), -1));
  std::vector<npu::TraceEvent> events = sim.trace;
  std::stable_sort(events.begin(), events.end(), [](auto& a, auto& b) { return a.start < b.start; });
  // Tokens by (core, semaphore): the time each becomes visible and the track that signalled it.
  struct Token {
    double visible;
    int track;
    double at;
  };
  std::map<std::pair<int, int>, std::vector<Token>> tokens;
  std::vector<std::pair<const npu::Instr*, npu::TraceEvent>> waits;
  std::map<int, double> layer_start;
  for (const npu::TraceEvent& e : events) {
    const npu::Instr& in = p.instrs[e.instr];
    const int track = QueueTrack(in.core, static_cast<int>(in.queue));
    const std::string layer = in.layer < static_cast<int>(p.layer_names.size()) ? p.layer_names[in.layer] : "";
    if (in.op == npu::Opcode::kSignal || in.op == npu::Opcode::kWait) {  // zero-length slices the flows bind to
      out.spans.push_back({track, in.op == npu::Opcode::kSignal ? "signal" : "wait", "sync", layer, t0 + e.start / hz,
                           t0 + e.end / hz, 0});
    }
    if (in.op == npu::Opcode::kSignal) {
      const double vis = e.start + t.token_latency_cycles;
      if (in.to_core < 0) tokens[{in.core, in.sem}].push_back({vis, track, e.start});
      for (int k = 0; in.to_core >= 0 && k < in.count; ++k) tokens[{in.to_core + k, in.sem}].push_back({vis, track, e.start});
      continue;
    }
    if (in.op == npu::Opcode::kWait) {
      waits.push_back({&in, e});
      continue;
    }
    if (in.op == npu::Opcode::kTaskBegin || in.op == npu::Opcode::kTaskEnd) continue;
    if (!layer_start.count(in.layer) || e.start < layer_start[in.layer]) layer_start[in.layer] = e.start;
    Span s;
    s.track = track;
    s.layer = layer;
    s.start_s = t0 + e.start / hz;
    s.end_s = t0 + e.end / hz;
    if (in.op == npu::Opcode::kVec) s.name = fmt::format("{} {}", npu::VecOpName(in.vec), layer);
    else s.name = fmt::format("{} {}", npu::OpcodeName(in.op), layer);
    s.category = npu::OpcodeName(in.op);
    const bool dma = in.op == npu::Opcode::kDmaLoad || in.op == npu::Opcode::kDmaStore;
    if (dma) s.bytes = in.on_chip ? 0 : in.dma_bytes();
    if (dma && e.transfer_start >= 0) s.transfer_s = t0 + e.transfer_start / hz;
    out.spans.push_back(s);
    if (dma) {  // the first engine of its core free at its start
      auto& free = engine_free[in.core];
      size_t k = 0;
      while (k + 1 < free.size() && free[k] > e.start + 1e-9) ++k;
      free[k] = e.end;
      Span d = s;
      d.track = DmaTrack(in.core, static_cast<int>(k));
      out.spans.push_back(d);
      out.track_names[d.track] = fmt::format("NPU core {} DMA engine {}", in.core, k);
    }
  }
  for (auto& [key, list] : tokens)
    std::stable_sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.visible < b.visible; });
  std::map<std::pair<int, int>, size_t> taken;
  for (auto& [in, e] : waits) {
    auto& list = tokens[{in->core, in->sem}];
    size_t& k = taken[{in->core, in->sem}];
    k += in->count;
    if (k == 0 || k > list.size()) continue;
    const Token& tok = list[k - 1];  // the last token this WAIT took
    const int to = QueueTrack(in->core, static_cast<int>(in->queue));
    if (tok.track == to) continue;
    out.flows.push_back({tok.track, to, t0 + tok.at / hz, t0 + e.start / hz});
  }
  // SRAM occupancy per layer of the plan, from the layer's first instruction.
  for (size_t j = 0; j < seg.layer_plan.size(); ++j) {
    auto it = std::find(p.layer_names.begin(), p.layer_names.end(), seg.layer_plan[j].layer);
    if (it == p.layer_names.end()) continue;
    auto st = layer_start.find(static_cast<int>(it - p.layer_names.begin()));
    if (st == layer_start.end()) continue;
    out.sram.push_back({t0 + st->second / hz, static_cast<double>(seg.layer_plan[j].occupancy)});
  }
  out.sram.push_back({t0 + sim.total.cycles / hz, 0});
  for (int c = 0; c < p.cores_used; ++c)
    for (int q = 0; q < kQueueTracks; ++q) out.track_names[QueueTrack(c, q)] = fmt::format("NPU core {} {}", c, kQueueNames[q]);
}

// DRAM bandwidth over time, in bins: the channel moves `bytes_per_s` while some DMA is in its
// transfer phase (Span::transfer_s .. end_s; the simulator shares the bandwidth, never idles it),
// so a bin's figure is the share of it those phases cover; never above the channel's bandwidth.
std::vector<CounterSample> Bandwidth(const std::vector<Span>& spans, double total_s, double bytes_per_s) {
  const int bins = 200;
  std::vector<CounterSample> out;
  if (total_s <= 0) return out;
  const double w = total_s / bins;
  std::vector<std::pair<double, double>> moving;
  for (const Span& s : spans)  // engine tracks only (each DMA once)
    if (s.bytes > 0 && IsDmaTrack(s.track)) moving.push_back({s.transfer_s >= 0 ? s.transfer_s : s.start_s, s.end_s});
  std::sort(moving.begin(), moving.end());
  std::vector<double> busy(bins, 0);
  auto cover = [&](double lo, double hi) {
    for (int b = std::max(0, static_cast<int>(lo / w)); b < bins && b * w < hi; ++b)
      busy[b] += std::max(0.0, std::min(hi, (b + 1) * w) - std::max(lo, b * w));
  };
  double lo = -1, hi = -1;  // the union of the transfer phases, interval by interval
  for (const auto& [a, e] : moving) {
    if (a > hi) {
      if (hi > lo) cover(lo, hi);
      lo = a;
    }
    hi = std::max(hi, e);
  }
  if (hi > lo) cover(lo, hi);
  for (int b = 0; b < bins; ++b) out.push_back({b * w, bytes_per_s * std::min(1.0, busy[b] / w)});
  out.push_back({total_s, 0});
  return out;
}

}  // namespace

StatusOr<Profile> BuildProfile(const std::string& file, const LoadedArtifact& a, const ArtifactRunResult& r,
                               bool timeline) {
  const npu::Target& t = a.target;
  Profile p;
  p.file = file;
  p.target = t.name;
  p.clock_hz = t.clock_hz;
  p.peak_macs_per_cycle = t.peak_int8_macs_per_cycle();
  p.dram_bytes_per_s = t.dram.bandwidth_bytes_per_s;
  p.sram_bytes = t.shared_sram.bytes;
  p.arena_bytes = a.meta.arena_bytes;
  p.cores = t.ai_cores.count;
  p.dma_engines = t.dma.engines;
  p.latency_s = r.latency_s();
  EDGEC_COPY_FIELDS(p, r, npu_s, cpu_s, copy_s, cache_s, cpu_measured, resident_weight_bytes, resident_weight_skipped,
                    resident_weight_layers)
  std::unordered_map<std::string, const artifact_io::Placement*> placement;
  for (const auto& pl : a.meta.placements) placement[pl.node] = &pl;
  std::unordered_map<std::string, size_t> segment_of;
  for (size_t i = 0; i < a.meta.segments.size(); ++i)
    if (a.meta.segments[i].unit == artifact_io::Unit::kNpu)
      for (const auto& n : a.meta.segments[i].nodes) segment_of[n] = i;
  for (const LayerRun& l : r.layers) {
    OpProfile o;
    EDGEC_COPY_FIELDS(o, l, node, op, simulated, seconds, attributed_s, copies, copy_bytes)
    o.unit = artifact_io::UnitName(l.unit);
    o.share = p.latency_s > 0 ? l.attributed_s / p.latency_s : 0;
    o.macs = l.simulated ? l.stats.macs : l.macs;
    if (l.simulated) {
      EDGEC_COPY_FIELDS(o, l.stats, cycles, onchip_bytes, sram_peak, stalls)
      o.utilization = l.stats.mac_utilization(t);
      o.dram_bytes = l.stats.dram_read + l.stats.dram_written;
      o.roofline_cycles = l.stats.roofline_cycles(t);
      o.compute_bound = l.stats.compute_bound(t);
    }
    if (auto it = placement.find(l.node); it != placement.end()) o.reason = it->second->reason;
    o.energy_uj = EnergyUj(t, o);
    if (o.energy_uj >= 0) p.energy_uj = std::max(0.0, p.energy_uj) + o.energy_uj;
    (l.unit == artifact_io::Unit::kNpu ? p.npu_nodes : p.cpu_nodes)++;
    p.ops.push_back(std::move(o));
  }
  // The graph's edges between the rows (the placement graph).
  std::unordered_map<std::string, int> row_of;
  for (size_t i = 0; i < p.ops.size(); ++i) row_of[p.ops[i].node] = static_cast<int>(i);
  for (const Node* n : a.graph.nodes()) {
    auto to = row_of.find(n->name());
    if (to == row_of.end()) continue;
    for (const Value* v : n->inputs()) {
      if (!v || !v->producer()) continue;
      auto from = row_of.find(v->producer()->name());
      if (from != row_of.end()) p.edges.push_back({from->second, to->second});
    }
  }
  if (!timeline) return p;

  // The timeline, in graph order (see profile.h).
  p.track_names[kCpuTrack] = "CPU thread 0";
  p.cpu_threads = std::max({1, r.cpu_threads, static_cast<int>(r.cpu_thread_ids.size())});
  for (size_t k = 1; k < r.cpu_thread_ids.size(); ++k)
    p.track_names[CpuThreadTrack(static_cast<int>(k))] = fmt::format("CPU thread {}", k);
  std::unordered_map<std::string, int> index_of;
  for (size_t i = 0; i < p.ops.size(); ++i) index_of[p.ops[i].node] = static_cast<int>(i);
  std::map<size_t, bool> segment_done;
  double now = 0;
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerRun& l = r.layers[i];
    OpProfile& o = p.ops[i];
    auto seg = segment_of.find(l.node);
    if (seg == segment_of.end() || a.meta.segments[seg->second].npu.instructions.empty()) {
      o.start_s = now;
      if (l.seconds > 0) p.spans.push_back({kCpuTrack, l.node, l.unit == artifact_io::Unit::kNpu ? "view" : "cpu", l.node, now, now + l.seconds, 0});
      for (const LayerRun::ThreadShare& sh : l.threads)  // thread 0's shares are inside its node's slice
        if (sh.thread > 0 && sh.end_s > sh.begin_s)
          p.spans.push_back({CpuThreadTrack(sh.thread), l.node, "cpu", l.node, now + sh.begin_s, now + sh.end_s, 0});
      now += l.seconds;
      continue;
    }
    if (segment_done[seg->second]) {
      o.start_s = now;  // fixed below from the layer's first instruction
      continue;
    }
    segment_done[seg->second] = true;
    const artifact_io::Segment& s = a.meta.segments[seg->second];
    ASSIGN_OR_RETURN(auto traced, TraceSegment(s, t));
    const auto& [prog, sim] = traced;
    // The segment's copies in (its first row's copy time) on the CPU thread, then the task.
    const double copy_s = std::max(0.0, l.seconds - l.stats.cycles / t.clock_hz);
    if (copy_s > 0) p.spans.push_back({kCpuTrack, "copy to NPU", "copy", l.node, now, now + copy_s, l.copy_bytes});
    now += copy_s;
    AddSegmentSpans(prog, sim, t, now, s, p);
    for (size_t k = 0; k < prog.layer_names.size() && k < sim.layers.size(); ++k) {
      auto it = index_of.find(prog.layer_names[k]);
      if (it != index_of.end()) p.ops[it->second].start_s = now + sim.layers[k].start / t.clock_hz;
    }
    now += sim.total.cycles / t.clock_hz;
  }
  // Arena occupancy: each planned value is live from its producer to its last consumer.
  std::unordered_map<std::string, std::pair<int, int>> live;
  int idx = 0;
  for (const Node* n : a.graph.nodes()) {
    for (const Value* v : n->inputs())
      if (v && live.count(v->name())) live[v->name()].second = idx;
    for (const Value* v : n->outputs())
      if (v) live[v->name()] = {idx, idx};
    ++idx;
  }
  for (const Value* v : a.graph.inputs()) live.try_emplace(v->name(), 0, 0);
  // A step's occupancy is the union of its live values' [offset, offset + bytes): views and
  // in-place outputs share their source's bytes and count once, so it never exceeds the plan.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(p.ops.size() + 1);
  for (const auto& vp : a.meta.values) {
    auto it = live.find(vp.value);
    if (it == live.end() || vp.bytes <= 0) continue;
    for (int k = it->second.first; k <= it->second.second && k < static_cast<int>(spans.size()); ++k)
      spans[k].push_back({vp.offset, vp.offset + vp.bytes});
  }
  std::vector<double> occ(spans.size(), 0);
  for (size_t k = 0; k < spans.size(); ++k) {
    std::sort(spans[k].begin(), spans[k].end());
    int64_t covered = 0, end = INT64_MIN;
    for (auto [lo, hi] : spans[k]) {
      if (hi <= end) continue;
      covered += hi - std::max(lo, end);
      end = hi;
    }
    occ[k] = static_cast<double>(covered);
  }
  for (size_t k = 0; k < p.ops.size(); ++k) p.arena.push_back({p.ops[k].start_s, occ[k]});
  std::stable_sort(p.arena.begin(), p.arena.end(), [](auto& x, auto& y) { return x.t_s < y.t_s; });
  p.arena.push_back({now, 0});
  p.dram_bw = Bandwidth(p.spans, now, p.dram_bytes_per_s);
  p.latency_s = std::max(p.latency_s, now);
  return p;
}

std::vector<const OpProfile*> SlowestOps(const Profile& p, int top) {
  std::vector<const OpProfile*> rows;
  for (const auto& o : p.ops) rows.push_back(&o);
  if (top > 0) {
    std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->attributed_s > b->attributed_s; });
    if (static_cast<int>(rows.size()) > top) rows.resize(top);
  }
  return rows;
}

std::string FormatProfile(const Profile& p, int top) {
  const std::vector<const OpProfile*> rows = SlowestOps(p, top);
  const bool energy = p.energy_uj >= 0;
  std::string s = fmt::format("{:<32} {:<12} {:<4} {:>9} {:>10} {:>6} {:>11} {:>6} {:>10} {:>10} {:<26}{} {}\n", "node", "op",
                              "unit", "time ms", "span cyc", "share", "MACs", "util", "DRAM B", "copies", "top stall (cycles)",
                              energy ? "  energy uJ" : "", "reason");
  for (const OpProfile* o : rows) {
    std::string name = o->node.size() > 32 ? ".." + o->node.substr(o->node.size() - 30) : o->node;
    std::string stall = "-";
    double top_c = 0;
    for (auto& [k, v] : o->stalls)
      if (v > top_c) top_c = v, stall = fmt::format("{} ({:.0f})", k, v);
    s += fmt::format("{:<32} {:<12} {:<4} {:>9.4f} {:>10} {:>5.1f}% {:>11} {:>6} {:>10} {:>10} {:<26}{} {}\n", name,
                     o->op.substr(0, 12), o->unit, o->attributed_s * 1e3, o->simulated ? fmt::format("{:.0f}", o->cycles) : p.cpu_measured ? "took" : "est",
                     100 * o->share, o->macs, o->simulated && o->macs ? fmt::format("{:.1f}%", 100 * o->utilization) : "-",
                     o->simulated ? std::to_string(o->dram_bytes) : "-",
                     o->copies ? fmt::format("{}/{}B", o->copies, o->copy_bytes) : "-", stall.substr(0, 26),
                     energy ? fmt::format(" {:>10.2f}", o->energy_uj) : "", o->unit == "cpu" ? o->reason : "");
  }
  s += fmt::format("{} on {}: latency {:.3f} ms = NPU {:.3f} + CPU {:.3f} ({}) + copies {:.3f} + cache {:.3f}; "
                   "{} node(s) on the NPU, {} on the CPU",
                   p.file, p.target, p.latency_s * 1e3, p.npu_s * 1e3, p.cpu_s * 1e3,
                   p.cpu_measured ? "measured on this host" : "cost model", p.copy_s * 1e3, p.cache_s * 1e3, p.npu_nodes,
                   p.cpu_nodes);
  if (energy) s += fmt::format("; energy {:.1f} uJ", p.energy_uj);
  if (p.npu_nodes > 0)
    s += "\n(time: the latency attributed to a node, NPU layers running at once split it, so the shares add up; "
         "span cyc: its first to last NPU instruction, spans overlap as weights stream in ahead and tiles pipeline)";
  if (p.resident_weight_bytes > 0)
    s += fmt::format("\nresident weights: {} B of {} layer(s) stay in SRAM between calls; {}",
                     p.resident_weight_bytes, p.resident_weight_layers.size(),
                     p.resident_weight_skipped > 0
                         ? fmt::format("this call saved {} B of DRAM reads", p.resident_weight_skipped)
                         : std::string("this call loaded them (later calls of a session skip that)"));
  return s + "\n";
}

nlohmann::json ProfileJson(const Profile& p) {
  nlohmann::json ops = nlohmann::json::array();
  for (const OpProfile& o : p.ops) {
    nlohmann::json j = {{"node", o.node},          {"op", o.op},
                        {"unit", o.unit},          {"seconds", o.seconds}, {"attributed_s", o.attributed_s},
                        {"share", o.share},        {"start_s", o.start_s},
                        {"simulated", o.simulated}, {"cycles", o.cycles},
                        {"macs", o.macs},          {"utilization", o.utilization},
                        {"dram_bytes", o.dram_bytes}, {"onchip_bytes", o.onchip_bytes},
                        {"sram_peak", o.sram_peak}, {"copies", o.copies},
                        {"copy_bytes", o.copy_bytes}, {"stalls", o.stalls},
                        {"roofline_cycles", o.roofline_cycles},
                        {"bound", o.simulated ? (o.compute_bound ? "compute" : "memory") : "cpu"},
                        {"reason", o.reason}};
    if (o.energy_uj >= 0) j["energy_uj"] = o.energy_uj;
    if (auto e = p.error.find(o.node); e != p.error.end()) j["int8_error"] = e->second;
    ops.push_back(std::move(j));
  }
  nlohmann::json j = {{"file", p.file},       {"target", p.target},     {"latency_s", p.latency_s},
                      {"npu_s", p.npu_s},     {"cpu_s", p.cpu_s},       {"cpu_measured", p.cpu_measured}, {"copy_s", p.copy_s},
                      {"cache_s", p.cache_s}, {"npu_nodes", p.npu_nodes}, {"cpu_nodes", p.cpu_nodes},
                      {"ops", ops}, {"edges", p.edges}};
  if (p.energy_uj >= 0) j["energy_uj"] = p.energy_uj;
  return j;
}

}  // namespace edgec::report
