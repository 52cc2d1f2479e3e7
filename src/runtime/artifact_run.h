// Running a compiled model file (`edgec run model.edgec`).
//
// --device npu-sim: every NPU segment runs in the NPU simulator as one program (functional
// and timing, on its DRAM image: constants from the file, each value entering the segment
// written to the region of its name as NHWC int8, each value leaving it read from the region
// of its name), when its first node comes up; its layers' rows show their part of the task
// (they overlap in time). CPU nodes run on the reference kernels. A tensor moving from a CPU
// node to an NPU node (or back) is one copy, counted with its bytes; the NCHW <-> NHWC change
// (and the u8 <-> i8 shift by 128) happens in that copy, which the CPU writes through its
// cache (cpu_cache.h): the segment's hand-over steps (flush before, invalidate after, barriers)
// run around the simulation and cost their cycles. Between NPU segments the tensor stays in
// DRAM in the NPU's layout.
// --device cpu: every node on the CPU; the NPU's nodes (QLinearConv, QLinearMatMul) as the
// integer convolution / matmul (int32) plus the same fixed-point requantization the NPU uses
// (quant/fixed_point.h); its adds, multiplies and average pools on the reference kernels in
// fixed-point mode; lookups, max pools and data movement on the reference kernels (exact):
// the two devices agree bit for bit. An NPU segment with several outputs (Split) has the
// regions "<node>.output", "<node>.output1", ...
//
// Simulated latency (npu-sim) = NPU cycles / clock + CPU nodes by the partitioner's CPU cost
// model (MACs / int8 rate, other nodes: bytes in + out / copy bandwidth) + copies (bytes /
// DRAM bandwidth + bytes / CPU copy bandwidth) + cache maintenance cycles / clock.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "npu/sim.h"
#include "partition/partition.h"
#include "runtime/artifact.h"

namespace edgec {

enum class ArtifactDevice { kNpuSim, kCpu };

struct LayerRun {
  std::string node, op;
  artifact_io::Unit unit = artifact_io::Unit::kCpu;
  bool simulated = false;  // stats valid
  npu::Stats stats;
  int64_t macs = 0;
  int copies = 0;
  int64_t copy_bytes = 0;
  double seconds = 0;  // simulated (NPU) or estimated (CPU) time, copies included
  double start_cycle = 0;  // NPU: first cycle of the layer in its segment's task
};

struct ArtifactRunResult {
  std::vector<std::string> output_names;
  std::vector<Tensor> outputs;
  std::vector<LayerRun> layers;  // every node in order
  npu::Stats npu_total;
  double npu_s = 0, cpu_s = 0, copy_s = 0;
  double cache_s = 0;           // cache maintenance at hand-overs
  int cache_steps[3] = {0, 0, 0};  // flushes, invalidates, barriers
  int copies = 0;
  int64_t copy_bytes = 0;
  int64_t npu_const_bytes = 0, npu_io_bytes = 0;  // the NPU segments' constants and boundary tensors
  double latency_s() const { return npu_s + cpu_s + copy_s + cache_s; }
};

// The artifact's graph and target, ready to run.
struct LoadedArtifact {
  Graph graph;
  npu::Target target;
  artifact_io::CompiledModel meta;
  const artifact_io::MappedArtifact* file = nullptr;
};
StatusOr<LoadedArtifact> LoadArtifact(const artifact_io::MappedArtifact& file);

// How an integer tensor crosses into the NPU: NCHW (4-d) or row-major u8/i8 -> NHWC int8
// bytes (u8 shifted by -128), and back to a tensor of `type`.
std::vector<uint8_t> ToNpu(const Tensor& x);
StatusOr<Tensor> FromNpu(const uint8_t* s, const TensorType& type);

StatusOr<ArtifactRunResult> RunArtifact(const LoadedArtifact& a, ArtifactDevice device,
                                        const std::map<std::string, Tensor>& inputs,
                                        const partition::CpuCost& cpu = {});

// Per-layer table and totals.
std::string FormatArtifactRun(const LoadedArtifact& a, const ArtifactRunResult& r);

}  // namespace edgec
