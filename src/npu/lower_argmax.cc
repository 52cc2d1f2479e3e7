// ArgMax / ArgMin over the innermost dim on the vector cores (see lower.h ArgMaxLayer).
#include <algorithm>

#include <fmt/format.h>

#include "npu/emit.h"
#include "npu/lower.h"
#include "support/status.h"

namespace edgec::npu {

StatusOr<Program> LowerArgMax(const ArgMaxLayer& l, const Target& t, int64_t chunk, bool double_buffer) {
  if (l.rows < 1 || l.cols < 1 || chunk < 1) return InvalidArgument("argmax layer '{}': empty", l.name);
  chunk = std::min(chunk, l.rows);
  if (chunk * l.cols > (int64_t{1} << 30)) return InvalidArgument("argmax layer '{}': chunk too large", l.name);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const int64_t in_slot = AlignUp(chunk * l.cols, al), out_slot = AlignUp(8 * chunk, al);
  const int64_t tiles = CeilDiv(l.rows, chunk);
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  const int64_t per_core = nbuf * (in_slot + out_slot);
  if (per_core * cores > t.shared_sram.bytes)
    return InvalidArgument("argmax layer '{}': {} rows of {} bytes do not fit SRAM", l.name, chunk, l.cols);
  Program p;
  const int64_t x_bytes = l.rows * l.cols, y_addr = AlignUp(x_bytes, 64);
  p.dram_bytes = y_addr + 8 * l.rows;
  p.regions = {{l.name + ".input", 0, x_bytes}, {l.name + ".output", y_addr, 8 * l.rows}};
  const int16_t x_region = 0, y_region = 1;
  p.cores_used = cores;
  const StreamSems sems{0, 1, 2, 3};
  p.semaphores = 4;
  auto start = [&](CoreEmitter& e) { StartStream(e, sems, nbuf); };
  auto tile = [&](CoreEmitter& e, int64_t i, int slot) {
    const int64_t first = i * chunk, n = std::min(chunk, l.rows - first);
    const int64_t base = int64_t{e.core} * per_core;
    const int64_t in_at = base + slot * in_slot, out_at = base + nbuf * in_slot + slot * out_slot;
    auto load = [&] {
      e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, first * l.cols, in_at, n * l.cols, x_region));
    };
    auto compute = [&] {
      Instr v{.op = Opcode::kVec, .vec = VecOp::kArgMax};
      v.src = in_at;
      v.dst = out_at;
      v.rows = static_cast<int32_t>(n);
      v.cols = static_cast<int32_t>(l.cols);
      v.src_stride = static_cast<int32_t>(l.cols);
      v.dst_stride = 8;
      v.imm[0] = l.min ? 1 : 0;
      v.imm[1] = l.last ? 1 : 0;
      e.Add(QueueKind::kVector, v);
    };
    auto store = [&] {
      e.Add(QueueKind::kStore, ContiguousDma(Opcode::kDmaStore, y_addr + 8 * first, out_at, 8 * n, y_region));
    };
    EmitStreamedTile(e, sems, load, compute, store);
  };
  AssembleTask(p, DealTiles(cores, tiles, nbuf, start, tile));
  p.task_names = {fmt::format("{} ({} of {} rows of {})", l.name, l.min ? "argmin" : "argmax", l.rows, l.cols)};
  return p;
}

}  // namespace edgec::npu
