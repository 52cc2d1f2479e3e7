// SRAM residency plan of an NPU segment: which tensors stay in the shared SRAM from their
// producer to their last consumer, where every layer's working tiles go, and the SRAM
// occupancy over the segment's layer order.
//
// Items in the SRAM, each an address range over an interval of layer steps:
//   - working tiles of layer j: SramFootprint of its program, over [j, j] (over [first, j]
//     for a member of a parallel group, SramPlanLayer::first); and over
//     [j - 1, j] when it also fits beside the previous layer's (its loads, weights first,
//     can then run while the previous layer computes: prefetch across the layer boundary);
//   - a tensor kept on chip: its bytes over [producer, last consumer];
//   - a weight slot of layer j: its constant image (weights, parameters) over [p, j], p < j:
//     the image streams from DRAM into the slot from step p on, while layers p..j-1 run,
//     and layer j copies its weight tiles from there on chip (weight prefetch, as deep as
//     the SRAM leaves room: the slots of the coming layers form a ring over the free SRAM);
//   - a lead-in slot of layer j (`lead_in_depth`): a prefix of an image with no whole slot,
//     over [p, j], cut where some of its loads end (SramPlanLayer::const_reads).
// Placement is greedy: an item goes to the lowest aligned offset that no placed item
// overlapping it in time covers. Order: every layer's working tiles over [j, j] first (they
// are needed), then the tensors by how long they are held (fewest layer steps first: a
// chain's hand-over from one layer to the next), larger first on ties, then each layer's
// working tiles are moved to a free range over [j - 1, j] where one exists (the one-layer
// overlap is worth more than a deeper slot: measured in docs/npu.md), last the weight slots
// in layer order, each from the earliest step p (not before the previous slot's) at which a
// range stays free over [p, j] (the DRAM stream of weights is thus in layer order).
// Then each kept tensor moves, where a range is free, to one also free at its producer's
// previous step: the producer may start while the layer before it runs (layer pipelining,
// segment.h), and a tensor placed over what that layer still uses would make the producer wait
// for all of it. Guarded by SramPlanTest.TensorsAvoidWhatThePreviousLayerUses.
// Cost rule: a tensor the segment exchanges with the outside (a segment input, an output
// read by the CPU or by a later segment, a graph output) stays in DRAM; any other is kept
// on chip when a range fits, else spilled with the layer where it did not fit and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgec::npu {

struct SramPlanLayer {
  std::string name;
  int64_t work_bytes = 0;  // its working tiles (SramFootprint of its program)
  // Its working tiles are held from this earlier layer on (-1: its own step): the members of
  // a parallel group run at once, so their tiles must not share SRAM.
  int first = -1;
  int64_t const_bytes = 0;  // its constant image (weights, parameters): streamed into a slot
  // Its constant loads by how far into the image they reach: {end, DRAM bytes of the loads
  // that end there or before}, ascending (ConstantReads, segment.h). A prefix of the image in
  // a lead-in slot saves the bytes of the loads inside it.
  std::vector<std::pair<int64_t, int64_t>> const_reads;
};

struct SramPlanTensor {
  std::string name;
  int64_t bytes = 0;
  int first = -1, last = -1;  // producer layer and last consumer layer (-1: none in the segment)
  std::string dram_reason;    // non-empty: must stay in DRAM, and why
};

struct SramPlan {
  struct Tensor {
    bool in_sram = false;
    int64_t addr = 0;
    std::string reason;  // in DRAM: why; in SRAM: "resident over layers a..b"
  };
  std::vector<int64_t> work_base;  // per layer
  std::vector<bool> prefetch;      // per layer: its working tiles are disjoint from the previous layer's
  std::vector<Tensor> tensors;
  std::vector<int64_t> occupancy;  // per layer step: bytes in use (working tiles + resident tensors)
  // Weight streaming, per layer: the step its slot is filled from (-1: no slot, its weight
  // tiles load from DRAM), the slot's address; per step: bytes of slots held.
  std::vector<int> weights_from;
  std::vector<int64_t> weights_addr;
  std::vector<int64_t> weight_occupancy;
  std::vector<bool> weights_resident;  // per layer: its slot spans the segment and stays between calls
  // Per layer: bytes of its constant image its slot holds: the whole image, or a prefix (a lead-in
  // slot, below); the layer's weight DMAs inside it read on chip, the others DRAM.
  std::vector<int64_t> weights_bytes;
  std::vector<bool> lead_in;  // per layer: its slot is a lead-in (PlanSram's `lead_in_depth`)
  // The slots' chunks load spread over the steps they may (segment.h, weights_spread), not all
  // at one step: a scheduling choice the segment makes by simulation (lower/npu_lead_ins.h).
  bool spread_chunks = false;
  int PrefetchDepth(int j) const { return weights_from[j] < 0 ? 0 : j - weights_from[j]; }
  int64_t sram_bytes = 0;
};

// `stream_weights` false: no weight slots (every layer loads its weights itself).
// `resident_weights`: before the ring, slots over the whole segment (held between calls),
// largest images first while they fit; SramPlan::weights_resident marks them.
// `clear_of_previous` false: tensors stay where first placed (no move clear of the previous layer).
// `lead_in_depth` > 0: every layer with weights but no whole slot gets a lead-in slot, the
// largest free range over [p, j] holding a prefix of its image, p >= j - lead_in_depth
// (PlanLeadIns in sram_plan.cc); < 0: the same depth, for the large images only; 0: none.
SramPlan PlanSram(const std::vector<SramPlanLayer>& layers, const std::vector<SramPlanTensor>& tensors,
                  int64_t sram_bytes, int64_t alignment, bool stream_weights = true, bool resident_weights = false,
                  bool clear_of_previous = true, int lead_in_depth = 0);

// Per layer: occupancy bar, working tiles, resident tensors; then every tensor's place.
std::string FormatSramPlan(const SramPlan& plan, const std::vector<SramPlanLayer>& layers,
                           const std::vector<SramPlanTensor>& tensors);

}  // namespace edgec::npu
