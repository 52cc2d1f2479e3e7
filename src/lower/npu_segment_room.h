// Room for the late weights of an NPU segment (issue 29): the early layers tiled again for less
// SRAM, so that the weight slots and lead-ins of the late, weight-bound layers find ranges free
// from those early steps on and their weights stream while the early layers compute.
//
// The early layers are those up to the segment's critical cut (CriticalCut below): the
// MAC- or vector-bound ones whose tiles can shrink at little cost while the room they leave
// holds later weights. A global cap on the tiles was slower (docs/npu.md: the late layers lose
// their efficiency), so only the early layers (all of them, or the first half) are capped,
// at SRAM/4 and SRAM/8, each variant planned with the segment's whole weight-stream choice
// (npu_lead_ins.h) and simulated; the segment keeps the fastest, never a slower one.
// Guarded by NpuSegmentRoomTest (tests/lower/npu_segment_room_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/status.h"
#include "npu/target.h"

namespace edgec::lower {

// The critical cut of a segment: the layer k maximizing (the compute of layers <= k) + (the
// constant bytes of layers > k that the SRAM cannot hold at the cut) / the DRAM bandwidth, with a
// layer's compute its cycles alone less its own weights' DRAM time and the SRAM at the cut less
// `live_bytes[k]` (the tensors live across it). Up to the cut the compute is on the critical path
// (the DRAM would idle without room to prefetch into); after it the weight stream is.
struct RoomCut {
  int layer = -1;
  double cycles = 0;  // the estimate at the cut
};
RoomCut CriticalCut(const std::vector<double>& cycles, const std::vector<int64_t>& const_bytes,
                    const std::vector<int64_t>& live_bytes, int64_t sram_bytes, double dram_bytes_per_cycle);

// Tiles the segment's layers i < caps.size() with caps[i] > 0 for at most caps[i] bytes of SRAM,
// plans and simulates the segment: its cycles. The segment keeps the change when they are below
// `to_beat`, else it is undone.
using TryCaps = std::function<StatusOr<double>(const std::vector<int64_t>& caps, double to_beat)>;

// Tries the variants (above) over a segment whose layers take `cycles` alone with SRAM tiles of
// `work_bytes` and constant images of `const_bytes`, simulated in `base` cycles as it is; adds a
// line to `listing` with every variant's figures and the one kept.
Status TryRoomForLateWeights(const std::vector<double>& cycles, const std::vector<int64_t>& work_bytes,
                             const std::vector<int64_t>& const_bytes, const std::vector<int64_t>& live_bytes,
                             const npu::Target& t, double base,
                             const TryCaps& attempt, std::string& listing);

}  // namespace edgec::lower
