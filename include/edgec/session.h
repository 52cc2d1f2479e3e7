// Session: runs a Model on the CPU, or a CompiledModel on the CPU or the simulated NPU, many
// times. Options are the session's own: two sessions in one process with different thread
// counts or kernel tuning do not interfere. What stays process-wide: the vector ISA cap
// (SetVectorIsaCap) and OpenMP's thread pool, which every session's parallel regions share
// (each region asks for its session's thread count).
//
//   auto s = edgec::Session::Create(model, {.threads = 4});
//   std::vector<float> pixels(1 * 3 * 224 * 224);
//   auto out = s->Run({{"input", edgec::TensorView(edgec::DataType::kF32, {1, 3, 224, 224}, pixels.data())}});
//   const float* logits = (*out)[0].tensor.data_as<float>();
//
// A Session is not safe to Run from two threads at once; use one session per thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "edgec/compiled_model.h"
#include "edgec/export.h"
#include "edgec/model.h"
#include "edgec/profile.h"
#include "edgec/status.h"
#include "edgec/tensor.h"

namespace edgec {
inline namespace v1 {

enum class Device {
  kCpu,     // a Model: the fast CPU plan; a CompiledModel: every node on the CPU's fast kernels
            // (the NPU's nodes in its fixed-point arithmetic; equal to kNpuSim bit for bit)
  kNpuSim,  // a CompiledModel only: NPU segments in the NPU simulator, the rest on the fast CPU plans
};

struct KernelTuning {
  bool winograd = true;                   // Winograd for 3x3 stride-1 f32 convolutions
  int64_t winograd_min_channels = 24;     // ... of at least this many channels
  int64_t conv1x1_gemm_min_pixels = 256;  // 1x1 f32 convolutions as one GEMM from this many pixels
  bool gemv = true;                       // own f32 matrix-vector product for one-row MatMuls
  bool int8_unchecked = false;            // skip the int8 exactness check without VNNI (measurements)
  int64_t min_parallel_macs = 0;          // convolutions and products of fewer multiply-adds run on one
                                          // thread; 0: 2^20, or 2^23 when OMP_WAIT_POLICY=passive
};

struct SessionOptions {
  Device device = Device::kCpu;
  int threads = 0;            // CPU threads of this session (0: all cores)
  int opt_level = 3;          // a Model: the pipeline its CPU plan is optimized with
  bool fold_qdq = true;       // a quantized Model: run Q/DQ around Conv/MatMul/... as integer ops
  bool fixed_point = false;   // ... requantizing as the NPU does (multiplier + shift)
  bool profiling = true;      // record per-node times of every run (profile())
  KernelTuning tuning;
  std::string pipeline;       // a Model: an explicit pass list ("fold-constants,...") instead of opt_level
  bool reference_kernels = false;  // the reference kernels only (plain loops: the correctness oracle)
  bool measure_cpu = false;   // a CompiledModel on kNpuSim: the CPU nodes' share of the latency timed on this
                              // host (after a warm-up run) instead of the partitioner's cost model
  bool record_threads = false;  // a CompiledModel: record which CPU threads ran each CPU node (the profile
                               // report's per-thread tracks)
  bool verbose = false;       // stderr: Q/DQ folding, when plans are built, which nodes fell back or copy
};

// A Model's CPU plan for one set of input shapes (Session::Prepare).
struct PlanInfo {
  int threads = 0;
  int64_t arena_bytes = 0;              // the activation arena
  int64_t arena_lower_bound_bytes = 0;  // no plan can need less
  int64_t naive_bytes = 0;              // every value in its own buffer
  std::string summary;                  // "52 steps (3 views), 21 oneDNN, ..."
};

class EDGEC_API Session {
 public:
  static StatusOr<Session> Create(const Model& model, const SessionOptions& options = {});
  static StatusOr<Session> Create(const CompiledModel& model, const SessionOptions& options = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;

  // Runs on one tensor per graph input (by name); returns the graph outputs in order. Inputs
  // are read where they lie when the CPU plan's kernel can (64-byte aligned, dense); outputs
  // are handed over without a copy.
  StatusOr<std::vector<NamedTensor>> Run(const std::map<std::string, TensorView>& inputs);
  // The profile of the last Run.
  const Profile& profile() const;

  // A Model: builds (or finds) the CPU plan for these input dims without running.
  StatusOr<PlanInfo> Prepare(const std::map<std::string, std::vector<int64_t>>& input_dims);
  // A Model: switches per-step timing on or off for the next runs; while it is on, the step
  // times add up in the step profile (StepProfileTable/Json), which switching it on (from
  // off) restarts.
  void SetProfiling(bool on);
  // The steps that ran, slowest first, over the runs profiled: op, node, kernel, mean ms,
  // share; `top` rows (0: all), then the time per op. JSON: the same rows.
  std::string StepProfileTable(int top) const;
  std::string StepProfileJson() const;
  // A CompiledModel: the last run's per-layer table and totals (unit, cycles or ms, MACs,
  // DRAM bytes, stalls), as `edgec run X.edgec` prints it.
  std::string RunReport() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Caps the vector ISA of edgec's own CPU kernels for the whole process ("avx512", "avx2",
// "scalar"): a process global, as the kernels are chosen per ISA when first used.
EDGEC_API Status SetVectorIsaCap(const std::string& isa);

// The tuning the EDGEC_CPU_* environment variables describe (docs/cpu_runtime.md; unset ones
// keep the defaults, a value that does not parse is reported on stderr and ignored).
EDGEC_API KernelTuning KernelTuningFromEnvironment();
// Applies EDGEC_CPU_ISA as SetVectorIsaCap does (process-wide); call once at start.
EDGEC_API void ApplyVectorIsaFromEnvironment();

// The library's version ("0.1.0").
EDGEC_API const char* Version();

}  // namespace v1
}  // namespace edgec
