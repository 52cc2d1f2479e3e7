// Rows of a constant table selected by an index list computed at run time (an embedding's
// token ids), as gather DMAs (see lower.h GatherLayer).
#include <algorithm>

#include <fmt/format.h>

#include "npu/emit.h"
#include "npu/lower.h"
#include "support/status.h"

namespace edgec::npu {

StatusOr<Program> LowerGather(const GatherLayer& l, const Target& t, int64_t chunk, bool double_buffer) {
  if (l.rows < 1 || l.row_bytes < 1 || l.count < 1 || chunk < 1) return InvalidArgument("gather layer '{}': empty", l.name);
  if (static_cast<int64_t>(l.table.size()) != l.rows * l.row_bytes)
    return InvalidArgument("gather layer '{}': table of {} bytes, expected {} x {}", l.name, l.table.size(), l.rows,
                           l.row_bytes);
  const int nbuf = double_buffer ? 2 : 1;
  const int64_t al = t.shared_sram.alignment;
  const int64_t idx_bytes = AlignUp(8 * chunk, al), slot = idx_bytes + AlignUp(chunk * l.row_bytes, al);
  const int64_t tiles = CeilDiv(l.count, chunk);
  const int cores = static_cast<int>(std::min<int64_t>(t.ai_cores.count, tiles));
  if (slot * nbuf * cores > t.shared_sram.bytes)
    return InvalidArgument("gather layer '{}': chunk {} does not fit SRAM", l.name, chunk);
  Program p;
  p.dram_init.assign(l.table.begin(), l.table.end());
  const int64_t table_bytes = l.rows * l.row_bytes;
  const int64_t idx_addr = AlignUp(table_bytes, 64), y_addr = idx_addr + AlignUp(8 * l.count, 64);
  p.dram_bytes = y_addr + l.count * l.row_bytes;
  p.regions = {{l.name + ".table", 0, table_bytes}, {l.name + ".input", idx_addr, 8 * l.count},
               {l.name + ".output", y_addr, l.count * l.row_bytes}};
  const int16_t table_region = 0, idx_region = 1, y_region = 2;
  p.cores_used = cores;
  enum : int32_t { kFree = 0, kFull = 1 };
  p.semaphores = 2;
  std::vector<CoreEmitter> emitters(cores);
  for (int c = 0; c < cores; ++c) {
    CoreEmitter& e = emitters[c];
    e.core = c;
    for (int s = 0; s < nbuf; ++s) e.Signal(QueueKind::kStore, kFree);
    int s = 0;
    for (int64_t i = c; i < tiles; i += cores) {
      const int64_t first = i * chunk, n = std::min(chunk, l.count - first);
      const int64_t base = (int64_t{c} * nbuf + s) * slot, rows_at = base + idx_bytes;
      e.Wait(QueueKind::kLoad, kFree);
      // The index list first (the queue runs its DMAs in order), then the rows it selects.
      e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, idx_addr + 8 * first, base, 8 * n, idx_region));
      Instr g = ContiguousDma(Opcode::kDmaLoad, 0, rows_at, l.row_bytes, table_region);
      g.ndims = 1;
      g.dims[0] = {static_cast<int32_t>(n), l.row_bytes, l.row_bytes, 0, static_cast<int32_t>(l.rows)};
      g.gather = true;
      g.index_addr = base;
      e.Add(QueueKind::kLoad, g);
      e.Signal(QueueKind::kLoad, kFull);
      e.Wait(QueueKind::kStore, kFull);
      e.Add(QueueKind::kStore,
            ContiguousDma(Opcode::kDmaStore, y_addr + first * l.row_bytes, rows_at, n * l.row_bytes, y_region));
      e.Signal(QueueKind::kStore, kFree);
      s = (s + 1) % nbuf;
    }
  }
  AssembleTask(p, emitters);
  p.task_names = {fmt::format("{} (gather {} rows of {} B)", l.name, l.count, l.row_bytes)};
  return p;
}

}  // namespace edgec::npu
