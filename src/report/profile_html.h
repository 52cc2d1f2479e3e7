// The self-contained HTML report of a profile (`edgec profile --html FILE.html`): one file, no
// scripts, fonts or other external resources. Summary cards, the timeline (Gantt per core and
// queue), the roofline, SRAM / arena / DRAM bandwidth over time, the placement graph
// (placement_graph.h) with each CPU node's reason, per-layer INT8 error (when given) and
// energy (when the target gives energy figures), and the slowest ops. Rendered and checked in
// headless Chromium by tests/report/html_render_test.py.
#pragma once

#include <string>

#include "report/profile.h"

namespace edgec::report {

std::string ProfileHtml(const Profile& p);

}  // namespace edgec::report
