// The tiler: picks a tiling per layer (tile sizes, K step, which operand stays resident,
// buffering, cores, teams of cores sharing operands) that fits SRAM and the accumulators,
// minimizing simulated cycles, then DRAM traffic among the tilings within traffic_slack.
//
// Heuristic mode: every legal candidate gets an analytic estimate (compute per core vs DRAM
// traffic vs per-DMA overhead); the best few overall and per family (cores, residency,
// buffering, team size) are lowered and simulated, then a coordinate descent simulates the
// neighbours (one attribute changed) of the best until none is faster. This search runs
// twice: over the tilings without teams, then over those with teams (skipping, beyond the
// top few, team tilings whose estimate is far above the fastest simulated), so adding teams
// never makes a layer slower than without them. Team tilings that do not fit double-buffered
// are also offered single-buffered (a large block of output tiles wants the SRAM).
// Exhaustive mode simulates every candidate (for small layers; tests use it to show the
// heuristic is within 5% of the best). Both report the choice and the runner-up.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "npu/lower.h"
#include "npu/sim.h"

namespace edgec::npu {

struct TilerOptions {
  bool exhaustive = false;
  int simulate_top = 4;        // heuristic: candidates simulated
  bool allow_double = true;    // false forces single buffering
  bool allow_single = false;   // also consider single buffering
  // Among tilings within this fraction of the fastest, take the one moving the fewest DRAM
  // bytes (DRAM traffic costs energy and bandwidth other work could use).
  double traffic_slack = 0.03;
  // Operands a segment keeps in the shared SRAM (bit k: the layer's region ".input<k>" or
  // ".output<k>"): their DMAs are simulated as on-chip copies (no DRAM byte, no burst), as
  // the segment assembler will emit them, so the choice fits where the operands really are.
  uint32_t on_chip_inputs = 0, on_chip_outputs = 0;
  // A segment may run chains whose inner tensors spill as cascades of row stripes
  // (lower/npu_cascade.h); false: never (what-if figures, NpuCascadeTest).
  bool cascades = true;
  // Lead-in weight slots and spread slot chunks of a segment (lower/npu_lead_ins.h): 0 never,
  // 1 where the segment simulates faster with them, 2 lead-ins always, 3 the spread alone (tests).
  int lead_ins = 1;
  // The early layers of a segment tiled again for this many sixteenths of the SRAM, leaving
  // room for the late layers' weights (lower/npu_segment_room.h), where the segment simulates
  // faster; 0: never.
  int room_for_weights = 5;
};

// Turns the DMAs of a one-layer program that address the on-chip operands of `opt` into
// on-chip DMAs (timing only: their addresses stay the layer's own).
void MarkOnChip(Program& p, const TilerOptions& opt);

struct TileChoice {
  Tiling tiling;
  double cycles = 0;    // simulated
  double estimate = 0;  // analytic
};

struct TilerResult {
  TileChoice best;
  std::optional<TileChoice> runner_up;
  int candidates = 0, simulated = 0;
  Stats stats;  // of the best
};

std::vector<Tiling> TilingCandidates(const ConvLayer& l, const Target& t, const TilerOptions& opt);
double EstimateCycles(const ConvLayer& l, const Target& t, const Tiling& tiling, const TilerOptions& opt = {});
StatusOr<TilerResult> ChooseTiling(const ConvLayer& l, const Target& t, const TilerOptions& opt = {});

// Simulated cycles of one tiling (timing only).
StatusOr<SimResult> SimulateTiling(const ConvLayer& l, const Target& t, const Tiling& tiling,
                                   const TilerOptions& opt = {});

}  // namespace edgec::npu
