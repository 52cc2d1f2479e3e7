// Elementwise int8 layers on the vector cores (see lower.h).
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "npu/emit.h"
#include "npu/lower.h"

namespace edgec::npu {
namespace {

// Semaphores of each core: input slots (load -> vector), output slots (vector -> store).
constexpr StreamSems kSems{.in_free = 0, .in_full = 2, .out_free = 6, .out_full = 7};
constexpr int32_t kNumSems = 13;
// A wide lookup's one shared table is loaded (core 0's load queue -> every vector queue).
constexpr int32_t kTableSem = 12;

}  // namespace

EltwiseLayer EltwiseLayer::Add(std::string name, int64_t elements, const quant::QuantizedAddParams& p) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kAdd, .elements = elements,
                 .imm = {p.a_zero_point, p.b_zero_point, p.y_zero_point, p.a.multiplier, p.a.shift, p.b.multiplier,
                         p.b.shift, p.y.multiplier, p.y.shift, p.qmin, p.qmax}};
  l.imm[kAddShiftImm] = p.left_shift;
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

EltwiseLayer EltwiseLayer::ChannelLookup(std::string name, int64_t elements, int64_t channels,
                                         std::vector<int8_t> table) {
  EltwiseLayer l = Lookup(std::move(name), elements, std::move(table));
  l.broadcast = Broadcast::kRow;
  l.cols = channels;
  return l;
}

EltwiseLayer EltwiseLayer::Quantize(std::string name, int64_t elements, float scale, int32_t zero_point, int32_t lo,
                                    int32_t hi) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kQuantize, .elements = elements};
  std::memcpy(&l.imm[0], &scale, sizeof scale);
  l.imm[1] = zero_point;
  l.imm[2] = lo;
  l.imm[3] = hi;
  l.a_bytes = 4;
  return l;
}

EltwiseLayer EltwiseLayer::Dequantize(std::string name, int64_t elements, float scale, int32_t zero_point) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kDequantize, .elements = elements};
  std::memcpy(&l.imm[0], &scale, sizeof scale);
  l.imm[1] = zero_point;
  l.y_bytes = 4;
  return l;
}

EltwiseLayer EltwiseLayer::Rescale(std::string name, int64_t elements, const quant::RescaleParams& p, int64_t x_bytes,
                                   int64_t y_bytes) {
  EltwiseLayer l{.name = std::move(name), .op = VecOp::kRescale, .elements = elements,
                 .imm = {p.x_zero_point, p.y_zero_point, p.m.multiplier, p.m.shift, p.qmin, p.qmax,
                         static_cast<int32_t>(x_bytes), static_cast<int32_t>(y_bytes)}};
  l.a_bytes = x_bytes;
  l.y_bytes = y_bytes;
  return l;
}

StatusOr<Program> LowerEltwise(const EltwiseLayer& l, const Target& t, int64_t chunk, bool double_buffer,
                               int64_t* a_addr, int64_t* b_addr, int64_t* y_addr) {
  if (l.op != VecOp::kAdd && l.op != VecOp::kMul && l.op != VecOp::kRelu && l.op != VecOp::kLut &&
      l.op != VecOp::kQuantize && l.op != VecOp::kDequantize && l.op != VecOp::kRescale)
    return InvalidArgument("eltwise layer '{}': op {} is not elementwise", l.name, VecOpName(l.op));
  if (chunk < 1 || l.elements < 1) return InvalidArgument("eltwise layer '{}': empty", l.name);
  if ((l.op == VecOp::kQuantize || l.op == VecOp::kDequantize) && t.vector_cores.VecRate("f32") <= 0)
    return InvalidArgument("eltwise layer '{}': {} needs f32 on the vector cores, target {} lists none", l.name,
                           VecOpName(l.op), t.name);
  const bool wide = l.a_bytes == 2 || l.y_bytes == 2 || (l.binary() && l.b_bytes == 2);
  if (wide && t.vector_cores.VecRate("i16") <= 0)
    return InvalidArgument("eltwise layer '{}': int16 values, but the vector cores of {} take no i16", l.name, t.name);
  // An int16 lookup (a = 2 bytes, y = 1) reads one table of 65536 entries, shared by the cores.
  const bool wide_lut = l.op == VecOp::kLut && l.a_bytes == 2;
  // A per-channel lookup's tables (cols x 256 bytes) are loaded once, shared as the wide table is.
  const bool channel_lut = l.channel_lookup();
  if (channel_lut && wide_lut) return InvalidArgument("eltwise layer '{}': a per-channel lookup of int16 values", l.name);
  const bool shared_table = wide_lut || channel_lut;
  const bool wide_dq = l.op == VecOp::kDequantize && l.a_bytes == 2;  // an int16 model output
  if (wide && l.op != VecOp::kRescale && l.op != VecOp::kAdd && l.op != VecOp::kMul && !(wide_lut && l.y_bytes == 1) &&
      !wide_dq)
    return InvalidArgument("eltwise layer '{}': int16 values on a {} (only add, mul, rescale, lookup)", l.name,
                           VecOpName(l.op));
  if (l.op == VecOp::kMul && l.a_bytes == 2 && l.b_bytes == 2)
    return InvalidArgument("eltwise layer '{}': a product of two int16 operands", l.name);
  if (l.binary() && l.b_bytes == 2 && !l.b_const.empty())
    return InvalidArgument("eltwise layer '{}': a constant int16 b", l.name);
  using B = EltwiseLayer::Broadcast;
  const bool binary = l.binary();
  const B bc = binary || channel_lut ? l.broadcast : B::kFull;
  if (bc == B::kRow && (l.cols < 1 || l.elements % l.cols || chunk % l.cols))
    return InvalidArgument("eltwise layer '{}': {} elements, chunk {} are not whole rows of {}", l.name, l.elements,
                           chunk, l.cols);
  if (l.op == VecOp::kLut && static_cast<int64_t>(l.table.size()) != (wide_lut ? 65536 : channel_lut ? 256 * l.cols : 256))
    return InvalidArgument("eltwise layer '{}': lookup table of {} values", l.name, l.table.size());
  if (!l.b_const.empty() && static_cast<int64_t>(l.b_const.size()) != l.b_elements())
    return InvalidArgument("eltwise layer '{}': constant b of {} values, expected {}", l.name, l.b_const.size(),
                           l.b_elements());
  const bool planar = l.planes > 0;
  if (planar && (binary || (l.op != VecOp::kQuantize && l.op != VecOp::kDequantize) || l.pixels < 1 ||
                 l.elements % (l.planes * l.pixels)))
    return InvalidArgument("eltwise layer '{}': planar f32 needs a float boundary of whole images of {} x {}", l.name,
                           l.planes, l.pixels);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const bool b_streamed = binary && bc == B::kFull;
  const int64_t ea = l.a_bytes, ey = l.y_bytes, eb = binary ? l.b_bytes : 1;  // element bytes of a, y and b
  const int64_t slot = AlignUp(chunk * ea, al) + (b_streamed ? AlignUp(chunk * eb, al) : 0) + AlignUp(chunk * ey, al);
  // Loaded once per core: a broadcast b, or the table.
  const int64_t once = binary && !b_streamed ? AlignUp(l.b_elements() * eb, al)
                     : l.op == VecOp::kLut && !shared_table ? AlignUp(256, al) : 0;
  // The wide or per-channel table, before the cores' areas.
  const int64_t shared = shared_table ? AlignUp(static_cast<int64_t>(l.table.size()), al) : 0;
  // Planar: a tile is `px` pixels of one image (px * C elements <= chunk).
  const int64_t px = planar ? std::max<int64_t>(1, std::min(l.pixels, chunk / l.planes)) : 0;
  if (planar && px * l.planes > chunk)
    return InvalidArgument("eltwise layer '{}': chunk {} is less than one pixel of {} channels", l.name, chunk, l.planes);
  const int64_t tiles_per_image = planar ? CeilDiv(l.pixels, px) : 0;
  const int64_t chunks = planar ? l.elements / (l.planes * l.pixels) * tiles_per_image : CeilDiv(l.elements, chunk);
  const int cores = std::min<int64_t>(t.ai_cores.count, chunks);
  const int64_t per_core = slot * nbuf + once;
  if (shared + per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("eltwise layer '{}': chunk {} does not fit SRAM", l.name, chunk);
  Program p;
  // The constant part first (dram_init covers it): the table or a constant b.
  const std::vector<int8_t>& konst = l.op == VecOp::kLut ? l.table : l.b_const;
  const int64_t const_bytes = static_cast<int64_t>(konst.size());
  p.dram_init.assign(konst.begin(), konst.end());
  const int64_t b_bytes = binary ? l.b_elements() * eb : 0;
  *a_addr = AlignUp(const_bytes, 64);
  *b_addr = binary && l.b_const.empty() ? *a_addr + AlignUp(l.elements * ea, 64) : 0;
  *y_addr = *a_addr + AlignUp(l.elements * ea, 64) + (binary && l.b_const.empty() ? AlignUp(b_bytes, 64) : 0);
  p.dram_bytes = *y_addr + l.elements * ey;
  p.regions = {{l.name + l.a_region, *a_addr, l.elements * ea}};
  if (binary && l.b_const.empty()) p.regions.push_back({l.name + l.b_region, *b_addr, b_bytes});
  if (const_bytes) p.regions.push_back({l.name + (l.op == VecOp::kLut ? ".table" : ".b"), 0, const_bytes});
  p.regions.push_back({l.name + ".output", *y_addr, l.elements * ey});
  const int16_t a_region = 0, b_region = 1, y_region = static_cast<int16_t>(p.regions.size() - 1);
  const int16_t const_region = const_bytes ? y_region - 1 : -1;
  p.cores_used = cores;
  p.semaphores = kNumSems;
  auto start_core = [&](CoreEmitter& e) {
    StartStream(e, kSems, nbuf);
    const int64_t base = shared + e.core * per_core, once_addr = base + slot * nbuf;
    if (shared_table) {  // core 0 loads the table; every core's vector queue waits for it once
      if (e.core == 0) {
        e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, 0, 0, static_cast<int64_t>(l.table.size()), const_region));
        e.SignalCores(QueueKind::kLoad, kTableSem, 0, cores);
      }
      e.Wait(QueueKind::kVector, kTableSem);
    }
    if (once) {  // ahead of the first chunk's loads, so the chunk's "full" token covers it
      Instr in{.op = Opcode::kDmaLoad};
      in.dram_addr = l.op == VecOp::kLut || !l.b_const.empty() ? 0 : *b_addr;
      in.region = l.op == VecOp::kLut || !l.b_const.empty() ? const_region : b_region;
      in.sram_addr = once_addr;
      in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(l.op == VecOp::kLut ? 256 : b_bytes);
      e.Add(QueueKind::kLoad, in);
    }
  };
  // A planar tile: C rows of n f32 values (one per channel) <-> n pixels x C i8 values (or
  // int16 ones, 2 bytes each, on the output side: an int16 model output).
  auto emit_planar_tile = [&](CoreEmitter& e, int64_t i, int s) {
    const int64_t C = l.planes, HW = l.pixels;
    const int64_t img = i / tiles_per_image, p0 = i % tiles_per_image * px, n = std::min(px, HW - p0);
    const int64_t sa = e.core * per_core + s * slot, sy = sa + AlignUp(chunk * ea, al);
    const bool q = l.op == VecOp::kQuantize;
    const int64_t e8 = q ? ey : ea;  // bytes of an element of the integer side
    const int64_t f32_at = (img * C * HW + p0) * 4, i8_at = (img * HW + p0) * C * e8;
    auto planes_dma = [&](Opcode op, int64_t dram, int64_t sram, int16_t region) {
      Instr in = ContiguousDma(op, dram, sram, n * 4, region);
      if (C > 1) {
        in.ndims = 1;
        in.dims[0] = DmaDim{.count = static_cast<int32_t>(C), .dram_stride = HW * 4, .sram_stride = n * 4,
                            .valid_lo = 0, .valid_hi = static_cast<int32_t>(C)};
      }
      return in;
    };
    auto loads = [&] {
      e.Add(QueueKind::kLoad, q ? planes_dma(Opcode::kDmaLoad, *a_addr + f32_at, sa, a_region)
                                : ContiguousDma(Opcode::kDmaLoad, *a_addr + i8_at, sa, n * C * e8, a_region));
    };
    auto compute = [&] {
      Instr v{.op = Opcode::kVec, .vec = l.op};
      std::copy(std::begin(l.imm), std::end(l.imm), v.imm);
      v.src = sa;
      v.dst = sy;
      v.rows = static_cast<int32_t>(C);
      v.cols = static_cast<int32_t>(n);
      v.src_stride = static_cast<int32_t>(q ? n * 4 : e8);
      v.dst_stride = static_cast<int32_t>(q ? 1 : n * 4);
      v.imm[kPitchImm] = static_cast<int32_t>(C * e8);
      if (wide_dq) v.imm[kDequantBytesImm] = 2;
      e.Add(QueueKind::kVector, v);
    };
    auto store = [&] {
      e.Add(QueueKind::kStore, q ? ContiguousDma(Opcode::kDmaStore, *y_addr + i8_at, sy, n * C * e8, y_region)
                                 : planes_dma(Opcode::kDmaStore, *y_addr + f32_at, sy, y_region));
    };
    EmitStreamedTile(e, kSems, loads, compute, store);
  };
  auto emit_tile = [&](CoreEmitter& e, int64_t i, int s) {
    if (planar) return emit_planar_tile(e, i, s);
    const int64_t base = shared + e.core * per_core, once_addr = base + slot * nbuf;
    const int64_t off = i * chunk, n = std::min(chunk, l.elements - off);
    const int64_t sa = base + s * slot, sb = sa + AlignUp(chunk * ea, al), sy = sb + (b_streamed ? AlignUp(chunk * eb, al) : 0);
    auto load = [&](int64_t dram, int64_t sram, int16_t region, int64_t elem) {
      e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, dram + off * elem, sram, n * elem, region));
    };
    auto loads = [&] {
      load(*a_addr, sa, a_region, ea);
      if (b_streamed) load(l.b_const.empty() ? *b_addr : 0, sb, l.b_const.empty() ? b_region : const_region, eb);
    };
    auto compute = [&] {
      Instr v{.op = Opcode::kVec, .vec = l.op};
      v.src = sa;
      v.src2 = b_streamed ? sb : once_addr;
      v.dst = sy;
      v.rows = 1;
      v.cols = static_cast<int32_t>(n);
      v.src_stride = static_cast<int32_t>(n * ea);
      v.src2_stride = static_cast<int32_t>(n * eb);
      v.dst_stride = static_cast<int32_t>(n * ey);
      std::copy(std::begin(l.imm), std::end(l.imm), v.imm);
      if (binary && wide) {
        v.imm[kAddBytesImm] = static_cast<int32_t>(ea);
        v.imm[kAddBytesImm + 1] = static_cast<int32_t>(eb);
        v.imm[kAddBytesImm + 2] = static_cast<int32_t>(ey);
      }
      if (bc == B::kRow) {
        v.rows = static_cast<int32_t>(n / l.cols);
        v.cols = static_cast<int32_t>(l.cols);
        v.src_stride = static_cast<int32_t>(v.cols * ea);
        v.dst_stride = static_cast<int32_t>(v.cols * ey);
        v.src2_stride = 0;
      } else if (bc == B::kScalar) {
        v.imm[kBroadcastImm] = 1;
      }
      if (l.op == VecOp::kLut) v.params = shared_table ? 0 : once_addr;
      if (channel_lut) v.imm[kLutPerColumnImm] = 1;
      if (wide_lut) v.imm[kLutBytesImm] = 2;
      if (wide_dq) v.imm[kDequantBytesImm] = 2;
      e.Add(QueueKind::kVector, v);
    };
    auto store = [&] {
      e.Add(QueueKind::kStore, ContiguousDma(Opcode::kDmaStore, *y_addr + off * ey, sy, n * ey, y_region));
    };
    EmitStreamedTile(e, kSems, loads, compute, store);
  };
  const std::vector<CoreEmitter> emitters = DealTiles(cores, chunks, nbuf, start_core, emit_tile);
  AssembleTask(p, emitters);
  const char* how = bc == B::kRow ? " per row" : bc == B::kScalar ? " by a scalar" : planar ? " planar" : "";
  p.task_names = {fmt::format("{} ({}{} x {})", l.name, VecOpName(l.op), how, l.elements)};
  return p;
}

}  // namespace edgec::npu
