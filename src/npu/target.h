// NPU target description: every number the simulator, tiler and lowering use comes from here.
//
// A target is a JSON file (targets/*.json) whose fields mirror these structs one to one; the
// default target ("edge-default", DESIGN.md's typical edge NPU) is compiled in. Parsing is
// strict: an unknown field, a missing field, a wrong type or an impossible value is an error
// that names the file and the dotted field path (`edge-mcu.json: shared_sram.bytes: must be
// > 0, got 0`).
//
// Overrides (`--set shared_sram.bytes=512K`) address any field by its dotted path. Values may
// carry units: byte sizes K/M/G (and KiB/MiB/GiB, binary), frequencies kHz/MHz/GHz, bandwidths
// KB/s, MB/s, GB/s (decimal), plain numbers, true/false, or text for string fields. Lists
// (supported_ops, supported_dtypes) take comma-free `a|b|c`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace edgec::npu {

enum class Dataflow { kWeightStationary, kOutputStationary };

struct AiCoreSpec {
  int count = 0;
  int mac_rows = 0;   // R: the reduction (K) dimension of the array
  int mac_cols = 0;   // C: output channels (N) held at once
  Dataflow dataflow = Dataflow::kWeightStationary;
  double int8_rate = 1.0;  // MACs per PE per cycle for int8 operands
  double fp16_rate = 0.5;  // ... for fp16 operands
  int64_t accumulator_bytes = 0;   // int32 accumulators per core
  int64_t local_buffer_bytes = 0;  // per-core scratch (parameters, requant tables)
};

struct VectorCoreSpec {
  int count = 0;
  int lanes = 0;
  int pipeline_latency = 0;  // cycles before the first element of a VEC instruction is out
  // Cycles per `lanes` elements, by VEC op name (add, mul, relu, requantize, maxpool, avgpool,
  // lut, copy). Every VecOp must have an entry.
  std::map<std::string, double> cycles_per_element;
  // Activation dtypes the vector cores take, each with its rate relative to int8 (i16: 0.5
  // means a VEC op over int16 values costs twice its int8 cycles). Optional in a file;
  // absent: {"i8": 1}. The partition keeps an int16 norm or softmax on the CPU when its
  // target lacks "i16" here (tests/npu/target_test.cc, DtypeRates*).
  std::map<std::string, double> dtype_rates = {{"i8", 1.0}};
  // Rate of `dtype` relative to int8; 0 when the vector cores do not take it.
  double VecRate(const std::string& dtype) const {
    auto it = dtype_rates.find(dtype);
    return it == dtype_rates.end() ? 0.0 : it->second;
  }
};

struct SramSpec {
  int64_t bytes = 0;
  int banks = 0;
  int64_t bandwidth_bytes_per_cycle = 0;
  int64_t alignment = 0;  // every buffer starts at a multiple of this
  // The SRAM keeps its contents between calls (no other user of it between two runs of the
  // model): weights that fit stay resident and later calls skip their load.
  bool resident_weights = false;
};

struct DramSpec {
  double bandwidth_bytes_per_s = 0;
  int read_latency_cycles = 0;
  int write_latency_cycles = 0;
  int burst_bytes = 0;  // a contiguous row is moved in whole bursts
};

struct DmaSpec {
  int engines = 0;       // concurrent transfers per core
  int setup_cycles = 0;  // descriptor setup per DMA instruction
  int max_dims = 0;      // strided dims one descriptor may have, including the contiguous row
  bool pad_on_load = false;  // loads can fill out-of-bounds rows / channel padding
};

// The CPU's data cache at a CPU <-> NPU hand-over. Not coherent: the CPU flushes (cleans)
// the lines of a buffer it wrote before the NPU reads it and invalidates the lines of a
// buffer before it reads what the NPU wrote, each line costing cycles_per_line (NPU clock
// cycles), plus a barrier per hand-over; coherent: no maintenance steps at all.
struct CacheSpec {
  bool coherent = false;
  int line_bytes = 64;
  double cycles_per_line = 0;
  int barrier_cycles = 0;
};

// Optional energy figures (the "energy" object of a target file; every field >= 0, 0 = not
// given): the profile's energy per layer = MACs * pj_per_mac + DRAM bytes * pj_per_dram_byte +
// on-chip bytes * pj_per_sram_byte, and CPU nodes MACs * cpu_pj_per_mac. Shown only when
// pj_per_mac or pj_per_dram_byte is given (given()). Guarded by tests/report/profile_trace_test.cc.
struct EnergySpec {
  double pj_per_mac = 0;
  double pj_per_dram_byte = 0;
  double pj_per_sram_byte = 0;
  double cpu_pj_per_mac = 0;
  bool given() const { return pj_per_mac > 0 || pj_per_dram_byte > 0; }
};

struct Target {
  std::string name;
  std::string description;
  double clock_hz = 0;
  AiCoreSpec ai_cores;
  VectorCoreSpec vector_cores;
  SramSpec shared_sram;
  DramSpec dram;
  DmaSpec dma;
  CacheSpec cpu_cache;
  EnergySpec energy;
  int dispatch_overhead_cycles = 0;  // the task queue's cost per TASK_BEGIN
  int token_latency_cycles = 0;      // a SIGNAL is visible to its WAIT after this long
  std::string native_layout;         // "NHWC"
  int channel_alignment = 0;         // channel dims are padded to a multiple of this
  std::vector<std::string> supported_ops;     // ops.def names
  std::vector<std::string> supported_dtypes;  // "i8", "i32", "f16", ...

  // Derived figures.
  int64_t macs_per_core() const { return int64_t{ai_cores.mac_rows} * ai_cores.mac_cols; }
  double peak_int8_macs_per_cycle() const {
    return static_cast<double>(macs_per_core()) * ai_cores.count * ai_cores.int8_rate;
  }
  double tops_int8() const { return 2.0 * peak_int8_macs_per_cycle() * clock_hz / 1e12; }
  double dram_bytes_per_cycle() const { return dram.bandwidth_bytes_per_s / clock_hz; }
  bool SupportsOp(std::string_view op) const;
  bool SupportsDType(std::string_view dtype) const;
};

// The compiled-in default target (DESIGN.md's values); same content as targets/edge-default.json.
const Target& DefaultTarget();
const char* DefaultTargetJson();

// Parses and validates a target; `source` names the file in messages.
StatusOr<Target> ParseTarget(const nlohmann::json& j, const std::string& source);
StatusOr<Target> ParseTargetText(const std::string& text, const std::string& source);
nlohmann::json TargetToJson(const Target& t);

// Loads a target by file path, or by name: "default"/"edge-default" is the built-in one, any
// other name is looked up as <dir>/<name>.json in the target directories (TargetDirs()).
StatusOr<Target> LoadTarget(const std::string& file_or_name);

// targets/ next to the executable's repository, $EDGEC_TARGETS, and ./targets.
std::vector<std::string> TargetDirs();

// Every target found: the built-in one first, then each targets/*.json (by name).
StatusOr<std::vector<Target>> ListTargets();

// Applies one `path=value` override (dotted path, units allowed) to a target.
StatusOr<Target> ApplyOverride(const Target& t, const std::string& assignment);
StatusOr<Target> ApplyOverrides(const Target& t, const std::vector<std::string>& assignments);

// "256K" -> 262144, "2GHz" -> 2e9, "30GB/s" -> 3e10, "1.5" -> 1.5. Errors name the text.
StatusOr<double> ParseQuantity(const std::string& text);

}  // namespace edgec::npu
