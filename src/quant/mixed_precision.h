// Mixed precision with int16 activations: the layers where 8 bits lose the most accuracy —
// Softmax, LayerNormalization, InstanceNormalization and torch's GroupNorm pattern — may carry
// int16 values at their input and output instead (so the producer before and the consumer after
// see int16 too). The quantizer picks them from measured error under `--accuracy-budget`.
//
// Before (int8):   x ─► Q8 ─► DQ8 ─► Softmax ─► Q8 ─► DQ8 ─► y
// After (int16):   x ─► Q16 ─► DQ16 ─► Softmax ─► Q16 ─► DQ16 ─► y
//
// An int16 point is symmetric (zero point 0) with scale max|x| / 32767 over the observed range
// (no clipping: 16 bits hold the outliers), rounded up to 8 significant bits so that every
// dequantized value (|q| ≤ 2^15) is exact in f32. In the exported ONNX the pair is
// com.microsoft's QuantizeLinear / DequantizeLinear (ONNX 17's take only 8 bits; ONNX Runtime
// runs them). The fold turns DQ16 → norm/softmax → Q16 into the same integer ops with int16
// types (quant/int16_norm.h); a Conv / Gemm / MatMul reading an int16 point reads it
// requantized to 8 bits (qdq_rewrite.cc); the op writing it and other readers stay float
// islands.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "quant/calibrate.h"
#include "quant/pipeline.h"
#include "quant/qdq_rewrite.h"

namespace edgec::quant {

// The nodes that may be promoted to int16: Softmax, LayerNormalization, InstanceNormalization
// (for torch's GroupNorm pattern, its InstanceNormalization names the whole pattern) whose
// input is a quantization point under `o`, in graph order.
std::vector<const Node*> Int16Candidates(const Graph& prepared, const QuantizeOptions& o);

// The values that carry int16 for the nodes in o.int16_nodes: each one's input and output
// (the GroupNorm pattern's input and last output).
std::set<std::string> Int16Points(const Graph& g, const QuantizeOptions& o);

// Scale and zero point of an int16 point from its calibration entry.
ScaleZeroPoint Int16Params(const ActivationScale& a);

// The budget fit with int16 first: measures the output cosine vs FP32 with every candidate
// promoted alone, promotes them in order of the error they remove until the mean output
// cosine reaches `min_cosine`, and then, if it is still short, keeps the `ranked` layers in
// float as FitAccuracyBudget does.
struct Int16Promotion {
  std::string node, label;
  double cosine_alone = 0;  // output cosine with this node alone in int16
  double cosine_after = 0;  // with it and every earlier promotion
};
struct MixedBudgetResult {
  double int8_cosine = 0;  // all int8
  std::vector<Int16Promotion> int16;
  BudgetResult float_fit;  // after the int16 promotions
  bool met = false;
  double mean_cosine = 0;
};
StatusOr<MixedBudgetResult> FitAccuracyBudgetMixed(const Graph& prepared, const ScaleTable& scales,
                                                   const QuantizeOptions& o,
                                                   const std::vector<LayerSensitivity>& ranked,
                                                   const std::vector<Sample>& samples, double min_cosine,
                                                   bool allow_int16);

}  // namespace edgec::quant
