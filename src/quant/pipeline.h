// The quantization flow as library calls shared by `edgec quantize`, the tests and the
// accuracy script: prepare the float graph, calibrate, rewrite to QDQ, and compare an int8
// execution with the float one over a set of inputs.
#pragma once

#include <string>
#include <vector>

#include "edgec/status.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/qdq_rewrite.h"

namespace edgec::quant {

// The graph quantization starts from: the -O2 fusions (BatchNorm folded into Conv/Gemm),
// lowered back to standard ops by `unfuse`, so that Conv/Gemm/MatMul and their activation
// stand as separate nodes the QDQ form can wrap.
Status PrepareForQuantization(Graph& g);

// Calibrates `prepared` on `samples` and returns the scale table for its quantization points.
StatusOr<ScaleTable> Calibrate(const Graph& prepared, const std::vector<Sample>& samples,
                               const CalibrationOptions& calib, const QuantizeOptions& rewrite,
                               bool progress);

// A copy of a QDQ graph with the Q/DQ patterns folded into integer ops (fold_qdq.h).
StatusOr<Graph> Int8Executable(const Graph& qdq);

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

// Per-sample comparison helper (exposed for tests).
void Accumulate(const Tensor& want, const Tensor& got, OutputAgreement& a, double& sig, double& err,
                int64_t& rows, int64_t& top1_hits);

}  // namespace edgec::quant
