// Model: an ONNX model loaded into edgec's graph, optimized and quantized in place.
//
//   auto m = edgec::Model::Load("resnet18.onnx");          // StatusOr<Model>
//   m->Optimize(3);                                         // the -O3 pipeline
//   m->Quantize(samples, {.method = "entropy"});            // QDQ form, calibrated on samples
//
// A Model is a value: moving is cheap, Clone() copies the graph.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "edgec/export.h"
#include "edgec/status.h"
#include "edgec/tensor.h"

namespace edgec {
inline namespace v1 {

// One calibration sample: a tensor per graph input, by name.
using Sample = std::map<std::string, TensorView>;

struct QuantizeOptions {
  std::string method = "entropy";  // minmax, percentile, entropy or mse
  bool per_channel = true;         // weights per output channel (false: per tensor)
  DataType dtype = DataType::kI8;  // activations: kI8 or kU8 (weights are always i8)
  bool symmetric = false;          // activations symmetric around 0
  std::vector<std::string> keep_float;  // node names left in float
  // Softmax / LayerNormalization / InstanceNormalization nodes whose input and output carry
  // int16 activations (mixed precision; docs/quantization.md "int16 activations").
  std::vector<std::string> int16;
};

class EDGEC_API Model {
 public:
  // An ONNX file (external data next to it is found).
  static StatusOr<Model> Load(const std::string& path);
  // ONNX bytes in memory; `name` names the model in messages.
  static StatusOr<Model> FromBytes(const void* data, size_t size, const std::string& name = "<memory>");

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();
  Model Clone() const;

  const std::string& name() const;
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;
  // Whether the graph holds QuantizeLinear/DequantizeLinear or integer ops.
  bool quantized() const;
  int64_t node_count() const;

  // Binds symbolic input dims (e.g. the batch) to static ones.
  Status SetInputShape(const std::string& input, const std::vector<int64_t>& dims);
  // Runs the named optimization pipeline (0-3), or an explicit pass list ("fold-constants,...").
  Status Optimize(int level = 3);
  Status Optimize(const std::string& pipeline);
  // Calibrates on `calibration` and rewrites the graph to the QDQ form. Symbolic input dims
  // take the samples' dims.
  Status Quantize(const std::vector<Sample>& calibration, const QuantizeOptions& options = {});
  // The same with the samples of a calibration folder (.npy / .npz files or images, as
  // `edgec quantize --calib DIR` reads it); `limit` > 0 reads the first `limit`.
  Status QuantizeFromDirectory(const std::string& dir, const QuantizeOptions& options = {}, int64_t limit = 0);
  // Writes the graph as ONNX (QDQ form when quantized) for any other runtime to check.
  Status SaveOnnx(const std::string& path) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }
  Impl& impl() { return *impl_; }

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace v1
}  // namespace edgec
