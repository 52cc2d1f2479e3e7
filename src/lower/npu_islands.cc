#include "lower/npu_islands.h"

#include <fmt/format.h>

#include "lower/npu_layers.h"
#include "lower/npu_segment.h"
#include "npu/sim.h"
#include "support/status.h"

namespace edgec::lower {

Status PlaceIslandsBySegmentTime(std::vector<partition::NodePlacement>& ps, const npu::Target& t,
                                 const partition::PartitionOptions& o, int window) {
  using artifact_io::Unit;
  auto seconds = [&](const std::vector<const partition::NodePlacement*>& run) -> StatusOr<double> {
    if (run.empty()) return 0.0;
    ASSIGN_OR_RETURN(NpuSegmentBuild b, BuildNpuSegment(run, t, "island", o.tiler));
    if (b.program.instrs.empty()) return 0.0;
    ASSIGN_OR_RETURN(npu::SimResult s, npu::Simulate(b.program, t));
    return s.total.cycles / t.clock_hz;
  };
  // A node reading a move absorbed into it (AbsorbedInto: its NPU layer reads the move's input
  // through strides) stays with that move, which is never a candidate: on the NPU it would read
  // the CPU's moved tensor as if it were the move's input (IslandsKeepAnAbsorbedMoveWithItsReader).
  auto reads_absorbed_move = [&](const Node& n) {
    for (const Value* v : n.inputs())
      if (const Node* m = v ? v->producer() : nullptr; m && AbsorbedInto(*m) == &n) return true;
    return false;
  };
  auto candidate = [&](const partition::NodePlacement& p) {
    const bool by_cost = p.code == partition::ReasonCode::kCpuCheaper || p.code == partition::ReasonCode::kBoundary;
    return p.unit == Unit::kCpu && p.legal && by_cost &&
           !o.pins.count(p.node->name()) && !IsMoveNode(*p.node) && !reads_absorbed_move(*p.node);
  };
  const size_t n = ps.size();
  for (size_t i = 0; i < n; ++i) {
    if (!candidate(ps[i]) || (i > 0 && ps[i - 1].unit != Unit::kNpu)) continue;
    size_t j = i;
    while (j < n && candidate(ps[j])) ++j;
    // NPU nodes on both sides, or on one side at the graph's start or end.
    const bool npu_before = i > 0, npu_after = j < n && ps[j].unit == Unit::kNpu;
    if ((j < n && !npu_after) || (!npu_before && !npu_after)) {
      i = j;
      continue;
    }
    std::vector<const partition::NodePlacement*> before, island, after;
    for (size_t k = i; k-- > 0 && ps[k].unit == Unit::kNpu && static_cast<int>(before.size()) < window;)
      before.insert(before.begin(), &ps[k]);
    for (size_t k = j; k < n && ps[k].unit == Unit::kNpu && static_cast<int>(after.size()) < window; ++k)
      after.push_back(&ps[k]);
    double cpu_s = 0;
    for (size_t k = i; k < j; ++k) {
      island.push_back(&ps[k]);
      cpu_s += ps[k].cpu_s + ps[k].cpu_transfer_s;
    }
    std::vector<const partition::NodePlacement*> merged = before;
    merged.insert(merged.end(), island.begin(), island.end());
    merged.insert(merged.end(), after.begin(), after.end());
    for (const partition::NodePlacement* p : island) const_cast<partition::NodePlacement*>(p)->unit = Unit::kNpu;
    auto whole = seconds(merged);
    for (const partition::NodePlacement* p : island) const_cast<partition::NodePlacement*>(p)->unit = Unit::kCpu;
    if (!whole.ok()) {  // the island does not build inside the segment: it stays
      i = j;
      continue;
    }
    ASSIGN_OR_RETURN(double a, seconds(before));
    ASSIGN_OR_RETURN(double b, seconds(after));
    const double split = a + b + cpu_s;
    if (*whole <= split) {
      for (size_t k = i; k < j; ++k) {
        partition::NodePlacement& p = ps[k];
        p.unit = Unit::kNpu;
        p.code = partition::ReasonCode::kNpuCheaper;
        p.reason = fmt::format(
            "segment: npu with its {} island node(s) {:.4f} ms <= split {:.4f} ms + cpu {:.4f} ms (own cost: {})",
            j - i, *whole * 1e3, (a + b) * 1e3, cpu_s * 1e3, p.reason);
        p.constraint = p.actual = p.allowed = p.hint = "";
      }
    }
    i = j;
  }
  return Status::Ok();
}

}  // namespace edgec::lower
