// Window ops on the vector cores: pooling and depthwise convolution (see lower.h).
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "npu/emit.h"
#include "npu/lower.h"

namespace edgec::npu {

namespace {

// Semaphores of each core: input slots (load -> vector), output slots (vector -> store).
constexpr StreamSems kSems{.in_free = 0, .in_full = 2, .out_free = 6, .out_full = 7};
constexpr int32_t kNumSems = 13;

// What the pool and depthwise lowerings share: a window op over an NHWC tensor, tiled by
// output rows x channels, one VEC per tile on its band. With `params_bytes` (depthwise) each
// channel tile also has a parameter block in DRAM, first in the image (its constant part,
// filled by `fill_params` when given), loaded with every tile and passed to the VEC.
struct WindowOp {
  std::string name, what;  // what: "pool", "depthwise" (messages)
  int batch = 1, in_h = 1, in_w = 1, channels = 1, kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;  // a window spans (kernel - 1) * dilation + 1 input rows / columns
  // Output channels per input channel (depthwise): `channels` counts the output's, the input
  // has channels / multiplier, and a channel tile is a multiple of the multiplier.
  int multiplier = 1;
  int pad_top = 0, pad_left = 0, out_h = 0, out_w = 0;
  int8_t pad = 0;  // the byte padding on load holds
  VecOp vec = VecOp::kMaxPool;
  int32_t imm[12] = {};
  // With `params_per_row` the blocks are per output-row tile instead (the average pool's
  // per-pixel multipliers): params_bytes(tile rows), fill_params(first row, rows, block).
  std::function<int64_t(int64_t tc)> params_bytes = {};
  std::function<void(int64_t c0, int64_t tc, uint8_t* block)> fill_params = {};
  bool params_per_row = false;
  // A lookup epilogue: the offset of a 256-byte table in a tile's parameter block; a VEC lut
  // maps the output tile in place after the window VEC, before the store.
  std::function<int64_t(int64_t tc)> table_at = {};
};

StatusOr<Program> LowerWindowOp(const WindowOp& w, const Target& t, int tile_rows, int tile_c, bool double_buffer,
                                LayerImage* image) {
  const int OH = w.out_h, OW = w.out_w, C = w.channels;
  if (OH < 1 || OW < 1 || w.kernel_h < 1 || w.kernel_w < 1 || w.stride_h < 1 || w.stride_w < 1 ||
      w.dilation_h < 1 || w.dilation_w < 1)
    return InvalidArgument("{} layer '{}': bad window or empty output", w.what, w.name);
  if (tile_rows < 1 || tile_c < 1) return InvalidArgument("{} layer '{}': bad tile", w.what, w.name);
  tile_rows = std::min(tile_rows, OH);
  tile_c = std::min(tile_c, C);
  const int mult = std::max(1, w.multiplier), Cin = C / mult;
  if (C % mult) return InvalidArgument("{} layer '{}': {} channels for a multiplier of {}", w.what, w.name, C, mult);
  tile_c = std::max(mult, tile_c / mult * mult);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const int extent_h = static_cast<int>(WindowExtent(w.kernel_h, w.dilation_h));
  const int band_rows = (tile_rows - 1) * w.stride_h + extent_h;
  const int wp = (OW - 1) * w.stride_w + static_cast<int>(WindowExtent(w.kernel_w, w.dilation_w));  // padded input columns used
  const int64_t in_slot = AlignUp(int64_t{band_rows} * wp * (tile_c / mult), al);
  const int64_t out_slot = AlignUp(int64_t{tile_rows} * OW * tile_c, al);
  const int64_t par_slot = w.params_bytes ? AlignUp(w.params_bytes(w.params_per_row ? tile_rows : tile_c), al) : 0;
  const int64_t per_core = nbuf * (in_slot + out_slot + par_slot);
  const int64_t tiles_h = CeilDiv(OH, tile_rows), tiles_c = CeilDiv(C, tile_c);
  const int64_t tiles = tiles_h * tiles_c * w.batch;
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  if (per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("{} layer '{}': tile {} rows x {} channels needs {} bytes of SRAM, the target has {}", w.what,
                           w.name, tile_rows, tile_c, per_core * cores, t.shared_sram.bytes);
  Program p;
  // Parameter blocks per channel tile, or per row tile (params_per_row): block i covers
  // [i * step, i * step + size(i)).
  const int64_t blocks = w.params_per_row ? tiles_h : tiles_c, step = w.params_per_row ? tile_rows : tile_c;
  auto size = [&](int64_t i) { return std::min<int64_t>(step, (w.params_per_row ? OH : C) - i * step); };
  std::vector<int64_t> block(blocks + 1, 0);
  if (w.params_bytes)
    for (int64_t i = 0; i < blocks; ++i) block[i + 1] = block[i] + AlignUp(w.params_bytes(size(i)), 64);
  const int64_t par_bytes = block[blocks];
  const int64_t in_addr = AlignUp(par_bytes, 64), in_bytes = int64_t{w.batch} * w.in_h * w.in_w * Cin;
  const int64_t out_addr = AlignUp(in_addr + in_bytes, 64), out_bytes = int64_t{w.batch} * OH * OW * C;
  p.dram_bytes = out_addr + out_bytes;
  p.regions = {{w.name + ".input", in_addr, in_bytes}, {w.name + ".output", out_addr, out_bytes}};
  if (w.params_bytes) p.regions.insert(p.regions.begin(), {w.name + ".params", 0, par_bytes});
  const int16_t in_region = w.params_bytes ? 1 : 0, out_region = in_region + 1;
  if (image) *image = {in_addr, in_bytes, out_addr, out_bytes};
  if (w.fill_params) {
    p.dram_init.assign(par_bytes, 0);
    for (int64_t i = 0; i < blocks; ++i) w.fill_params(i * step, size(i), p.dram_init.data() + block[i]);
  }
  p.cores_used = cores;
  p.semaphores = kNumSems;
  auto start_core = [&](CoreEmitter& e) { StartStream(e, kSems, nbuf); };
  auto emit_tile = [&](CoreEmitter& e, int64_t i, int s) {
    const GridTile g = GridTileAt(i, OH, tile_rows, C, tile_c);
    const int b = g.batch, oh0 = g.row0, c0 = g.c0, th = g.rows, tc = g.chans;
    const int rows = (th - 1) * w.stride_h + extent_h;
    const int64_t base = e.core * per_core;
    const int64_t sin = base + s * in_slot, sout = base + nbuf * in_slot + s * out_slot,
                  spar = base + nbuf * (in_slot + out_slot) + s * par_slot;
    const int64_t iy0 = int64_t{oh0} * w.stride_h - w.pad_top, ix0 = -w.pad_left;
    auto load = [&] {
      EmitBandLoad(e, t, in_addr + int64_t{b} * w.in_h * w.in_w * Cin, w.in_h, w.in_w, Cin, iy0, ix0, rows, wp,
                   c0 / mult, tc / mult, sin, w.pad, in_region);
      if (!w.params_bytes) return;
      Instr lp{.op = Opcode::kDmaLoad};
      lp.dram_addr = block[w.params_per_row ? oh0 / tile_rows : g.channel_tile];
      lp.region = 0;
      lp.sram_addr = spar;
      lp.row_bytes = lp.sram_row_bytes = static_cast<int32_t>(w.params_bytes(w.params_per_row ? th : tc));
      EmitDma(e, t, lp);
    };
    auto compute = [&] {
      Instr v{.op = Opcode::kVec, .vec = w.vec};
      v.src = sin;
      v.src_stride = tc / mult;
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
      if (mult > 1) v.imm[kDwMultiplierImm] = mult;
      if (w.dilation_h > 1 || w.dilation_w > 1) {  // a dense window keeps the zeros (programs as before)
        v.imm[kWindowDilationImm] = w.dilation_h;
        v.imm[kWindowDilationImm + 1] = w.dilation_w;
      }
      e.Add(QueueKind::kVector, v);
      if (!w.table_at) return;
      Instr lut{.op = Opcode::kVec, .vec = VecOp::kLut};
      lut.src = lut.dst = sout;
      lut.src_stride = lut.dst_stride = tc;
      lut.params = spar + w.table_at(tc);
      lut.rows = th * OW;
      lut.cols = tc;
      e.Add(QueueKind::kVector, lut);
    };
    auto store = [&] {
      EmitPixelStore(e, t, out_addr + ((int64_t{b} * OH + oh0) * OW) * C + c0, out_region, sout, th * OW, C, tc);
    };
    EmitStreamedTile(e, kSems, load, compute, store);
  };
  const std::vector<CoreEmitter> emitters = DealTiles(cores, tiles, nbuf, start_core, emit_tile);
  AssembleTask(p, emitters);
  return p;
}

}  // namespace

StatusOr<Program> LowerPool(const PoolLayer& l, const Target& t, int tile_rows, int tile_c, bool double_buffer,
                            LayerImage* image) {
  WindowOp w{.name = l.name, .what = "pool", .batch = l.batch, .in_h = l.in_h, .in_w = l.in_w,
             .channels = l.channels, .kernel_h = l.kernel_h, .kernel_w = l.kernel_w, .stride_h = l.stride_h,
             .stride_w = l.stride_w, .pad_top = l.pad_top, .pad_left = l.pad_left, .out_h = l.out_h(),
             .out_w = l.out_w(), .pad = static_cast<int8_t>(l.max ? (l.min ? 127 : -128) : l.x_zero_point),
             .vec = l.max ? VecOp::kMaxPool : VecOp::kAvgPool};
  const int32_t imm[] = {l.x_zero_point, l.y_zero_point, l.mult.multiplier, l.mult.shift, l.act_min, l.act_max};
  std::copy(std::begin(imm), std::end(imm), w.imm);
  if (l.max && l.min) w.imm[kPoolMinImm] = 1;
  if (!l.pixel_mult.empty()) {
    // A multiplier per output pixel: each row tile's block holds its rows' (isa.h kAvgPool).
    const int OW = l.out_w();
    if (l.max || static_cast<int64_t>(l.pixel_mult.size()) != int64_t{l.out_h()} * OW)
      return InvalidArgument("pool layer '{}': {} per-pixel multipliers for a {}x{} {} pool", l.name,
                             l.pixel_mult.size(), l.out_h(), OW, l.max ? "max" : "average");
    w.imm[kPoolPixelMultImm] = 1;
    w.params_per_row = true;
    w.params_bytes = [OW](int64_t rows) { return PoolPixelParamsBytes(rows * OW); };
    w.fill_params = [&l, OW](int64_t r0, int64_t rows, uint8_t* b) {
      auto* ints = reinterpret_cast<int32_t*>(b);
      const int64_t n = rows * OW;
      for (int64_t q = 0; q < n; ++q) {
        ints[q] = l.pixel_mult[r0 * OW + q].multiplier;
        ints[n + q] = l.pixel_mult[r0 * OW + q].shift;
      }
    };
  }
  ASSIGN_OR_RETURN(Program p, LowerWindowOp(w, t, tile_rows, tile_c, double_buffer, image));
  p.task_names = {fmt::format("{} ({} {}x{})", l.name, l.max ? "maxpool" : "avgpool", l.kernel_h, l.kernel_w)};
  return p;
}

StatusOr<Program> LowerDepthwise(const DepthwiseLayer& l, const Target& t, int tile_rows, int tile_c,
                                 bool double_buffer) {
  const int C = l.out_channels();
  const int64_t window = int64_t{l.kernel_h} * l.kernel_w;
  if (l.multiplier < 1 || l.channels < 1)
    return InvalidArgument("depthwise layer '{}': {} channels, multiplier {}", l.name, l.channels, l.multiplier);
  if (!l.weights.empty() && (static_cast<int64_t>(l.weights.size()) != window * C ||
                             static_cast<int>(l.bias.size()) != C ||
                             (l.requant.size() != 1 && static_cast<int>(l.requant.size()) != C)))
    return InvalidArgument("depthwise layer '{}': weights, bias or requantization do not match {} channels", l.name, C);
  WindowOp w{.name = l.name, .what = "depthwise", .batch = l.batch, .in_h = l.in_h, .in_w = l.in_w,
             .channels = C, .kernel_h = l.kernel_h, .kernel_w = l.kernel_w, .stride_h = l.stride_h,
             .stride_w = l.stride_w, .dilation_h = l.dilation_h, .dilation_w = l.dilation_w,
             .multiplier = l.multiplier, .pad_top = l.pad_top, .pad_left = l.pad_left, .out_h = l.out_h(),
             .out_w = l.out_w(), .pad = static_cast<int8_t>(l.x_zero_point), .vec = VecOp::kDwConv};
  const int32_t imm[] = {l.x_zero_point, l.y_zero_point, l.act_min, l.act_max};
  std::copy(std::begin(imm), std::end(imm), w.imm);
  // A channel tile's block: weights [window][tc], then int32 bias, multiplier, shift per
  // channel, then the lookup epilogue's table (DepthwiseLayer::output_table).
  const int64_t table_bytes = l.output_table.empty() ? 0 : 256;
  if (table_bytes && l.output_table.size() != 256)
    return InvalidArgument("depthwise layer '{}': a lookup epilogue of {} values, expected 256", l.name,
                           l.output_table.size());
  w.params_bytes = [window, table_bytes](int64_t tc) { return DwParamsOffset(window, tc) + 12 * tc + table_bytes; };
  if (table_bytes) w.table_at = [window](int64_t tc) { return DwParamsOffset(window, tc) + 12 * tc; };
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
      if (!l.output_table.empty())
        std::copy(l.output_table.begin(), l.output_table.end(), b + DwParamsOffset(window, tc) + 12 * tc);
    };
  }
  ASSIGN_OR_RETURN(Program p, LowerWindowOp(w, t, tile_rows, tile_c, double_buffer, nullptr));
  p.task_names = {l.dilation_h == 1 && l.dilation_w == 1
                      ? fmt::format("{} (depthwise {}x{}, {} ch)", l.name, l.kernel_h, l.kernel_w, C)
                      : fmt::format("{} (depthwise {}x{} dilation {}x{}, {} ch)", l.name, l.kernel_h, l.kernel_w,
                                    l.dilation_h, l.dilation_w, C)};
  return p;
}

}  // namespace edgec::npu
