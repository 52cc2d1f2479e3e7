// Building one NPU program per segment (see npu_segment.h).
#include "lower/npu_segment.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "lower/npu_attention.h"
#include "lower/npu_compile.h"
#include "lower/npu_cascade.h"
#include "lower/npu_layers.h"
#include "lower/npu_lead_ins.h"
#include "lower/npu_pending_layer.h"
#include "lower/npu_segment_room.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"

namespace edgec::lower {
namespace {

// A tensor's bytes in the segment's DRAM: its elements times their size (one an 8-bit value,
// two an int16 value of mixed precision, four the f32 of the float boundary, eight a gather's
// int64 index list).
int64_t TensorBytes(const Value& v) {
  int64_t n = 1;
  for (int64_t d : v.type.dims) n *= d;
  return n * static_cast<int64_t>(DTypeSize(v.type.dtype));
}

}  // namespace

npu::Target SubTarget(const npu::Target& t, int cores, int64_t sram_bytes) {
  npu::Target s = t;
  s.ai_cores.count = std::max(1, std::min(cores, t.ai_cores.count));
  s.shared_sram.bytes = std::max<int64_t>(t.shared_sram.alignment, std::min(sram_bytes, t.shared_sram.bytes));
  return s;
}

StatusOr<RetiledNode> RetileNode(const Node& n, const npu::Target& t, const npu::TilerOptions& opt,
                                 const partition::NodePlacement& base) {
  RetiledNode r;
  r.placement = base;
  if (partition::IsDramView(n)) return r;
  if (IsVectorNode(n)) {
    ASSIGN_OR_RETURN(VectorLayer v, VectorLayerOf(n));
    auto tr = ChooseVectorTiling(v, t, opt);
    if (!tr.ok()) return tr.status().WithContext(n.Label());
    r.placement.vector_tiling = *tr;
    r.placement.plan = tr->ToString();
    r.cycles = tr->cycles;
  } else {
    ASSIGN_OR_RETURN(npu::ConvLayer shape, GemmLayerShape(n));
    auto tr = npu::ChooseTiling(shape, t, opt);
    if (!tr.ok()) return tr.status().WithContext(n.Label());
    // The tiler's search is heuristic: the base tiling stays when it fits and is faster here.
    const npu::Tiling& was = base.tiling.best.tiling;
    if (base.tiling.simulated > 0 && npu::CheckTiling(shape, t, was).ok()) {
      auto s = npu::SimulateTiling(shape, t, was, opt);
      if (s.ok() && s->total.cycles < tr->best.cycles) {
        tr->best = {was, s->total.cycles, tr->best.estimate};
        tr->stats = s->total;
      }
    }
    r.placement.tiling = *tr;
    r.placement.plan = tr->best.tiling.ToString();
    r.cycles = tr->best.cycles;
    r.dram_bytes = tr->stats.dram_read + tr->stats.dram_written;
  }
  r.placement.npu_cycles = r.cycles;
  return r;
}

namespace {

// RetileNode for a pending layer (an attention layer is tiled by its own chooser).
StatusOr<RetiledNode> RetileLayer(const PendingLayer& l, const npu::Target& t, const npu::TilerOptions& opt) {
  if (!l.attention) return RetileNode(*l.node, t, opt, l.placement);
  RetiledNode r;
  r.placement = l.placement;
  auto ch = npu::ChooseAttentionTiling(*l.attention, t, opt);
  if (!ch.ok()) return ch.status().WithContext(l.node->Label());
  r.attention = ch->tiling;
  r.placement.plan = ch->tiling.ToString();
  r.cycles = ch->cycles;
  r.placement.npu_cycles = r.cycles;
  return r;
}

// Takes a retiled choice into the pending layer.
void Adopt(PendingLayer& l, const RetiledNode& r) {
  l.placement = r.placement;
  l.cycles = r.cycles;
  if (l.attention) l.attention_tiling = r.attention;
}

// Parallel groups: runs of consecutive layers none of which reads another's output. Each
// member gets a share of the cores proportional to its time alone (at least one) and is
// re-tiled for those cores and its share of the SRAM; the group runs on disjoint core sets
// when the slowest member (or the group's DRAM traffic at full bandwidth) takes less than
// the members one after another. Guarded by tests/lower/npu_segment_test.cc
// (IndependentConvsRunOnDisjointCoresAtOnce).
Status PlanParallelGroups(std::vector<PendingLayer>& layers, const std::vector<npu::SegmentTensor>& tensors,
                          const npu::Target& t, const npu::TilerOptions& opt, std::string& listing) {
  const int L = static_cast<int>(layers.size()), N = t.ai_cores.count;
  constexpr int kMaxGroup = 4;
  if (N < 2) return Status::Ok();
  auto independent = [&](int from, int i) {
    for (int x : layers[i].inputs)
      if (tensors[x].producer >= from) return false;
    return true;
  };
  for (int g0 = 0; g0 < L;) {
    int g1 = g0 + 1;
    while (g1 < L && g1 - g0 < std::min(kMaxGroup, N) && independent(g0, g1)) ++g1;
    const int k = g1 - g0;
    if (k < 2) {
      g0 = g1;
      continue;
    }
    double serial = 0;
    for (int i = g0; i < g1; ++i) serial += layers[i].cycles;
    // Proportional shares of the cores, at least one each, summing to N.
    std::vector<int> share(k, 1);
    for (int left = N - k; left > 0; --left) {
      int pick = 0;
      double worst = -1;
      for (int i = 0; i < k; ++i) {
        const double load = layers[g0 + i].cycles / share[i];
        if (load > worst) worst = load, pick = i;
      }
      ++share[pick];
    }
    std::vector<RetiledNode> trial;
    double slowest = 0, dram = 0;
    bool ok = true;
    for (int i = 0; i < k && ok; ++i) {
      PendingLayer& l = layers[g0 + i];
      const npu::Target sub = SubTarget(t, share[i], t.shared_sram.bytes * share[i] / N);
      auto r = RetileLayer(l, sub, opt);
      if (!r.ok()) {
        ok = false;
        break;
      }
      r->cycles -= t.dispatch_overhead_cycles;
      slowest = std::max(slowest, r->cycles);
      dram += static_cast<double>(r->dram_bytes);
      trial.push_back(std::move(*r));
    }
    const double parallel = std::max(slowest, dram / t.dram_bytes_per_cycle());
    if (ok && parallel < serial) {
      int base = 0;
      for (int i = 0; i < k; ++i) {
        PendingLayer& l = layers[g0 + i];
        Adopt(l, trial[i]);
        l.target = SubTarget(t, share[i], t.shared_sram.bytes * share[i] / N);
        l.core_base = base;
        l.group_first = g0;
        base += share[i];
      }
      listing += fmt::format(";   parallel layers {}..{} on cores split {}: {:.0f} cycles one after another, {:.0f} "
                             "at once\n",
                             g0, g1 - 1, fmt::join(share, "+"), serial, parallel);
    }
    g0 = g1;
  }
  return Status::Ok();
}

// The tiler's options for layer i under `plan`: its operands kept in SRAM are on chip.
npu::TilerOptions OperandOptions(const PendingLayer& l, const npu::SramPlan& plan, const npu::TilerOptions& opt,
                                 int extra_tensor = -1) {
  npu::TilerOptions o = opt;
  for (size_t k = 0; k < l.inputs.size() && k < 32; ++k)
    if (plan.tensors[l.inputs[k]].in_sram || l.inputs[k] == extra_tensor) o.on_chip_inputs |= 1u << k;
  for (size_t k = 0; k < l.outputs.size() && k < 32; ++k)
    if (plan.tensors[l.outputs[k]].in_sram || l.outputs[k] == extra_tensor) o.on_chip_outputs |= 1u << k;
  return o;
}

// SRAM left to layer i's working tiles: the SRAM (its share in a parallel group) minus the
// tensors resident at its step.
int64_t SramLeft(int i, const PendingLayer& l, const NpuSegmentBuild& b, const npu::Target& t) {
  int64_t resident = 0;
  for (size_t x = 0; x < b.plan_tensors.size(); ++x)
    if (b.plan.tensors[x].in_sram && b.plan_tensors[x].first <= i && b.plan_tensors[x].last >= i)
      resident += (b.plan_tensors[x].bytes + t.shared_sram.alignment - 1) / t.shared_sram.alignment *
                  t.shared_sram.alignment;
  const int64_t left = t.shared_sram.bytes - resident;
  return l.group_first >= 0 ? left * l.target.ai_cores.count / t.ai_cores.count : left;
}

// Re-tiling for the segment (guarded by npu_zoo_check's bit-exactness and by
// NpuSimTest.OnChipInputMovesNoDramBytes):
//   1. every layer is tiled again for the SRAM the plan leaves it at its step and with its
//      operands where the plan put them (a resident input is gathered on chip: no DRAM
//      byte, no burst), keeping its previous tiling when that simulates faster there;
//   2. a tensor the plan still spills is kept on chip when tiling the layers it lives across
//      with less SRAM costs fewer cycles than the spill's traffic (written once, read by each
//      consumer, at the DRAM bandwidth); the largest spills are tried first.
// The plan is redone after each change.
template <typename LowerAndPlan>
Status RetileForSegment(std::vector<PendingLayer>& pending, NpuSegmentBuild& b, const npu::Target& t,
                        const npu::TilerOptions& opt, LowerAndPlan&& lower_and_plan, std::string& listing) {
  const int L = static_cast<int>(pending.size());
  auto retile = [&](int i, int64_t budget, const npu::TilerOptions& o) -> StatusOr<RetiledNode> {
    PendingLayer& l = pending[i];
    const npu::Target sub = SubTarget(t, l.target.ai_cores.count, budget);
    ASSIGN_OR_RETURN(RetiledNode r, RetileLayer(l, sub, o));
    r.cycles -= t.dispatch_overhead_cycles;
    return r;
  };
  int changed = 0;
  for (int i = 0; i < L; ++i) {
    PendingLayer& l = pending[i];
    const int64_t budget = SramLeft(i, l, b, t);
    auto r = retile(i, budget, OperandOptions(l, b.plan, opt));
    if (!r.ok()) continue;  // keeps its tiling (the plan fits it where it can)
    Adopt(l, *r);
    l.target = SubTarget(t, l.target.ai_cores.count, budget);
    ++changed;
  }
  if (changed) RETURN_IF_ERROR(lower_and_plan());
  // The spill rule.
  std::vector<int> spilled;
  for (size_t x = 0; x < b.plan_tensors.size(); ++x)
    if (!b.plan.tensors[x].in_sram && b.plan_tensors[x].dram_reason.empty() && b.plan_tensors[x].first >= 0 &&
        b.plan_tensors[x].last > b.plan_tensors[x].first)
      spilled.push_back(static_cast<int>(x));
  std::stable_sort(spilled.begin(), spilled.end(),
                   [&](int a, int c) { return b.plan_tensors[a].bytes > b.plan_tensors[c].bytes; });
  constexpr int kMaxTries = 12;
  for (size_t s = 0; s < spilled.size() && s < kMaxTries; ++s) {
    const int x = spilled[s];
    if (b.plan.tensors[x].in_sram) continue;
    const npu::SramPlanTensor& pt = b.plan_tensors[x];
    const int64_t need = (pt.bytes + t.shared_sram.alignment - 1) / t.shared_sram.alignment * t.shared_sram.alignment;
    int readers = 0;
    for (int i = pt.first + 1; i <= pt.last; ++i)
      for (int in : pending[i].inputs) readers += in == x;
    const double spill_cycles = static_cast<double>(pt.bytes) * (1 + readers) / t.dram_bytes_per_cycle();
    // The layers to shrink: each step without room for it; when every step has room (the
    // free ranges do not line up), the one with the largest working tiles.
    std::vector<std::pair<int, int64_t>> shrink;  // layer, bytes its tiles must give up
    int widest = pt.first;
    for (int i = pt.first; i <= pt.last; ++i) {
      const int64_t room = t.shared_sram.bytes - b.plan.occupancy[i];
      if (room < need) shrink.push_back({i, need - room});
      if (b.plan_layers[i].work_bytes > b.plan_layers[widest].work_bytes) widest = i;
    }
    if (shrink.empty()) shrink.push_back({widest, need});
    std::vector<std::pair<int, RetiledNode>> trial;
    std::vector<int64_t> budgets;
    double slowdown = 0;
    bool ok = true;
    for (auto [i, give] : shrink) {
      const int64_t budget = b.plan_layers[i].work_bytes - give;
      if (budget <= 0) {
        ok = false;
        break;
      }
      auto r = retile(i, budget, OperandOptions(pending[i], b.plan, opt, x));
      if (!r.ok()) {
        ok = false;
        break;
      }
      slowdown += r->cycles - pending[i].cycles;
      trial.push_back({i, std::move(*r)});
      budgets.push_back(budget);
    }
    if (!ok || trial.empty() || slowdown >= spill_cycles) continue;
    std::vector<PendingLayer> saved = pending;
    for (size_t k = 0; k < trial.size(); ++k) {
      auto& [i, r] = trial[k];
      Adopt(pending[i], r);
      pending[i].target = SubTarget(t, pending[i].target.ai_cores.count, budgets[k]);
    }
    const npu::SramPlan before = b.plan;
    RETURN_IF_ERROR(lower_and_plan());
    if (!b.plan.tensors[x].in_sram) {  // the smaller tiles did not make room after all
      pending = std::move(saved);
      RETURN_IF_ERROR(lower_and_plan());
      continue;
    }
    listing += fmt::format(";   kept '{}' ({} B) on chip: layers {}..{} tiled for less SRAM cost {:.0f} cycles, "
                           "its spill {:.0f}\n",
                           pt.name, pt.bytes, pt.first, pt.last, slowdown, spill_cycles);
  }
  return Status::Ok();
}

// The segment with its attention chains fused (`fuse`) or each node a layer.
StatusOr<NpuSegmentBuild> BuildSegment(const std::vector<const partition::NodePlacement*>& run, const npu::Target& t,
                                       const std::string& name, const npu::TilerOptions& opt, bool keep_weights,
                                       bool fuse) {
  NpuSegmentBuild b;
  std::set<const Node*> in_run;
  for (const partition::NodePlacement* p : run) in_run.insert(p->node);
  std::vector<npu::SegmentTensor> tensors;
  std::map<const Value*, int> tensor_of;
  std::map<int, std::vector<std::string>> names_of;  // every value name of a tensor (views)
  auto tensor = [&](const Value* v) {
    auto it = tensor_of.find(v);
    if (it != tensor_of.end()) return it->second;
    const int x = static_cast<int>(tensors.size());
    tensors.push_back({v->name(), TensorBytes(*v), false, 0, -1});
    tensor_of[v] = x;
    names_of[x].push_back(v->name());
    b.inputs.push_back(v->name());  // not produced in the run: a segment input
    return x;
  };
  std::vector<PendingLayer> pending;
  std::string attention_listing;
  const std::map<const Node*, FusedAttention> fused =
      fuse ? FuseAttention(run, t, opt, attention_listing) : std::map<const Node*, FusedAttention>{};
  std::map<const Node*, int> attention_of;  // context node -> its pending layer
  for (const partition::NodePlacement* p : run) {
    const Node& n = *p->node;
    b.nodes.push_back(n.name());
    if (partition::IsDramView(n)) {
      const int x = tensor(n.input(0));
      tensor_of[n.output(0)] = x;
      names_of[x].push_back(n.output(0)->name());
      continue;
    }
    if (auto f = fused.find(&n); f != fused.end()) {
      const AttentionChain& c = f->second.chain;
      if (&n == c.scores) {  // the layer: Q and K now, V and the output at the context
        PendingLayer l;
        l.node = c.context;
        l.placement = *f->second.context;
        l.placement.plan = f->second.choice.tiling.ToString();
        l.target = t;
        l.cycles = f->second.choice.cycles - t.dispatch_overhead_cycles;
        l.attention = f->second.layer;
        l.attention_tiling = f->second.choice.tiling;
        l.inputs = {tensor(c.scores->input(0)), tensor(c.scores->input(3))};
        attention_of[c.context] = static_cast<int>(pending.size());
        pending.push_back(std::move(l));
        for (const Node* m : c.nodes())
          b.notes[m->name()] = fmt::format("in attention layer '{}'", c.context->name());
      } else if (&n == c.context) {
        PendingLayer& l = pending[attention_of.at(&n)];
        l.inputs.push_back(tensor(n.input(3)));
        const int x = static_cast<int>(tensors.size());
        tensors.push_back({n.output(0)->name(), TensorBytes(*n.output(0)), false, 0, attention_of.at(&n)});
        tensor_of[n.output(0)] = x;
        names_of[x].push_back(n.output(0)->name());
        l.outputs.push_back(x);
      }
      continue;
    }
    PendingLayer l;
    l.node = &n;
    l.placement = *p;
    l.target = t;
    l.cycles = p->npu_cycles - t.dispatch_overhead_cycles;
    for (const Value* v : n.inputs())
      if (v && !v->is_constant()) l.inputs.push_back(tensor(v));
    for (const Value* v : n.outputs()) {
      if (!v) continue;
      const int x = static_cast<int>(tensors.size());
      tensors.push_back({v->name(), TensorBytes(*v), false, 0, static_cast<int>(pending.size())});
      tensor_of[v] = x;
      names_of[x].push_back(v->name());
      l.outputs.push_back(x);
    }
    pending.push_back(std::move(l));
  }
  std::string schedule;
  RETURN_IF_ERROR(PlanParallelGroups(pending, tensors, t, opt, schedule));
  // The plan's view of the tensors: lifetimes over the layer order, and which must stay in DRAM.
  b.plan_tensors.resize(tensors.size());
  for (size_t x = 0; x < tensors.size(); ++x) {
    npu::SramPlanTensor& pt = b.plan_tensors[x];
    pt.name = tensors[x].name;
    pt.bytes = tensors[x].bytes;
    pt.first = tensors[x].producer;
    if (tensors[x].producer < 0) pt.dram_reason = "segment input";
  }
  // Lifetimes over the layer order: a tensor from its first writer (a slice's writer writes
  // part of its tensor) to its last reader (of it or of a slice of it).
  auto lifetimes = [&] {
    auto root = [&](int x) { return tensors[x].slice_of >= 0 ? tensors[x].slice_of : x; };
    for (size_t x = 0; x < tensors.size(); ++x) {
      b.plan_tensors[x].first = tensors[x].slice_of >= 0 ? -1 : tensors[x].producer;
      b.plan_tensors[x].last = -1;
    }
    for (size_t i = 0; i < pending.size(); ++i) {
      const int at = static_cast<int>(i);
      for (int x : pending[i].inputs) {
        b.plan_tensors[x].last = std::max(b.plan_tensors[x].last, at);
        b.plan_tensors[root(x)].last = std::max(b.plan_tensors[root(x)].last, at);
      }
      for (int x : pending[i].outputs) {
        int& first = b.plan_tensors[root(x)].first;
        if (root(x) != x) first = first < 0 ? at : std::min(first, at);
      }
    }
  };
  lifetimes();
  std::set<std::string> outs;
  for (auto& [v, x] : tensor_of) {
    if (!v->producer() || !in_run.count(v->producer())) continue;
    bool outside = v->is_graph_output();
    for (const auto& u : v->uses()) outside |= !in_run.count(u.node);
    if (!outside) continue;
    if (b.plan_tensors[x].dram_reason.empty())
      b.plan_tensors[x].dram_reason = v->is_graph_output() ? "graph output" : "read outside the segment";
    outs.insert(v->name());
  }
  // Outputs in graph order (the order the run produced them).
  for (const partition::NodePlacement* p : run)
    for (const Value* v : p->node->outputs())
      if (v && outs.count(v->name())) b.outputs.push_back(v->name());

  // Lowers every layer with its tiling and plans the SRAM over the result.
  std::vector<npu::SegmentLayer> layers;
  auto lower_and_plan = [&]() -> Status {
    layers.clear();
    b.plan_layers.clear();
    for (size_t i = 0; i < pending.size(); ++i) {
      const PendingLayer& pl = pending[i];
      npu::SegmentLayer l;
      if (pl.stripe) {
        auto prog = LowerStripe(*pl.stripe, pl.target);
        if (!prog.ok()) return prog.status().WithContext(pl.node->Label());
        l.program = std::move(*prog);
        l.name = fmt::format("{} [stripe {}/{}]", pl.node->name(), pl.stripe->index, pl.stripe->count);
        l.constants_of = pl.stripe->constants_of;
      } else {
        ASSIGN_OR_RETURN(l.program, pl.attention ? npu::LowerAttention(*pl.attention, pl.target, pl.attention_tiling)
                                                 : LowerNode(*pl.node, pl.target, pl.placement));
        l.name = pl.node->name();
      }
      l.inputs = pl.inputs;
      l.outputs = pl.outputs;
      l.core_base = pl.core_base;
      b.plan_layers.push_back({l.name, npu::SramFootprint(l.program), pl.group_first, npu::ConstantExtent(l.program),
                               npu::ConstantReads(l.program)});
      layers.push_back(std::move(l));
    }
    b.plan = npu::PlanSram(b.plan_layers, b.plan_tensors, t.shared_sram.bytes, t.shared_sram.alignment,
                           /*stream_weights=*/true, keep_weights);
    for (size_t x = 0; x < tensors.size(); ++x) {  // a slice is where its tensor is
      const int r = tensors[x].slice_of;
      if (r < 0) continue;
      b.plan.tensors[x].in_sram = b.plan.tensors[r].in_sram;
      b.plan.tensors[x].addr = b.plan.tensors[r].addr + tensors[x].slice_offset;
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(lower_and_plan());
  if (!pending.empty()) RETURN_IF_ERROR(RetileForSegment(pending, b, t, opt, lower_and_plan, schedule));
  // Cascades: kept when every band of their inner tensors lands on chip.
  if (!pending.empty() && opt.cascades) {
    const auto saved = std::make_tuple(pending, tensors, b.plan_tensors);
    std::string cascades;
    ASSIGN_OR_RETURN(int chains, PlanCascades(pending, tensors, b.plan_tensors, b.plan_layers, b.plan, t, opt, cascades));
    if (chains > 0) {
      lifetimes();
      RETURN_IF_ERROR(lower_and_plan());
      bool on_chip = true;
      for (size_t i = 0; i < pending.size(); ++i)
        for (int x : pending[i].outputs)
          on_chip &= !pending[i].stripe || tensors[x].slice_of >= 0 || b.plan.tensors[x].in_sram;
      if (!on_chip) {
        cascades += ";   cascades dropped: a band did not fit beside the working tiles\n";
        std::tie(pending, tensors, b.plan_tensors) = saved;
        RETURN_IF_ERROR(lower_and_plan());
      }
    }
    schedule += cascades;
  }
  b.listing += attention_listing + schedule;
  for (const PendingLayer& l : pending) {
    if (!l.attention) continue;
    auto fp = npu::CheckAttentionTiling(*l.attention, l.target, l.attention_tiling);
    for (auto& [node, note] : b.notes)
      if (note == fmt::format("in attention layer '{}'", l.node->name()))
        note += fmt::format(" ({}, {:.0f} cycles alone; scores {} B in SRAM, {} B of scores and probabilities "
                            "through DRAM unfused alone)",
                            l.attention_tiling.ToString(), l.cycles, fp.ok() ? fp->scores_sram : 0,
                            l.attention->unfused_scores_traffic());
  }
  auto assemble = [&](const npu::SramPlan& plan) -> StatusOr<npu::Program> {
    for (size_t x = 0; x < tensors.size(); ++x) {
      tensors[x].in_sram = plan.tensors[x].in_sram;
      if (tensors[x].in_sram) tensors[x].addr = plan.tensors[x].addr;
    }
    for (size_t i = 0; i < layers.size(); ++i) {
      layers[i].sram_base = plan.work_base[i];
      layers[i].weights_from = plan.weights_from[i];
      layers[i].weights_addr = plan.weights_addr[i];
      layers[i].weights_resident = plan.weights_resident[i];
      layers[i].weights_bytes = plan.lead_in[i] ? plan.weights_bytes[i] : -1;
      layers[i].weights_spread = plan.spread_chunks;
    }
    if (layers.empty()) return npu::Program{};
    return npu::AssembleSegment(layers, tensors, t, fmt::format("{} ({} layers)", name, layers.size()));
  };
  // The weight stream's schedule over the plan (npu_lead_ins.h): the segment's cycles.
  auto schedule_weights = [&](int mode) -> StatusOr<double> {
    return ScheduleWeightStream(b, tensors, t, keep_weights, assemble, mode);
  };
  ASSIGN_OR_RETURN(const double as_tiled, schedule_weights(opt.lead_ins));
  // Room for late weights (npu_segment_room.h): early layers tiled again for less SRAM.
  if (opt.room_for_weights > 0 && !layers.empty()) {
    bool retiled = false;
    std::map<std::string, RetiledNode> capped;
    auto attempt = [&](const std::vector<int64_t>& caps, double to_beat) -> StatusOr<double> {
      auto saved = std::make_tuple(pending, b, layers, tensors);
      for (size_t i = 0; i < caps.size(); ++i) {
        PendingLayer& l = pending[i];
        if (caps[i] <= 0 || l.stripe || l.attention) continue;
        const npu::Target sub = SubTarget(t, l.target.ai_cores.count, std::min(caps[i], l.target.shared_sram.bytes));
        const npu::TilerOptions o = OperandOptions(l, b.plan, opt);
        const std::string key = SameTilingKey(l, sub.shared_sram.bytes, o);
        if (!capped.count(key)) {  // one tiling per cap for every variant and every like layer
          auto r = RetileLayer(l, sub, o);
          if (!r.ok()) continue;
          r->cycles -= t.dispatch_overhead_cycles;
          capped[key] = std::move(*r);
        }
        TakeTiling(l, capped[key]);
        l.target = sub;
      }
      RETURN_IF_ERROR(lower_and_plan());
      bool bands = true;  // a cascade's bands stay on chip (as when the cascades were kept)
      for (size_t i = 0; i < pending.size(); ++i)
        for (int x : pending[i].outputs)
          bands &= !pending[i].stripe || tensors[x].slice_of >= 0 || b.plan.tensors[x].in_sram;
      // Each variant with the ring spread alone (one simulation, never faster than the whole
      // choice), the kept one with the whole choice below.
      ASSIGN_OR_RETURN(double cycles, bands ? schedule_weights(opt.lead_ins == 1 ? 3 : opt.lead_ins)
                                            : StatusOr<double>(1e300));
      if (cycles >= to_beat) std::tie(pending, b, layers, tensors) = std::move(saved);
      retiled |= cycles < to_beat;
      return cycles;
    };
    RETURN_IF_ERROR(TryRoomForLateWeights(pending, b.plan_layers, b.plan_tensors, t, t.shared_sram.bytes *
                                          opt.room_for_weights / 16, as_tiled, attempt, b.listing));
    if (retiled && opt.lead_ins == 1) RETURN_IF_ERROR(schedule_weights(opt.lead_ins).status());
  }
  RETURN_IF_ERROR(ListSramAwareBound(b, t));
  std::string layer_lines;
  for (size_t i = 0; i < pending.size(); ++i)
    layer_lines += fmt::format(";   layer {} {}{}: {}{}\n", i, pending[i].attention ? "attention " : "",
                               pending[i].node->Label(), pending[i].placement.plan,
                               pending[i].group_first >= 0
                                   ? fmt::format(" on cores {}..{}", pending[i].core_base,
                                                 pending[i].core_base + layers[i].program.cores_used - 1)
                                   : "");
  b.listing = layer_lines + b.listing;
  if (!layers.empty()) {
    // A view's name for its tensor's DRAM region (the runtime finds values by name).
    for (auto& [x, names] : names_of)
      for (size_t k = 1; k < names.size(); ++k)
        if (!tensors[x].in_sram) b.program.regions.push_back({names[k], tensors[x].addr, tensors[x].bytes});
  }
  b.listing = npu::FormatSramPlan(b.plan, b.plan_layers, b.plan_tensors) + b.listing;
  return b;
}

}  // namespace

StatusOr<NpuSegmentBuild> BuildNpuSegment(const std::vector<const partition::NodePlacement*>& run,
                                          const npu::Target& t, const std::string& name,
                                          const npu::TilerOptions& opt, bool keep_weights) {
  std::vector<const Node*> nodes;
  for (const partition::NodePlacement* p : run) nodes.push_back(p->node);
  const bool chains = !FindAttentionChains(nodes, [](const Node& n) { return partition::IsDramView(n); }).empty();
  ASSIGN_OR_RETURN(NpuSegmentBuild plain, BuildSegment(run, t, name, opt, keep_weights, false));
  if (!chains) return plain;
  // Fused attention layers change the whole segment's schedule (its cores, SRAM plan and
  // overlap), so the segment's simulated cycles decide.
  auto fused = BuildSegment(run, t, name, opt, keep_weights, true);
  if (!fused.ok()) return plain;
  auto simulate = [&](const NpuSegmentBuild& b) -> StatusOr<npu::Stats> {
    if (b.program.instrs.empty()) return npu::Stats{};
    ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(b.program, t));
    return sim.total;
  };
  ASSIGN_OR_RETURN(npu::Stats fs, simulate(*fused));
  ASSIGN_OR_RETURN(npu::Stats ps, simulate(plain));
  const double with = fs.cycles, without = ps.cycles;
  NpuSegmentBuild& pick = with < without ? *fused : plain;
  if (&pick == &plain) {
    pick.notes.clear();
  } else {
    for (auto& [node, note] : pick.notes)
      note += fmt::format("; segment {:.0f} cycles, DRAM {} B (unfused {:.0f} cycles, {} B)", with,
                          fs.dram_read + fs.dram_written, without, ps.dram_read + ps.dram_written);
  }
  if (&pick == &plain) {  // the chains' lines of the fused build still explain the choice
    std::istringstream lines(fused->listing);
    for (std::string line; std::getline(lines, line);)
      if (line.rfind(";   attention ", 0) == 0) pick.listing += line + "\n";
  }
  pick.listing += fmt::format(";   attention layers: segment {:.0f} cycles fused, {:.0f} unfused: {}\n", with, without,
                              with < without ? "fused" : "unfused");
  return std::move(pick);
}

}  // namespace edgec::lower
