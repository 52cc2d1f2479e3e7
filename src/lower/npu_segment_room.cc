// Room for the late weights of a segment: early layers tiled for less SRAM (see npu_segment_room.h).
#include "lower/npu_segment_room.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/status.h"
#include "ir/op.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"

namespace edgec::lower {

RoomCut CriticalCut(const std::vector<double>& cycles, const std::vector<int64_t>& const_bytes,
                    const std::vector<int64_t>& live_bytes, int64_t sram_bytes, double dram_bytes_per_cycle) {
  const int L = static_cast<int>(std::min({cycles.size(), const_bytes.size(), live_bytes.size()}));
  std::vector<double> after(L + 1, 0);  // constant bytes of the layers after each cut
  for (int i = L - 1; i >= 0; --i) after[i] = after[i + 1] + static_cast<double>(const_bytes[i]);
  RoomCut cut;
  double compute = 0;
  for (int k = 0; k < L; ++k) {
    compute += std::max(0.0, cycles[k] - static_cast<double>(const_bytes[k]) / dram_bytes_per_cycle);
    const double room = static_cast<double>(std::max<int64_t>(0, sram_bytes - live_bytes[k]));
    const double t = compute + std::max(0.0, after[k + 1] - room) / dram_bytes_per_cycle;
    if (t > cut.cycles) cut = {k, t};
  }
  return cut;
}

Status TryRoomForLateWeights(const std::vector<PendingLayer>& layers,
                             const std::vector<npu::SramPlanLayer>& plan_layers,
                             const std::vector<npu::SramPlanTensor>& plan_tensors, const npu::Target& t, int64_t cap,
                             double base, const TryCaps& attempt, std::string& listing) {
  std::vector<double> cycles;
  std::vector<int64_t> work_bytes, const_bytes, live_bytes(layers.size(), 0);
  for (size_t i = 0; i < layers.size(); ++i) {
    cycles.push_back(layers[i].cycles);
    work_bytes.push_back(plan_layers[i].work_bytes);
    const_bytes.push_back(plan_layers[i].const_bytes);
    for (const npu::SramPlanTensor& x : plan_tensors)  // live across the cut after layer i
      if (x.first <= static_cast<int>(i) && x.last > static_cast<int>(i)) live_bytes[i] += x.bytes;
  }
  const RoomCut cut = CriticalCut(cycles, const_bytes, live_bytes, t.shared_sram.bytes, t.dram_bytes_per_cycle());
  const int L = static_cast<int>(work_bytes.size());
  // The early layers: up to the critical cut, or up to where the tail's weights take longer to
  // stream than the tail computes (from there the DRAM is the bottleneck).
  std::vector<double> compute(L);
  for (int i = 0; i < L; ++i)
    compute[i] = std::max(0.0, cycles[i] - static_cast<double>(const_bytes[i]) / t.dram_bytes_per_cycle());
  int tail = L;  // the first layer whose tail (it and every later layer) is DRAM-bound
  double c = 0, w = 0;
  for (int i = L - 1; i >= 0; --i) {
    c += compute[i];
    w += static_cast<double>(const_bytes[i]) / t.dram_bytes_per_cycle();
    if (w >= c) tail = i;
  }
  std::vector<int> sets;
  for (int early : {cut.layer + 1, tail}) {
    int64_t late = 0;  // worth trying only when later layers have weights to stream into the room
    for (int i = early; i < L; ++i) late += const_bytes[i];
    if (early >= 2 && late >= t.shared_sram.bytes / 8 && std::find(sets.begin(), sets.end(), early) == sets.end())
      sets.push_back(early);
  }
  std::string figures;
  double best = base;
  std::string kept = "none";
  std::vector<int64_t> held(work_bytes);  // each layer's SRAM bound after the variants kept
  for (const int early : sets) {
    std::vector<int64_t> caps(early, 0);
    bool shrinks = false;  // a variant within what is kept changes nothing
    for (int i = 0; i < early; ++i)
      if (held[i] > cap) caps[i] = cap, shrinks = true;
    if (!shrinks) continue;
    ASSIGN_OR_RETURN(double cycles_with, attempt(caps, best));
    figures += fmt::format("{}layers 0..{} at {} B: {:.0f}", figures.empty() ? "" : ", ", early - 1, cap, cycles_with);
    if (cycles_with < best) {
      best = cycles_with;
      kept = fmt::format("{}layers 0..{} at {} B", kept == "none" ? "" : kept + " then ", early - 1, cap);
      for (int i = 0; i < early; ++i) held[i] = std::min(held[i], cap);
    }
  }
  if (!figures.empty())
    listing += fmt::format(";   room for late weights (critical cut after layer {}, {:.0f} cycles): {}; as tiled "
                           "{:.0f} cycles; kept: {}\n",
                           cut.layer, cut.cycles, figures, base, kept);
  return Status::Ok();
}

std::string SameTilingKey(const PendingLayer& l, int64_t cap, const npu::TilerOptions& operands) {
  const std::string common = fmt::format("{} {} {} {}", cap, l.target.ai_cores.count, operands.on_chip_inputs,
                                         operands.on_chip_outputs);
  auto shape = IsVectorNode(*l.node) || l.attention ? StatusOr<npu::ConvLayer>(InvalidArgument("not a GEMM layer"))
                                                    : GemmLayerShape(*l.node);
  if (!shape.ok()) return fmt::format("node {} {}", l.node->name(), common);
  const npu::ConvLayer& c = *shape;
  return fmt::format("gemm {} {}x{}x{}x{} -> {} g{} k{}x{} s{}x{} d{}x{} p{},{},{},{} {} {} {}", common, c.batch, c.in_h,
                     c.in_w, c.channels, c.out_channels, c.group, c.kernel_h, c.kernel_w, c.stride_h, c.stride_w, c.dilation_h,
                     c.dilation_w, c.pad_top, c.pad_left, c.pad_bottom, c.pad_right, c.fp16, c.weights_from_input,
                     OpName(l.node->op()));
}

double SramAwareBound(const std::vector<double>& work, const std::vector<int64_t>& after_bytes,
                      const std::vector<int64_t>& live_bytes, int64_t sram_bytes, double dram_bytes_per_cycle,
                      int* cut) {
  double best = 0;
  for (size_t k = 0; k < work.size() && k < after_bytes.size() && k < live_bytes.size(); ++k) {
    const double room = static_cast<double>(std::max<int64_t>(0, sram_bytes - live_bytes[k]));
    const double v = work[k] + std::max(0.0, static_cast<double>(after_bytes[k]) - room) / dram_bytes_per_cycle;
    if (v > best) {
      best = v;
      if (cut) *cut = static_cast<int>(k);
    }
  }
  return best;
}

Status ListSramAwareBound(NpuSegmentBuild& b, const npu::Target& t) {
  const int L = static_cast<int>(b.plan_layers.size());
  if (L < 2 || b.program.instrs.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(b.program, t));
  std::vector<double> work(L);
  std::vector<int64_t> after(L, 0), live(L, 0);
  double macs = 0, vector = 0, constants = 0;
  for (int k = 0; k < L; ++k) {
    if (k < static_cast<int>(sim.layers.size())) {
      macs += static_cast<double>(sim.layers[k].stats.macs);
      vector += sim.layers[k].stats.busy[static_cast<int>(npu::QueueKind::kVector)];
    }
    work[k] = std::max(macs / t.peak_int8_macs_per_cycle(), vector / std::max(1, t.vector_cores.count));
    for (int j = k + 1; j < L; ++j) after[k] += b.plan_layers[j].const_bytes;
    for (const npu::SramPlanTensor& x : b.plan_tensors) {
      if (x.first <= k && x.last > k) live[k] += x.bytes;
      if (!x.dram_reason.empty() && x.first > k) after[k] += x.bytes;  // an output written after the cut
    }
    constants += static_cast<double>(b.plan_layers[k].const_bytes);
  }
  int cut = -1;
  const double bound = SramAwareBound(work, after, live, t.shared_sram.bytes, t.dram_bytes_per_cycle(), &cut);
  const double plain = std::max(work[L - 1], constants / t.dram_bytes_per_cycle());
  b.listing += fmt::format(";   SRAM-aware lower bound: {:.0f} cycles at the cut after layer {} ({} B of later "
                           "constants and outputs, {} B live across it); MAC/vector/constants bound {:.0f}; "
                           "segment {:.0f} cycles\n",
                           std::max(bound, plain), cut, cut >= 0 ? after[cut] : 0, cut >= 0 ? live[cut] : 0, plain,
                           sim.total.cycles);
  return Status::Ok();
}

void TakeTiling(PendingLayer& l, const RetiledNode& r) {
  l.placement.tiling = r.placement.tiling;
  l.placement.vector_tiling = r.placement.vector_tiling;
  l.placement.plan = r.placement.plan;
  l.placement.npu_cycles = r.placement.npu_cycles;
  l.cycles = r.cycles;
}

}  // namespace edgec::lower
