// Room for the late weights of an NPU segment (issue 29): the early layers tiled again for less
// SRAM, so that the weight slots and lead-ins of the late, weight-bound layers find ranges free
// from those early steps on and their weights stream while the early layers compute.
//
// The early layers, two candidate sets: those up to the segment's critical cut (CriticalCut
// below), and those before its DRAM-bound tail (the first layer from which the tail's weights
// take longer to stream than the tail computes). Early layers are MAC- or vector-bound: their
// tiles can shrink at little cost while the room they leave holds later weights. A global cap
// on the tiles was slower (docs/npu.md: the late layers lose their efficiency), so only the
// early layers are capped, at 5/16 of the SRAM (TilerOptions::room_for_weights; SRAM/4, 3/8,
// SRAM/8 and the first half of each set measured in docs/npu.md); each variant is planned and
// simulated with the ring's chunks spread, the segment keeps the fastest (never a slower one)
// and gives it the whole weight-stream choice (npu_lead_ins.h).
// Guarded by NpuSegmentRoomTest (tests/lower/npu_segment_room_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/status.h"
#include "lower/npu_pending_layer.h"
#include "lower/npu_segment.h"
#include "npu/sram_plan.h"
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

// Tries the variants (above) with the early layers' SRAM capped at `cap` bytes over a segment of
// `layers` (their cycles alone) planned as `plan_layers` and `plan_tensors`, simulated in `base`
// cycles as it is; adds a line to `listing` with every
// variant's figures and the ones kept.
Status TryRoomForLateWeights(const std::vector<PendingLayer>& layers,
                             const std::vector<npu::SramPlanLayer>& plan_layers,
                             const std::vector<npu::SramPlanTensor>& plan_tensors, const npu::Target& t, int64_t cap,
                             double base, const TryCaps& attempt, std::string& listing);

// The SRAM-aware lower bound of a built segment (issue 29), added to its listing: over every
// cut k, the MAC-array and vector-core work of layers <= k at peak (the larger of the two) plus,
// at the DRAM bandwidth, the constant bytes of layers > k and the outputs they write, less the
// SRAM the tensors live across the cut leave. Any schedule that keeps whole tensors must stream
// what the SRAM cannot hold at the cut after the work before it; the bound (max of the
// MAC, vector and DRAM terms) is its plain part. Guarded by
// NpuSegmentRoomTest.SramAwareBoundCountsWhatTheSramCannotHold.
double SramAwareBound(const std::vector<double>& work, const std::vector<int64_t>& after_bytes,
                      const std::vector<int64_t>& live_bytes, int64_t sram_bytes, double dram_bytes_per_cycle,
                      int* cut = nullptr);
Status ListSramAwareBound(NpuSegmentBuild& b, const npu::Target& t);

// Layers with the same key get the same tiling for the same SRAM cap (a GEMM layer's shape, its
// cores and on-chip operands; any other layer its node): the variants tile a repeated block's
// layers once.
std::string SameTilingKey(const PendingLayer& l, int64_t cap, const npu::TilerOptions& operands);

// Layer `l` takes the tiling of `r` (chosen for it or for a layer of the same key), keeping its node.
void TakeTiling(PendingLayer& l, const RetiledNode& r);

}  // namespace edgec::lower
