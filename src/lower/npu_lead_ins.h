// Lead-in weight slots for a built NPU segment (npu/sram_plan.h, PlanSram's `lead_ins`): the
// SRAM is planned again with them, and the segment keeps whichever plan simulates faster.
//
// A lead-in slot holds a prefix of a layer's constant image that the whole-image ring found no
// room for; the layer's weight loads inside the prefix (or their first rows) read it on chip.
// Whether that pays depends on where the DRAM channel is idle, which only the segment's
// simulation knows (a prefix loaded in a DRAM-bound stretch only delays the loads beside it),
// so the choice is measured, as for tensors clear of the previous layer (npu_segment.cc): the
// large images' walk-back depth, with or without the small images' lead-ins, and the ring's
// chunks all at one step or spread over the steps they may load in (SramPlan::spread_chunks),
// or (mode 1) no weight stream at all.
// Guarded by NpuLeadInTest.LeadInSlotsReadWeightsOnChipBitForBit.
#pragma once

#include <functional>
#include <vector>

#include "support/status.h"
#include "lower/npu_segment.h"
#include "npu/segment.h"
#include "npu/target.h"

namespace edgec::lower {

// Binds a plan to the segment's layers and tensors and assembles the program.
using AssemblePlan = std::function<StatusOr<npu::Program>(const npu::SramPlan&)>;

// `clear`: the kept plan moves tensors clear of the previous layer. On return `b.plan` and
// `b.program` are the fastest of the variants (the layers and tensors bound to it) and the listing
// says both figures. `mode`: TilerOptions::lead_ins (0 never, 1 the fastest, 2 the fastest with lead-ins,
// 3 the ring spread alone). `cycles`, when given: the kept program's simulated cycles (-1 when
// nothing was simulated).
Status TryLeadIns(NpuSegmentBuild& b, const std::vector<npu::SegmentTensor>& tensors, const npu::Target& t,
                  bool keep_weights, bool clear, const AssemblePlan& assemble, int mode, double* cycles = nullptr);

// The weight stream's schedule over `b.plan`: assembles it, keeps the tensors clear of the
// previous layer when the segment simulates faster so (else the plan without the move), then
// TryLeadIns with `mode`. Returns the segment's simulated cycles (0 for an empty program).
StatusOr<double> ScheduleWeightStream(NpuSegmentBuild& b, const std::vector<npu::SegmentTensor>& tensors,
                                      const npu::Target& t, bool keep_weights, const AssemblePlan& assemble,
                                      int mode);

}  // namespace edgec::lower
