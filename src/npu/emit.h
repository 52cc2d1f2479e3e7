// What every lowering emits with: one core's four instruction queues, strided DMAs split to
// the target's DMA dims, padded band loads, the token protocol of a streamed vector pipeline
// (load -> vector -> store), and the assembly of the cores' queues into one task.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "npu/isa.h"
#include "npu/target.h"

namespace edgec::npu {

// One core's queues. Instructions added here carry the core and queue.
struct CoreEmitter {
  int core = 0;
  std::vector<Instr> q[kNumQueues];
  void Add(QueueKind queue, Instr in);
  void Signal(QueueKind queue, int32_t sem) { Add(queue, Instr{.op = Opcode::kSignal, .sem = sem}); }
  // A token on `sem` of each of cores [first, first + count) (a plain SIGNAL for this core alone).
  void SignalCores(QueueKind queue, int32_t sem, int first, int count);
  void WaitN(QueueKind queue, int32_t sem, int count) {
    Add(queue, Instr{.op = Opcode::kWait, .sem = sem, .count = count});
  }
  void Wait(QueueKind queue, int32_t sem) { Add(queue, Instr{.op = Opcode::kWait, .sem = sem}); }
};

// Emits a DMA over up to two strided dims, split into several descriptors when the target's
// DMA has fewer dims.
void EmitDma(CoreEmitter& e, const Target& t, Instr in);

// Valid index range [lo, hi) of i in [0, count) with 0 <= base + i * stride < limit.
std::pair<int32_t, int32_t> ValidRange(int64_t base, int64_t stride, int count, int64_t limit);

// Loads a window op's input band: `rows` image rows from `iy0` and `wp` pixels from `ix0`
// (both may reach into the padding) of `tc` channels starting at channel c0 of an NHWC
// tensor at `base`, into SRAM at `sram` as [rows][wp][tc], padding filled with `pad`. When
// the tile holds every channel a row's valid pixels are contiguous in DRAM: one DMA row of
// all of them (whole bursts) and fill-only DMAs for the padded columns; otherwise one DMA
// row per pixel.
void EmitBandLoad(CoreEmitter& e, const Target& t, int64_t base, int in_h, int in_w, int C, int64_t iy0, int64_t ix0,
                  int rows, int wp, int c0, int tc, int64_t sram, int8_t pad, int16_t region);

// A one-row DMA (kDmaLoad or kDmaStore) of `bytes` contiguous bytes between DRAM `dram` and
// SRAM `sram`, tagged with its DRAM region.
Instr ContiguousDma(Opcode op, int64_t dram, int64_t sram, int64_t bytes, int16_t region);

// Stores `pixels` pixels of `tc` channels (SRAM [pixels][tc]) into an NHWC tensor of C
// channels at `dram` (the first pixel's first channel): one DMA row per pixel, or one row of
// them all when the tile holds every channel.
void EmitPixelStore(CoreEmitter& e, const Target& t, int64_t dram, int16_t region, int64_t sram, int pixels, int C,
                    int tc);

// The semaphores of a streamed pipeline: input slots (load -> vector) and output slots
// (vector -> store).
struct StreamSems {
  int32_t in_free, in_full, out_free, out_full;
};
// The tokens every slot starts with (nbuf slots of each kind free).
void StartStream(CoreEmitter& e, const StreamSems& s, int nbuf);
// One tile of the pipeline: `load` emits its DMAs on the load queue, `compute` its VECs on the
// vector queue, `store` its DMAs on the store queue; the tokens between them are added here.
template <typename Load, typename Compute, typename Store>
void EmitStreamedTile(CoreEmitter& e, const StreamSems& s, Load&& load, Compute&& compute, Store&& store) {
  e.Wait(QueueKind::kLoad, s.in_free);
  load();
  e.Signal(QueueKind::kLoad, s.in_full);
  e.Wait(QueueKind::kVector, s.in_full);
  e.Wait(QueueKind::kVector, s.out_free);
  compute();
  e.Signal(QueueKind::kVector, s.in_free);
  e.Signal(QueueKind::kVector, s.out_full);
  e.Wait(QueueKind::kStore, s.out_full);
  store();
  e.Signal(QueueKind::kStore, s.out_free);
}

// Deals tiles 0..tiles-1 round-robin to `cores` core emitters: core c gets c, c + cores, ...
// `start(e)` runs once per core before its first tile (the stream's first tokens, a table
// loaded ahead of the first tile); `tile(e, i, slot)` emits tile i into buffer slot `slot`,
// which cycles through 0..nbuf-1 on each core.
template <typename Start, typename Tile>
std::vector<CoreEmitter> DealTiles(int cores, int64_t tiles, int nbuf, Start&& start, Tile&& tile) {
  std::vector<CoreEmitter> emitters(cores);
  for (int c = 0; c < cores; ++c) {
    CoreEmitter& e = emitters[c];
    e.core = c;
    start(e);
    int slot = 0;
    for (int64_t i = c; i < tiles; i += cores) {
      tile(e, i, slot);
      slot = (slot + 1) % nbuf;
    }
  }
  return emitters;
}

// Tile i of an NHWC tensor cut into batch x row bands x channel tiles (batch-major, then row
// bands, channel tiles innermost), clipped at the tensor's edges.
struct GridTile {
  int batch, row0, rows, c0, chans;
  int64_t channel_tile;
};
inline GridTile GridTileAt(int64_t i, int height, int tile_rows, int channels, int tile_c) {
  const int64_t bands = CeilDiv(height, tile_rows), ctiles = CeilDiv(channels, tile_c);
  GridTile g{};
  g.batch = static_cast<int>(i / (bands * ctiles));
  g.row0 = static_cast<int>((i / ctiles) % bands) * tile_rows;
  g.channel_tile = i % ctiles;
  g.c0 = static_cast<int>(g.channel_tile) * tile_c;
  g.rows = std::min(tile_rows, height - g.row0);
  g.chans = std::min(tile_c, channels - g.c0);
  return g;
}

// p.instrs = TASK_BEGIN, each core's queues in order (load, execute, vector, store), TASK_END.
void AssembleTask(Program& p, const std::vector<CoreEmitter>& cores);

}  // namespace edgec::npu
