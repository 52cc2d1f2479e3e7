// Two compiles of a model compared layer by layer (`edgec diff A.edgec B.edgec`): placement,
// simulated cycles, DRAM bytes and MAC utilization per node, sorted by impact (the change of
// the node's time, the larger first). Each file is measured alone and timing only: every NPU
// segment's program simulated (no data), CPU nodes by the partitioner's cost model
// (partition::CpuSeconds). Guarded by tests/report/compile_diff_test.cc.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/artifact_run.h"

namespace edgec::report {

struct LayerFigures {
  bool present = false;
  std::string unit;  // "npu" / "cpu"
  double seconds = 0, cycles = 0, utilization = 0;
  int64_t dram_bytes = 0, macs = 0;
};

struct StaticRun {
  std::vector<std::string> nodes;  // graph order
  std::vector<std::string> ops;
  std::vector<LayerFigures> layers;
  double seconds = 0;  // NPU segments' tasks + CPU nodes
  int64_t dram_bytes = 0;
  int npu_nodes = 0;
};
StatusOr<StaticRun> MeasureStatic(const LoadedArtifact& a);

struct DiffRow {
  std::string node, op;
  LayerFigures a, b;
  double impact_s = 0;  // b.seconds - a.seconds
  std::string change;   // "npu -> cpu", "cycles +12%", ...
};

struct CompileDiff {
  std::vector<DiffRow> rows;  // changed nodes, by |impact| (largest first)
  double a_seconds = 0, b_seconds = 0;
  int64_t a_dram = 0, b_dram = 0;
  int a_npu_nodes = 0, b_npu_nodes = 0;
  int left_npu = 0;  // nodes on the NPU in A, on the CPU in B
  // B is worse than A by more than `threshold` (relative) in latency or DRAM bytes, or a node
  // left the NPU.
  bool regression = false;
  std::vector<std::string> why;  // the regression's reasons
};

CompileDiff DiffRuns(const StaticRun& a, const StaticRun& b, double threshold);
std::string FormatDiff(const CompileDiff& d, const std::string& a_name, const std::string& b_name, int top);
nlohmann::json DiffJson(const CompileDiff& d);

}  // namespace edgec::report
