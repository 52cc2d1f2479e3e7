// GEMM-class layers to per-core software pipelines (see lower.h), in named steps:
// PlaceImage (the DRAM image), PlanWork (output tiles, blocks, the teams' work items), then per
// core EmitCore: the resident operand of each work item, the K steps of each block (band or
// streamed), and the requantize-and-store epilogue of each output tile.
#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "npu/conv_layout.h"
#include "npu/emit.h"

namespace edgec::npu {
namespace {

using namespace conv;  // NOLINT: the conv lowering's own facts

// Region indices the DMAs carry (Instr::region), in the order of Program::regions.
enum : int16_t { kWeightsRegion, kParamsRegion, kInputRegion, kOutputRegion };

// A block: team_m x team_n output tiles, one per core of a team.
struct Block {
  int64_t mb, nb;
};

class ConvLowering {
 public:
  ConvLowering(const ConvLayer& l, const Target& t, const Tiling& tl)
      : l_(l), t_(t), tl_(tl), y_(MakeLayout(l, t, tl)), es_(l.elem_bytes()), ys_(l.out_elem_bytes()),
        nbuf_(tl.double_buffer ? 2 : 1),
        steps_(KSteps(l, tl)) {}

  StatusOr<Program> Lower(LayerImage* image);

 private:
  // One core's emitter and its place in its team, and the slot rotation of its pipeline.
  struct Core {
    CoreEmitter e;
    int team = 0, me = 0, ti = 0, tj = 0;
    int64_t base = 0, own = 0;  // the team's SRAM, the core's own slots
    int64_t dealt = 0;          // team DMAs dealt so far (every core deals alike)
    int ss = 0, rs = 0, ts = 0; // stream, resident and per-tile slot rotation
  };

  Status PlaceImage(LayerImage* image);
  void PlanWork();
  std::optional<OutTile> TileOf(const Block& b, int i, int j) const;
  std::pair<int, int> BlockN(const Block& b) const;
  void LoadInput(std::vector<Instr>& jobs, const OutTile& tile, const KStep& s, int64_t dst, int64_t row,
                 int parts) const;
  void LoadWeights(std::vector<Instr>& jobs, int64_t k0, int64_t k, int n0, int nn, int64_t dst, int parts,
                   int batch) const;

  void EmitCore(Core& c);
  void EmitResidentLoad(Core& c, const Block& first, int64_t rdst);
  void EmitBandSteps(Core& c, const OutTile& o, int64_t acc, int64_t rdst);
  void EmitBandLoad(Core& c, const OutTile& o, int c0, int tc, int64_t sdst);
  void EmitStreamedSteps(Core& c, const Block& blk, const std::optional<OutTile>& mine, int64_t acc, int64_t rdst);
  void EmitEpilogue(Core& c, const OutTile& o, int64_t acc, int64_t par, int64_t obuf);

  int64_t Stream(const Core& c, int s) const { return c.base + s * y_.stream_slot; }
  int64_t ResidentSlot(const Core& c, int s) const { return c.base + nbuf_ * y_.stream_slot + s * y_.resident_slot; }
  int64_t Params(const Core& c, int s) const { return c.own + s * y_.params_slot; }
  int64_t Out(const Core& c, int s) const { return c.own + nbuf_ * y_.params_slot + s * y_.out_slot; }
  // DRAM address of the parameter block of the N tile starting at channel n0.
  int64_t ParamsAddr(int n0) const { return p_addr_ + int64_t{12} * n0 + (l_.has_table() ? 256 * (n0 / tl_.tile_n) : 0); }
  void EmitLookup(Core& c, const OutTile& o, int64_t par, int64_t obuf);
  // Team synchronization: one token on every core of the team; one token from each.
  void SignalTeam(Core& c, QueueKind q, int32_t sem) const { c.e.SignalCores(q, sem, c.team * T(), T()); }
  void WaitTeam(Core& c, QueueKind q, int32_t sem) const { c.e.WaitN(q, sem, T()); }
  // The team's DMAs of one slot, dealt round-robin over its cores.
  void Deal(Core& c, const std::vector<Instr>& jobs) const;
  int T() const { return tl_.team(); }

  const ConvLayer& l_;
  const Target& t_;
  const Tiling& tl_;
  const Layout y_;
  const int64_t es_;
  const int64_t ys_;  // bytes of an output element (ConvLayer::y_bytes)
  const int nbuf_;
  const std::vector<KStep> steps_;
  Program p_;
  int64_t w_addr_ = 0, p_addr_ = 0, in_addr_ = 0, out_addr_ = 0, n_tiles_ = 0;
  std::vector<OutTile> m_tiles_;
  std::vector<std::vector<std::vector<Block>>> per_team_;  // each team's work items
};

// DRAM image: weights, params (per N tile), input, output; with data, dram_init holds the
// weights and params.
Status ConvLowering::PlaceImage(LayerImage* image) {
  const std::string where = fmt::format("layer '{}'", l_.name);
  const int N = l_.out_channels;
  const int64_t align = 64;
  const int64_t w_bytes = l_.weight_bytes();
  n_tiles_ = CeilDiv(N, tl_.tile_n);
  const int64_t p_bytes = int64_t{12} * N + (l_.has_table() ? 256 * n_tiles_ : 0);
  const int64_t in_bytes = int64_t{l_.batch} * l_.in_h * l_.in_w * l_.channels * es_;
  const int64_t out_bytes = int64_t{l_.batch} * l_.out_h() * l_.out_w() * N * ys_;
  if (l_.weights_from_input) {
    // params, input, the right operand (`.input1`), output: only the params are constant.
    p_addr_ = 0;
    in_addr_ = AlignUp(p_bytes, align);
    w_addr_ = AlignUp(in_addr_ + in_bytes, align);
    out_addr_ = AlignUp(w_addr_ + w_bytes, align);
  } else {
    p_addr_ = AlignUp(w_addr_ + w_bytes, align);
    in_addr_ = AlignUp(p_addr_ + p_bytes, align);
    out_addr_ = AlignUp(in_addr_ + in_bytes, align);
  }
  p_.dram_bytes = out_addr_ + out_bytes;
  p_.regions = {{l_.name + (l_.weights_from_input ? ".input1" : ".weights"), w_addr_, w_bytes},
                {l_.name + ".params", p_addr_, p_bytes},
                {l_.name + ".input", in_addr_, in_bytes}, {l_.name + ".output", out_addr_, out_bytes}};
  if (image) *image = {in_addr_, in_bytes, out_addr_, out_bytes};
  if (!l_.has_data()) return Status::Ok();
  if (l_.fp16) return InvalidArgument("{}: data given for an fp16 layer (timing only)", where);
  if (!l_.weights_from_input && static_cast<int64_t>(l_.weights.size()) != l_.k() * N)
    return InvalidArgument("{}: {} weights, expected {}", where, l_.weights.size(), l_.k() * N);
  if (l_.requant.size() != 1 && l_.requant.size() != static_cast<size_t>(N))
    return InvalidArgument("{}: {} requantization multipliers, expected 1 or {}", where, l_.requant.size(), N);
  if (l_.has_table() && l_.output_table.size() != 256)
    return InvalidArgument("{}: a lookup epilogue of {} values, expected 256", where, l_.output_table.size());
  p_.dram_init.assign(in_addr_, 0);
  if (!l_.weights_from_input) std::memcpy(p_.dram_init.data() + w_addr_, l_.weights.data(), w_bytes);
  const std::vector<int32_t> bias = FoldedBias(l_);
  // Params of N tile j: bias[tn], mult[tn], shift[tn] for its tn channels, then the table.
  for (int64_t j = 0; j < n_tiles_; ++j) {
    const int n0 = static_cast<int>(j * tl_.tile_n), tn = std::min(tl_.tile_n, N - n0);
    uint8_t* dst = p_.dram_init.data() + ParamsAddr(n0);
    for (int c = 0; c < tn; ++c) {
      const auto& rq = l_.requant.size() == 1 ? l_.requant[0] : l_.requant[n0 + c];
      const int32_t shift = rq.shift;
      std::memcpy(dst + 4 * c, &bias[n0 + c], 4);
      std::memcpy(dst + 4 * (tn + c), &rq.multiplier, 4);
      std::memcpy(dst + 4 * (2 * tn + c), &shift, 4);
    }
    if (l_.has_table()) std::memcpy(dst + int64_t{12} * tn, l_.output_table.data(), 256);
  }
  return Status::Ok();
}

// Output tiles: M tiles (pixels) x N tiles (channels), in blocks of team_m x team_n tiles (one
// tile per core of a team), grouped by the resident operand the blocks share; the groups are
// split so that every team has work, and the work items dealt round-robin over the teams.
void ConvLowering::PlanWork() {
  const int OH = l_.out_h(), OW = l_.out_w();
  for (int b = 0; b < l_.batch; ++b)
    for (int oh = 0; oh < OH; oh += tl_.tile_h)
      for (int ow = 0; ow < OW; ow += tl_.tile_w)
        m_tiles_.push_back({b, oh, ow, std::min(tl_.tile_h, OH - oh), std::min(tl_.tile_w, OW - ow), 0, 0});
  const int64_t m_blocks = CeilDiv(static_cast<int64_t>(m_tiles_.size()), tl_.team_m);
  const int64_t n_blocks = CeilDiv(n_tiles_, tl_.team_n);
  std::vector<std::vector<Block>> groups;
  if (tl_.resident == Resident::kInput) {
    // The resident input tiles hold one channel group's K: a new item where the group changes.
    const int64_t group_blocks = l_.group_out() / (int64_t{tl_.team_n} * tl_.tile_n);
    for (int64_t mb = 0; mb < m_blocks; ++mb) {
      groups.emplace_back();
      for (int64_t nb = 0; nb < n_blocks; ++nb) {
        if (l_.group > 1 && nb > 0 && nb % group_blocks == 0) groups.emplace_back();
        groups.back().push_back({mb, nb});
      }
    }
  } else {
    for (int64_t nb = 0; nb < n_blocks; ++nb) {
      groups.emplace_back();
      for (int64_t mb = 0; mb < m_blocks; ++mb) {
        // A right operand from an input differs per batch item: a new group per item.
        if (l_.weights_from_input && mb > 0 && m_tiles_[mb].b != m_tiles_[mb - 1].b) groups.emplace_back();
        groups.back().push_back({mb, nb});
      }
    }
  }
  const int teams = tl_.cores / T();
  const int64_t splits = std::max<int64_t>(1, CeilDiv(teams, static_cast<int64_t>(groups.size())));
  per_team_.assign(teams, {});
  int next_team = 0;
  for (auto& g : groups) {
    const int64_t chunk = CeilDiv(static_cast<int64_t>(g.size()), splits);
    for (size_t s = 0; s < g.size(); s += chunk) {
      per_team_[next_team].emplace_back(g.begin() + s, g.begin() + std::min(g.size(), s + chunk));
      next_team = (next_team + 1) % teams;
    }
  }
}

// The tile of core (i, j) of the team in block `b`, if the block has one there.
std::optional<OutTile> ConvLowering::TileOf(const Block& b, int i, int j) const {
  const int64_t mi = b.mb * tl_.team_m + i, nj = b.nb * tl_.team_n + j;
  if (mi >= static_cast<int64_t>(m_tiles_.size()) || nj >= n_tiles_) return std::nullopt;
  OutTile o = m_tiles_[mi];
  o.n0 = static_cast<int>(nj * tl_.tile_n);
  o.tn = std::min(tl_.tile_n, l_.out_channels - o.n0);
  return o;
}

// The block's output channels [n0, n0 + nn): the row width of its weights in SRAM.
std::pair<int, int> ConvLowering::BlockN(const Block& b) const {
  const int n0 = static_cast<int>(b.nb * tl_.team_n * tl_.tile_n);
  return {n0, std::min(tl_.team_n * tl_.tile_n, l_.out_channels - n0)};
}

// The input rows of step `s` for tile `tile`, into SRAM at `dst` (row stride `row`), split into
// up to `parts` DMAs per kernel column (by output rows, or by columns for a one-row tile).
void ConvLowering::LoadInput(std::vector<Instr>& jobs, const OutTile& tile, const KStep& s, int64_t dst, int64_t row,
                             int parts) const {
  const int64_t IW = l_.in_w, IH = l_.in_h, C = l_.channels;
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
      const int64_t iy0 = int64_t{o.oh0} * l_.stride_h + int64_t{s.kh} * l_.dilation_h - l_.pad_top;
      const int64_t ix0 = int64_t{o.ow0} * l_.stride_w + int64_t{s.kw0 + j} * l_.dilation_w - l_.pad_left;
      Instr in{.op = Opcode::kDmaLoad};
      in.dram_addr = in_addr_ + (((int64_t{o.b} * IH + iy0) * IW + ix0) * C + l_.group_c0(o.n0) + s.c0) * es_;
      in.region = kInputRegion;
      in.sram_addr = at + j * s.tc * es_;
      in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(s.tc * es_);
      in.pad = static_cast<int8_t>(l_.x_zero_point);
      in.ndims = 2;
      auto [ylo, yhi] = ValidRange(iy0, l_.stride_h, o.th, IH);
      auto [xlo, xhi] = ValidRange(ix0, l_.stride_w, o.tw, IW);
      in.dims[0] = {o.th, int64_t{l_.stride_h} * IW * C * es_, int64_t{o.tw} * row, ylo, yhi};
      in.dims[1] = {o.tw, int64_t{l_.stride_w} * C * es_, row, xlo, xhi};
      if (o.th == 1) {  // one strided dim is enough
        in.ndims = 1;
        in.dims[0] = in.dims[1];
        if (ylo == yhi) in.dims[0].valid_lo = in.dims[0].valid_hi = 0;
      }
      jobs.push_back(in);
    }
  }
}

// Weight rows [k0, k0 + k) x channels [n0, n0 + nn) into SRAM at `dst` (row stride nn), in up
// to `parts` DMAs.
void ConvLowering::LoadWeights(std::vector<Instr>& jobs, int64_t k0, int64_t k, int n0, int nn, int64_t dst,
                               int parts, int batch) const {
  const int64_t N = l_.out_channels, per = CeilDiv(k, parts);
  const std::array<int64_t, 3>& bs = l_.b_strides;
  if (l_.weights_from_input && (bs[0] || bs[1] || bs[2])) {
    // Through a transpose: rows of k values per output channel ([nn][k] in SRAM), or rows of
    // nn values per K row ([k][nn]) at the operand's row stride.
    const int64_t base = w_addr_ + int64_t{batch} * bs[0] * es_;
    const bool t = l_.b_transposed();
    const int64_t rows = t ? nn : k, each = CeilDiv(rows, parts);
    for (int64_t r0 = 0; r0 < rows; r0 += each) {
      const int32_t cnt = static_cast<int32_t>(std::min(each, rows - r0));
      Instr in{.op = Opcode::kDmaLoad};
      in.region = kWeightsRegion;
      in.ndims = 1;
      if (t) {
        in.dram_addr = base + ((n0 + r0) * bs[2] + k0) * es_;
        in.sram_addr = dst + r0 * k * es_;
        in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(k * es_);
        in.dims[0] = {cnt, bs[2] * es_, k * es_, 0, cnt};
      } else {
        in.dram_addr = base + ((k0 + r0) * bs[1] + n0) * es_;
        in.sram_addr = dst + r0 * nn * es_;
        in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(nn * es_);
        in.dims[0] = {cnt, bs[1] * es_, int64_t{nn} * es_, 0, cnt};
      }
      jobs.push_back(in);
    }
    return;
  }
  // A right operand from an input has one K x N matrix per batch item.
  const int64_t base = w_addr_ + (l_.weights_from_input ? int64_t{batch} * l_.k() * N * es_ : 0);
  for (int64_t r0 = 0; r0 < k; r0 += per) {
    const int32_t rows = static_cast<int32_t>(std::min(per, k - r0));
    Instr in{.op = Opcode::kDmaLoad};
    in.dram_addr = base + ((k0 + r0) * N + n0) * es_;
    in.region = kWeightsRegion;
    in.sram_addr = dst + r0 * nn * es_;
    in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(nn * es_);
    in.ndims = 1;
    in.dims[0] = {rows, N * es_, int64_t{nn} * es_, 0, rows};
    jobs.push_back(in);
  }
}

void ConvLowering::Deal(Core& c, const std::vector<Instr>& jobs) const {
  for (size_t d = 0; d < jobs.size(); ++d)
    if ((c.dealt + static_cast<int64_t>(d)) % T() == c.me) EmitDma(c.e, t_, jobs[d]);
  c.dealt += static_cast<int64_t>(jobs.size());
}

// The work item's resident operand (its weight columns, or its blocks' input tiles), loaded
// once by the team for all the item's blocks.
void ConvLowering::EmitResidentLoad(Core& c, const Block& first, int64_t rdst) {
  WaitTeam(c, QueueKind::kLoad, kResidentFree + c.rs);
  std::vector<Instr> jobs;
  if (tl_.resident == Resident::kWeights) {
    auto [n0, nn] = BlockN(first);
    LoadWeights(jobs, 0, l_.k(), n0, nn, rdst, T(), TileOf(first, 0, 0).value_or(OutTile{}).b);
  } else {
    for (int i = 0; i < tl_.team_m; ++i)
      if (auto o = TileOf(first, i, 0))
        for (const KStep& s : steps_) LoadInput(jobs, *o, s, rdst + i * y_.r_tile + s.k_offset * es_, y_.k_total * es_,
                                                tl_.team_n);
  }
  Deal(c, jobs);
  SignalTeam(c, QueueKind::kLoad, kResidentFull + c.rs);
  WaitTeam(c, QueueKind::kExecute, kResidentFull + c.rs);
}

// Band mode: the tile's input band of channel chunk [c0, c0 + tc) with its halo, into the
// stream slot at `sdst` (then, with im2col, the tile's im2col rows laid out from it on chip).
void ConvLowering::EmitBandLoad(Core& c, const OutTile& o, int c0, int tc, int64_t sdst) {
  const int64_t IW = l_.in_w, IH = l_.in_h, C = l_.channels;
  c0 += l_.group_c0(o.n0);  // the tile's group's channels
  const int OW = l_.out_w();
  const int rows = (o.th - 1) * l_.stride_h + (l_.kernel_h - 1) * l_.dilation_h + 1;
  const int wp = (OW - 1) * l_.stride_w + (l_.kernel_w - 1) * l_.dilation_w + 1;
  const int64_t iy0 = int64_t{o.oh0} * l_.stride_h - l_.pad_top;
  auto [ylo, yhi] = ValidRange(iy0, 1, rows, IH);
  const int64_t pix = int64_t{tc} * es_, row = int64_t{wp} * pix;
  Instr in{.op = Opcode::kDmaLoad};
  in.pad = static_cast<int8_t>(l_.x_zero_point);
  in.region = kInputRegion;
  if (tc == C) {
    // Whole image rows are contiguous: one row per input row, the left padding by a fill-only
    // DMA (no DRAM read) and the right padding on load.
    if (l_.pad_left > 0) {
      Instr fill = in;
      fill.dram_addr = in_addr_;
      fill.sram_addr = sdst;
      fill.row_bytes = fill.sram_row_bytes = static_cast<int32_t>(l_.pad_left * pix);
      fill.ndims = 1;
      fill.dims[0] = {rows, 0, row, 0, 0};
      EmitDma(c.e, t_, fill);
    }
    const int used = std::max(0, std::min(IH > 0 ? static_cast<int>(IW) : 0, wp - l_.pad_left));
    in.dram_addr = in_addr_ + ((int64_t{o.b} * IH + iy0) * IW) * C * es_;
    in.sram_addr = sdst + l_.pad_left * pix;
    in.row_bytes = static_cast<int32_t>(std::max(1, used) * pix);
    in.sram_row_bytes = static_cast<int32_t>(std::max(used, wp - l_.pad_left) * pix);
    in.ndims = 1;
    in.dims[0] = {rows, IW * C * es_, row, ylo, used > 0 ? yhi : ylo};
  } else {
    in.dram_addr = in_addr_ + (((int64_t{o.b} * IH + iy0) * IW - l_.pad_left) * C + c0) * es_;
    in.sram_addr = sdst;
    in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(pix);
    in.ndims = 2;
    auto [xlo, xhi] = ValidRange(-l_.pad_left, 1, wp, IW);
    in.dims[0] = {rows, IW * C * es_, row, ylo, yhi};
    in.dims[1] = {wp, C * es_, pix, xlo, xhi};
  }
  EmitDma(c.e, t_, in);
  const int64_t col = sdst + y_.band_bytes;  // im2col rows: [o.th * OW][K]
  for (int kh = 0; tl_.im2col && kh < l_.kernel_h; ++kh) {
    // Kernel row kh of every pixel: its kernel_w * C bytes (contiguous in the band when
    // dilation_w is 1, else one gather per kernel column).
    const int groups = l_.dilation_w == 1 ? 1 : l_.kernel_w, per = l_.kernel_w / groups;
    for (int kg = 0; kg < groups; ++kg) {
      Instr g{.op = Opcode::kDmaLoad};
      g.on_chip = true;
      g.region = kLocalSramRegion;
      g.dram_addr = sdst + (int64_t{kh} * l_.dilation_h * wp + int64_t{kg} * l_.dilation_w) * pix;
      g.sram_addr = col + (int64_t{kh} * l_.kernel_w + kg) * l_.group_in() * es_;
      g.row_bytes = g.sram_row_bytes = static_cast<int32_t>(per * pix);
      g.ndims = 2;
      g.dims[0] = {o.th, int64_t{l_.stride_h} * row, int64_t{OW} * l_.k() * es_, 0, o.th};
      g.dims[1] = {OW, int64_t{l_.stride_w} * pix, l_.k() * es_, 0, OW};
      EmitDma(c.e, t_, g);
    }
  }
}

// Band mode: per channel chunk, the band load, then one MATMUL per (output row, kernel
// position) on the shifted window, or one MATMUL of the whole K on the im2col rows.
void ConvLowering::EmitBandSteps(Core& c, const OutTile& o, int64_t acc, int64_t rdst) {
  const int C = l_.group_in(), OW = l_.out_w();
  const int wp = (OW - 1) * l_.stride_w + (l_.kernel_w - 1) * l_.dilation_w + 1;
  for (int c0 = 0, si = 0; c0 < C; c0 += tl_.tile_c, ++si) {
    const int tc = std::min(tl_.tile_c, C - c0);
    const int64_t sdst = Stream(c, c.ss), pix = int64_t{tc} * es_;
    c.e.Wait(QueueKind::kLoad, kStreamFree + c.ss);
    EmitBandLoad(c, o, c0, tc, sdst);
    c.e.Signal(QueueKind::kLoad, kStreamFull + c.ss);
    c.e.Wait(QueueKind::kExecute, kStreamFull + c.ss);
    if (tl_.im2col) {
      Instr mm{.op = Opcode::kMatMul};
      mm.a_addr = sdst + y_.band_bytes;
      mm.a_stride = static_cast<int32_t>(l_.k() * es_);
      mm.b_addr = rdst;
      mm.b_stride = static_cast<int32_t>(o.tn * es_);
      mm.acc_addr = acc;
      mm.acc_stride = o.tn * 4;
      mm.m = o.th * OW;
      mm.k = static_cast<int32_t>(l_.k());
      mm.n = o.tn;
      mm.fp16 = l_.fp16;
      c.e.Add(QueueKind::kExecute, mm);
    }
    for (int yy = 0; yy < (tl_.im2col ? 0 : o.th); ++yy)
      for (int kh = 0; kh < l_.kernel_h; ++kh)
        for (int kw = 0; kw < l_.kernel_w; ++kw) {
          Instr mm{.op = Opcode::kMatMul};
          mm.a_addr = sdst + (int64_t{yy * l_.stride_h + kh * l_.dilation_h} * wp + kw * l_.dilation_w) * pix;
          mm.a_stride = static_cast<int32_t>(l_.stride_w * pix);
          mm.b_addr = rdst + ((int64_t{kh} * l_.kernel_w + kw) * C + c0) * o.tn * es_;
          mm.b_stride = static_cast<int32_t>(o.tn * es_);
          mm.acc_addr = acc + int64_t{yy} * o.tw * o.tn * 4;
          mm.acc_stride = o.tn * 4;
          mm.m = o.tw;
          mm.k = tc;
          mm.n = o.tn;
          mm.accumulate = !(si == 0 && kh == 0 && kw == 0);
          mm.fp16 = l_.fp16;
          c.e.Add(QueueKind::kExecute, mm);
        }
    c.e.Signal(QueueKind::kExecute, kStreamFree + c.ss);
    c.ss = (c.ss + 1) % nbuf_;
  }
}

// Streamed K steps of one block: the team loads the step's operands that are not resident
// (dealt over its cores), and each core with a tile in the block multiplies into its
// accumulators.
void ConvLowering::EmitStreamedSteps(Core& c, const Block& blk, const std::optional<OutTile>& mine, int64_t acc,
                                     int64_t rdst) {
  const OutTile o = mine.value_or(OutTile{});
  const auto [bn0, bnn] = BlockN(blk);
  const int batch = TileOf(blk, 0, 0).value_or(OutTile{}).b;  // one M tile per block with a right operand input
  std::vector<Instr> jobs;
  for (size_t si = 0; si < steps_.size(); ++si) {
    const KStep& s = steps_[si];
    const int64_t sdst = Stream(c, c.ss);
    WaitTeam(c, QueueKind::kLoad, kStreamFree + c.ss);
    jobs.clear();
    auto load_block_input = [&](int64_t dst) {
      for (int i = 0; i < tl_.team_m; ++i)
        if (auto m = TileOf(blk, i, 0)) LoadInput(jobs, *m, s, dst + i * y_.a_tile, s.k() * es_, tl_.team_n);
    };
    Instr mm{.op = Opcode::kMatMul};
    // b's tile: [k][bnn] (row pitch bnn) or, transposed, [bnn][k] (row pitch = the k it holds).
    const bool bt = l_.b_transposed();
    const int64_t tk = tl_.resident == Resident::kWeights ? l_.k() : s.k();
    const int64_t b_col = bt ? (o.n0 - bn0) * tk : o.n0 - bn0;
    mm.b_trans = bt;
    mm.b_stride = static_cast<int32_t>((bt ? tk : bnn) * es_);
    switch (tl_.resident) {
      case Resident::kNone:
        load_block_input(sdst);
        LoadWeights(jobs, s.k_offset, s.k(), bn0, bnn, sdst + y_.stream_a_bytes, tl_.team_m, batch);
        mm.a_addr = sdst + c.ti * y_.a_tile;
        mm.a_stride = static_cast<int32_t>(s.k() * es_);
        mm.b_addr = sdst + y_.stream_a_bytes + b_col * es_;
        break;
      case Resident::kWeights:
        load_block_input(sdst);
        mm.a_addr = sdst + c.ti * y_.a_tile;
        mm.a_stride = static_cast<int32_t>(s.k() * es_);
        mm.b_addr = rdst + (bt ? b_col + s.k_offset : s.k_offset * bnn + b_col) * es_;
        break;
      case Resident::kInput:
        LoadWeights(jobs, s.k_offset, s.k(), bn0, bnn, sdst, tl_.team_m, batch);
        mm.a_addr = rdst + c.ti * y_.r_tile + s.k_offset * es_;
        mm.a_stride = static_cast<int32_t>(y_.k_total * es_);
        mm.b_addr = sdst + b_col * es_;
        break;
    }
    Deal(c, jobs);
    SignalTeam(c, QueueKind::kLoad, kStreamFull + c.ss);
    WaitTeam(c, QueueKind::kExecute, kStreamFull + c.ss);
    if (mine) {
      mm.acc_addr = acc;
      mm.acc_stride = o.tn * 4;
      mm.m = o.m();
      mm.k = s.k();
      mm.n = o.tn;
      mm.accumulate = si > 0;
      mm.fp16 = l_.fp16;
      if (l_.weights_from_input) {
        mm.a_zero = l_.x_zero_point;
        mm.b_zero = l_.w_zero_point;
      }
      c.e.Add(QueueKind::kExecute, mm);
    }
    SignalTeam(c, QueueKind::kExecute, kStreamFree + c.ss);
    c.ss = (c.ss + 1) % nbuf_;
  }
}

// The tile's epilogue: VEC requantize (bias, multiplier, zero point, activation clamp) from
// the accumulators into the output slot, then the store to DRAM.
void ConvLowering::EmitEpilogue(Core& c, const OutTile& o, int64_t acc, int64_t par, int64_t obuf) {
  const int OH = l_.out_h(), OW = l_.out_w(), N = l_.out_channels;
  CoreEmitter& e = c.e;
  e.Signal(QueueKind::kExecute, kAccFull);
  e.Wait(QueueKind::kVector, kAccFull);
  e.Wait(QueueKind::kVector, kOutFree);
  Instr rq{.op = Opcode::kVec, .vec = VecOp::kRequantize};
  rq.src = acc;
  rq.src_stride = o.tn * 4;
  rq.dst = obuf;
  rq.dst_stride = static_cast<int32_t>(o.tn * ys_);
  rq.params = par;
  rq.rows = o.m();
  rq.cols = o.tn;
  rq.imm[0] = l_.y_zero_point;
  rq.imm[1] = l_.act_min;
  rq.imm[2] = l_.act_max;
  if (l_.y_bytes == 2) rq.imm[kRequantBytesImm] = 2;  // int16 out (an fp16 layer keeps its timing)
  e.Add(QueueKind::kVector, rq);
  if (l_.has_table()) EmitLookup(c, o, par, obuf);
  e.Signal(QueueKind::kVector, kAccFree);
  e.Signal(QueueKind::kVector, kParamsFree);
  e.Signal(QueueKind::kVector, kOutFull);
  e.Wait(QueueKind::kStore, kOutFull);
  Instr st{.op = Opcode::kDmaStore};
  st.dram_addr = out_addr_ + (((int64_t{o.b} * OH + o.oh0) * OW + o.ow0) * N + o.n0) * ys_;
  st.region = kOutputRegion;
  st.sram_addr = obuf;
  st.row_bytes = st.sram_row_bytes = static_cast<int32_t>(o.tn * ys_);
  st.ndims = 2;
  st.dims[0] = {o.th, int64_t{OW} * N * ys_, int64_t{o.tw} * o.tn * ys_, 0, o.th};
  st.dims[1] = {o.tw, int64_t{N} * ys_, int64_t{o.tn} * ys_, 0, o.tw};
  if (o.th == 1) {
    st.ndims = 1;
    st.dims[0] = st.dims[1];
  }
  // A tile of every channel that is one row or whole-width rows (the only multi-row tiles)
  // is contiguous on both sides: one DMA row, so a thin output (N below a burst) does not
  // pay a burst per pixel. Guarded by NpuFunctionalTest's thin-output cases.
  if (o.tn == N && (o.th == 1 || o.tw == OW)) {
    st.row_bytes = st.sram_row_bytes = static_cast<int32_t>(int64_t{o.th} * o.tw * N * ys_);
    st.ndims = 0;
  }
  EmitDma(e, t_, st);
  e.Signal(QueueKind::kStore, kOutFree);
}

// The lookup epilogue: the tile's requantized values mapped in place through the table its
// parameter block carries (ConvLayer::output_table), on the same vector queue, so no token
// is needed between the two VECs and the store waits for both.
void ConvLowering::EmitLookup(Core& c, const OutTile& o, int64_t par, int64_t obuf) {
  Instr lut{.op = Opcode::kVec, .vec = VecOp::kLut};
  lut.src = lut.dst = obuf;
  lut.src_stride = lut.dst_stride = static_cast<int32_t>(o.tn * es_);
  lut.params = par + int64_t{12} * o.tn;
  lut.rows = o.m();
  lut.cols = o.tn;
  c.e.Add(QueueKind::kVector, lut);
}

// One core's pipeline over its team's work items.
void ConvLowering::EmitCore(Core& c) {
  CoreEmitter& e = c.e;
  // Initial tokens: every slot starts free (of each core of the team).
  for (int s = 0; s < nbuf_; ++s) {
    SignalTeam(c, QueueKind::kExecute, kStreamFree + s);
    SignalTeam(c, QueueKind::kExecute, kResidentFree + s);
    e.Signal(QueueKind::kVector, kAccFree);
    e.Signal(QueueKind::kVector, kParamsFree);
    e.Signal(QueueKind::kStore, kOutFree);
  }
  const int64_t acc_slot = int64_t{y_.max_m} * y_.max_n * 4;
  for (const std::vector<Block>& item : per_team_[c.team]) {
    const int64_t rdst = ResidentSlot(c, c.rs);
    if (tl_.resident != Resident::kNone) EmitResidentLoad(c, item.front(), rdst);
    for (const Block& blk : item) {
      const std::optional<OutTile> mine = TileOf(blk, c.ti, c.tj);
      const int64_t acc = c.ts * acc_slot, par = Params(c, c.ts), obuf = Out(c, c.ts);
      if (mine) {
        e.Wait(QueueKind::kLoad, kParamsFree);
        Instr pl{.op = Opcode::kDmaLoad};
        pl.dram_addr = ParamsAddr(mine->n0);
        pl.region = kParamsRegion;
        pl.sram_addr = par;
        pl.row_bytes = pl.sram_row_bytes = static_cast<int32_t>(l_.params_bytes(mine->tn));
        EmitDma(e, t_, pl);
        e.Wait(QueueKind::kExecute, kAccFree);
      }
      if (tl_.band) EmitBandSteps(c, mine.value_or(OutTile{}), acc, rdst);
      else EmitStreamedSteps(c, blk, mine, acc, rdst);
      if (!mine) continue;
      EmitEpilogue(c, *mine, acc, par, obuf);
      c.ts = (c.ts + 1) % nbuf_;
    }
    if (tl_.resident != Resident::kNone) SignalTeam(c, QueueKind::kExecute, kResidentFree + c.rs);
    c.rs = (c.rs + 1) % nbuf_;
  }
}

StatusOr<Program> ConvLowering::Lower(LayerImage* image) {
  const std::string where = fmt::format("layer '{}'", l_.name);
  if (l_.out_h() < 1 || l_.out_w() < 1) return InvalidArgument("{}: empty output", where);
  if (t_.dma.max_dims < 2) return InvalidArgument("{}: the DMA needs at least 2 dims", where);
  if (l_.y_bytes == 2 && t_.vector_cores.VecRate("i16") <= 0)
    return InvalidArgument("{}: an int16 output, but the vector cores of {} take no i16", where, t_.name);
  auto fp = CheckTiling(l_, t_, tl_);
  if (!fp.ok()) return fp.status().WithContext(where);
  RETURN_IF_ERROR(PlaceImage(image));
  PlanWork();
  p_.cores_used = tl_.cores;
  p_.semaphores = kNumSems;
  std::vector<Core> cores(tl_.cores);
  for (int i = 0; i < tl_.cores; ++i) {
    Core& c = cores[i];
    c.e.core = i;
    c.team = i / T();
    c.me = i % T();
    c.ti = c.me / tl_.team_n;
    c.tj = c.me % tl_.team_n;
    c.base = c.team * y_.per_team;
    c.own = c.base + nbuf_ * (y_.stream_slot + y_.resident_slot) + c.me * nbuf_ * (y_.params_slot + y_.out_slot);
    EmitCore(c);
  }
  std::vector<CoreEmitter> emitters;
  emitters.reserve(cores.size());
  for (Core& c : cores) emitters.push_back(std::move(c.e));
  AssembleTask(p_, emitters);
  p_.task_names = {fmt::format("{} ({}x{}x{})", l_.name, l_.m(), l_.k(), l_.n())};
  return std::move(p_);
}

}  // namespace

StatusOr<Program> LowerConv(const ConvLayer& l, const Target& t, const Tiling& tl, LayerImage* image) {
  return ConvLowering(l, t, tl).Lower(image);
}

}  // namespace edgec::npu
