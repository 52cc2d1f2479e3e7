// Target: the description of an NPU device (cores, MAC array, SRAM, DRAM, ...) that a model
// is compiled for; docs/npu.md lists the fields. CompileOptions: how to compile.
//
//   auto t = edgec::Target::Load("edge-default");   // a built-in name, or a .json file
//   t->Set("shared_sram.bytes=512K");               // as `--set` does on the command line
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "edgec/export.h"
#include "edgec/status.h"

namespace edgec {
inline namespace v1 {

class EDGEC_API Target {
 public:
  // The built-in default (edge-default).
  Target();
  // A target by name (`edgec targets` lists them) or by the path of a JSON file.
  static StatusOr<Target> Load(const std::string& name_or_path);
  // A target from JSON text (every field the file format has; missing ones keep defaults).
  static StatusOr<Target> FromJson(const std::string& json_text);
  // The names of every target found (built in, and the .json files of the target folders).
  static StatusOr<std::vector<std::string>> Available();
  // Every target found, in the order Available() names them.
  static StatusOr<std::vector<Target>> All();

  Target(const Target&);
  Target& operator=(const Target&);
  Target(Target&&) noexcept;
  Target& operator=(Target&&) noexcept;
  ~Target();

  // Overrides one field by its dotted path: "shared_sram.bytes=512K", "ai_cores.count=8".
  Status Set(const std::string& assignment);
  const std::string& name() const;
  // The full description as JSON (after overrides).
  std::string ToJson() const;
  double clock_hz() const;
  const std::string& description() const;
  int64_t cores() const;            // AI cores
  int64_t mac_rows() const;         // each core's MAC array
  int64_t mac_cols() const;
  double peak_int8_macs_per_cycle() const;
  double tops_int8() const;         // 2 x MACs/cycle x clock
  int64_t sram_bytes() const;       // the shared SRAM
  double dram_bytes_per_s() const;  // DRAM bandwidth

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct CompileOptions {
  Target target;                 // default: edge-default
  bool all_npu = false;          // skip the cost rule: every legal node to the NPU
  bool single_buffer = false;    // tile every layer with single buffering
  double cpu_gmacs = 20;         // the cost rule's CPU int8 rate (GMAC/s)
  std::map<std::string, bool> pins;  // node name -> true: the NPU, false: the CPU, whatever the cost rule says
};

}  // namespace v1
}  // namespace edgec
