// Running a compiled model file (`edgec run model.edgec`).
//
// --device npu-sim: every NPU segment runs in the NPU simulator as one program (functional
// and timing, on its DRAM image: constants from the file, each value entering the segment
// written to the region of its name as NHWC int8, each value leaving it read from the region
// of its name), when its first node comes up; its layers' rows show their part of the task
// (they overlap in time). CPU nodes run on fast CPU plans, one per run of consecutive CPU
// nodes (cpu_segment.h), the same in both devices; with ArtifactRunOptions::fast_kernels off
// (`edgec run --reference`) node by node on the reference kernels. A tensor moving from a CPU
// node to an NPU node (or back) is one copy, counted with its bytes; the NCHW <-> NHWC change
// (and the u8 <-> i8 shift by 128) happens in that copy, which the CPU writes through its
// cache (cpu_cache.h): the segment's hand-over steps (flush before, invalidate after, barriers)
// run around the simulation and cost their cycles. Between NPU segments the tensor stays in
// DRAM in the NPU's layout.
// --device cpu: every node on the CPU; the NPU's nodes (QLinearConv, QLinearMatMul) as the
// integer convolution / matmul (int32) plus the same fixed-point requantization the NPU uses
// (quant/fixed_point.h); its adds, multiplies, norms and average pools in fixed-point mode
// (`edgec_requant`); lookups, max pools and data movement exact: the two devices agree bit
// for bit. With the fast kernels the whole graph is one CPU plan whose NPU nodes carry
// `edgec_requant = fixed_point` (the fast int8 kernels' NPU arithmetic); with the reference
// kernels node by node. An NPU segment with several outputs (Split) has the
// regions "<node>.output", "<node>.output1", ...
//
// Simulated latency (npu-sim) = NPU cycles / clock + the CPU nodes' time + copies (bytes /
// DRAM bandwidth + bytes / CPU copy bandwidth) + cache maintenance cycles / clock. The CPU
// nodes' time is the partitioner's cost model (MACs / int8 rate, other nodes: bytes in + out /
// copy bandwidth), or with ArtifactRunOptions::measure_cpu and the fast kernels the time
// measured on this host (wall time of each CPU plan's run, its arena copies included); the
// cost model is computed in both cases (cpu_model_s) and printed beside a measurement.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "npu/sim.h"
#include "partition/partition.h"
#include "runtime/artifact.h"
#include "runtime/cpu_segment.h"

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
  std::string kernel;  // what ran it: "npu-sim", a CPU plan's kernel, "reference", ...
  double seconds = 0;  // simulated (NPU), measured or estimated (CPU) time, copies included
  // The latency attributed to the row: a CPU row's `seconds`; an NPU row's share of its
  // segment's time (npu/sim.h LayerSpan::attributed: the layers running at once split it) plus
  // its copies. NPU spans overlap (weights stream in ahead, tiles pipeline); these add up.
  double attributed_s = 0;
  double start_cycle = 0;  // NPU: first cycle of the layer in its segment's task
  // CPU nodes, with ArtifactRunOptions::record_threads: the parallel-region shares its kernel
  // ran, `thread` an index into ArtifactRunResult::cpu_thread_ids, [begin_s, end_s) from the
  // row's start within `seconds` (the time's source: measured, or the cost model with each
  // share scaled by cost / measured).
  struct ThreadShare {
    int thread = 0;
    double begin_s = 0, end_s = 0;
  };
  std::vector<ThreadShare> threads;
};

struct ArtifactRunResult {
  std::vector<std::string> output_names;
  std::vector<Tensor> outputs;
  std::vector<LayerRun> layers;  // every node in order
  npu::Stats npu_total;
  double npu_s = 0, cpu_s = 0, copy_s = 0;
  bool cpu_measured = false;  // cpu_s measured on this host (fast kernels), else the cost model
  double cpu_model_s = 0;     // the partitioner's cost model for the same CPU nodes
  int cpu_threads = 0;        // the CPU plans' threads (measured runs)
  // With record_threads: the OS threads that ran CPU steps, the one that called Run first.
  std::vector<int64_t> cpu_thread_ids;
  double cache_s = 0;           // cache maintenance at hand-overs
  int cache_steps[3] = {0, 0, 0};  // flushes, invalidates, barriers
  int copies = 0;
  int64_t copy_bytes = 0;
  int64_t npu_const_bytes = 0, npu_io_bytes = 0;  // the NPU segments' constants and boundary tensors
  // Weights kept in SRAM between calls (target shared_sram.resident_weights): their bytes, and
  // the bytes this call did not load because an earlier call of the session left them there.
  int64_t resident_weight_bytes = 0, resident_weight_skipped = 0;
  std::vector<std::string> resident_weight_layers;
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

struct ArtifactRunOptions {
  bool fast_kernels = true;  // false: the CPU nodes node by node on the reference kernels
  int threads = 0;           // the CPU plans' threads (0: all cores)
  cpu::KernelTuning tuning;  // the CPU plans' kernel choices (cpu/kernel.h)
  partition::CpuCost cpu;    // the partitioner's cost model (reported beside measured times)
  // The simulated latency's CPU share: the cost model (default: the same on every host and
  // under any load, so reports and diffs are reproducible) or, with fast kernels, the time
  // measured on this host.
  bool measure_cpu = false;
  // Record which threads ran each CPU node's parallel regions (LayerRun::threads).
  bool record_threads = false;
};

// One executor per compiled model and session: the CPU plans are built once (Create) and
// run on every Run; `a` must outlive it.
class ArtifactExecutor {
 public:
  static StatusOr<std::unique_ptr<ArtifactExecutor>> Create(const LoadedArtifact& a,
                                                            const ArtifactRunOptions& options = {});
  StatusOr<ArtifactRunResult> Run(ArtifactDevice device, const std::map<std::string, Tensor>& inputs);
  const std::vector<CpuSegment>& cpu_segments() const { return cpu_; }
  // What runs CPU node `node` (a plan's kernel, "fused", "view"); "" for other nodes.
  std::string CpuKernelOf(const std::string& node) const;

 private:
  ArtifactExecutor(const LoadedArtifact& a, const ArtifactRunOptions& options) : a_(a), options_(options) {}
  const LoadedArtifact& a_;
  ArtifactRunOptions options_;
  std::unordered_map<std::string, size_t> npu_segment_;  // node -> index in a_.meta.segments
  std::vector<CpuSegment> cpu_;
  // The NPU's shared SRAM between Runs, and the segments whose resident weights are in it:
  // their first task (the weights' load) runs on the session's first call only.
  std::vector<uint8_t> sram_;
  std::set<size_t> weights_loaded_;
  std::unordered_map<std::string, int> cpu_segment_of_;  // node -> index in cpu_
  // --device cpu with the fast kernels: the whole graph as one CPU plan, the NPU's nodes in
  // its fixed-point arithmetic (built on the first such Run).
  Status BuildWholeCpu();
  Graph whole_graph_;
  std::vector<CpuSegment> whole_;
  std::unordered_map<std::string, int> whole_segment_of_;
};

// One run on a fresh executor (tests, one-shot callers).
StatusOr<ArtifactRunResult> RunArtifact(const LoadedArtifact& a, ArtifactDevice device,
                                        const std::map<std::string, Tensor>& inputs,
                                        const ArtifactRunOptions& options = {});

// Per-layer table and totals.
std::string FormatArtifactRun(const LoadedArtifact& a, const ArtifactRunResult& r);

}  // namespace edgec
