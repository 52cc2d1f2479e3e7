// Tiling of the layers that run on the vector cores alone (elementwise add, pools): the
// chunk (elements per transfer) or the tile (output rows x channels) and the buffering,
// chosen by simulating each candidate (these programs are small; timing only).
#pragma once

#include <string>

#include "npu/lower.h"
#include "npu/lower_norm.h"
#include "npu/move.h"
#include "npu/sim.h"
#include "npu/tiler.h"

namespace edgec::npu {

struct VectorTiling {
  int64_t chunk = 0;              // eltwise: elements per DMA/VEC step; move: bytes per tile
  int tile_rows = 0, tile_c = 0;  // pool: output rows x channels per tile
  bool double_buffer = true;
  double cycles = 0;  // simulated
  std::string ToString() const;
};

// Candidates: chunks that spread the elements over 1..all cores in 1..8 steps per core (and
// powers of two down to 256 elements), or pool tiles of 1..all output rows by 16..all channels,
// single-buffered and, when `opt` allows it, double-buffered; those that do not fit SRAM are
// skipped. Fails when none fits.
StatusOr<VectorTiling> ChooseEltwiseTiling(const EltwiseLayer& l, const Target& t, const TilerOptions& opt = {});
// Data movement (move.h): chunks of 4 KiB up to a quarter of the SRAM, each buffering.
StatusOr<VectorTiling> ChooseMoveTiling(const MoveLayer& l, const Target& t, const TilerOptions& opt = {});
StatusOr<VectorTiling> ChooseArgMaxTiling(const ArgMaxLayer& l, const Target& t, const TilerOptions& opt = {});
StatusOr<VectorTiling> ChooseGatherTiling(const GatherLayer& l, const Target& t, const TilerOptions& opt = {});
StatusOr<VectorTiling> ChoosePoolTiling(const PoolLayer& l, const Target& t, const TilerOptions& opt = {});
// Norm and softmax (lower_norm.h): chunks of whole items spreading them over 1..all cores in
// 1..8 tiles per core.
StatusOr<VectorTiling> ChooseNormTiling(const NormLayer& l, const Target& t, const TilerOptions& opt = {});
// Resize (lower.h): output rows (input rows when it replicates) x channels, like the pools.
StatusOr<VectorTiling> ChooseResizeTiling(const ResizeLayer& l, const Target& t, const TilerOptions& opt = {});
StatusOr<VectorTiling> ChooseDepthwiseTiling(const DepthwiseLayer& l, const Target& t, const TilerOptions& opt = {});

}  // namespace edgec::npu
