// Lead-in weight slots, kept when the segment simulates faster (see npu_lead_ins.h).
#include "lower/npu_lead_ins.h"

#include <algorithm>

#include <fmt/format.h>

#include "support/status.h"
#include "npu/sim.h"

namespace edgec::lower {

Status TryLeadIns(NpuSegmentBuild& b, const std::vector<npu::SegmentTensor>& tensors, const npu::Target& t,
                  bool keep_weights, bool clear, const AssemblePlan& assemble, int mode) {
  if (mode == 0 || b.program.instrs.empty() || t.ai_cores.count <= 1) return Status::Ok();
  npu::SramPlan with = npu::PlanSram(b.plan_layers, b.plan_tensors, t.shared_sram.bytes, t.shared_sram.alignment,
                                     true, keep_weights, clear, true);
  for (size_t x = 0; x < tensors.size(); ++x) {  // a slice is where its tensor is
    const int r = tensors[x].slice_of;
    if (r < 0) continue;
    with.tensors[x].in_sram = with.tensors[r].in_sram;
    with.tensors[x].addr = with.tensors[r].addr + tensors[x].slice_offset;
  }
  int64_t bytes = 0;
  int slots = 0;
  for (size_t j = 0; j < with.lead_in.size(); ++j)
    if (with.lead_in[j]) bytes += with.weights_bytes[j], ++slots;
  if (slots == 0) return Status::Ok();
  ASSIGN_OR_RETURN(npu::Program program, assemble(with));
  ASSIGN_OR_RETURN(npu::SimResult without_sim, npu::Simulate(b.program, t));
  ASSIGN_OR_RETURN(npu::SimResult with_sim, npu::Simulate(program, t));
  const bool keep = mode == 2 || with_sim.total.cycles < without_sim.total.cycles;
  b.listing += fmt::format(";   lead-in weight slots: {} ({} B): segment {:.0f} cycles with, {:.0f} without: {}\n",
                           slots, bytes, with_sim.total.cycles, without_sim.total.cycles, keep ? "kept" : "not kept");
  if (keep) {
    b.plan = std::move(with);
    b.program = std::move(program);
  } else {
    ASSIGN_OR_RETURN(b.program, assemble(b.plan));
  }
  return Status::Ok();
}

}  // namespace edgec::lower
