// Profile: where the time of one run went, per node, as Session::profile() returns it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgec {
inline namespace v1 {

enum class Unit : uint8_t { kCpu = 0, kNpu = 1 };
inline const char* UnitName(Unit u) { return u == Unit::kNpu ? "npu" : "cpu"; }

struct NodeProfile {
  std::string node;       // node name
  std::string op;         // "Conv", "QLinearConv", ...
  Unit unit = Unit::kCpu;
  std::string kernel;     // CPU plan: the kernel that ran ("reference" for a fallback)
  // CPU plan: measured wall time; compiled model: simulated or estimated, an NPU node's the
  // latency attributed to it (NPU layers running at once split each interval), so the nodes'
  // seconds add up to at most total_seconds.
  double seconds = 0;
  double cycles = 0;      // NPU nodes on npu-sim: the span of its instructions, first to last (spans overlap)
  int64_t bytes = 0;      // bytes the node read and wrote (NPU: DRAM traffic and copies)
};

struct Profile {
  std::vector<NodeProfile> nodes;  // in execution order
  double total_seconds = 0;        // CPU plan: wall time of the run; npu-sim: simulated latency
  double npu_cycles = 0;           // npu-sim: cycles of every NPU segment
  bool simulated = false;          // true when the times are the simulator's (npu-sim)
  double cpu_seconds = 0;          // compiled model: the CPU nodes' share of the latency (kCpu: all of it)
  bool cpu_measured = false;       // ... timed on this host (measure_cpu), not the cost model's
};

}  // namespace v1
}  // namespace edgec
