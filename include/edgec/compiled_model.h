// CompiledModel: a quantized model compiled for an NPU target — the partition (each node on
// the NPU or the CPU, with the reason), the NPU programs and the memory plan, as one `.edgec`
// file can hold it.
//
//   auto c = edgec::CompiledModel::Compile(model, options);   // model: quantized (QDQ)
//   for (auto& p : c->placements()) std::cout << p.node << " " << UnitName(p.unit) << "\n";
//   c->Save("model.edgec");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "edgec/export.h"
#include "edgec/model.h"
#include "edgec/profile.h"
#include "edgec/status.h"
#include "edgec/target.h"

namespace edgec {
inline namespace v1 {

struct NodePlacement {
  std::string node;
  std::string op;
  Unit unit = Unit::kCpu;
  std::string reason;  // why the CPU, or the NPU's cost line
  std::string code;    // the reason code: "npu_cheaper", "unsupported_op", "pinned_cpu", "model_boundary", ...
                       // ("" after Load of a file written before codes were stored)
  int64_t macs = 0;
  // Known for a model compiled in this process (Compile), not after Load:
  std::string hint;    // a fix hint (a --set, a dtype, a pin); empty on the NPU
};

// One segment of a compiled model: a run of nodes on one unit. For an NPU segment, its program
// and SRAM plan as the file stores them.
struct SegmentInfo {
  Unit unit = Unit::kCpu;
  std::vector<std::string> nodes, inputs, outputs;
  int npu_layers = 0;                // layers of the SRAM plan (stripes of a cascade count each)
  int npu_cores = 0;                 // cores the program uses
  int64_t npu_program_bytes = 0;     // the instruction stream's encoding, without the constants
  int64_t npu_constant_bytes = 0;    // weights and parameters in the program's DRAM image
  int64_t sram_peak = 0;             // the largest SRAM occupancy over its layers
  // The SRAM plan's tensors: kept in SRAM from producer to last consumer, inside a cascade (only
  // bands of their rows on chip), spilled to DRAM for want of room, or in DRAM by their role
  // (the segment's inputs and outputs).
  int tensors_on_chip = 0, tensors_in_bands = 0, tensors_spilled = 0, tensors_in_dram = 0;
  int64_t bytes_on_chip = 0, bytes_in_bands = 0, bytes_spilled = 0, bytes_in_dram = 0;
  int hand_over_steps = 0;           // cache flush / invalidate / barrier steps around it
};

class EDGEC_API CompiledModel {
 public:
  // Folds the model's Q/DQ into integer ops, partitions, lowers the NPU part. A float model
  // is refused (quantize it first).
  static StatusOr<CompiledModel> Compile(const Model& model, const CompileOptions& options = {});
  // A `.edgec` file (verified: checksum, offsets, format version).
  static StatusOr<CompiledModel> Load(const std::string& path);

  CompiledModel(CompiledModel&&) noexcept;
  CompiledModel& operator=(CompiledModel&&) noexcept;
  ~CompiledModel();

  Status Save(const std::string& path) const;
  const std::string& target_name() const;
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;
  std::vector<NodePlacement> placements() const;
  // One line per node: "npu  QLinearConv 'conv1'  <reason>", then the counts.
  std::string PlacementReport() const;
  // What the compiler reports, for a model compiled in this process ("" after Load): the
  // placement table with costs (as `edgec compile` prints it), the same as JSON (per node:
  // unit, reason code, violated constraint, costs, fix hint), the NPU programs as assembly,
  // each NPU segment's SRAM plan and the activation memory plan.
  std::string PlacementTable() const;
  std::string PlacementJson() const;
  std::string NpuListing() const;
  std::string SramSummary() const;
  std::string MemorySummary() const;
  // The layers of the NPU segment with the most layers (0: no NPU segment), and an SVG plot of
  // the SRAM occupancy over them titled `title`.
  int widest_npu_segment_layers() const;
  StatusOr<std::string> SramOccupancySvg(const std::string& title) const;
  int segment_count() const;
  int npu_segment_count() const;
  std::vector<SegmentInfo> segments() const;
  const std::string& source_model() const;  // the model file it was compiled from
  const std::string& producer() const;      // "edgec <version>" that wrote it

  struct Impl;
  // Shared with the sessions made from it, which keep it alive.
  const std::shared_ptr<const Impl>& impl() const { return impl_; }

 private:
  explicit CompiledModel(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace v1
}  // namespace edgec
