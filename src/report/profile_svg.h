// The profile's plots as SVG, drawn here (no scripts, no external resources), for the HTML
// report (profile_html.h). Each plot is one <svg> element with a class naming it
// ("timeline", "roofline", "occupancy", "bars") so that a test can find it.
//   - Timeline: a Gantt row per track (the CPU threads, then each NPU core's load, execute,
//     vector and store queues); slices closer than a pixel on one row merge into one bar.
//   - Roofline: each NPU layer with MACs a point at (MACs per DRAM byte, achieved MAC/s),
//     under the roofs min(peak MAC/s, intensity x DRAM bandwidth); log-log.
//   - Occupancy: SRAM bytes (against the SRAM size), arena bytes, DRAM bandwidth, over time.
//   - The placement graph: placement_graph.h.
//   - Bars: one value per layer (INT8 error, energy).
#pragma once

#include <string>
#include <vector>

#include "report/profile.h"

namespace edgec::report {

// npu_only: the NPU's rows alone, the time when no NPU queue is busy cut out ("timeline-npu").
std::string TimelineSvg(const Profile& p, int width, bool npu_only = false);
std::string RooflineSvg(const Profile& p, int width, int height);
std::string OccupancySvg(const Profile& p, int width);
struct Bar {
  std::string label;
  double value = 0;
  bool npu = true;
};
std::string BarsSvg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars, int width);

std::string EscapeXml(const std::string& s);

}  // namespace edgec::report
