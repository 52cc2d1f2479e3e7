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
#include "edgec/target.h"
#include "edgec/tensor.h"

namespace edgec {
inline namespace v1 {

// One calibration sample: a tensor per graph input, by name.
using Sample = std::map<std::string, TensorView>;

// How the images of a calibration folder become tensors (.npy / .npz samples are taken as they
// are): resized, center-cropped to the input's H x W, then (pixel x pixel_scale - mean) / std.
struct ImageOptions {
  int64_t resize = 0;               // shorter side to this many pixels first (0: no resize)
  float pixel_scale = 1.0f / 255;
  std::vector<float> mean = {0, 0, 0};  // per channel, R G B
  std::vector<float> std = {1, 1, 1};
  bool bgr = false;                 // the model wants BGR
  std::string layout = "auto";      // nchw, nhwc, or auto (where the input has 3 channels)
};

struct QuantizeOptions {
  std::string method = "entropy";  // minmax, percentile, entropy or mse
  bool per_channel = true;         // weights per output channel (false: per tensor)
  DataType dtype = DataType::kI8;  // activations: kI8 or kU8 (weights are always i8)
  bool symmetric = false;          // activations symmetric around 0
  std::vector<std::string> keep_float;  // node names left in float
  // Softmax / LayerNormalization / InstanceNormalization nodes whose input and output carry
  // int16 activations (mixed precision; docs/quantization.md "int16 activations"); "all":
  // every one whose input is quantized.
  std::vector<std::string> int16;

  // The calibrators' knobs (docs/quantization.md).
  double percentile = 99.99;         // method "percentile"
  double entropy_min_keep = 0.9999;  // method "entropy": only thresholds that keep this share of the values
  double clip_ratio = 1.0;           // every calibrated range shrunk by this factor (<= 1)
  bool reduce_range = false;         // weights in 7 bits
  // Input dims to bind; the other symbolic dims take the samples' dims.
  std::map<std::string, std::vector<int64_t>> shapes;
  std::string scales_in;   // use this scale table (JSON, as scales_out writes it) instead of calibrating
  std::string scales_out;  // write the scale table used here

  // The per-layer error report and the accuracy budget, measured on `error_samples` inputs
  // (from eval_dir when given, else the calibration samples).
  bool sensitivity = false;    // QuantizeReport::sensitivity: each layer quantized alone
  double accuracy_budget = 0;  // > 0: promote norms/softmaxes to int16 (where `target` allows), then
                               // keep the most sensitive layers in float, until the mean output
                               // cosine vs FP32 reaches this (QuantizeReport::budget)
  bool budget_int16 = true;    // false: the budget keeps layers in float only
  Target target;               // whose vector cores decide whether int16 is an option
  int64_t error_samples = 8;
  // Held-out inputs (a folder, as the calibration one): QuantizeReport::eval compares the
  // int8 execution with FP32 on the first `eval_limit` of them (0: all).
  std::string eval_dir;
  int64_t eval_limit = 0;
  ImageOptions image;          // images of the calibration and eval folders
  bool progress = false;       // progress bars on stderr
};

// One layer quantized alone (every other in float): the error it adds at the outputs.
struct LayerSensitivity {
  std::string node;   // node name (what keep_float takes)
  std::string layer;  // "Conv 'layer1.0/conv1'"
  double sqnr_db = 0;
  double cosine = 1;  // mean output cosine vs FP32
};

struct Int16Promotion {
  std::string node, layer;
  double cosine_alone = 0;  // output cosine with this node alone in int16
  double cosine_after = 0;  // with it and every earlier promotion
};

struct AccuracyBudgetReport {
  bool ran = false;          // QuantizeOptions::accuracy_budget > 0
  double budget = 0;
  bool met = false;
  double int8_cosine = 0;    // all int8
  double mean_cosine = 0;    // reached
  bool int16_allowed = false;  // budget_int16 and the target's vector cores take i16
  std::string target;
  std::vector<Int16Promotion> int16;         // promoted, in order
  std::vector<LayerSensitivity> kept_float;  // kept in float, in order
};

// Int8 execution vs FP32 on the eval inputs, per graph output.
struct OutputAccuracy {
  std::string output;
  double min_cosine = 0, mean_cosine = 0;
  double top1 = 0;  // share of inputs whose argmax agrees
  double max_abs = 0;
  double sqnr_db = 0;
};

// What an ONNX file declares, as the importer read it (Model::Load fills it even when the
// import fails, so that a caller can say which ops were not supported).
struct OnnxFileInfo {
  int64_t ir_version = 0;
  int opset = 0;
  std::string producer;
  std::map<std::string, int> op_histogram;  // ONNX op_type -> count, as in the file
  std::vector<std::string> unsupported;     // per op type edgec cannot import: "NonZero 'nz1'"
};

// What Model::Quantize / QuantizeFromDirectory did.
struct QuantizeReport {
  int64_t samples = 0;                            // calibration samples (the scale table's)
  std::vector<std::string> shapes_from_samples;   // "NAME=DIMS" per input bound from the samples' dims
  int64_t quantized_nodes = 0;
  int64_t activation_pairs = 0;                   // activation Q/DQ pairs inserted
  std::vector<std::string> skipped;               // nodes left in float, and why
  std::vector<std::string> float_ops;             // every node computing in float, one line per op kind
                                                  // and reason with a count: "2 ReduceSum: no integer form"
  std::vector<std::string> float_nodes;           // the same per node: "ReduceSum '/r': no integer form"
  std::string method;                             // the calibrator (the scale table's)
  DataType activation_dtype = DataType::kI8;
  bool symmetric = false;
  int64_t int16_pairs = 0;                        // of activation_pairs
  std::vector<std::string> int16_layers;          // nodes carrying int16, in graph order ("Softmax 'sm'")
  int64_t error_samples = 0;                      // inputs sensitivity / the budget measured on
  std::vector<LayerSensitivity> sensitivity;      // most harmful first (sensitivity or a budget)
  AccuracyBudgetReport budget;
  int64_t eval_samples = 0;
  std::vector<OutputAccuracy> eval;               // with eval_dir
};

// One node of the graph (Model::nodes()).
struct NodeInfo {
  std::string name;
  std::string op;                 // edgec's op name: "Conv", "FusedConv", "QLinearConv", ...
  std::string label;              // "Conv 'layer1.0/conv1'"
  int64_t macs = 0;               // multiply-accumulates of one run; -1: shapes not known
  std::vector<ValueInfo> outputs;
  bool is_view = false;           // every output a zero-copy view of memory that exists
};

// Model::Optimize with a report: the pipeline and the checks `edgec optimize` offers.
struct OptimizeOptions {
  int level = 3;                         // a named pipeline 0-3 ...
  std::string pipeline;                  // ... or this explicit pass list
  bool verify_each = false;              // re-check shapes and types after every pass
  bool explain = false;                  // record why patterns did not match (explanations)
  std::vector<std::string> print_after;  // print the IR after these passes ("all"), to stderr
};

struct PassRecord {
  std::string pass;
  double milliseconds = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  std::map<std::string, int64_t> rewrites;  // pattern or kind -> count ("Conv+Relu": 16)
  int64_t copy_bytes_removed = 0;           // per inference
};

struct OptimizeReport {
  std::string pipeline;                   // the pipeline that ran, as text
  std::vector<PassRecord> passes;         // one per pass run, in order
  std::vector<std::string> explanations;  // with `explain`
};

struct OnnxSaveOptions {
  // Fused ops as nodes of the "edgec" domain; false: unfused back into standard ONNX ops.
  bool keep_fused = false;
};

// Model::FoldQdq: how the Q/DQ patterns become integer ops.
struct QdqFoldOptions {
  bool fixed_point = false;  // requantize with the NPU's integer multiplier + shift (bit-equal to the NPU)
};

struct QdqFoldSummary {
  int64_t folded = 0;                 // nodes folded into integer ops (QLinearConv, QLinearMatMul, ...)
  int64_t int8_movement = 0;          // data-movement ops left on int8 values
  int64_t tabulated = 0;              // float islands replaced by a lookup table
  std::vector<std::string> skipped;   // what stays in float, and why
};

// The opset SaveOnnx writes.
inline constexpr int kOnnxExportOpset = 17;

class EDGEC_API Model {
 public:
  // An ONNX file (external data next to it is found).
  static StatusOr<Model> Load(const std::string& path);
  // ONNX bytes in memory; `name` names the model in messages.
  static StatusOr<Model> FromBytes(const void* data, size_t size, const std::string& name = "<memory>");
  // The same, filling `info` with what the file declares (also when the import fails).
  static StatusOr<Model> Load(const std::string& path, OnnxFileInfo* info);

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();
  Model Clone() const;

  const std::string& name() const;
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;
  // Whether the graph holds QuantizeLinear/DequantizeLinear or integer ops.
  bool quantized() const;
  // Whether the graph holds QuantizeLinear/DequantizeLinear nodes (a QDQ model).
  bool has_qdq() const;
  // The nodes in execution order, with their MACs and output types.
  std::vector<NodeInfo> nodes() const;
  // Elements and bytes of the constants (weights, biases, ...).
  int64_t parameter_count() const;
  int64_t parameter_bytes() const;
  // Bytes the graph's data-movement nodes copy per run (0 for zero-copy views).
  int64_t copy_bytes() const;
  int64_t node_count() const;

  // Binds symbolic input dims (e.g. the batch) to static ones.
  Status SetInputShape(const std::string& input, const std::vector<int64_t>& dims);
  // Binds several inputs at once; every other symbolic input dim becomes `default_dim` (0:
  // stays symbolic). Shapes are inferred through the graph.
  Status BindInputShapes(const std::map<std::string, std::vector<int64_t>>& dims, int64_t default_dim = 0);
  // Makes inputs constants: each named input takes the given value for good and leaves the
  // model's inputs, so that what depends only on it folds (silero VAD's `sr`: an If on
  // sr == 16000 becomes its 16 kHz branch). Shapes are inferred again. Fails naming the
  // input when it is unknown or the value's dtype or dims contradict its declaration. The
  // data is copied.
  Status FreezeInputs(const std::map<std::string, TensorView>& values);
  // Runs the named optimization pipeline (0-3), or an explicit pass list ("fold-constants,...").
  Status Optimize(int level = 3);
  Status Optimize(const std::string& pipeline);
  // The same with verification, explanations and a per-pass report (`report` may be null).
  Status Optimize(const OptimizeOptions& options, OptimizeReport* report);
  // Calibrates on `calibration` and rewrites the graph to the QDQ form. Symbolic input dims
  // take the samples' dims. `report` may be null.
  Status Quantize(const std::vector<Sample>& calibration, const QuantizeOptions& options = {});
  Status Quantize(const std::vector<Sample>& calibration, const QuantizeOptions& options, QuantizeReport* report);
  // The same with the samples of a calibration folder (.npy / .npz files or images, as
  // `edgec quantize --calib DIR` reads it); `limit` > 0 reads the first `limit`. `dir` may be
  // empty when options.scales_in is given.
  Status QuantizeFromDirectory(const std::string& dir, const QuantizeOptions& options = {}, int64_t limit = 0);
  // The same with a report (may be null). Input dims bound before (BindInputShapes) are kept.
  Status QuantizeFromDirectory(const std::string& dir, const QuantizeOptions& options, int64_t limit,
                               QuantizeReport* report);
  // Folds the Q/DQ patterns of a QDQ model into integer ops, as a CPU session of it does
  // first (SessionOptions::fold_qdq); integer 1-d convolutions and pools then become their
  // 2-d form with H = 1 between an Unsqueeze and a Squeeze (the int8 kernels are 2-d);
  // `summary` may be null.
  Status FoldQdq(const QdqFoldOptions& options, QdqFoldSummary* summary);
  // Writes the graph as ONNX (QDQ form when quantized) for any other runtime to check.
  Status SaveOnnx(const std::string& path) const;
  Status SaveOnnx(const std::string& path, const OnnxSaveOptions& options) const;

  // Runs the graph as it is on the reference kernels (plain loops: the correctness oracle)
  // and returns the outputs in graph order.
  StatusOr<std::vector<NamedTensor>> RunReference(const std::map<std::string, TensorView>& inputs) const;

  struct Impl;
  const Impl& impl() const { return *impl_; }
  Impl& impl() { return *impl_; }

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The names of every graph pass (a pipeline's steps; docs/passes.md).
EDGEC_API std::vector<std::string> PassNames();

}  // namespace v1
}  // namespace edgec
