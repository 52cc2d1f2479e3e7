// Tiling candidates, the analytic estimate that ranks them, and the choice by simulation.
#include "npu/tiler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "npu/segment.h"

namespace edgec::npu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  const int CG = l.group_in(), NG = l.group_out();  // a grouped conv's K steps and N tiles stay in a group
  std::set<std::pair<int, int>> k_steps;  // (kw_group, tile_c)
  for (int tc : Powers(R, std::max(R, CG))) {
    tc = std::min(tc, CG);
    k_steps.insert({1, tc});
    if (tc == CG && l.kernel_w > 1) k_steps.insert({l.kernel_w, tc});
  }
  std::vector<int> ns = Powers(C, std::max(C, l.out_channels));
  if (l.group > 1) {  // divisors of the group's output channels (the group's width when narrower than the array)
    std::set<int> d;
    for (int tn : Powers(C, std::max(C, NG)))
      if (NG % std::min(tn, NG) == 0) d.insert(std::min(tn, NG));
    ns.assign(d.begin(), d.end());
  }
  std::set<int> cores = {t.ai_cores.count, std::max(1, t.ai_cores.count / 2), std::max(1, t.ai_cores.count / 4), 1};
  std::vector<bool> buffering;
  if (opt.allow_double) buffering.push_back(true);
  if (opt.allow_single || !opt.allow_double) buffering.push_back(false);
  // Team shapes per core count: all the cores in one team, and teams of 4.
  auto team_shapes = [](int nc) {
    std::vector<std::pair<int, int>> v;
    for (int size : {nc, 4})
      if (size > 1 && size <= nc && nc % size == 0)
        for (int tm = 1; tm <= size; ++tm)
          if (size % tm == 0 && std::find(v.begin(), v.end(), std::pair{tm, size / tm}) == v.end())
            v.push_back({tm, size / tm});
    return v;
  };
  std::vector<Tiling> out, teamed;
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
                b.im2col = true;  // few channels: the array's rows take the whole kernel
                if (tc == CG && tc < R && (nc == 1 || btiles >= nc / 2) && CheckTiling(l, t, b).ok())
                  out.push_back(b);
              }
              // Teams: blocks of team_m x team_n tiles, at least one per row and column of the
              // team; single buffering when double does not fit (large blocks want the SRAM).
              const int64_t m_tiles = CeilDiv(OH, th) * CeilDiv(OW, tw) * l.batch;
              const int64_t n_tiles = CeilDiv(l.out_channels, tl.tile_n);
              for (auto [tm, tn] : team_shapes(nc)) {
                if (tm > m_tiles || tn > n_tiles) continue;
                const int64_t blocks = CeilDiv(m_tiles, tm) * CeilDiv(n_tiles, tn);
                if (blocks < nc / (tm * tn) / 2) continue;
                Tiling tt = tl;
                tt.team_m = tm;
                tt.team_n = tn;
                if (CheckTiling(l, t, tt).ok()) {
                  teamed.push_back(tt);
                } else if (db && !opt.allow_single) {
                  tt.double_buffer = false;
                  if (CheckTiling(l, t, tt).ok()) teamed.push_back(tt);
                }
              }
              // More cores than output tiles gains nothing.
              const int64_t tiles = m_tiles * n_tiles;
              if (nc > 1 && tiles < nc / 2) continue;
              if (CheckTiling(l, t, tl).ok()) out.push_back(tl);
            }
  out.insert(out.end(), teamed.begin(), teamed.end());
  return out;
}

void MarkOnChip(Program& p, const TilerOptions& opt) {
  if (!opt.on_chip_inputs && !opt.on_chip_outputs) return;
  std::vector<bool> on(p.regions.size(), false);
  for (size_t r = 0; r < p.regions.size(); ++r) {
    auto [is_out, k] = RegionOperand(p.regions[r].name);
    if (k >= 0 && k < 32) on[r] = ((is_out ? opt.on_chip_outputs : opt.on_chip_inputs) >> k) & 1u;
  }
  for (Instr& in : p.instrs)
    if ((in.op == Opcode::kDmaLoad || in.op == Opcode::kDmaStore) && in.region >= 0 &&
        in.region < static_cast<int>(on.size()) && on[in.region])
      in.on_chip = true;
}

double EstimateCycles(const ConvLayer& l, const Target& t, const Tiling& tl, const TilerOptions& opt) {
  const int64_t es = l.elem_bytes();
  const int64_t mt = CeilDiv(l.out_h(), tl.tile_h) * CeilDiv(l.out_w(), tl.tile_w) * l.batch;
  const int64_t nt = CeilDiv(l.out_channels, tl.tile_n);
  // A team computes blocks of team_m x team_n tiles (one per core) and loads each block's
  // operands once: per core, one tile per block; the traffic is that of blocks.
  const int T = tl.team();
  const int64_t tiles = CeilDiv(mt, tl.team_m) * CeilDiv(nt, tl.team_n), tm = int64_t{tl.tile_h} * tl.tile_w;
  const int64_t tn = tl.tile_n, K = l.k(), bm = tm * tl.team_m, bn = tn * tl.team_n;
  const int64_t CG = l.group_in();  // a grouped conv's K steps read their group's channels
  const int64_t steps = CeilDiv(l.kernel_w, tl.kw_group) * l.kernel_h * CeilDiv(CG, tl.tile_c);
  const int64_t kstep = K / std::max<int64_t>(1, steps);
  double tile_compute = steps * MatMulCycles(t, tm, kstep, tn, l.fp16);
  if (tl.band) {
    const int64_t csteps = CeilDiv(CG, tl.tile_c);
    tile_compute = double(tl.tile_h) * l.kernel_h * l.kernel_w * csteps *
                   MatMulCycles(t, tl.tile_w, std::min<int64_t>(tl.tile_c, CG), tn, l.fp16);
    if (tl.im2col) tile_compute = MatMulCycles(t, tm, K, tn, l.fp16);
  }
  const int64_t teams = tl.cores / T;
  const int64_t tiles_per_core = CeilDiv(tiles, teams);
  const int64_t groups = tl.resident == Resident::kInput ? CeilDiv(mt, tl.team_m) : CeilDiv(nt, tl.team_n);
  const int64_t items = std::max<int64_t>(groups, std::min<int64_t>(teams, tiles));
  // DRAM bytes of the input, weights and output, each with the burst efficiency of its rows
  // (short rows waste bursts).
  const double burst = t.dram.burst_bytes;
  auto bursts = [&](double bytes, double row) { return bytes * std::ceil(row / burst) * burst / row; };
  int64_t dmas_per_tile = 2 + steps * (tl.resident == Resident::kNone ? 2 : 1) * tl.kw_group;
  if (T > 1) {  // a block's DMAs per step dealt over the team: its input in team_n parts per tile, its weights in team_m
    const int64_t a = tl.resident == Resident::kInput ? 0 : int64_t{tl.team_m} * tl.team_n * tl.kw_group;
    const int64_t b = tl.resident == Resident::kWeights ? 0 : tl.team_m;
    dmas_per_tile = 2 + steps * CeilDiv(a + b, T);
  }
  double in_bytes = 0, w_bytes = 0;
  switch (tl.resident) {
    case Resident::kNone:
      in_bytes = double(tiles) * bm * K * es;
      w_bytes = double(tiles) * K * bn * es;
      break;
    case Resident::kWeights:
      in_bytes = double(tiles) * bm * K * es;
      w_bytes = double(items) * K * bn * es;
      if (tl.band) {
        const double rows = double(tl.tile_h - 1) * l.stride_h + double(l.kernel_h - 1) * l.dilation_h + 1;
        const double wp = double(l.out_w() - 1) * l.stride_w + double(l.kernel_w - 1) * l.dilation_w + 1;
        in_bytes = tiles * rows * wp * CG * es;
        dmas_per_tile = 2 + CeilDiv(CG, tl.tile_c) * 2 + (tl.im2col ? l.kernel_h : 0);
      }
      break;
    case Resident::kInput:
      in_bytes = double(items) * bm * K * es;
      w_bytes = double(tiles) * K * bn * es;
      break;
  }
  double out_bytes = double(l.m() * l.n() * l.out_elem_bytes());
  double in_row = double(tl.tile_c * es) * (tl.band && tl.tile_c >= l.channels ? l.in_w : 1);
  // On-chip operands move no DRAM byte and waste no burst; their DMAs cost setup + SRAM time.
  const bool in_chip = opt.on_chip_inputs & 1u, out_chip = opt.on_chip_outputs & 1u;
  if (in_chip) {
    in_row = burst;
    in_bytes = 0;
  }
  if (out_chip) out_bytes = 0;
  // Without teams every byte is charged the input rows' burst efficiency (the ranking the
  // single-core search has always used); teams charge each operand its own rows.
  const double in_eff = std::max(0.05, in_row / (std::ceil(in_row / burst) * burst));
  const double dram = (T == 1 ? (in_bytes + w_bytes + out_bytes) / in_eff
                              : bursts(in_bytes, in_row) + bursts(w_bytes, double(std::min<int64_t>(bn, l.n()) * es)) +
                                    bursts(out_bytes, double(std::min<int64_t>(tn, l.n()) * es))) /
                      t.dram_bytes_per_cycle();
  const double per_dma = t.dma.setup_cycles + (in_chip ? 0.0 : t.dram.read_latency_cycles);
  // Per tile the stages overlap (the load queue issues in order, so its DMAs' setup and
  // latency add up); the pipeline fills with the first load and drains with the last
  // requantize and store.
  const double vec = t.vector_cores.pipeline_latency +
                     std::ceil(double(tm * tn) / t.vector_cores.lanes) * 2 *
                         std::max(1.0, double(tl.cores) / t.vector_cores.count);
  const double load_t = double(dmas_per_tile - 1) * per_dma;
  const double store_dma = t.dma.setup_cycles + t.dram.write_latency_cycles;
  const double fill = per_dma + vec + store_dma + tile_compute / std::max<int64_t>(1, steps);
  if (tl.double_buffer)
    return std::max(dram, tiles_per_core * std::max({load_t, tile_compute, vec, store_dma})) + fill;
  return tiles_per_core * (load_t + tile_compute + vec + store_dma) + dram;
}

StatusOr<SimResult> SimulateTiling(const ConvLayer& l, const Target& t, const Tiling& tl, const TilerOptions& opt) {
  ConvLayer shape = l;
  shape.weights.clear();  // timing does not need the data
  ASSIGN_OR_RETURN(Program p, LowerConv(shape, t, tl, nullptr));
  MarkOnChip(p, opt);
  return Simulate(p, t);
}

StatusOr<TilerResult> ChooseTiling(const ConvLayer& l, const Target& t, const TilerOptions& opt) {
  RETURN_IF_ERROR(CheckGroups(l));
  const std::vector<Tiling> cands = TilingCandidates(l, t, opt);
  if (cands.empty())
    return InvalidArgument("layer '{}' ({}x{}x{}): no tiling fits {} bytes of SRAM and {} accumulator bytes", l.name,
                           l.m(), l.k(), l.n(), t.shared_sram.bytes, t.ai_cores.accumulator_bytes);
  std::vector<TileChoice> sims;
  std::vector<Stats> stats;
  std::set<size_t> done;
  auto simulate = [&](size_t i, double estimate) -> Status {
    done.insert(i);
    ASSIGN_OR_RETURN(SimResult s, SimulateTiling(l, t, cands[i], opt));
    sims.push_back({cands[i], s.total.cycles, estimate});
    stats.push_back(s.total);
    return Status::Ok();
  };
  // One search over the candidates with `teamed` teams or not: the best estimates overall, plus
  // the best estimates of each family (core count, residency, buffering, team size), since the
  // estimate ranks well within a family and less well across; then a coordinate descent from
  // the best simulated of the search over candidates that differ in one attribute.
  auto search = [&](bool teamed) -> Status {
    std::vector<std::pair<double, size_t>> ranked;
    for (size_t i = 0; i < cands.size(); ++i)
      if ((cands[i].team() > 1) == teamed) ranked.push_back({EstimateCycles(l, t, cands[i], opt), i});
    if (ranked.empty()) return Status::Ok();
    std::sort(ranked.begin(), ranked.end());
    std::map<std::tuple<int, int, bool, int>, int> families;
    const size_t first = sims.size();
    // Teams multiply the candidates; beyond the top few, those whose estimate is more than a
    // third above the fastest simulated tiling are not simulated (a team tiling has not been
    // seen to simulate below 0.75x its estimate).
    double fastest = kInf;
    for (const TileChoice& c : sims) fastest = std::min(fastest, c.cycles);
    auto hopeless = [&](double estimate) { return teamed && 0.75 * estimate > fastest; };
    for (size_t i = 0; i < ranked.size(); ++i) {
      const Tiling& tl = cands[ranked[i].second];
      const bool top = static_cast<int>(i) < std::max(2, opt.simulate_top);
      const bool first_of_family = families[{tl.cores, static_cast<int>(tl.resident) + (tl.band ? 8 : 0) + (tl.im2col ? 16 : 0),
                                             tl.double_buffer, tl.team()}]++ < 3;
      if (opt.exhaustive || top || (first_of_family && !hopeless(ranked[i].first)))
        RETURN_IF_ERROR(simulate(ranked[i].second, ranked[i].first));
    }
    if (opt.exhaustive) return Status::Ok();
    auto differs = [](const Tiling& a, const Tiling& b) {
      return int(a.tile_h != b.tile_h || a.tile_w != b.tile_w) + int(a.tile_c != b.tile_c || a.kw_group != b.kw_group) +
             int(a.tile_n != b.tile_n) + int(a.resident != b.resident) + int(a.double_buffer != b.double_buffer) +
             int(a.cores != b.cores) + int(a.band != b.band || a.im2col != b.im2col) + int(a.team_m != b.team_m || a.team_n != b.team_n);
    };
    for (int round = 0; round < 4; ++round) {
      if (sims.size() == first) break;
      size_t best = first;
      for (size_t i = first + 1; i < sims.size(); ++i)
        if (sims[i].cycles < sims[best].cycles) best = i;
      const Tiling center = sims[best].tiling;
      const double best_cycles = sims[best].cycles;
      bool improved = false;
      for (size_t i = 0; i < cands.size(); ++i) {
        if ((cands[i].team() > 1) != teamed || done.count(i)) continue;
        const int d = differs(cands[i], center);
        // One attribute, or one plus the core count (a new split often wants other cores).
        if (d == 0 || d > 2 || (d == 2 && cands[i].cores == center.cores)) continue;
        const double estimate = EstimateCycles(l, t, cands[i], opt);
        if (hopeless(estimate)) continue;
        RETURN_IF_ERROR(simulate(i, estimate));
        improved |= sims.back().cycles < best_cycles;
      }
      if (!improved) break;
    }
    return Status::Ok();
  };
  // Tilings without teams first (each core loads its own operands), then with teams: the
  // second search only adds tilings, so it never ends slower than the first alone.
  RETURN_IF_ERROR(search(false));
  RETURN_IF_ERROR(search(true));
  TilerResult r;
  r.candidates = static_cast<int>(cands.size());
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
