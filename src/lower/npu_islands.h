// CPU islands by the segment's simulated time: the cost rule weighs one node at a time, so a
// short run of small layers between NPU nodes (a squeeze-excite's 1x1 convs and gate) goes to
// the CPU when each alone is cheaper there, although the CPU run splits the NPU segment in two
// and the split program is slower by more than the nodes take. Here each such island is
// decided by simulating the segment programs around it both ways.
#pragma once

#include <vector>

#include "npu/target.h"
#include "partition/partition.h"
#include "support/status.h"

namespace edgec::lower {

// For every maximal run of legal, unpinned nodes the cost rule kept on the CPU (no moves
// among them) with NPU nodes on both sides (or on one, at the graph's start or end): the NPU
// program of up to `window` NPU nodes on
// each side with the island inside, simulated, against the two programs without it plus the
// island's CPU time and crossings (the rule's own figures). The island goes to the NPU when
// that is no slower; its nodes' reasons say so with both times
// (tests/lower/segment_cost_rule_test.cc: SqueezeExciteIslandJoinsItsSegment).
Status PlaceIslandsBySegmentTime(std::vector<partition::NodePlacement>& ps, const npu::Target& t,
                                 const partition::PartitionOptions& o, int window = 8);

}  // namespace edgec::lower
