// The quantization flow as library calls shared by `edgec quantize`, the tests and the
// accuracy script: prepare the float graph, calibrate, rewrite to QDQ, and compare an int8
// execution with the float one over a set of inputs.
#pragma once

#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/fold_qdq.h"
#include "quant/qdq_rewrite.h"

namespace edgec::quant {

// The graph quantization starts from: the -O2 fusions (BatchNorm folded into Conv/Gemm),
// lowered back to standard ops by `unfuse`, so that Conv/Gemm/MatMul and their activation
// stand as separate nodes the QDQ form can wrap; then the ops without an integer form in
// their equivalents that have one (passes/integer_forms.cc: Sub, Div by a constant, Softmax
// over a non-last axis).
Status PrepareForQuantization(Graph& g);

// Calibrates `prepared` on `samples` and returns the scale table for its quantization points.
// A point produced by an op that only keeps or moves its input's values (MaxPool, Reshape,
// Flatten, Transpose, Slice, ..., a nearest or linear Resize: quant/int_resize.h) from another
// point gets that point's scale and zero point
// (ShareScalesThroughValueMovingOps), so the op runs on the int8 values with no requantize
// after it; the inputs and output of a Concat get the union of their ranges, so the Concat
// runs on int8 values too. Both links join groups (a Concat whose output is shuffled, split
// and concatenated again is one group with one range).
StatusOr<ScaleTable> Calibrate(const Graph& prepared, const std::vector<Sample>& samples,
                               const CalibrationOptions& calib, const QuantizeOptions& rewrite,
                               bool progress);

void ShareScalesThroughValueMovingOps(const Graph& g, ScaleTable& table);

// A copy of a QDQ graph with the Q/DQ patterns folded into integer ops (fold_qdq.h), after
// fuse-layernorm and fuse-groupnorm (a QDQ file holds them decomposed).
StatusOr<Graph> Int8Executable(const Graph& qdq);

// The CPU's fold of a QDQ graph (`edgec run/bench --int8`, Session on a QDQ model,
// Model::FoldQdq): FoldQdqToInteger, then 1-d convolutions and pools as 2-d with H = 1
// (passes/lift_1d_windows.cc), as a compiled model's CPU part runs them: the int8 kernels
// are 2-d, a 1-d one would fall to the reference kernel.
StatusOr<FoldSummary> FoldQdqForCpu(Graph& g, const FoldOptions& options);

// Agreement of a candidate's outputs with the reference (float) outputs over samples:
// per output, the worst and mean cosine similarity, top-1 agreement (argmax over the
// last axis of every row), max abs error and SQNR (signal / error power, dB) overall.
struct OutputAgreement {
  std::string output;
  double min_cosine = 1, mean_cosine = 1;
  double top1 = 1;
  double max_abs = 0;
  double sqnr_db = 0;
};
struct Agreement {
  int64_t samples = 0;
  std::vector<OutputAgreement> outputs;
};

// Runs `reference` and `candidate` (same inputs and outputs) on every sample.
StatusOr<Agreement> CompareOnSamples(const Graph& reference, const Graph& candidate,
                                     const std::vector<Sample>& samples, bool progress);

// The agreement of the first output of `prepared` quantized under `o` (rewritten to QDQ and
// folded) with `prepared` itself.
StatusOr<OutputAgreement> QuantizedAgreement(const Graph& prepared, const ScaleTable& scales,
                                             const QuantizeOptions& o, const std::vector<Sample>& samples);

// Sensitivity: each quantizable node quantized alone (every other one in float), with the
// output error that adds, most harmful first. The error is measured on the first output.
struct LayerSensitivity {
  std::string node;   // node name (what --keep-float takes)
  std::string label;  // "Conv 'layer1.0/conv1'"
  double sqnr_db = 0;
  double mean_cosine = 1;
};
StatusOr<std::vector<LayerSensitivity>> Sensitivity(const Graph& prepared, const ScaleTable& scales,
                                                    const QuantizeOptions& o,
                                                    const std::vector<Sample>& samples, bool progress);

// Mixed precision under an accuracy budget: starting from everything quantized, keeps the
// most sensitive nodes (in `ranked` order) in float until the mean output cosine vs FP32
// on `samples` reaches `min_cosine`, or nothing is left to keep. Returns the nodes kept in
// float, in the order they were added, and the cosine reached.
struct BudgetResult {
  std::vector<LayerSensitivity> kept_float;
  double mean_cosine = 0;
  bool met = false;
};
StatusOr<BudgetResult> FitAccuracyBudget(const Graph& prepared, const ScaleTable& scales,
                                         const QuantizeOptions& o, const std::vector<LayerSensitivity>& ranked,
                                         const std::vector<Sample>& samples, double min_cosine);

// Per-sample comparison helper (exposed for tests).
void Accumulate(const Tensor& want, const Tensor& got, OutputAgreement& a, double& sig, double& err,
                int64_t& rows, int64_t& top1_hits);

}  // namespace edgec::quant
