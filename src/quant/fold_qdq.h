// edgec's own int8 execution of a QDQ graph: the Q/DQ patterns around Conv, Gemm and
// MatMul fold into integer ops, so the multiply-accumulates run on int8 operands with
// int32 accumulators and a requantization, as an int8 runtime does:
//
//   DQ(x_q) ─► Conv(DQ(W_q), DQ(b_q)) ─► [Relu|Clip] ─► Q   ⇒  QLinearConv(x_q, W_q, b_q)
//   DQ(x_q) ─► Gemm(DQ(W_q), DQ(b_q)) ─► Q                   ⇒  Reshape ─► QLinearConv 1×1 ─► Reshape
//   DQ(a_q) ─► MatMul(DQ(B_q)) ─► [Add(DQ(b_q))] ─► Q        ⇒  QLinearMatMul(a_q, B_q[, b_q])
//
// A Relu/Clip in between becomes a clamp of the quantized output, [edgec_qmin, edgec_qmax]
// on the integer op (Q is monotonic and Q(DQ(q)) = q, so clamp(q, Q(lo), Q(hi)) equals
// Q(Clip(DQ(q), lo, hi)) exactly); none when the output's quantized range already lies
// inside its bounds. A Clip with run-time bounds runs on the dequantized result instead.
// The integer ops carry `edgec_requant` = "float" (ONNX's formula) or "fixed_point" (the
// NPU's integer-only requantization) as the options ask.
//   DQ(a_q) + DQ(b_q) ─► [Relu|Clip] ─► Q                    ⇒  QLinearAdd(a_q, b_q)
//   DQ(a_q) · DQ(b_q) ─► [Relu|Clip] ─► Q                    ⇒  QLinearMul(a_q, b_q)
//   DQ(x_q) ─► GlobalAveragePool ─► Q                        ⇒  QLinearGlobalAveragePool(x_q)
//   DQ(x_q) ─► AveragePool ─► Q                              ⇒  QLinearAveragePool(x_q)
//   DQ(x_q) ─► LayerNormalization ─► Q                       ⇒  QLinearLayerNormalization(x_q)
//   DQ(x_q) ─► GroupNormalization | InstanceNormalization ─► Q ⇒ QLinearGroupNormalization(x_q)
//   DQ(x_q) ─► Softmax (last axis) ─► Q                      ⇒  QLinearSoftmax(x_q)
// (the last three are integer-only, quant/int_norm.h: within one step of the island; the
// decomposed LayerNorm and torch's GroupNorm are fused first, Int8Executable in pipeline.h).
// (their "float" mode computes exactly the island's arithmetic on the reference kernels.)
// Ops that only move or compare values (MaxPool, GlobalMaxPool, Concat of inputs with equal
// parameters, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Slice, Identity) run on the
// int8 values: op(DQ(q)) = DQ(op(q)) exactly (DQ is monotonic), and Q(DQ(q)) with the same
// parameters is q, so DQ ─► MaxPool ─► Q becomes MaxPool on u8.
// Q(DQ(x_q)) between an int16 and an 8-bit quantization (the mixed precision's int16 point
// beside an 8-bit neighbour) becomes one QLinearRequantize(x_q) (quant/rescale.h).
// A single-input island DQ ─► U ─► Q or DQ ─► x·U(x) ─► Q becomes a 256-entry table lookup;
// one with per-channel constants (PRelu, BatchNormalization, Mul by [C,1,1]) a table per channel.
// Everything else stays as it is: DQ ─► float op ─► Q islands (windowed AveragePool, a Mul by
// a float constant, ...).
#pragma once

#include <optional>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec::quant {

struct FoldSummary {
  int folded = 0;                    // Conv/Gemm/MatMul/Add/Mul/GlobalAveragePool/norm/softmax nodes now integer
  int int8_movement = 0;             // MaxPool/Concat/Reshape/... moved onto the int8 values
  int tabulated = 0;                 // float islands replaced by a QuantizedLookup
  std::vector<std::string> skipped;  // quantized-looking nodes that did not fold, with why
};

struct FoldOptions {
  // Requantize with quant/fixed_point.h (multiplier + shift) instead of ONNX's f32 formula:
  // what the NPU computes, so a CPU run can equal it bit for bit.
  bool fixed_point = false;
  // Move data movement and max pooling onto the int8 values (see above).
  bool int8_movement = true;
  // Replace DQ → U → Q and DQ → x·U(x) → Q (U elementwise unary: Sigmoid, HardSwish, ...;
  // x·Sigmoid(x) is SiLU) by a QuantizedLookup of 256 entries computed on the reference
  // kernels: exact with respect to the island by construction.
  bool tabulate = true;
  // Fold DQ(a) + DQ(b) → [Relu|Clip] → Q into a QLinearAdd (see ops.def).
  bool integer_add = true;
  // Fold DQ(a) · DQ(b) → [Relu|Clip] → Q into a QLinearMul (see ops.def).
  bool integer_mul = true;
  // Fold the normalizations and Softmax into their integer forms (see ops.def).
  bool integer_norm = true;
};

StatusOr<FoldSummary> FoldQdqToInteger(Graph& g, const FoldOptions& options = {});

// Ops that only move or compare values (trait kMovesValues in ops.def): op(DQ(q)) = DQ(op(q)).
// The single-input ones among them (kKeepsValues: all but Concat) hold (a subset of) their
// input's values, so they are best quantized with the input's parameters and run on the int8
// values with no requantize after them.

// A node computing U(x) or x·U(x) from one value x, U an elementwise unary op whose other
// inputs are scalar constants (Sigmoid, HardSigmoid, HardSwish, Clip, ...; x·Sigmoid(x) is
// SiLU): the last node of a single-input island DQ(x) ─► ... ─► Q that becomes a table.
struct UnaryIsland {
  const Node* unary = nullptr;
  const Node* mul = nullptr;  // the x·U(x) form
  Value* x = nullptr;
};
std::optional<UnaryIsland> MatchUnaryIsland(const Node* last);

// The one source value of the elementwise island of 2 to 8 nodes that ends at `last` (a chain
// of unary ops and arithmetic with scalar constants, such as the Erf GELU), or null. Such an
// island between a DQ and a Q becomes one table.
const Value* ElementwiseIslandSource(const Node* last);

// The per-channel island that ends at `last`: up to 8 elementwise nodes computing a function
// of one value x and of constants that vary along one axis of x only (a PRelu with slope
// [C,1,1]; a Mul/Add/Sub/Div/Pow by [C,1,1]; a BatchNormalization in inference form, whose
// statistics are per channel of axis 1; tabulable unary ops with constant parameters), every
// node but `last` read only inside the island. Such an island between a DQ and a Q becomes
// one QuantizedLookup with a table per channel (fold_channel_tables.cc; QdqTest.PRelu*,
// ChannelIsland*). An island of scalar constants only is matched when it holds a PRelu or a
// BatchNormalization (ElementwiseIslandSource takes the others).
struct ChannelIsland {
  std::vector<const Node*> nodes;
  Value* x = nullptr;
  int axis = -1;          // the axis of x the constants vary along; -1: none does
  int64_t channels = 1;   // x's dim on `axis`
};
std::optional<ChannelIsland> MatchChannelIsland(const Node* last);

}  // namespace edgec::quant
