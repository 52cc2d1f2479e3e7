#include "npu/lower_norm.h"

#include <algorithm>
#include <cstring>

#include "npu/emit.h"

namespace edgec::npu {
namespace {

// Semaphores of each core: input slots (load -> vector), output slots (vector -> store).
constexpr StreamSems kSems{.in_free = 0, .in_full = 1, .out_free = 2, .out_full = 3};
constexpr int32_t kNumSems = 4;

template <typename T>
void Append(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

int64_t ChannelsPerGroup(const NormLayer& l) { return l.per_row ? l.cols : l.cols / l.groups; }

// The norm's or softmax's own parameters (without a lookup epilogue's table).
std::vector<uint8_t> NormParamBlock(const NormLayer& l) {
  if (l.wide) return WideNormParamBytes(l);
  std::vector<uint8_t> out;
  if (l.op == VecOp::kSoftmax) {
    for (int32_t v : l.softmax.exp_table) Append(out, v);
    return out;
  }
  const int64_t per = ChannelsPerGroup(l), groups = l.per_row ? 1 : l.groups;
  const bool data = static_cast<int64_t>(l.norm.mult.size()) == l.cols;
  for (int64_t g = 0; g < groups; ++g) {
    const size_t start = out.size();
    Append<int64_t>(out, l.norm.eps_term);
    for (const std::vector<int32_t>* v : {&l.norm.mult, &l.norm.shift, &l.norm.bias})
      for (int64_t c = 0; c < per; ++c) Append<int32_t>(out, data ? (*v)[g * per + c] : 0);
    out.resize(start + NormParamsBytes(per), 0);
  }
  return out;
}

}  // namespace

std::vector<uint8_t> NormParamBytes(const NormLayer& l) {
  std::vector<uint8_t> out = NormParamBlock(l);
  out.insert(out.end(), l.output_table.begin(), l.output_table.end());
  return out;
}

StatusOr<Program> LowerNorm(const NormLayer& l, const Target& t, int64_t chunk, bool double_buffer) {
  if (l.op != VecOp::kNorm && l.op != VecOp::kSoftmax)
    return InvalidArgument("norm layer '{}': op {} is not a normalization", l.name, VecOpName(l.op));
  if (l.wide && t.vector_cores.VecRate("i16") <= 0)
    return InvalidArgument("norm layer '{}': int16 values, but the vector cores of {} take no i16", l.name, t.name);
  if (l.items < 1 || l.item_bytes() < 1 || chunk < 1) return InvalidArgument("norm layer '{}': empty", l.name);
  if (!l.per_row && (l.groups < 1 || l.cols % l.groups != 0))
    return InvalidArgument("norm layer '{}': {} groups do not divide {} channels", l.name, l.groups, l.cols);
  if (!l.output_table.empty() && (l.output_table.size() != 256 || l.wide || l.op != VecOp::kNorm))
    return InvalidArgument("norm layer '{}': a lookup epilogue needs an 8-bit norm and 256 values", l.name);
  chunk = std::min(chunk, l.items);
  const int64_t tile = chunk * l.item_bytes();
  if (tile > INT32_MAX) return InvalidArgument("norm layer '{}': tile of {} bytes", l.name, tile);
  const std::vector<uint8_t> params = NormParamBytes(l);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const int64_t slot = AlignUp(tile, al) * 2;  // input tile, output tile
  const int64_t once = AlignUp(static_cast<int64_t>(params.size()), al);
  const int64_t tiles = CeilDiv(l.items, chunk);
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  const int64_t per_core = slot * nbuf + once;
  if (per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("norm layer '{}': tiles of {} items ({} bytes) do not fit SRAM", l.name, chunk, tile);
  Program p;
  p.dram_init = params;
  const int64_t x_addr = AlignUp(static_cast<int64_t>(params.size()), 64);
  const int64_t y_addr = x_addr + AlignUp(l.bytes(), 64);
  p.dram_bytes = y_addr + l.bytes();
  // Region indices the DMAs carry (Instr::region), in the order of p.regions.
  constexpr int16_t kInputRegion = 0, kParamsRegion = 1, kOutputRegion = 2;
  p.regions = {{l.name + ".input", x_addr, l.bytes()},
               {l.name + ".params", 0, static_cast<int64_t>(params.size())},
               {l.name + ".output", y_addr, l.bytes()}};
  p.cores_used = cores;
  p.semaphores = kNumSems;
  const int64_t per = ChannelsPerGroup(l), eb = l.elem_bytes();
  const int64_t group_params = l.wide ? WideNormParamsBytes(per) : NormParamsBytes(per);
  auto start_core = [&](CoreEmitter& e) {
    StartStream(e, kSems, nbuf);
    const int64_t base = e.core * per_core, params_addr = base + slot * nbuf;
    // Ahead of the first tile: its "full" token covers it.
    e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, 0, params_addr, static_cast<int64_t>(params.size()), kParamsRegion));
  };
  auto emit_tile = [&](CoreEmitter& e, int64_t i, int s) {
    const int64_t base = e.core * per_core, params_addr = base + slot * nbuf;
    const int64_t first = i * chunk, n = std::min(chunk, l.items - first), bytes = n * l.item_bytes();
    const int64_t sx = base + s * slot, sy = sx + AlignUp(tile, al);
    auto load = [&] {
      e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, x_addr + first * l.item_bytes(), sx, bytes, kInputRegion));
    };
    // The lookup epilogue: the whole output tile in place, its table after the parameters.
    auto lookup = [&] {
      if (l.output_table.empty()) return;
      Instr lut{.op = Opcode::kVec, .vec = VecOp::kLut};
      lut.src = lut.dst = sy;
      lut.rows = static_cast<int32_t>(n * l.rows_per_item);
      lut.cols = static_cast<int32_t>(l.cols);
      lut.src_stride = lut.dst_stride = static_cast<int32_t>(l.cols);
      lut.params = params_addr + static_cast<int64_t>(params.size()) - 256;
      e.Add(QueueKind::kVector, lut);
    };
    auto compute = [&] {
      Instr v{.op = Opcode::kVec, .vec = l.op};
      if (l.wide) {
        SetWideImms(l, v);
      } else if (l.op == VecOp::kSoftmax) {
        v.imm[0] = l.softmax.inv_y.multiplier;
        v.imm[1] = l.softmax.inv_y.shift;
        v.imm[2] = l.softmax.y_zero_point;
        v.imm[3] = l.softmax.qmin;
        v.imm[4] = l.softmax.qmax;
      } else {
        v.imm[0] = l.norm.x_zero_point;
        v.imm[1] = l.norm.y_zero_point;
        v.imm[2] = l.norm.qmin;
        v.imm[3] = l.norm.qmax;
        v.imm[4] = l.per_row ? 1 : 0;
      }
      v.params = params_addr;
      if (l.per_row || l.op == VecOp::kSoftmax) {  // one VEC: the tile's rows
        v.src = sx;
        v.dst = sy;
        v.rows = static_cast<int32_t>(n * l.rows_per_item);
        v.cols = static_cast<int32_t>(l.cols);
        v.src_stride = v.dst_stride = static_cast<int32_t>(l.cols * eb);
        e.Add(QueueKind::kVector, v);
        lookup();
        return;
      }
      // One VEC per item and group: a band of `per` channels over the item's pixels.
      for (int64_t it = 0; it < n; ++it) {
        for (int64_t g = 0; g < l.groups; ++g) {
          Instr vg = v;
          vg.src = sx + it * l.item_bytes() + g * per * eb;
          vg.dst = sy + it * l.item_bytes() + g * per * eb;
          vg.rows = static_cast<int32_t>(l.rows_per_item);
          vg.cols = static_cast<int32_t>(per);
          vg.src_stride = vg.dst_stride = static_cast<int32_t>(l.cols * eb);
          vg.params = params_addr + g * group_params;
          e.Add(QueueKind::kVector, vg);
        }
      }
      lookup();
    };
    auto store = [&] {
      e.Add(QueueKind::kStore, ContiguousDma(Opcode::kDmaStore, y_addr + first * l.item_bytes(), sy, bytes, kOutputRegion));
    };
    EmitStreamedTile(e, kSems, load, compute, store);
  };
  const std::vector<CoreEmitter> emitters = DealTiles(cores, tiles, nbuf, start_core, emit_tile);
  AssembleTask(p, emitters);
  p.task_names = {fmt::format("{} ({} {} x {}x{}{}{})", l.name, VecOpName(l.op), l.items, l.rows_per_item, l.cols,
                              l.per_row ? "" : fmt::format(", {} groups", l.groups), l.wide ? ", int16" : "")};
  return p;
}

}  // namespace edgec::npu
