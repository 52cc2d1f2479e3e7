// Lead-in weight slots, kept when the segment simulates faster (see npu_lead_ins.h).
#include "lower/npu_lead_ins.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "support/status.h"
#include "npu/sim.h"

namespace edgec::lower {

Status TryLeadIns(NpuSegmentBuild& b, const std::vector<npu::SegmentTensor>& tensors, const npu::Target& t,
                  bool keep_weights, bool clear, const AssemblePlan& assemble, int mode, double* cycles) {
  if (cycles) *cycles = -1;
  if (mode == 0 || b.program.instrs.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(npu::SimResult base, npu::Simulate(b.program, t));
  const double without = base.total.cycles;
  double best = mode >= 2 ? 1e300 : without;
  std::optional<npu::SramPlan> best_plan;
  std::optional<npu::Program> best_program;
  std::vector<std::vector<int>> tried;
  std::string figures;
  // How far back a large image's prefix may load: the deeper, the more of it leaves a
  // DRAM-bound stretch, but the longer it holds SRAM the ring of whole slots wants.
  // Negative: the large images' lead-ins only (the others' may delay the loads beside them).
  // Each with the ring's chunks at one step or spread over the steps they may load in. Last, no
  // stream at all (every layer loads its own weights): where the weights are few and the
  // layers short, the stream's DRAM bytes only delay the layers' own (edge-mcu's one core).
  struct Variant {
    int depth = 0;
    bool spread = false, stream = true;
  };
  std::vector<Variant> variants;
  for (bool spread : {false, true})
    for (int depth : {0, 1, 4, 16, 1 << 20, -4, -(1 << 20)}) {
      if (depth == 0 && (!spread || mode == 2)) continue;  // the plan the segment has; lead-ins forced
      if (mode == 3 && (depth != 0 || !spread)) continue;  // the spread ring alone
      variants.push_back({depth, spread});
    }
  if (mode == 1) variants.push_back({.stream = false});
  for (const auto& [depth, spread, stream] : variants) {
    npu::SramPlan with = npu::PlanSram(b.plan_layers, b.plan_tensors, t.shared_sram.bytes,
                                       t.shared_sram.alignment, stream, keep_weights, clear, depth);
    with.spread_chunks = spread;
    for (size_t x = 0; x < tensors.size(); ++x) {  // a slice is where its tensor is
      const int r = tensors[x].slice_of;
      if (r < 0) continue;
      with.tensors[x].in_sram = with.tensors[r].in_sram;
      with.tensors[x].addr = with.tensors[r].addr + tensors[x].slice_offset;
    }
    if (depth != 0 && std::none_of(with.lead_in.begin(), with.lead_in.end(), [](bool x) { return x; })) continue;
    std::vector<int> key = with.weights_from;
    key.push_back(spread);
    if (std::find(tried.begin(), tried.end(), key) != tried.end()) continue;
    tried.push_back(key);
    int64_t bytes = 0;
    for (size_t j = 0; j < with.lead_in.size(); ++j)
      if (with.lead_in[j]) bytes += with.weights_bytes[j];
    ASSIGN_OR_RETURN(npu::Program program, assemble(with));
    ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(program, t));
    if (!stream)
      figures += fmt::format("{}no stream: {:.0f} cycles", figures.empty() ? "" : "; ", sim.total.cycles);
    else
      figures += fmt::format("{}depth {}{}: {} B, {:.0f} cycles", figures.empty() ? "" : "; ",
                             std::abs(depth) == 1 << 20 ? std::string(depth < 0 ? "-any" : "any") : std::to_string(depth),
                             spread ? " spread" : "", bytes, sim.total.cycles);
    if (sim.total.cycles < best) {
      best = sim.total.cycles;
      best_plan = std::move(with);
      best_program = std::move(program);
    }
  }
  if (cycles) *cycles = best_plan ? best : without;
  if (tried.empty()) return Status::Ok();
  b.listing += fmt::format(";   lead-in weight slots: {}; without {:.0f} cycles: {}\n", figures, without,
                           best_plan ? "kept" : "not kept");
  if (best_plan) {
    b.plan = std::move(*best_plan);
    b.program = std::move(*best_program);
  } else {
    ASSIGN_OR_RETURN(b.program, assemble(b.plan));
  }
  return Status::Ok();
}

StatusOr<double> ScheduleWeightStream(NpuSegmentBuild& b, const std::vector<npu::SegmentTensor>& tensors,
                                      const npu::Target& t, bool keep_weights, const AssemblePlan& assemble,
                                      int mode) {
  ASSIGN_OR_RETURN(b.program, assemble(b.plan));
  // Tensors placed clear of the previous layer let layers overlap but change where the weight
  // slots go: the segment keeps them when it simulates faster with them (resnet18 on
  // edge-large is faster without: docs/npu.md).
  bool cleared = true;
  if (!b.program.instrs.empty()) {
    npu::SramPlan stay = npu::PlanSram(b.plan_layers, b.plan_tensors, t.shared_sram.bytes, t.shared_sram.alignment,
                                       /*stream_weights=*/true, keep_weights, false);
    bool moved = false;
    for (size_t x = 0; x < tensors.size(); ++x) {
      const int r = tensors[x].slice_of;
      if (r >= 0) {  // a slice is where its tensor is
        stay.tensors[x].in_sram = stay.tensors[r].in_sram;
        stay.tensors[x].addr = stay.tensors[r].addr + tensors[x].slice_offset;
      }
      moved |= stay.tensors[x].in_sram && stay.tensors[x].addr != b.plan.tensors[x].addr;
    }
    if (moved) {
      ASSIGN_OR_RETURN(npu::Program other, assemble(stay));
      ASSIGN_OR_RETURN(npu::SimResult clear, npu::Simulate(b.program, t));
      ASSIGN_OR_RETURN(npu::SimResult kept, npu::Simulate(other, t));
      if (kept.total.cycles < clear.total.cycles) {
        cleared = false;
        b.plan = std::move(stay);
        b.program = std::move(other);
      } else {
        ASSIGN_OR_RETURN(b.program, assemble(b.plan));
      }
      b.listing += fmt::format(";   tensors clear of the previous layer: segment {:.0f} cycles with, {:.0f} "
                               "without: {}\n",
                               clear.total.cycles, kept.total.cycles,
                               kept.total.cycles < clear.total.cycles ? "not kept" : "kept");
    }
  }
  double cycles = -1;
  RETURN_IF_ERROR(TryLeadIns(b, tensors, t, keep_weights, cleared, assemble, mode, &cycles));
  if (cycles >= 0 || b.program.instrs.empty()) return std::max(cycles, 0.0);
  ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(b.program, t));
  return sim.total.cycles;
}

}  // namespace edgec::lower
