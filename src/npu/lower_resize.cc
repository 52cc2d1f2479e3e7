// Int8 resize on the NPU (see lower.h): a VEC resize per band of output rows, or strided
// DMA stores alone for a nearest resize by integer factors.
#include <algorithm>

#include <fmt/format.h>

#include "npu/emit.h"
#include "npu/lower.h"
#include "support/status.h"

namespace edgec::npu {
namespace {

// Semaphores of each core: input slots (load -> vector), output slots (vector -> store).
constexpr StreamSems kSems{.in_free = 0, .in_full = 2, .out_free = 6, .out_full = 7};
constexpr int32_t kNumSems = 13;

Status CheckTaps(const ResizeLayer& l) {
  auto sized = [](const std::vector<int32_t>& v, int n) { return static_cast<int>(v.size()) == n; };
  if (!sized(l.row_lo, l.out_h) || !sized(l.row_hi, l.out_h) || !sized(l.row_w, l.out_h) ||
      !sized(l.col_lo, l.out_w) || !sized(l.col_hi, l.out_w) || !sized(l.col_w, l.out_w))
    return InvalidArgument("resize layer '{}': taps do not match the {}x{} output", l.name, l.out_h, l.out_w);
  for (int o = 0; o < l.out_h; ++o)
    if (l.row_lo[o] < 0 || l.row_hi[o] >= l.in_h || l.row_lo[o] > l.row_hi[o] || (o && l.row_lo[o] < l.row_lo[o - 1]) ||
        (o && l.row_hi[o] < l.row_hi[o - 1]))
      return InvalidArgument("resize layer '{}': row taps are not ascending inside the input", l.name);
  for (int o = 0; o < l.out_w; ++o)
    if (l.col_lo[o] < 0 || l.col_hi[o] >= l.in_w || l.col_lo[o] > l.col_hi[o])
      return InvalidArgument("resize layer '{}': column taps outside the input", l.name);
  return Status::Ok();
}

// The nearest resize by integer factors: per tile, the input band [rows][in_w][tc] is loaded
// and stored sh x sw times, each store writing every input pixel to one of its copies.
StatusOr<Program> LowerReplicate(const ResizeLayer& l, const Target& t, int tile_rows, int tile_c, bool double_buffer) {
  const int IH = l.in_h, IW = l.in_w, C = l.channels, sh = l.replicate_h, sw = l.replicate_w;
  tile_rows = std::min(tile_rows, IH);
  tile_c = std::min(tile_c, C);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t slot = AlignUp(int64_t{tile_rows} * IW * tile_c, t.shared_sram.alignment);
  const int64_t tiles_h = CeilDiv(IH, tile_rows), tiles_c = CeilDiv(C, tile_c), tiles = tiles_h * tiles_c * l.batch;
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  if (slot * nbuf * cores > t.shared_sram.bytes)
    return InvalidArgument("resize layer '{}': tile {} rows x {} channels does not fit SRAM", l.name, tile_rows, tile_c);
  Program p;
  const int64_t in_bytes = int64_t{l.batch} * IH * IW * C, out_bytes = int64_t{l.batch} * l.out_h * l.out_w * C;
  const int64_t out_addr = AlignUp(in_bytes, 64);
  p.dram_bytes = out_addr + out_bytes;
  p.regions = {{l.name + ".input", 0, in_bytes}, {l.name + ".output", out_addr, out_bytes}};
  p.cores_used = cores;
  p.semaphores = kNumSems;
  auto start_core = [&](CoreEmitter& e) {
    for (int i = 0; i < nbuf; ++i) e.Signal(QueueKind::kStore, kSems.in_free);
  };
  auto emit_tile = [&](CoreEmitter& e, int64_t i, int s) {
    const GridTile g = GridTileAt(i, IH, tile_rows, C, tile_c);
    const int b = g.batch, iy0 = g.row0, c0 = g.c0, th = g.rows, tc = g.chans;
    const int64_t sram = e.core * slot * nbuf + s * slot;
    e.Wait(QueueKind::kLoad, kSems.in_free);
    EmitBandLoad(e, t, int64_t{b} * IH * IW * C, IH, IW, C, iy0, 0, th, IW, c0, tc, sram, 0, 0);
    e.Signal(QueueKind::kLoad, kSems.in_full);
    e.Wait(QueueKind::kStore, kSems.in_full);
    for (int dy = 0; dy < sh; ++dy) {
      for (int dx = 0; dx < sw; ++dx) {
        Instr st{.op = Opcode::kDmaStore};
        st.region = 1;
        st.dram_addr = out_addr + ((int64_t{b} * l.out_h + int64_t{iy0} * sh + dy) * l.out_w + dx) * C + c0;
        st.sram_addr = sram;
        st.row_bytes = st.sram_row_bytes = tc;
        st.ndims = 2;
        st.dims[0] = {th, int64_t{sh} * l.out_w * C, int64_t{IW} * tc, 0, th};
        st.dims[1] = {IW, int64_t{sw} * C, tc, 0, IW};
        if (sw == 1 && tc == C) {  // a band row is one contiguous output row
          st.row_bytes = st.sram_row_bytes = IW * C;
          st.ndims = 1;
        }
        EmitDma(e, t, st);
      }
    }
    e.Signal(QueueKind::kStore, kSems.in_free);
  };
  const std::vector<CoreEmitter> emitters = DealTiles(cores, tiles, nbuf, start_core, emit_tile);
  AssembleTask(p, emitters);
  p.task_names = {fmt::format("{} (resize by replication {}x{})", l.name, sh, sw)};
  return p;
}

}  // namespace

void ResizeLayer::DetectReplication() {
  replicate_h = replicate_w = 0;
  if (out_h % in_h || out_w % in_w || row_lo.size() != static_cast<size_t>(out_h) ||
      col_lo.size() != static_cast<size_t>(out_w))
    return;
  const int sh = out_h / in_h, sw = out_w / in_w;
  for (int o = 0; o < out_h; ++o)
    if (row_lo[o] != o / sh || row_hi[o] != o / sh || row_w[o] != 0) return;
  for (int o = 0; o < out_w; ++o)
    if (col_lo[o] != o / sw || col_hi[o] != o / sw || col_w[o] != 0) return;
  replicate_h = sh;
  replicate_w = sw;
}

StatusOr<Program> LowerResize(const ResizeLayer& l, const Target& t, int tile_rows, int tile_c, bool double_buffer) {
  if (l.batch < 1 || l.channels < 1 || l.in_h < 1 || l.in_w < 1 || l.out_h < 1 || l.out_w < 1)
    return InvalidArgument("resize layer '{}': empty", l.name);
  if (tile_rows < 1 || tile_c < 1) return InvalidArgument("resize layer '{}': bad tile", l.name);
  RETURN_IF_ERROR(CheckTaps(l));
  if (l.replicates()) return LowerReplicate(l, t, tile_rows, tile_c, double_buffer);
  const int OH = l.out_h, OW = l.out_w, IW = l.in_w, C = l.channels;
  tile_rows = std::min(tile_rows, OH);
  tile_c = std::min(tile_c, C);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const int64_t tiles_h = CeilDiv(OH, tile_rows), tiles_c = CeilDiv(C, tile_c), tiles = tiles_h * tiles_c * l.batch;
  int max_band = 1;  // input rows of the largest band
  for (int64_t h = 0; h < tiles_h; ++h) {
    const int first = static_cast<int>(h) * tile_rows, last = std::min(OH, first + tile_rows) - 1;
    max_band = std::max(max_band, l.row_hi[last] - l.row_lo[first] + 1);
  }
  const int64_t in_slot = AlignUp(int64_t{max_band} * IW * tile_c, al);
  const int64_t out_slot = AlignUp(int64_t{tile_rows} * OW * tile_c, al);
  const int64_t taps_bytes = (int64_t{OH} + OW) * kResizeTapBytes;
  const int64_t per_core = nbuf * (in_slot + out_slot) + AlignUp(taps_bytes, al);
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  if (per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("resize layer '{}': tile {} rows x {} channels needs {} bytes of SRAM, the target has {}",
                           l.name, tile_rows, tile_c, per_core * cores, t.shared_sram.bytes);
  Program p;
  // The image: the tap tables (rows, then columns), then input and output.
  p.dram_init.resize(taps_bytes);
  auto put = [&](int64_t i, int32_t lo, int32_t hi, int32_t w) {
    const int32_t v[3] = {lo, hi, w};
    std::copy_n(reinterpret_cast<const uint8_t*>(v), kResizeTapBytes, p.dram_init.data() + i * kResizeTapBytes);
  };
  for (int o = 0; o < OH; ++o) put(o, l.row_lo[o], l.row_hi[o], l.row_w[o]);
  for (int o = 0; o < OW; ++o) put(OH + o, l.col_lo[o], l.col_hi[o], l.col_w[o]);
  const int64_t in_addr = AlignUp(taps_bytes, 64), in_bytes = int64_t{l.batch} * l.in_h * IW * C;
  const int64_t out_addr = AlignUp(in_addr + in_bytes, 64), out_bytes = int64_t{l.batch} * OH * OW * C;
  p.dram_bytes = out_addr + out_bytes;
  p.regions = {{l.name + ".taps", 0, taps_bytes}, {l.name + ".input", in_addr, in_bytes},
               {l.name + ".output", out_addr, out_bytes}};
  constexpr int16_t kTaps = 0, kIn = 1, kOut = 2;
  p.cores_used = cores;
  p.semaphores = kNumSems;
  auto start_core = [&](CoreEmitter& e) {
    StartStream(e, kSems, nbuf);
    // Ahead of the first tile's loads: its "full" token covers it.
    const int64_t taps = e.core * per_core + nbuf * (in_slot + out_slot);
    e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, 0, taps, taps_bytes, kTaps));
  };
  auto emit_tile = [&](CoreEmitter& e, int64_t i, int s) {
    const GridTile g = GridTileAt(i, OH, tile_rows, C, tile_c);
    const int b = g.batch, oy0 = g.row0, c0 = g.c0, th = g.rows, tc = g.chans;
    const int64_t base = e.core * per_core, taps = base + nbuf * (in_slot + out_slot);
    const int iy0 = l.row_lo[oy0], rows = l.row_hi[oy0 + th - 1] - iy0 + 1;
    const int64_t sin = base + s * in_slot, sout = base + nbuf * in_slot + s * out_slot;
    auto load = [&] {
      EmitBandLoad(e, t, in_addr + int64_t{b} * l.in_h * IW * C, l.in_h, IW, C, iy0, 0, rows, IW, c0, tc, sin, 0, kIn);
    };
    auto compute = [&] {
      Instr v{.op = Opcode::kVec, .vec = VecOp::kResize};
      v.src = sin;
      v.src_stride = IW * tc;
      v.in_h = rows;
      v.in_w = IW;
      v.cols = tc;
      v.dst = sout;
      v.dst_stride = OW * tc;
      v.rows = th;
      v.win_w = OW;
      v.params = taps;
      v.src2 = taps + int64_t{OH} * kResizeTapBytes;
      v.imm[0] = oy0;
      v.imm[1] = iy0;
      e.Add(QueueKind::kVector, v);
    };
    auto store = [&] {
      EmitPixelStore(e, t, out_addr + ((int64_t{b} * OH + oy0) * OW) * C + c0, kOut, sout, th * OW, C, tc);
    };
    EmitStreamedTile(e, kSems, load, compute, store);
  };
  const std::vector<CoreEmitter> emitters = DealTiles(cores, tiles, nbuf, start_core, emit_tile);
  AssembleTask(p, emitters);
  p.task_names = {fmt::format("{} (resize {}x{} -> {}x{}, {} ch)", l.name, l.in_h, IW, OH, OW, C)};
  return p;
}

}  // namespace edgec::npu
