// Tiling candidates, the analytic estimate that ranks them, and the choice by simulation.
#include "npu/tiler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace edgec::npu {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<int> Powers(int base, int limit) {
  std::vector<int> v;
  for (int64_t x = base; x < limit; x *= 2) v.push_back(static_cast<int>(x));
  v.push_back(limit);
  return v;
}

}  // namespace

std::vector<Tiling> TilingCandidates(const ConvLayer& l, const Target& t, const TilerOptions& opt) {
  const int R = t.ai_cores.mac_rows, C = t.ai_cores.mac_cols, OH = l.out_h(), OW = l.out_w();
  std::set<std::pair<int, int>> m_shapes;
  for (int tm : Powers(16, std::max(16, OH * OW))) {
    if (tm >= OW) m_shapes.insert({std::min(OH, tm / OW), OW});
    else m_shapes.insert({1, tm});
  }
  std::set<std::pair<int, int>> k_steps;  // (kw_group, tile_c)
  for (int tc : Powers(R, std::max(R, l.channels))) {
    tc = std::min(tc, l.channels);
    k_steps.insert({1, tc});
    if (tc == l.channels && l.kernel_w > 1) k_steps.insert({l.kernel_w, tc});
  }
  const std::vector<int> ns = Powers(C, std::max(C, l.out_channels));
  std::set<int> cores = {t.ai_cores.count, std::max(1, t.ai_cores.count / 2), std::max(1, t.ai_cores.count / 4), 1};
  std::vector<bool> buffering;
  if (opt.allow_double) buffering.push_back(true);
  if (opt.allow_single || !opt.allow_double) buffering.push_back(false);
  std::vector<Tiling> out;
  for (auto [th, tw] : m_shapes)
    for (auto [g, tc] : k_steps)
      for (int tn : ns)
        for (Resident r : {Resident::kWeights, Resident::kInput, Resident::kNone})
          for (int nc : cores)
            for (bool db : buffering) {
              Tiling tl{th, tw, tc, g, std::min(tn, l.out_channels), r, db, nc};
              if (r == Resident::kWeights && g == 1 && tw == OW && l.kernel_h * l.kernel_w > 1) {
                Tiling b = tl;
                b.band = true;
                const int64_t btiles = CeilDiv(OH, th) * l.batch * CeilDiv(l.out_channels, b.tile_n);
                if ((nc == 1 || btiles >= nc / 2) && CheckTiling(l, t, b).ok()) out.push_back(b);
              }
              // More cores than output tiles gains nothing.
              const int64_t tiles = CeilDiv(OH, th) * CeilDiv(OW, tw) * l.batch * CeilDiv(l.out_channels, tl.tile_n);
              if (nc > 1 && tiles < nc / 2) continue;
              if (CheckTiling(l, t, tl).ok()) out.push_back(tl);
            }
  return out;
}

double EstimateCycles(const ConvLayer& l, const Target& t, const Tiling& tl) {
  const int64_t es = l.elem_bytes();
  const int64_t mt = CeilDiv(l.out_h(), tl.tile_h) * CeilDiv(l.out_w(), tl.tile_w) * l.batch;
  const int64_t nt = CeilDiv(l.out_channels, tl.tile_n);
  const int64_t tiles = mt * nt, tm = int64_t{tl.tile_h} * tl.tile_w, tn = tl.tile_n, K = l.k();
  const int64_t steps = CeilDiv(l.kernel_w, tl.kw_group) * l.kernel_h * CeilDiv(l.channels, tl.tile_c);
  const int64_t kstep = K / std::max<int64_t>(1, steps);
  double tile_compute = steps * MatMulCycles(t, tm, kstep, tn, l.fp16);
  if (tl.band) {
    const int64_t csteps = CeilDiv(l.channels, tl.tile_c);
    tile_compute = double(tl.tile_h) * l.kernel_h * l.kernel_w * csteps *
                   MatMulCycles(t, tl.tile_w, std::min(tl.tile_c, l.channels), tn, l.fp16);
  }
  const int64_t tiles_per_core = CeilDiv(tiles, tl.cores);
  const double compute = tiles_per_core * tile_compute;
  const int64_t groups = tl.resident == Resident::kInput ? mt : nt;
  const int64_t items = std::max<int64_t>(groups, std::min<int64_t>(tl.cores, tiles));
  double bytes = static_cast<double>(l.m() * l.n() * es);
  int64_t dmas_per_tile = 2 + steps * (tl.resident == Resident::kNone ? 2 : 1) * tl.kw_group;
  switch (tl.resident) {
    case Resident::kNone: bytes += tiles * (tm * K + K * tn) * es; break;
    case Resident::kWeights:
      if (tl.band) {
        const double rows = double(tl.tile_h - 1) * l.stride_h + double(l.kernel_h - 1) * l.dilation_h + 1;
        const double wp = double(l.out_w() - 1) * l.stride_w + double(l.kernel_w - 1) * l.dilation_w + 1;
        bytes += tiles * rows * wp * l.channels * es + items * K * tn * es;
        dmas_per_tile = 2 + CeilDiv(l.channels, tl.tile_c) * 2;
      } else {
        bytes += (tiles * tm * K + items * K * tn) * es;
      }
      break;
    case Resident::kInput: bytes += (tiles * K * tn + items * tm * K) * es; break;
  }
  // Short rows waste bursts.
  const double row = static_cast<double>(tl.tile_c * es) * (tl.band && tl.tile_c >= l.channels ? l.in_w : 1);
  const double burst_eff = row / (std::ceil(row / t.dram.burst_bytes) * t.dram.burst_bytes);
  const double dram = bytes / std::max(0.05, std::min(1.0, burst_eff)) / t.dram_bytes_per_cycle();
  const double per_dma = t.dma.setup_cycles + t.dram.read_latency_cycles;
  const double overhead = tiles_per_core * dmas_per_tile * per_dma;
  // Per tile the stages overlap (the load queue issues in order, so its DMAs' setup and
  // latency add up); the pipeline fills with the first load and drains with the last
  // requantize and store.
  const double vec = t.vector_cores.pipeline_latency +
                     std::ceil(double(tm * tn) / t.vector_cores.lanes) * 2 *
                         std::max(1.0, double(tl.cores) / t.vector_cores.count);
  const double load_t = double(dmas_per_tile - 1) * per_dma;
  const double store_dma = t.dma.setup_cycles + t.dram.write_latency_cycles;
  const double fill = per_dma + vec + store_dma + tile_compute / std::max<int64_t>(1, steps);
  (void)overhead;
  if (tl.double_buffer)
    return std::max(dram, tiles_per_core * std::max({load_t, tile_compute, vec, store_dma})) + fill;
  return tiles_per_core * (load_t + tile_compute + vec + store_dma) + dram;
}

StatusOr<SimResult> SimulateTiling(const ConvLayer& l, const Target& t, const Tiling& tl) {
  ConvLayer shape = l;
  shape.weights.clear();  // timing does not need the data
  ASSIGN_OR_RETURN(Program p, LowerConv(shape, t, tl, nullptr));
  return Simulate(p, t);
}

StatusOr<TilerResult> ChooseTiling(const ConvLayer& l, const Target& t, const TilerOptions& opt) {
  std::vector<Tiling> cands = TilingCandidates(l, t, opt);
  if (cands.empty())
    return InvalidArgument("layer '{}' ({}x{}x{}): no tiling fits {} bytes of SRAM and {} accumulator bytes", l.name,
                           l.m(), l.k(), l.n(), t.shared_sram.bytes, t.ai_cores.accumulator_bytes);
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < cands.size(); ++i) ranked.push_back({EstimateCycles(l, t, cands[i]), i});
  std::sort(ranked.begin(), ranked.end());
  // Heuristic: the best estimates overall, plus the best estimate of each family (core count,
  // residency, buffering), since the estimate ranks well within a family and less well across.
  std::vector<size_t> pick;
  std::map<std::tuple<int, int, bool>, int> families;
  for (size_t i = 0; i < ranked.size(); ++i) {
    const Tiling& tl = cands[ranked[i].second];
    const bool top = static_cast<int>(i) < std::max(2, opt.simulate_top);
    const bool first_of_family =
        families[{tl.cores, static_cast<int>(tl.resident) + (tl.band ? 8 : 0), tl.double_buffer}]++ < 3;
    if (opt.exhaustive || top || first_of_family) pick.push_back(i);
  }
  std::vector<std::pair<double, size_t>> chosen;
  for (size_t i : pick) chosen.push_back(ranked[i]);
  ranked = chosen;
  const size_t n = ranked.size();
  std::vector<TileChoice> sims;
  TilerResult r;
  r.candidates = static_cast<int>(cands.size());
  std::vector<Stats> stats;
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(SimResult s, SimulateTiling(l, t, cands[ranked[i].second]));
    sims.push_back({cands[ranked[i].second], s.total.cycles, ranked[i].first});
    stats.push_back(s.total);
  }
  // Coordinate descent from the best simulated: candidates that differ in one attribute.
  if (!opt.exhaustive) {
    std::set<size_t> done;
    for (auto& [est, idx] : ranked) done.insert(idx);
    auto differs = [](const Tiling& a, const Tiling& b) {
      return int(a.tile_h != b.tile_h || a.tile_w != b.tile_w) + int(a.tile_c != b.tile_c || a.kw_group != b.kw_group) +
             int(a.tile_n != b.tile_n) + int(a.resident != b.resident) + int(a.double_buffer != b.double_buffer) +
             int(a.cores != b.cores) + int(a.band != b.band);
    };
    for (int round = 0; round < 4; ++round) {
      size_t best = 0;
      for (size_t i = 1; i < sims.size(); ++i)
        if (sims[i].cycles < sims[best].cycles) best = i;
      const Tiling center = sims[best].tiling;
      bool improved = false;
      for (size_t i = 0; i < cands.size(); ++i) {
        const int d = differs(cands[i], center);
        // One attribute, or one plus the core count (a new split often wants other cores).
        if (done.count(i) || d == 0 || d > 2 || (d == 2 && cands[i].cores == center.cores)) continue;
        done.insert(i);
        ASSIGN_OR_RETURN(SimResult s, SimulateTiling(l, t, cands[i]));
        sims.push_back({cands[i], s.total.cycles, EstimateCycles(l, t, cands[i])});
        stats.push_back(s.total);
        improved |= s.total.cycles < sims[best].cycles;
      }
      if (!improved) break;
    }
  }
  r.simulated = static_cast<int>(sims.size());
  std::vector<size_t> order(sims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sims[a].cycles < sims[b].cycles; });
  const double limit = sims[order[0]].cycles * (1 + opt.traffic_slack);
  auto traffic = [&](size_t i) { return stats[i].dram_read + stats[i].dram_written; };
  size_t pick_best = order[0];
  for (size_t i : order)
    if (sims[i].cycles <= limit && traffic(i) < traffic(pick_best)) pick_best = i;
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return i == pick_best; });
  r.best = sims[order[0]];
  r.stats = stats[order[0]];
  if (order.size() > 1) r.runner_up = sims[order[1]];
  return r;
}

}  // namespace edgec::npu
