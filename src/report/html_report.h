// The self-contained HTML report of a compiled model's run (`edgec run model.edgec --report
// FILE.html`): one file, no scripts or external resources, readable offline. It shows the
// totals (simulated latency split into NPU, CPU and copies; MAC utilization; DRAM bytes;
// roofline), a bar per layer of its time coloured by the unit that ran it, the stall
// cycles by cause, and the per-layer table with each node's placement and the reason.
#pragma once

#include <string>

#include "runtime/artifact_run.h"

namespace edgec::report {

std::string ArtifactRunHtml(const std::string& file, const LoadedArtifact& a, const ArtifactRunResult& r);

}  // namespace edgec::report
