// The quantization rewrite: a float graph (standard ops, BatchNorm folded) becomes a QDQ
// graph, the form ONNX Runtime and other runtimes read as "run this in int8".
//
// Before:   x ─► Conv(W, b) ─► Relu ─► y
// After:    x ─► Q ─► DQ ─► Conv(DQ(W_q), DQ(b_q)) ─► Relu ─► Q ─► DQ ─► y
//
// Quantized ops: Conv, Gemm (alpha = beta = 1, transA = 0, constant B and C) and MatMul
// with a constant 2-D B. Their float activation inputs are quantized (u8 or i8, per tensor,
// with the calibrated scale), and so is their output, after a Relu/Clip that is its only
// consumer (so that a runtime fuses the activation into the int8 op). A value gets one
// Q/DQ pair shared by all of its consumers; everything else (Add, pools, Concat, ...)
// computes in float between a DQ and the next Q: a "float island" that keeps the numbers
// of an int8 pipeline. Weights: int8, symmetric, range [-127, 127], per output channel or
// per tensor. Bias: int32 with scale x_scale · w_scale[c] and zero point 0.
// Graph outputs keep their names.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "quant/calibrate.h"

namespace edgec::quant {

// A single-input island that ends at `last` and becomes one lookup (quant/points.h): its
// source and every node of it, `last` included; nullopt when `last` ends no such island.
// The quantizer asks a list of them, so a new kind of island (a per-channel one) plugs in.
struct IslandMatch {
  const Value* source = nullptr;
  std::vector<const Node*> nodes;
};
using IslandMatcher = std::function<std::optional<IslandMatch>(const Node* last)>;

struct QuantizeOptions {
  bool per_channel = true;
  // Weights in 7 bits ([-63, 63]): int8 kernels that pair u8·s8 products in 16 bits
  // (AVX2 without VNNI, e.g. ONNX Runtime's U8S8 path) cannot saturate then.
  bool reduce_range = false;
  // Nodes (by name) left in float: their inputs and output are not quantized on their
  // account (another quantized neighbour may still quantize a shared value).
  std::set<std::string> keep_float;
  // Softmax / LayerNormalization / InstanceNormalization nodes (by name; an InstanceNormalization
  // of torch's GroupNorm pattern stands for the pattern) whose input and output points are
  // int16 instead of 8-bit (quant/mixed_precision.h).
  std::set<std::string> int16_nodes;
  // The single-input islands that count as one integer op (empty: DefaultIslandMatchers(),
  // quant/points.h); the first that matches wins.
  std::vector<IslandMatcher> island_matchers;
};

// The activation values the rewrite needs scales for, in graph order (quant/points.h).
std::vector<std::string> QuantizationPoints(const Graph& g, const QuantizeOptions& o);

// The value a quantized Conv/Gemm/MatMul's output is quantized at: after a MatMul's bias Add
// (MatMulBiasAdd) or an attention score's scale (ScoreScale), then after a Relu/Clip (constant
// bounds) that is its only consumer; an Add or Mul's likewise after one Relu/Clip.
Value* OutputPoint(const Node* n);

// The nodes the rewrite would quantize, with the reason for each one it would not.
struct QuantizablePlan {
  std::vector<const Node*> nodes;
  std::vector<std::string> skipped;  // "Gemm 'fc': alpha 0.5 != 1"
};
QuantizablePlan PlanQuantization(const Graph& g, const QuantizeOptions& o);

// The Add of a constant bias [N] that alone reads a MatMul's output (what `unfuse` leaves of
// a linear layer with a 3-d input), or null. The bias is quantized with the MatMul (int32 at
// x_scale · w_scale) and the output point moves after it, so the pair folds into one
// QLinearMatMul with a bias (fold_qdq.h; guarded by QdqTest.MatMulBiasAddFoldsIntoOneNode).
Node* MatMulBiasAdd(const Node* n);

// A MatMul whose two operands are float activations (attention's QKᵀ and AV): quantized at
// both inputs and its output, it folds into a QLinearMatMul with a non-constant B.
bool IsActivationMatMul(const Node* n);
// The Mul or Div by a positive scalar constant that alone reads such a MatMul (attention's
// 1/√d), or null; `factor` (may be null) gets the product's factor. The output point moves
// after it and the fold divides the output scale by the factor (QdqTest.AttentionScoresFold).
Node* ScoreScale(const Node* n, double* factor);

// An embedding sum: Add(Gather(T, ids), C), T a float constant table read at computed
// indices (a token embedding) by this Add alone, C a float constant (the position
// embedding). The Gather keeps the table's values, so it runs on T quantized with T's own
// range; C is quantized with its own, and the Add folds into a QLinearAdd
// (Qdq.EmbeddingSumFoldsToAnIntegerAdd).
struct TableSum {
  Node* gather = nullptr;
  Node* add = nullptr;
  int const_index = 1;  // C's input index on the Add
};
std::optional<TableSum> MatchTableSum(const Node* add);

struct RewriteSummary {
  int quantized_nodes = 0;
  int activation_pairs = 0;
  int int16_pairs = 0;  // of which int16 (QuantizeOptions::int16_nodes)
  std::vector<std::string> skipped;
  std::vector<std::string> float_ops;    // one line per op kind left in float: "3 Sub: no integer form"
  std::vector<std::string> float_nodes;  // the same, one line per node
};

// Rewrites `g` in place; every quantization point must have an entry in `scales`.
StatusOr<RewriteSummary> RewriteToQdq(Graph& g, const ScaleTable& scales, const QuantizeOptions& o);

// Weight quantization (exposed for tests): symmetric int8 in [-qmax, qmax] of a constant,
// per slice along `axis` (axis < 0: per tensor). Returns the int8 tensor and its scales.
struct QuantizedWeight {
  Tensor q;
  std::vector<float> scales;
};
QuantizedWeight QuantizeWeight(const Tensor& w, int axis, int qmax = 127);

}  // namespace edgec::quant
