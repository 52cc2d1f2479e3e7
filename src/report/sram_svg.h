// SVG plots of the NPU's shared SRAM, self-contained (no scripts, no external resources):
//   - occupancy over a segment's layers (`edgec compile --sram-svg`): per layer a stacked bar
//     of its working tiles, the tensors kept on chip at its step, and the rest (the next
//     layers' tiles placed early for prefetch), against a line at the SRAM size;
//   - a what-if over one target field (`edgec sweep --svg`): latency and the bytes the SRAM
//     plans spill, each on its own scale, the knee (the first value where nothing spills)
//     marked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/artifact.h"

namespace edgec::report {

struct SramStep {
  std::string layer;
  int64_t tiles = 0, resident = 0, other = 0;
};

// A segment's plan (artifact_io::Segment::layer_plan, sram_plan) as steps.
std::vector<SramStep> SramSteps(const artifact_io::Segment& s);

std::string SramOccupancySvg(const std::string& title, const std::vector<SramStep>& steps, int64_t sram_bytes);

struct SweepPoint {
  std::string label;
  double ms = 0;
  int64_t spilled_bytes = -1;  // -1: not known (a shape-only estimate)
};
std::string SweepSvg(const std::string& field, const std::string& title, const std::vector<SweepPoint>& pts);

}  // namespace edgec::report
