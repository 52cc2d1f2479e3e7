// Cascades in an NPU segment: a chain of windowed layers (convolutions, depthwise convs,
// pools: each reading only the previous one's output, that output read by no other layer)
// whose inner tensors the SRAM plan spills runs in row stripes (npu/cascade.h): stripe by
// stripe, each layer's stripe consumes the band the previous one produced, with the halo its
// window needs, and the bands stay on chip.
//
// Rule per chain: the stripes are as tall as the SRAM left beside the tensors resident over
// the chain allows (their inner bands take at most half of it, the working tiles the rest);
// the chain cascades when the spill traffic it saves (each inner tensor written and read
// once at the DRAM bandwidth) exceeds what it adds: the weights every further stripe loads
// again and the recomputed halo rows at the MAC array's (or vector cores') peak. The chain's
// input and output stay where the plan has them; its stripes read and write row slices of
// them (npu::SegmentTensor::slice_of). Guarded by tests/lower/npu_cascade_test.cc.
#pragma once

#include <string>
#include <vector>

#include "lower/npu_pending_layer.h"
#include "npu/segment.h"
#include "npu/sram_plan.h"

namespace edgec::lower {

// Replaces the chains worth cascading by their stripes (layers renumbered, tensors appended:
// the inner tensors' stripes and the slices; a replaced inner tensor keeps its index with 0
// bytes and no producer). `plan_tensors` gets an entry for every new tensor (the slices a
// dram_reason naming their tensor). Returns the number of chains cascaded; `listing` says
// which, with stripe height, halo and the traffic saved.
StatusOr<int> PlanCascades(std::vector<PendingLayer>& pending, std::vector<npu::SegmentTensor>& tensors,
                           std::vector<npu::SramPlanTensor>& plan_tensors,
                           const std::vector<npu::SramPlanLayer>& plan_layers, const npu::SramPlan& plan,
                           const npu::Target& t, const npu::TilerOptions& opt, std::string& listing);

// A stripe's program.
StatusOr<npu::Program> LowerStripe(const StripeLayer& s, const npu::Target& t);

}  // namespace edgec::lower
