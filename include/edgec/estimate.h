// NPU estimates without compiling for the device or running: what `edgec estimate` and
// `edgec sweep` print (docs/npu.md; docs/api.md "NpuWorkload").
//
//   auto w = edgec::NpuWorkload::FromModel("resnet18.onnx");  // shapes only, no weights needed
//   auto t = edgec::Target::Load("edge-default");
//   auto e = w->Estimate(*t);                                  // every GEMM-class layer tiled and simulated
//   auto s = w->EstimateSegments(*t);                          // a QDQ model: the compiler's schedule
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "edgec/export.h"
#include "edgec/status.h"
#include "edgec/target.h"

namespace edgec {
inline namespace v1 {

struct EstimateOptions {
  bool single_buffer = false;  // tile every layer with single buffering only
  bool show_tiling = false;    // NpuEstimate::table shows each layer's tiling and the runner-up
  bool listing = false;        // fill NpuEstimate::listing (each layer's NPU instructions)
  bool cascades = true;        // EstimateSegments: spilled chains may run as row stripes
};

// One GEMM-class layer (Conv, MatMul, Gemm or their int8 forms), tiled for the target.
struct NpuLayerEstimate {
  std::string name;
  int64_t count = 1;         // identical instances (a decoder: layers x heads)
  double cycles = 0;         // one instance
  int64_t macs = 0;          // one instance
  int64_t dram_read = 0, dram_written = 0;  // one instance, bytes
  std::string tiling;        // the tiling chosen, as text
};

// Layer by layer (shape only): the layers one after another, every instance counted.
struct NpuEstimate {
  double cycles = 0;
  double milliseconds = 0;   // cycles at the target's clock
  int64_t macs = 0, dram_read = 0, dram_written = 0;
  int64_t weight_bytes = 0;
  double mac_utilization = 0;  // MACs / (cycles x the target's peak MACs per cycle)
  std::vector<NpuLayerEstimate> layers;
  std::string table;         // the per-layer table `edgec estimate` prints
  std::string listing;       // with EstimateOptions::listing: "; layer NAME: TILING" + the program, per layer
};

// A quantized model compiled as `edgec compile` does it (cost rule, segments, SRAM plans): the
// NPU segments' time one after another.
struct NpuSegmentEstimate {
  int segments = 0, layers = 0;
  double cycles = 0;
  double milliseconds = 0;
  int64_t macs = 0, dram_read = 0, dram_written = 0;
  int64_t resident_bytes = 0;  // tensors kept in SRAM from producer to last consumer
  int64_t spilled_bytes = 0;   // tensors the plan wanted on chip but spilled to DRAM
  double mac_utilization = 0;
};

// What is estimated: the GEMM-class layers of an ONNX model (its shapes; a QDQ model also its
// integer graph) or of a generated decoder-only transformer.
class EDGEC_API NpuWorkload {
 public:
  // An ONNX file; `shapes` binds symbolic input dims (every other one becomes 1). Fails when
  // no layer is one the NPU can run (but for a QDQ model, which EstimateSegments still takes).
  static StatusOr<NpuWorkload> FromModel(const std::string& path,
                                         const std::map<std::string, std::vector<int64_t>>& shapes = {});
  // "7b", "1b", "tiny", or "layers=32,hidden=4096,heads=32,ffn=11008,seq=1,context=1024,...";
  // `fp16`: the weights stream as fp16 instead of int8.
  static StatusOr<NpuWorkload> FromDecoder(const std::string& config, bool fp16 = false);

  NpuWorkload(NpuWorkload&&) noexcept;
  NpuWorkload& operator=(NpuWorkload&&) noexcept;
  ~NpuWorkload();

  // A QDQ model (QuantizeLinear / QLinear ops): EstimateSegments applies.
  bool quantized() const;
  // The model's nodes of a GEMM-class op the NPU cannot take, with why: "Conv 'c1': ...".
  const std::vector<std::string>& not_on_npu() const;
  // A decoder: its config as text ("layers=2,hidden=256,... (int8)") and parameter count.
  const std::string& decoder() const;
  int64_t decoder_parameters() const;

  StatusOr<NpuEstimate> Estimate(const Target& target, const EstimateOptions& options = {}) const;
  // A QDQ model only: folded to integer ops, compiled for `target`, its NPU segments timed.
  StatusOr<NpuSegmentEstimate> EstimateSegments(const Target& target, const EstimateOptions& options = {}) const;

  struct Impl;

 private:
  explicit NpuWorkload(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One point of a what-if plot (`edgec sweep --svg`).
struct SweepPoint {
  std::string label;          // the swept field's value
  double milliseconds = 0;
  int64_t spilled_bytes = -1;  // -1: not known (a layer-by-layer estimate)
};
// An SVG plot of latency (and spilled bytes where known) against the values of `field`.
EDGEC_API std::string SweepSvg(const std::string& field, const std::string& title, const std::vector<SweepPoint>& points);

}  // namespace v1
}  // namespace edgec
