// Cascades in an NPU segment: a run of consecutive layers (convolutions, depthwise convs,
// pools, elementwise layers; batch 1) whose outputs but the last are read only inside the run
// and of which the SRAM plan spills one runs in row stripes (npu/cascade.h): stripe by
// stripe, each layer's stripe consumes the bands its inputs' stripes produced, with the halo
// its window needs, and the bands stay on chip.
//
// Rule per run: the stripes are as tall as the SRAM left beside the tensors resident over
// the run allows (their inner bands take at most half of it); each stripe is tiled for half
// of what the bands leave (the rest stays free for the plan's other tensors and prefetch),
// with its bands on chip. From each layer the run is taken whose estimated gain is largest:
// the spill traffic it saves (each inner tensor written once and read by each reader at the
// DRAM bandwidth) minus what it adds (the weights every further stripe loads again, the
// recomputed halo rows at the MAC array's or vector cores' peak); it cascades when its
// stripes, simulated alone, take fewer cycles than its layers as tiled now (spills
// included). The run's input and output stay where the plan has them; its stripes read and
// write row slices of them (npu::SegmentTensor::slice_of). Guarded by tests/lower/npu_cascade_test.cc.
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
