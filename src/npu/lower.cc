// Lowering of GEMM-class and elementwise layers to per-core software pipelines (see lower.h).
#include "npu/lower.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include <fmt/format.h>

namespace edgec::npu {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t AlignUp(int64_t v, int64_t a) { return CeilDiv(v, a) * a; }

// Semaphores of each core. The stream and resident ones are per slot (sem + slot) for conv
// layers, where a team's cores all fill and drain each slot; the eltwise and pool pipelines
// use kStreamFree / kStreamFull as one counting semaphore.
enum Sem : int32_t {
  kStreamFree = 0, kStreamFull = 2,    // load <-> exec, per K step
  kAccFree = 4, kAccFull,              // exec <-> vector, per output tile
  kOutFree, kOutFull,                  // vector <-> store, per output tile
  kResidentFree = 8, kResidentFull = 10,  // load <-> exec, per group of tiles sharing the resident operand
  kParamsFree = 12,                    // vector -> load: a parameter slot may be overwritten
  kNumSems,
};

struct KStep {
  int kh, kw0, g, c0, tc;
  int64_t k_offset;  // first row of this step in the K dimension
  int k() const { return g * tc; }
};

struct OutTile {
  int b, oh0, ow0, th, tw, n0, tn;
  int m() const { return th * tw; }
};

std::vector<KStep> KSteps(const ConvLayer& l, const Tiling& t) {
  std::vector<KStep> steps;
  int64_t off = 0;
  for (int kh = 0; kh < l.kernel_h; ++kh) {
    for (int kw = 0; kw < l.kernel_w; kw += t.kw_group) {
      const int g = std::min(t.kw_group, l.kernel_w - kw);
      for (int c0 = 0; c0 < l.channels; c0 += t.tile_c) {
        const int tc = std::min(t.tile_c, l.channels - c0);
        steps.push_back({kh, kw, g, c0, tc, off});
        off += int64_t{g} * tc;
      }
    }
  }
  return steps;
}

// One core's four queues, and the slot rotation state that load and exec must agree on.
struct CoreEmitter {
  int core = 0;
  std::vector<Instr> q[kNumQueues];
  void Add(QueueKind queue, Instr in) {
    in.core = static_cast<uint8_t>(core);
    in.queue = queue;
    q[static_cast<int>(queue)].push_back(in);
  }
  void Signal(QueueKind queue, int32_t sem) { Add(queue, Instr{.op = Opcode::kSignal, .sem = sem}); }
  // A token on `sem` of each of cores [first, first + count) (a plain SIGNAL for this core alone).
  void SignalCores(QueueKind queue, int32_t sem, int first, int count) {
    if (count == 1 && first == core) return Signal(queue, sem);
    Add(queue, Instr{.op = Opcode::kSignal, .sem = sem, .to_core = first, .count = count});
  }
  void WaitN(QueueKind queue, int32_t sem, int count) {
    Add(queue, Instr{.op = Opcode::kWait, .sem = sem, .count = count});
  }
  void Wait(QueueKind queue, int32_t sem) { Add(queue, Instr{.op = Opcode::kWait, .sem = sem}); }
};

// Emits a DMA over up to two strided dims, split into several descriptors when the target's
// DMA has fewer dims.
void EmitDma(CoreEmitter& e, const Target& t, Instr in) {
  const int strided = t.dma.max_dims - 1;
  if (in.ndims <= strided) {
    e.Add(in.op == Opcode::kDmaLoad ? QueueKind::kLoad : QueueKind::kStore, in);
    return;
  }
  // Peel the outer dim into separate descriptors.
  const DmaDim outer = in.dims[0];
  for (int i = 0; i < outer.count; ++i) {
    const bool valid = i >= outer.valid_lo && i < outer.valid_hi;
    if (!valid && in.op == Opcode::kDmaStore) continue;
    Instr one = in;
    one.ndims = 1;
    one.dims[0] = in.dims[1];
    one.dram_addr = in.dram_addr + i * outer.dram_stride;
    one.sram_addr = in.sram_addr + i * outer.sram_stride;
    if (!valid) one.dims[0].valid_lo = one.dims[0].valid_hi = 0;  // all padding
    e.Add(in.op == Opcode::kDmaLoad ? QueueKind::kLoad : QueueKind::kStore, one);
  }
}

// Valid index range [lo, hi) of i in [0, count) with 0 <= base + i * stride < limit.
std::pair<int32_t, int32_t> ValidRange(int64_t base, int64_t stride, int count, int64_t limit) {
  int32_t lo = 0, hi = count;
  while (lo < count && base + lo * stride < 0) ++lo;
  while (hi > lo && base + (hi - 1) * stride >= limit) --hi;
  return {lo, std::max(lo, hi)};
}

// Loads a window op's input band: `rows` image rows from `iy0` and `wp` pixels from `ix0`
// (both may reach into the padding) of `tc` channels starting at channel c0 of an NHWC
// tensor at `base`, into SRAM at `sram` as [rows][wp][tc], padding filled with `pad`. When
// the tile holds every channel a row's valid pixels are contiguous in DRAM: one DMA row of
// all of them (whole bursts) and fill-only DMAs for the padded columns; otherwise one DMA
// row per pixel.
void EmitBandLoad(CoreEmitter& e, const Target& t, int64_t base, int in_h, int in_w, int C, int64_t iy0, int64_t ix0,
                  int rows, int wp, int c0, int tc, int64_t sram, int8_t pad, int16_t region) {
  auto [ylo, yhi] = ValidRange(iy0, 1, rows, in_h);
  auto [xlo, xhi] = ValidRange(ix0, 1, wp, in_w);
  Instr ld{.op = Opcode::kDmaLoad};
  ld.pad = pad;
  ld.region = region;
  if (tc < C || xhi <= xlo) {
    ld.dram_addr = base + (iy0 * in_w + ix0) * C + c0;
    ld.sram_addr = sram;
    ld.row_bytes = ld.sram_row_bytes = tc;
    ld.ndims = 2;
    ld.dims[0] = {rows, int64_t{in_w} * C, int64_t{wp} * tc, ylo, yhi};
    ld.dims[1] = {wp, C, tc, xlo, xhi};
    EmitDma(e, t, ld);
    return;
  }
  const int64_t pitch = int64_t{wp} * C;  // SRAM bytes per band row
  ld.dram_addr = base + (iy0 * in_w + ix0 + xlo) * C;
  ld.sram_addr = sram + int64_t{xlo} * C;
  ld.row_bytes = ld.sram_row_bytes = static_cast<int32_t>(int64_t{xhi - xlo} * C);
  ld.ndims = 1;
  ld.dims[0] = {rows, int64_t{in_w} * C, pitch, ylo, yhi};
  EmitDma(e, t, ld);
  for (auto [from, to] : {std::pair{0, xlo}, std::pair{xhi, wp}}) {
    if (to <= from) continue;
    Instr fill = ld;  // nothing valid: every row is the pad byte
    fill.dram_addr = base;
    fill.sram_addr = sram + int64_t{from} * C;
    fill.row_bytes = fill.sram_row_bytes = static_cast<int32_t>(int64_t{to - from} * C);
    fill.dims[0] = {rows, 0, pitch, 0, 0};
    EmitDma(e, t, fill);
  }
}

// SRAM of one team: its shared stream and resident slots, then each core's parameter and
// output slots. A stream slot holds the block's input tiles (a_tile bytes apart) and then its
// weight rows (the block's columns side by side); a resident slot either the block's weight
// columns or its input tiles (r_tile bytes apart).
struct Layout {
  int64_t stream_slot = 0, resident_slot = 0, params_slot = 0, out_slot = 0;
  int64_t stream_a_bytes = 0;  // within a stream slot, A first then B
  int64_t band_bytes = 0;      // band mode: the band's part of a stream slot (then the im2col rows)
  int64_t a_tile = 0, r_tile = 0;
  int64_t per_team = 0;
  int max_m = 0, max_k = 0, max_n = 0;
  int64_t k_total = 0;
};

Layout MakeLayout(const ConvLayer& l, const Target& t, const Tiling& tl) {
  Layout y;
  const int64_t al = t.shared_sram.alignment, es = l.elem_bytes();
  y.max_m = tl.tile_h * tl.tile_w;
  y.max_k = tl.kw_group * tl.tile_c;
  y.max_n = tl.tile_n;
  y.k_total = l.k();
  const int nbuf = tl.double_buffer ? 2 : 1;
  const int64_t block_n = int64_t{tl.team_n} * y.max_n;
  const int64_t a_step = int64_t{y.max_m} * y.max_k * es, b_step = int64_t{y.max_k} * block_n * es;
  y.a_tile = AlignUp(a_step, al);
  y.r_tile = AlignUp(int64_t{y.max_m} * y.k_total * es, al);
  int64_t stream = 0, resident = 0;
  switch (tl.resident) {
    case Resident::kNone: stream = tl.team_m * y.a_tile + AlignUp(b_step, al); break;
    case Resident::kWeights:
      stream = tl.team_m * y.a_tile;
      resident = AlignUp(y.k_total * block_n * es, al);
      break;
    case Resident::kInput:
      stream = AlignUp(b_step, al);
      resident = tl.team_m * y.r_tile;
      break;
  }
  if (tl.band) {
    const int64_t rows = int64_t{tl.tile_h - 1} * l.stride_h + int64_t{l.kernel_h - 1} * l.dilation_h + 1;
    const int64_t wp = int64_t{l.out_w() - 1} * l.stride_w + int64_t{l.kernel_w - 1} * l.dilation_w + 1;
    stream = AlignUp(rows * wp * tl.tile_c * es, al);
    y.band_bytes = stream;
    if (tl.im2col) stream += AlignUp(int64_t{y.max_m} * y.k_total * es, al);
  }
  y.stream_a_bytes = tl.resident == Resident::kNone ? tl.team_m * y.a_tile : 0;
  y.stream_slot = stream;
  y.resident_slot = resident;
  y.params_slot = AlignUp(int64_t{12} * y.max_n, al);
  y.out_slot = AlignUp(int64_t{y.max_m} * y.max_n * es, al);
  y.per_team = nbuf * (stream + resident) + int64_t{tl.team()} * nbuf * (y.params_slot + y.out_slot);
  return y;
}

}  // namespace

ConvLayer ConvLayer::MatMul(std::string name, int m, int k, int n) {
  ConvLayer l;
  l.name = std::move(name);
  l.in_h = m;
  l.channels = k;
  l.out_channels = n;
  return l;
}

const char* ResidentName(Resident r) {
  switch (r) {
    case Resident::kNone: return "streamed";
    case Resident::kWeights: return "weights-resident";
    case Resident::kInput: return "input-resident";
  }
  return "?";
}

std::string Tiling::ToString() const {
  return fmt::format("M {}x{} K {}x{}ch N {} {}{} {} x{} cores{}", tile_h, tile_w, kw_group, tile_c, tile_n,
                     ResidentName(resident), band ? (im2col ? " band im2col" : " band") : "", double_buffer ? "double" : "single", cores,
                     team() > 1 ? fmt::format(" in teams of {}x{}", team_m, team_n) : "");
}

StatusOr<Footprint> CheckTiling(const ConvLayer& l, const Target& t, const Tiling& tl) {
  if (tl.tile_h < 1 || tl.tile_w < 1 || tl.tile_c < 1 || tl.kw_group < 1 || tl.tile_n < 1 || tl.cores < 1 ||
      tl.team_m < 1 || tl.team_n < 1)
    return InvalidArgument("tiling {}: every tile size must be >= 1", tl.ToString());
  if (tl.cores % tl.team() != 0)
    return InvalidArgument("tiling {}: {} cores do not form teams of {}", tl.ToString(), tl.cores, tl.team());
  if (tl.band && tl.team() > 1) return InvalidArgument("tiling {}: band mode has no teams", tl.ToString());
  if (tl.cores > t.ai_cores.count)
    return InvalidArgument("tiling {}: the target has {} cores", tl.ToString(), t.ai_cores.count);
  if (tl.kw_group > 1 && tl.tile_c < l.channels)
    return InvalidArgument("tiling {}: folding kernel columns needs all {} channels per step", tl.ToString(), l.channels);
  if (tl.tile_w < l.out_w() && tl.tile_h > 1)
    return InvalidArgument("tiling {}: a tile of several rows must span the whole output width", tl.ToString());
  if (tl.band && (tl.resident != Resident::kWeights || tl.kw_group != 1 || tl.tile_w != l.out_w()))
    return InvalidArgument("tiling {}: band mode needs resident weights, kw_group 1 and full-width tiles", tl.ToString());
  if (tl.im2col && (!tl.band || tl.tile_c != l.channels))
    return InvalidArgument("tiling {}: im2col needs band mode and all {} channels in one step", tl.ToString(),
                           l.channels);
  const Layout y = MakeLayout(l, t, tl);
  Footprint f;
  f.sram_per_team = y.per_team;
  f.sram_total = y.per_team * (tl.cores / tl.team());
  f.acc_per_core = int64_t{tl.double_buffer ? 2 : 1} * y.max_m * y.max_n * 4;
  if (f.acc_per_core > t.ai_cores.accumulator_bytes)
    return InvalidArgument("tiling {}: accumulators need {} bytes per core, the target has {}", tl.ToString(),
                           f.acc_per_core, t.ai_cores.accumulator_bytes);
  if (f.sram_total > t.shared_sram.bytes)
    return InvalidArgument("tiling {}: needs {} bytes of SRAM, the target has {}", tl.ToString(), f.sram_total,
                           t.shared_sram.bytes);
  if (int64_t{y.max_m} * y.max_k > INT32_MAX / 2) return InvalidArgument("tiling {}: tile too large", tl.ToString());
  return f;
}

std::vector<int32_t> FoldedBias(const ConvLayer& l) {
  std::vector<int32_t> b(l.out_channels, 0);
  for (int oc = 0; oc < l.out_channels; ++oc) {
    int64_t sum = 0;
    for (int64_t k = 0; k < l.k(); ++k) sum += l.weights[k * l.out_channels + oc];
    b[oc] = (l.bias.empty() ? 0 : l.bias[oc]) - static_cast<int32_t>(l.x_zero_point * sum);
  }
  return b;
}

StatusOr<Program> LowerConv(const ConvLayer& l, const Target& t, const Tiling& tl, LayerImage* image) {
  const std::string where = fmt::format("layer '{}'", l.name);
  if (l.out_h() < 1 || l.out_w() < 1) return InvalidArgument("{}: empty output", where);
  if (t.dma.max_dims < 2) return InvalidArgument("{}: the DMA needs at least 2 dims", where);
  auto fp = CheckTiling(l, t, tl);
  if (!fp.ok()) return fp.status().WithContext(where);
  const Layout y = MakeLayout(l, t, tl);
  const int64_t es = l.elem_bytes();
  const int OH = l.out_h(), OW = l.out_w(), N = l.out_channels, C = l.channels;
  const int nbuf = tl.double_buffer ? 2 : 1;
  const std::vector<KStep> steps = KSteps(l, tl);

  // DRAM image: weights, params (per N tile), input, output.
  Program p;
  const int64_t align = 64;
  const int64_t w_addr = 0, w_bytes = l.k() * N * es;
  const int64_t n_tiles = CeilDiv(N, tl.tile_n);
  const int64_t p_addr = AlignUp(w_addr + w_bytes, align), p_bytes = int64_t{12} * N;
  const int64_t in_addr = AlignUp(p_addr + p_bytes, align);
  const int64_t in_bytes = int64_t{l.batch} * l.in_h * l.in_w * C * es;
  const int64_t out_addr = AlignUp(in_addr + in_bytes, align);
  const int64_t out_bytes = int64_t{l.batch} * OH * OW * N * es;
  p.dram_bytes = out_addr + out_bytes;
  p.regions = {{l.name + ".weights", w_addr, w_bytes}, {l.name + ".params", p_addr, p_bytes},
               {l.name + ".input", in_addr, in_bytes}, {l.name + ".output", out_addr, out_bytes}};
  enum : int16_t { kWeightsRegion, kParamsRegion, kInputRegion, kOutputRegion };
  if (image) *image = {in_addr, in_bytes, out_addr, out_bytes};
  if (l.has_data()) {
    if (l.fp16) return InvalidArgument("{}: data given for an fp16 layer (timing only)", where);
    if (static_cast<int64_t>(l.weights.size()) != l.k() * N)
      return InvalidArgument("{}: {} weights, expected {}", where, l.weights.size(), l.k() * N);
    if (l.requant.size() != 1 && l.requant.size() != static_cast<size_t>(N))
      return InvalidArgument("{}: {} requantization multipliers, expected 1 or {}", where, l.requant.size(), N);
    p.dram_init.assign(in_addr, 0);
    std::memcpy(p.dram_init.data() + w_addr, l.weights.data(), w_bytes);
    const std::vector<int32_t> bias = FoldedBias(l);
    // Params of N tile j: bias[tn], mult[tn], shift[tn] for its tn channels.
    for (int64_t j = 0; j < n_tiles; ++j) {
      const int n0 = static_cast<int>(j * tl.tile_n), tn = std::min(tl.tile_n, N - n0);
      uint8_t* dst = p.dram_init.data() + p_addr + int64_t{12} * n0;
      for (int c = 0; c < tn; ++c) {
        const auto& rq = l.requant.size() == 1 ? l.requant[0] : l.requant[n0 + c];
        const int32_t shift = rq.shift;
        std::memcpy(dst + 4 * c, &bias[n0 + c], 4);
        std::memcpy(dst + 4 * (tn + c), &rq.multiplier, 4);
        std::memcpy(dst + 4 * (2 * tn + c), &shift, 4);
      }
    }
  }

  // Output tiles: M tiles (pixels) x N tiles (channels), in blocks of team_m x team_n tiles
  // (one tile per core of a team), grouped by the resident operand the blocks share.
  std::vector<OutTile> m_tiles;
  for (int b = 0; b < l.batch; ++b)
    for (int oh = 0; oh < OH; oh += tl.tile_h)
      for (int ow = 0; ow < OW; ow += tl.tile_w)
        m_tiles.push_back({b, oh, ow, std::min(tl.tile_h, OH - oh), std::min(tl.tile_w, OW - ow), 0, 0});
  const int T = tl.team(), TM = tl.team_m, TN = tl.team_n;
  const int64_t m_blocks = CeilDiv(static_cast<int64_t>(m_tiles.size()), TM), n_blocks = CeilDiv(n_tiles, TN);
  struct Block {
    int64_t mb, nb;
  };
  // The tile of core (i, j) of the team in block `b`, if the block has one there.
  auto tile_of = [&](const Block& b, int i, int j) -> std::optional<OutTile> {
    const int64_t mi = b.mb * TM + i, nj = b.nb * TN + j;
    if (mi >= static_cast<int64_t>(m_tiles.size()) || nj >= n_tiles) return std::nullopt;
    OutTile o = m_tiles[mi];
    o.n0 = static_cast<int>(nj * tl.tile_n);
    o.tn = std::min(tl.tile_n, N - o.n0);
    return o;
  };
  // The block's output channels [n0, n0 + nn): the row width of its weights in SRAM.
  auto block_n = [&](const Block& b) {
    const int n0 = static_cast<int>(b.nb * TN * tl.tile_n);
    return std::pair<int, int>{n0, std::min(TN * tl.tile_n, N - n0)};
  };
  std::vector<std::vector<Block>> groups;
  if (tl.resident == Resident::kInput) {
    for (int64_t mb = 0; mb < m_blocks; ++mb) {
      groups.emplace_back();
      for (int64_t nb = 0; nb < n_blocks; ++nb) groups.back().push_back({mb, nb});
    }
  } else {
    for (int64_t nb = 0; nb < n_blocks; ++nb) {
      groups.emplace_back();
      for (int64_t mb = 0; mb < m_blocks; ++mb) groups.back().push_back({mb, nb});
    }
  }
  // Work items: groups split so that every team has work; items dealt round-robin.
  const int cores = tl.cores, teams = cores / T;
  const int64_t splits = std::max<int64_t>(1, CeilDiv(teams, static_cast<int64_t>(groups.size())));
  std::vector<std::vector<std::vector<Block>>> per_team(teams);
  int next_team = 0;
  for (auto& g : groups) {
    const int64_t chunk = CeilDiv(static_cast<int64_t>(g.size()), splits);
    for (size_t s = 0; s < g.size(); s += chunk) {
      per_team[next_team].emplace_back(g.begin() + s, g.begin() + std::min(g.size(), s + chunk));
      next_team = (next_team + 1) % teams;
    }
  }
  p.cores_used = cores;
  p.semaphores = kNumSems;

  const int64_t IW = l.in_w, IH = l.in_h;
  // The input rows of step `s` for tile `o`, into SRAM at `dst` (row stride `row`), split into
  // up to `parts` DMAs per kernel column (by output rows, or by columns for a one-row tile).
  auto load_input = [&](std::vector<Instr>& jobs, const OutTile& tile, const KStep& s, int64_t dst, int64_t row,
                        int parts) {
    const bool by_rows = tile.th > 1;
    const int len = by_rows ? tile.th : tile.tw, per = static_cast<int>(CeilDiv(len, parts));
    for (int p0 = 0; p0 < len; p0 += per) {
      OutTile o = tile;
      int64_t at = dst;
      if (by_rows) {
        o.oh0 += p0;
        o.th = std::min(per, len - p0);
        at += int64_t{p0} * o.tw * row;
      } else {
        o.ow0 += p0;
        o.tw = std::min(per, len - p0);
        at += int64_t{p0} * row;
      }
      for (int j = 0; j < s.g; ++j) {
        const int64_t iy0 = int64_t{o.oh0} * l.stride_h + int64_t{s.kh} * l.dilation_h - l.pad_top;
        const int64_t ix0 = int64_t{o.ow0} * l.stride_w + int64_t{s.kw0 + j} * l.dilation_w - l.pad_left;
        Instr in{.op = Opcode::kDmaLoad};
        in.dram_addr = in_addr + (((int64_t{o.b} * IH + iy0) * IW + ix0) * C + s.c0) * es;
        in.region = kInputRegion;
        in.sram_addr = at + j * s.tc * es;
        in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(s.tc * es);
        in.pad = static_cast<int8_t>(l.x_zero_point);
        in.ndims = 2;
        auto [ylo, yhi] = ValidRange(iy0, l.stride_h, o.th, IH);
        auto [xlo, xhi] = ValidRange(ix0, l.stride_w, o.tw, IW);
        in.dims[0] = {o.th, int64_t{l.stride_h} * IW * C * es, int64_t{o.tw} * row, ylo, yhi};
        in.dims[1] = {o.tw, int64_t{l.stride_w} * C * es, row, xlo, xhi};
        if (o.th == 1) {  // one strided dim is enough
          in.ndims = 1;
          in.dims[0] = in.dims[1];
          if (ylo == yhi) in.dims[0].valid_lo = in.dims[0].valid_hi = 0;
        }
        jobs.push_back(in);
      }
    }
  };
  // Weight rows [k0, k0 + k) x channels [n0, n0 + nn) into SRAM at `dst` (row stride nn), in up
  // to `parts` DMAs.
  auto load_weights = [&](std::vector<Instr>& jobs, int64_t k0, int64_t k, int n0, int nn, int64_t dst, int parts) {
    const int64_t per = CeilDiv(k, parts);
    for (int64_t r0 = 0; r0 < k; r0 += per) {
      const int32_t rows = static_cast<int32_t>(std::min(per, k - r0));
      Instr in{.op = Opcode::kDmaLoad};
      in.dram_addr = w_addr + ((k0 + r0) * N + n0) * es;
      in.region = kWeightsRegion;
      in.sram_addr = dst + r0 * nn * es;
      in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(nn * es);
      in.ndims = 1;
      in.dims[0] = {rows, int64_t{N} * es, int64_t{nn} * es, 0, rows};
      jobs.push_back(in);
    }
  };

  const int64_t acc_slot = int64_t{y.max_m} * y.max_n * 4;
  std::vector<CoreEmitter> emitters(cores);
  for (int c = 0; c < cores; ++c) {
    CoreEmitter& e = emitters[c];
    e.core = c;
    const int team = c / T, me = c % T, ti = me / TN, tj = me % TN;
    const int64_t base = team * y.per_team;
    const int64_t own = base + nbuf * (y.stream_slot + y.resident_slot) + me * nbuf * (y.params_slot + y.out_slot);
    auto stream = [&](int s) { return base + s * y.stream_slot; };
    auto resident = [&](int s) { return base + nbuf * y.stream_slot + s * y.resident_slot; };
    auto params = [&](int s) { return own + s * y.params_slot; };
    auto out = [&](int s) { return own + nbuf * y.params_slot + s * y.out_slot; };
    // Team synchronization: one token on every core of the team; one token from each.
    auto signal_team = [&](QueueKind q, int32_t sem) { e.SignalCores(q, sem, team * T, T); };
    auto wait_team = [&](QueueKind q, int32_t sem) { e.WaitN(q, sem, T); };
    // The team's DMAs of one slot, dealt round-robin over its cores (all cores deal alike).
    int64_t dealt = 0;
    auto deal = [&](const std::vector<Instr>& jobs) {
      for (size_t d = 0; d < jobs.size(); ++d)
        if ((dealt + static_cast<int64_t>(d)) % T == me) EmitDma(e, t, jobs[d]);
      dealt += static_cast<int64_t>(jobs.size());
    };
    std::vector<Instr> jobs;
    // Initial tokens: every slot starts free (of each core of the team).
    for (int s = 0; s < nbuf; ++s) {
      signal_team(QueueKind::kExecute, kStreamFree + s);
      signal_team(QueueKind::kExecute, kResidentFree + s);
      e.Signal(QueueKind::kVector, kAccFree);
      e.Signal(QueueKind::kVector, kParamsFree);
      e.Signal(QueueKind::kStore, kOutFree);
    }
    int ss = 0, rs = 0, ts = 0;  // stream, resident and per-tile slot rotation
    for (const std::vector<Block>& item : per_team[team]) {
      const Block& first = item.front();
      const int64_t rdst = resident(rs);
      if (tl.resident != Resident::kNone) {
        wait_team(QueueKind::kLoad, kResidentFree + rs);
        jobs.clear();
        if (tl.resident == Resident::kWeights) {
          auto [n0, nn] = block_n(first);
          load_weights(jobs, 0, l.k(), n0, nn, rdst, T);
        } else {
          for (int i = 0; i < TM; ++i)
            if (auto o = tile_of(first, i, 0))
              for (const KStep& s : steps) load_input(jobs, *o, s, rdst + i * y.r_tile + s.k_offset * es, y.k_total * es, TN);
        }
        deal(jobs);
        signal_team(QueueKind::kLoad, kResidentFull + rs);
        wait_team(QueueKind::kExecute, kResidentFull + rs);
      }
      for (const Block& blk : item) {
        const std::optional<OutTile> mine = tile_of(blk, ti, tj);
        const OutTile o = mine.value_or(OutTile{});
        const auto [bn0, bnn] = block_n(blk);
        const int64_t acc = ts * acc_slot, par = params(ts), obuf = out(ts);
        if (mine) {
          e.Wait(QueueKind::kLoad, kParamsFree);
          Instr pl{.op = Opcode::kDmaLoad};
          pl.dram_addr = p_addr + int64_t{12} * o.n0;
          pl.region = kParamsRegion;
          pl.sram_addr = par;
          pl.row_bytes = pl.sram_row_bytes = 12 * o.tn;
          EmitDma(e, t, pl);
          e.Wait(QueueKind::kExecute, kAccFree);
        }
        if (tl.band) {
          const int rows = (o.th - 1) * l.stride_h + (l.kernel_h - 1) * l.dilation_h + 1;
          const int wp = (OW - 1) * l.stride_w + (l.kernel_w - 1) * l.dilation_w + 1;
          const int64_t iy0 = int64_t{o.oh0} * l.stride_h - l.pad_top;
          auto [ylo, yhi] = ValidRange(iy0, 1, rows, IH);
          for (int c0 = 0, si = 0; c0 < C; c0 += tl.tile_c, ++si) {
            const int tc = std::min(tl.tile_c, C - c0);
            const int64_t sdst = stream(ss), pix = int64_t{tc} * es, row = int64_t{wp} * pix;
            e.Wait(QueueKind::kLoad, kStreamFree + ss);
            Instr in{.op = Opcode::kDmaLoad};
            in.pad = static_cast<int8_t>(l.x_zero_point);
            in.region = kInputRegion;
            if (tc == C) {
              // Whole image rows are contiguous: one row per input row, the left padding by a
              // fill-only DMA (no DRAM read) and the right padding on load.
              if (l.pad_left > 0) {
                Instr fill = in;
                fill.dram_addr = in_addr;
                fill.sram_addr = sdst;
                fill.row_bytes = fill.sram_row_bytes = static_cast<int32_t>(l.pad_left * pix);
                fill.ndims = 1;
                fill.dims[0] = {rows, 0, row, 0, 0};
                EmitDma(e, t, fill);
              }
              const int used = std::max(0, std::min(IH > 0 ? static_cast<int>(IW) : 0, wp - l.pad_left));
              in.dram_addr = in_addr + ((int64_t{o.b} * IH + iy0) * IW) * C * es;
              in.sram_addr = sdst + l.pad_left * pix;
              in.row_bytes = static_cast<int32_t>(std::max(1, used) * pix);
              in.sram_row_bytes = static_cast<int32_t>(std::max(used, wp - l.pad_left) * pix);
              in.ndims = 1;
              in.dims[0] = {rows, IW * C * es, row, ylo, used > 0 ? yhi : ylo};
            } else {
              in.dram_addr = in_addr + (((int64_t{o.b} * IH + iy0) * IW - l.pad_left) * C + c0) * es;
              in.sram_addr = sdst;
              in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(pix);
              in.ndims = 2;
              auto [xlo, xhi] = ValidRange(-l.pad_left, 1, wp, IW);
              in.dims[0] = {rows, IW * C * es, row, ylo, yhi};
              in.dims[1] = {wp, C * es, pix, xlo, xhi};
            }
            EmitDma(e, t, in);
            const int64_t col = sdst + y.band_bytes;  // im2col rows: [o.th * OW][K]
            for (int kh = 0; tl.im2col && kh < l.kernel_h; ++kh) {
              // Kernel row kh of every pixel: its kernel_w * C bytes (contiguous in the band
              // when dilation_w is 1, else one gather per kernel column).
              const int groups = l.dilation_w == 1 ? 1 : l.kernel_w, per = l.kernel_w / groups;
              for (int kg = 0; kg < groups; ++kg) {
                Instr g{.op = Opcode::kDmaLoad};
                g.on_chip = true;
                g.region = kLocalSramRegion;
                g.dram_addr = sdst + (int64_t{kh} * l.dilation_h * wp + int64_t{kg} * l.dilation_w) * pix;
                g.sram_addr = col + (int64_t{kh} * l.kernel_w + kg) * C * es;
                g.row_bytes = g.sram_row_bytes = static_cast<int32_t>(per * pix);
                g.ndims = 2;
                g.dims[0] = {o.th, int64_t{l.stride_h} * row, int64_t{OW} * l.k() * es, 0, o.th};
                g.dims[1] = {OW, int64_t{l.stride_w} * pix, l.k() * es, 0, OW};
                EmitDma(e, t, g);
              }
            }
            e.Signal(QueueKind::kLoad, kStreamFull + ss);
            e.Wait(QueueKind::kExecute, kStreamFull + ss);
            if (tl.im2col) {
              Instr mm{.op = Opcode::kMatMul};
              mm.a_addr = col;
              mm.a_stride = static_cast<int32_t>(l.k() * es);
              mm.b_addr = rdst;
              mm.b_stride = static_cast<int32_t>(o.tn * es);
              mm.acc_addr = acc;
              mm.acc_stride = o.tn * 4;
              mm.m = o.th * OW;
              mm.k = static_cast<int32_t>(l.k());
              mm.n = o.tn;
              mm.fp16 = l.fp16;
              e.Add(QueueKind::kExecute, mm);
            }
            for (int yy = 0; yy < (tl.im2col ? 0 : o.th); ++yy)
              for (int kh = 0; kh < l.kernel_h; ++kh)
                for (int kw = 0; kw < l.kernel_w; ++kw) {
                  Instr mm{.op = Opcode::kMatMul};
                  mm.a_addr = sdst + (int64_t{yy * l.stride_h + kh * l.dilation_h} * wp + kw * l.dilation_w) * pix;
                  mm.a_stride = static_cast<int32_t>(l.stride_w * pix);
                  mm.b_addr = rdst + ((int64_t{kh} * l.kernel_w + kw) * C + c0) * o.tn * es;
                  mm.b_stride = static_cast<int32_t>(o.tn * es);
                  mm.acc_addr = acc + int64_t{yy} * o.tw * o.tn * 4;
                  mm.acc_stride = o.tn * 4;
                  mm.m = o.tw;
                  mm.k = tc;
                  mm.n = o.tn;
                  mm.accumulate = !(si == 0 && kh == 0 && kw == 0);
                  mm.fp16 = l.fp16;
                  e.Add(QueueKind::kExecute, mm);
                }
            e.Signal(QueueKind::kExecute, kStreamFree + ss);
            ss = (ss + 1) % nbuf;
          }
        }
        for (size_t si = 0; si < (tl.band ? 0 : steps.size()); ++si) {
          const KStep& s = steps[si];
          const int64_t sdst = stream(ss);
          wait_team(QueueKind::kLoad, kStreamFree + ss);
          jobs.clear();
          auto load_block_input = [&](int64_t dst) {
            for (int i = 0; i < TM; ++i)
              if (auto m = tile_of(blk, i, 0)) load_input(jobs, *m, s, dst + i * y.a_tile, s.k() * es, TN);
          };
          Instr mm{.op = Opcode::kMatMul};
          switch (tl.resident) {
            case Resident::kNone:
              load_block_input(sdst);
              load_weights(jobs, s.k_offset, s.k(), bn0, bnn, sdst + y.stream_a_bytes, TM);
              mm.a_addr = sdst + ti * y.a_tile;
              mm.a_stride = static_cast<int32_t>(s.k() * es);
              mm.b_addr = sdst + y.stream_a_bytes + (o.n0 - bn0) * es;
              break;
            case Resident::kWeights:
              load_block_input(sdst);
              mm.a_addr = sdst + ti * y.a_tile;
              mm.a_stride = static_cast<int32_t>(s.k() * es);
              mm.b_addr = rdst + (s.k_offset * bnn + (o.n0 - bn0)) * es;
              break;
            case Resident::kInput:
              load_weights(jobs, s.k_offset, s.k(), bn0, bnn, sdst, TM);
              mm.a_addr = rdst + ti * y.r_tile + s.k_offset * es;
              mm.a_stride = static_cast<int32_t>(y.k_total * es);
              mm.b_addr = sdst + (o.n0 - bn0) * es;
              break;
          }
          deal(jobs);
          signal_team(QueueKind::kLoad, kStreamFull + ss);
          wait_team(QueueKind::kExecute, kStreamFull + ss);
          if (mine) {
            mm.b_stride = static_cast<int32_t>(bnn * es);
            mm.acc_addr = acc;
            mm.acc_stride = o.tn * 4;
            mm.m = o.m();
            mm.k = s.k();
            mm.n = o.tn;
            mm.accumulate = si > 0;
            mm.fp16 = l.fp16;
            e.Add(QueueKind::kExecute, mm);
          }
          signal_team(QueueKind::kExecute, kStreamFree + ss);
          ss = (ss + 1) % nbuf;
        }
        if (!mine) continue;
        e.Signal(QueueKind::kExecute, kAccFull);
        e.Wait(QueueKind::kVector, kAccFull);
        e.Wait(QueueKind::kVector, kOutFree);
        Instr rq{.op = Opcode::kVec, .vec = VecOp::kRequantize};
        rq.src = acc;
        rq.src_stride = o.tn * 4;
        rq.dst = obuf;
        rq.dst_stride = static_cast<int32_t>(o.tn * es);
        rq.params = par;
        rq.rows = o.m();
        rq.cols = o.tn;
        rq.imm[0] = l.y_zero_point;
        rq.imm[1] = l.act_min;
        rq.imm[2] = l.act_max;
        e.Add(QueueKind::kVector, rq);
        e.Signal(QueueKind::kVector, kAccFree);
        e.Signal(QueueKind::kVector, kParamsFree);
        e.Signal(QueueKind::kVector, kOutFull);
        e.Wait(QueueKind::kStore, kOutFull);
        Instr st{.op = Opcode::kDmaStore};
        st.dram_addr = out_addr + (((int64_t{o.b} * OH + o.oh0) * OW + o.ow0) * N + o.n0) * es;
        st.region = kOutputRegion;
        st.sram_addr = obuf;
        st.row_bytes = st.sram_row_bytes = static_cast<int32_t>(o.tn * es);
        st.ndims = 2;
        st.dims[0] = {o.th, int64_t{OW} * N * es, int64_t{o.tw} * o.tn * es, 0, o.th};
        st.dims[1] = {o.tw, int64_t{N} * es, int64_t{o.tn} * es, 0, o.tw};
        if (o.th == 1) {
          st.ndims = 1;
          st.dims[0] = st.dims[1];
        }
        EmitDma(e, t, st);
        e.Signal(QueueKind::kStore, kOutFree);
        ts = (ts + 1) % nbuf;
      }
      if (tl.resident != Resident::kNone) signal_team(QueueKind::kExecute, kResidentFree + rs);
      rs = (rs + 1) % nbuf;
    }
  }
  size_t count = 2;
  for (const CoreEmitter& e : emitters)
    for (const auto& q : e.q) count += q.size();
  p.instrs.reserve(count);
  p.instrs.push_back(Instr{.op = Opcode::kTaskBegin, .sem = 0});
  for (const CoreEmitter& e : emitters)
    for (const auto& q : e.q) p.instrs.insert(p.instrs.end(), q.begin(), q.end());
  p.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
  p.task_names = {fmt::format("{} ({}x{}x{})", l.name, l.m(), l.k(), l.n())};
  return p;
}

EltwiseLayer EltwiseLayer::Add(std::string name, int64_t elements, const quant::QuantizedAddParams& p) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kAdd, .elements = elements,
                 .imm = {p.a_zero_point, p.b_zero_point, p.y_zero_point, p.a.multiplier, p.a.shift, p.b.multiplier,
                         p.b.shift, p.y.multiplier, p.y.shift, p.qmin, p.qmax}};
  return l;
}

EltwiseLayer EltwiseLayer::Mul(std::string name, int64_t elements, const quant::QuantizedMulParams& p) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kMul, .elements = elements,
                 .imm = {p.a_zero_point, p.b_zero_point, p.y_zero_point, p.y.multiplier, p.y.shift, p.qmin, p.qmax}};
  return l;
}

EltwiseLayer EltwiseLayer::Lookup(std::string name, int64_t elements, std::vector<int8_t> table) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kLut, .elements = elements};
  l.table = std::move(table);
  return l;
}

StatusOr<Program> LowerEltwise(const EltwiseLayer& l, const Target& t, int64_t chunk, bool double_buffer,
                               int64_t* a_addr, int64_t* b_addr, int64_t* y_addr) {
  if (l.op != VecOp::kAdd && l.op != VecOp::kMul && l.op != VecOp::kRelu && l.op != VecOp::kLut)
    return InvalidArgument("eltwise layer '{}': op {} is not elementwise", l.name, VecOpName(l.op));
  if (chunk < 1 || l.elements < 1) return InvalidArgument("eltwise layer '{}': empty", l.name);
  using B = EltwiseLayer::Broadcast;
  const bool binary = l.binary();
  const B bc = binary ? l.broadcast : B::kFull;
  if (bc == B::kRow && (l.cols < 1 || l.elements % l.cols || chunk % l.cols))
    return InvalidArgument("eltwise layer '{}': {} elements, chunk {} are not whole rows of {}", l.name, l.elements,
                           chunk, l.cols);
  if (l.op == VecOp::kLut && l.table.size() != 256)
    return InvalidArgument("eltwise layer '{}': lookup table of {} values", l.name, l.table.size());
  if (!l.b_const.empty() && static_cast<int64_t>(l.b_const.size()) != l.b_elements())
    return InvalidArgument("eltwise layer '{}': constant b of {} values, expected {}", l.name, l.b_const.size(),
                           l.b_elements());
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const bool b_streamed = binary && bc == B::kFull;
  const int64_t slot = AlignUp(chunk, al) * (b_streamed ? 3 : 2);
  // Loaded once per core: a broadcast b, or the table.
  const int64_t once = binary && !b_streamed ? AlignUp(l.b_elements(), al) : l.op == VecOp::kLut ? AlignUp(256, al) : 0;
  const int cores = std::min<int64_t>(t.ai_cores.count, CeilDiv(l.elements, chunk));
  const int64_t per_core = slot * nbuf + once;
  if (per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("eltwise layer '{}': chunk {} does not fit SRAM", l.name, chunk);
  Program p;
  // The constant part first (dram_init covers it): the table or a constant b.
  const std::vector<int8_t>& konst = l.op == VecOp::kLut ? l.table : l.b_const;
  const int64_t const_bytes = static_cast<int64_t>(konst.size());
  p.dram_init.assign(konst.begin(), konst.end());
  const int64_t b_bytes = binary ? l.b_elements() : 0;
  *a_addr = AlignUp(const_bytes, 64);
  *b_addr = binary && l.b_const.empty() ? *a_addr + AlignUp(l.elements, 64) : 0;
  *y_addr = *a_addr + AlignUp(l.elements, 64) + (binary && l.b_const.empty() ? AlignUp(b_bytes, 64) : 0);
  p.dram_bytes = *y_addr + l.elements;
  p.regions = {{l.name + l.a_region, *a_addr, l.elements}};
  if (binary && l.b_const.empty()) p.regions.push_back({l.name + l.b_region, *b_addr, b_bytes});
  if (const_bytes) p.regions.push_back({l.name + (l.op == VecOp::kLut ? ".table" : ".b"), 0, const_bytes});
  p.regions.push_back({l.name + ".output", *y_addr, l.elements});
  const int16_t a_region = 0, b_region = 1, y_region = static_cast<int16_t>(p.regions.size() - 1);
  const int16_t const_region = const_bytes ? y_region - 1 : -1;
  p.cores_used = cores;
  p.semaphores = kNumSems;
  const int64_t chunks = CeilDiv(l.elements, chunk);
  for (int c = 0; c < cores; ++c) {
    CoreEmitter e;
    e.core = c;
    for (int s = 0; s < nbuf; ++s) {
      e.Signal(QueueKind::kVector, kStreamFree);
      e.Signal(QueueKind::kStore, kOutFree);
    }
    const int64_t base = c * per_core, once_addr = base + slot * nbuf;
    if (once) {  // ahead of the first chunk's loads, so the chunk's "full" token covers it
      Instr in{.op = Opcode::kDmaLoad};
      in.dram_addr = l.op == VecOp::kLut || !l.b_const.empty() ? 0 : *b_addr;
      in.region = l.op == VecOp::kLut || !l.b_const.empty() ? const_region : b_region;
      in.sram_addr = once_addr;
      in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(l.op == VecOp::kLut ? 256 : b_bytes);
      e.Add(QueueKind::kLoad, in);
    }
    int s = 0;
    for (int64_t i = c; i < chunks; i += cores) {
      const int64_t off = i * chunk, n = std::min(chunk, l.elements - off);
      const int64_t sa = base + s * slot, sb = sa + AlignUp(chunk, al), sy = sb + (b_streamed ? AlignUp(chunk, al) : 0);
      auto load = [&](int64_t dram, int64_t sram, int16_t region) {
        Instr in{.op = Opcode::kDmaLoad};
        in.dram_addr = dram + off;
        in.region = region;
        in.sram_addr = sram;
        in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(n);
        e.Add(QueueKind::kLoad, in);
      };
      e.Wait(QueueKind::kLoad, kStreamFree);
      load(*a_addr, sa, a_region);
      if (b_streamed) load(l.b_const.empty() ? *b_addr : 0, sb, l.b_const.empty() ? b_region : const_region);
      e.Signal(QueueKind::kLoad, kStreamFull);
      e.Wait(QueueKind::kVector, kStreamFull);
      e.Wait(QueueKind::kVector, kOutFree);
      Instr v{.op = Opcode::kVec, .vec = l.op};
      v.src = sa;
      v.src2 = b_streamed ? sb : once_addr;
      v.dst = sy;
      v.rows = 1;
      v.cols = static_cast<int32_t>(n);
      v.src_stride = v.src2_stride = v.dst_stride = static_cast<int32_t>(n);
      std::copy(std::begin(l.imm), std::end(l.imm), v.imm);
      if (bc == B::kRow) {
        v.rows = static_cast<int32_t>(n / l.cols);
        v.cols = static_cast<int32_t>(l.cols);
        v.src_stride = v.dst_stride = v.cols;
        v.src2_stride = 0;
      } else if (bc == B::kScalar) {
        v.imm[kBroadcastImm] = 1;
      }
      if (l.op == VecOp::kLut) v.params = once_addr;
      e.Add(QueueKind::kVector, v);
      e.Signal(QueueKind::kVector, kStreamFree);
      e.Signal(QueueKind::kVector, kOutFull);
      e.Wait(QueueKind::kStore, kOutFull);
      Instr st{.op = Opcode::kDmaStore};
      st.dram_addr = *y_addr + off;
      st.region = y_region;
      st.sram_addr = sy;
      st.row_bytes = st.sram_row_bytes = static_cast<int32_t>(n);
      e.Add(QueueKind::kStore, st);
      e.Signal(QueueKind::kStore, kOutFree);
      s = (s + 1) % nbuf;
    }
    for (auto& q : e.q) p.instrs.insert(p.instrs.end(), q.begin(), q.end());
  }
  p.instrs.insert(p.instrs.begin(), Instr{.op = Opcode::kTaskBegin, .sem = 0});
  p.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
  const char* how = bc == B::kRow ? " per row" : bc == B::kScalar ? " by a scalar" : "";
  p.task_names = {fmt::format("{} ({}{} x {})", l.name, VecOpName(l.op), how, l.elements)};
  return p;
}

namespace {

// What the pool and depthwise lowerings share: a window op over an NHWC tensor, tiled by
// output rows x channels, one VEC per tile on its band. With `params_bytes` (depthwise) each
// channel tile also has a parameter block in DRAM, first in the image (its constant part,
// filled by `fill_params` when given), loaded with every tile and passed to the VEC.
struct WindowOp {
  std::string name, what;  // what: "pool", "depthwise" (messages)
  int batch = 1, in_h = 1, in_w = 1, channels = 1, kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0, out_h = 0, out_w = 0;
  int8_t pad = 0;  // the byte padding on load holds
  VecOp vec = VecOp::kMaxPool;
  int32_t imm[12] = {};
  std::function<int64_t(int64_t tc)> params_bytes;
  std::function<void(int64_t c0, int64_t tc, uint8_t* block)> fill_params;
};

StatusOr<Program> LowerWindowOp(const WindowOp& w, const Target& t, int tile_rows, int tile_c, bool double_buffer,
                                LayerImage* image) {
  const int OH = w.out_h, OW = w.out_w, C = w.channels;
  if (OH < 1 || OW < 1 || w.kernel_h < 1 || w.kernel_w < 1 || w.stride_h < 1 || w.stride_w < 1)
    return InvalidArgument("{} layer '{}': bad window or empty output", w.what, w.name);
  if (tile_rows < 1 || tile_c < 1) return InvalidArgument("{} layer '{}': bad tile", w.what, w.name);
  tile_rows = std::min(tile_rows, OH);
  tile_c = std::min(tile_c, C);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const int band_rows = (tile_rows - 1) * w.stride_h + w.kernel_h;
  const int wp = (OW - 1) * w.stride_w + w.kernel_w;  // padded input columns used
  const int64_t in_slot = AlignUp(int64_t{band_rows} * wp * tile_c, al);
  const int64_t out_slot = AlignUp(int64_t{tile_rows} * OW * tile_c, al);
  const int64_t par_slot = w.params_bytes ? AlignUp(w.params_bytes(tile_c), al) : 0;
  const int64_t per_core = nbuf * (in_slot + out_slot + par_slot);
  const int64_t tiles_h = CeilDiv(OH, tile_rows), tiles_c = CeilDiv(C, tile_c);
  const int64_t tiles = tiles_h * tiles_c * w.batch;
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  if (per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("{} layer '{}': tile {} rows x {} channels needs {} bytes of SRAM, the target has {}", w.what,
                           w.name, tile_rows, tile_c, per_core * cores, t.shared_sram.bytes);
  Program p;
  std::vector<int64_t> block(tiles_c + 1, 0);  // parameter blocks per channel tile
  if (w.params_bytes)
    for (int64_t ct = 0; ct < tiles_c; ++ct)
      block[ct + 1] = block[ct] + AlignUp(w.params_bytes(std::min<int64_t>(tile_c, C - ct * tile_c)), 64);
  const int64_t par_bytes = block[tiles_c];
  const int64_t in_addr = AlignUp(par_bytes, 64), in_bytes = int64_t{w.batch} * w.in_h * w.in_w * C;
  const int64_t out_addr = AlignUp(in_addr + in_bytes, 64), out_bytes = int64_t{w.batch} * OH * OW * C;
  p.dram_bytes = out_addr + out_bytes;
  p.regions = {{w.name + ".input", in_addr, in_bytes}, {w.name + ".output", out_addr, out_bytes}};
  if (w.params_bytes) p.regions.insert(p.regions.begin(), {w.name + ".params", 0, par_bytes});
  const int16_t in_region = w.params_bytes ? 1 : 0, out_region = in_region + 1;
  if (image) *image = {in_addr, in_bytes, out_addr, out_bytes};
  if (w.fill_params) {
    p.dram_init.assign(par_bytes, 0);
    for (int64_t ct = 0; ct < tiles_c; ++ct)
      w.fill_params(ct * tile_c, std::min<int64_t>(tile_c, C - ct * tile_c), p.dram_init.data() + block[ct]);
  }
  p.cores_used = cores;
  p.semaphores = kNumSems;
  for (int c = 0; c < cores; ++c) {
    CoreEmitter e;
    e.core = c;
    for (int s = 0; s < nbuf; ++s) {
      e.Signal(QueueKind::kVector, kStreamFree);
      e.Signal(QueueKind::kStore, kOutFree);
    }
    int s = 0;
    for (int64_t i = c; i < tiles; i += cores) {
      const int b = static_cast<int>(i / (tiles_h * tiles_c));
      const int oh0 = static_cast<int>((i / tiles_c) % tiles_h) * tile_rows;
      const int64_t ct = i % tiles_c;
      const int c0 = static_cast<int>(ct) * tile_c;
      const int th = std::min(tile_rows, OH - oh0), tc = std::min(tile_c, C - c0);
      const int rows = (th - 1) * w.stride_h + w.kernel_h;
      const int64_t base = c * per_core;
      const int64_t sin = base + s * in_slot, sout = base + nbuf * in_slot + s * out_slot,
                    spar = base + nbuf * (in_slot + out_slot) + s * par_slot;
      const int64_t iy0 = int64_t{oh0} * w.stride_h - w.pad_top, ix0 = -w.pad_left;
      e.Wait(QueueKind::kLoad, kStreamFree);
      EmitBandLoad(e, t, in_addr + int64_t{b} * w.in_h * w.in_w * C, w.in_h, w.in_w, C, iy0, ix0, rows, wp, c0, tc, sin,
                   w.pad, in_region);
      if (w.params_bytes) {
        Instr lp{.op = Opcode::kDmaLoad};
        lp.dram_addr = block[ct];
        lp.region = 0;
        lp.sram_addr = spar;
        lp.row_bytes = lp.sram_row_bytes = static_cast<int32_t>(w.params_bytes(tc));
        EmitDma(e, t, lp);
      }
      e.Signal(QueueKind::kLoad, kStreamFull);
      e.Wait(QueueKind::kVector, kStreamFull);
      e.Wait(QueueKind::kVector, kOutFree);
      Instr v{.op = Opcode::kVec, .vec = w.vec};
      v.src = sin;
      v.src_stride = tc;
      v.dst = sout;
      v.dst_stride = tc;
      if (w.params_bytes) v.params = spar;
      v.cols = tc;
      v.rows = th * OW;
      v.in_h = rows;
      v.in_w = wp;
      v.win_h = w.kernel_h;
      v.win_w = w.kernel_w;
      v.stride_h = w.stride_h;
      v.stride_w = w.stride_w;
      std::copy(std::begin(w.imm), std::end(w.imm), v.imm);
      e.Add(QueueKind::kVector, v);
      e.Signal(QueueKind::kVector, kStreamFree);
      e.Signal(QueueKind::kVector, kOutFull);
      e.Wait(QueueKind::kStore, kOutFull);
      Instr st{.op = Opcode::kDmaStore};
      st.dram_addr = out_addr + ((int64_t{b} * OH + oh0) * OW) * C + c0;
      st.region = out_region;
      st.sram_addr = sout;
      st.row_bytes = st.sram_row_bytes = tc;
      st.ndims = 1;
      st.dims[0] = {th * OW, C, tc, 0, th * OW};
      if (tc == C) {  // the tile's pixels are contiguous in DRAM: one row
        st.row_bytes = st.sram_row_bytes = th * OW * C;
        st.ndims = 0;
      }
      EmitDma(e, t, st);
      e.Signal(QueueKind::kStore, kOutFree);
      s = (s + 1) % nbuf;
    }
    for (auto& q : e.q) p.instrs.insert(p.instrs.end(), q.begin(), q.end());
  }
  p.instrs.insert(p.instrs.begin(), Instr{.op = Opcode::kTaskBegin, .sem = 0});
  p.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
  return p;
}

}  // namespace

StatusOr<Program> LowerPool(const PoolLayer& l, const Target& t, int tile_rows, int tile_c, bool double_buffer,
                            LayerImage* image) {
  WindowOp w{.name = l.name, .what = "pool", .batch = l.batch, .in_h = l.in_h, .in_w = l.in_w,
             .channels = l.channels, .kernel_h = l.kernel_h, .kernel_w = l.kernel_w, .stride_h = l.stride_h,
             .stride_w = l.stride_w, .pad_top = l.pad_top, .pad_left = l.pad_left, .out_h = l.out_h(),
             .out_w = l.out_w(), .pad = static_cast<int8_t>(l.max ? -128 : l.x_zero_point),
             .vec = l.max ? VecOp::kMaxPool : VecOp::kAvgPool};
  const int32_t imm[] = {l.x_zero_point, l.y_zero_point, l.mult.multiplier, l.mult.shift, l.act_min, l.act_max};
  std::copy(std::begin(imm), std::end(imm), w.imm);
  ASSIGN_OR_RETURN(Program p, LowerWindowOp(w, t, tile_rows, tile_c, double_buffer, image));
  p.task_names = {fmt::format("{} ({} {}x{})", l.name, l.max ? "maxpool" : "avgpool", l.kernel_h, l.kernel_w)};
  return p;
}

}  // namespace edgec::npu

namespace edgec::npu {

StatusOr<Program> LowerDepthwise(const DepthwiseLayer& l, const Target& t, int tile_rows, int tile_c,
                                 bool double_buffer) {
  const int C = l.channels;
  const int64_t window = int64_t{l.kernel_h} * l.kernel_w;
  if (!l.weights.empty() && (static_cast<int64_t>(l.weights.size()) != window * C ||
                             static_cast<int>(l.bias.size()) != C ||
                             (l.requant.size() != 1 && static_cast<int>(l.requant.size()) != C)))
    return InvalidArgument("depthwise layer '{}': weights, bias or requantization do not match {} channels", l.name, C);
  WindowOp w{.name = l.name, .what = "depthwise", .batch = l.batch, .in_h = l.in_h, .in_w = l.in_w,
             .channels = C, .kernel_h = l.kernel_h, .kernel_w = l.kernel_w, .stride_h = l.stride_h,
             .stride_w = l.stride_w, .pad_top = l.pad_top, .pad_left = l.pad_left, .out_h = l.out_h(),
             .out_w = l.out_w(), .pad = static_cast<int8_t>(l.x_zero_point), .vec = VecOp::kDwConv};
  const int32_t imm[] = {l.x_zero_point, l.y_zero_point, l.act_min, l.act_max};
  std::copy(std::begin(imm), std::end(imm), w.imm);
  // A channel tile's block: weights [window][tc], then int32 bias, multiplier, shift per channel.
  w.params_bytes = [window](int64_t tc) { return DwParamsOffset(window, tc) + 12 * tc; };
  if (!l.weights.empty()) {
    w.fill_params = [&l, window, C](int64_t c0, int64_t tc, uint8_t* b) {
      for (int64_t k = 0; k < window; ++k)
        for (int64_t c = 0; c < tc; ++c) b[k * tc + c] = static_cast<uint8_t>(l.weights[k * C + c0 + c]);
      int32_t* ints = reinterpret_cast<int32_t*>(b + DwParamsOffset(window, tc));
      for (int64_t c = 0; c < tc; ++c) {
        const auto& m = l.requant.size() == 1 ? l.requant[0] : l.requant[c0 + c];
        ints[c] = l.bias[c0 + c];
        ints[tc + c] = m.multiplier;
        ints[2 * tc + c] = m.shift;
      }
    };
  }
  ASSIGN_OR_RETURN(Program p, LowerWindowOp(w, t, tile_rows, tile_c, double_buffer, nullptr));
  p.task_names = {fmt::format("{} (depthwise {}x{}, {} ch)", l.name, l.kernel_h, l.kernel_w, C)};
  return p;
}

}  // namespace edgec::npu
