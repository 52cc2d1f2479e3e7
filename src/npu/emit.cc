#include "npu/emit.h"

#include <algorithm>

namespace edgec::npu {

void CoreEmitter::Add(QueueKind queue, Instr in) {
  in.core = static_cast<uint8_t>(core);
  in.queue = queue;
  q[static_cast<int>(queue)].push_back(in);
}

void CoreEmitter::SignalCores(QueueKind queue, int32_t sem, int first, int count) {
  if (count == 1 && first == core) return Signal(queue, sem);
  Add(queue, Instr{.op = Opcode::kSignal, .sem = sem, .to_core = first, .count = count});
}

void EmitDma(CoreEmitter& e, const Target& t, Instr in) {
  const int strided = t.dma.max_dims - 1;
  const QueueKind queue = in.op == Opcode::kDmaLoad ? QueueKind::kLoad : QueueKind::kStore;
  if (in.ndims <= strided) {
    e.Add(queue, in);
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
    e.Add(queue, one);
  }
}

std::pair<int32_t, int32_t> ValidRange(int64_t base, int64_t stride, int count, int64_t limit) {
  int32_t lo = 0, hi = count;
  while (lo < count && base + lo * stride < 0) ++lo;
  while (hi > lo && base + (hi - 1) * stride >= limit) --hi;
  return {lo, std::max(lo, hi)};
}

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

Instr ContiguousDma(Opcode op, int64_t dram, int64_t sram, int64_t bytes, int16_t region) {
  Instr in{.op = op};
  in.dram_addr = dram;
  in.region = region;
  in.sram_addr = sram;
  in.row_bytes = in.sram_row_bytes = static_cast<int32_t>(bytes);
  return in;
}

void EmitPixelStore(CoreEmitter& e, const Target& t, int64_t dram, int16_t region, int64_t sram, int pixels, int C,
                    int tc) {
  Instr st{.op = Opcode::kDmaStore};
  st.dram_addr = dram;
  st.region = region;
  st.sram_addr = sram;
  st.row_bytes = st.sram_row_bytes = tc;
  st.ndims = 1;
  st.dims[0] = {pixels, C, tc, 0, pixels};
  if (tc == C) {  // the tile's pixels are contiguous in DRAM: one row
    st.row_bytes = st.sram_row_bytes = pixels * C;
    st.ndims = 0;
  }
  EmitDma(e, t, st);
}

void StartStream(CoreEmitter& e, const StreamSems& s, int nbuf) {
  for (int i = 0; i < nbuf; ++i) {
    e.Signal(QueueKind::kVector, s.in_free);
    e.Signal(QueueKind::kStore, s.out_free);
  }
}

void AssembleTask(Program& p, const std::vector<CoreEmitter>& cores) {
  size_t count = p.instrs.size() + 2;
  for (const CoreEmitter& e : cores)
    for (const auto& q : e.q) count += q.size();
  p.instrs.reserve(count);
  p.instrs.push_back(Instr{.op = Opcode::kTaskBegin, .sem = 0});
  for (const CoreEmitter& e : cores)
    for (const auto& q : e.q) p.instrs.insert(p.instrs.end(), q.begin(), q.end());
  p.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
}

}  // namespace edgec::npu
