// Which values of a float graph get a Q/DQ pair (quantization points): one rule for every op
// that has an integer form given quantized inputs.
//
// A node with an integer form is a *unit*: its activation inputs and outputs are points, and
// nothing inside it is. The units:
//   - Conv, Gemm, MatMul (PlanQuantization) and a MatMul of two activations, from input 0
//     (and 1) to OutputPoint (after a bias Add, an attention scale, one Relu/Clip); the
//     normalizations (LayerNorm, InstanceNorm, torch's GroupNorm pattern as one unit). These
//     are *seeds*: integer whatever their neighbours are.
//   - the light ones: Add/Mul of two activations (broadcasting; after one Relu/Clip), Global/
//     AveragePool, Softmax over the last axis, a single-input island (IslandMatcher: from its
//     source to its last node, as one lookup), the ops that only move or compare values
//     (kMovesValues / KeepsQuantization: Reshape, Transpose, Slice, Split with every output,
//     Concat, Resize, DepthToSpace/SpaceToDepth, MaxPool, GlobalMaxPool, ReduceMax/ReduceMin),
//     a Pad that keeps its input's quantization (PadKeepsQuantization) and ArgMax/ArgMin (their
//     input only: the output is int64). A light unit is integer when it writes a value an
//     integer unit (a seed, or a light unit that is integer in turn) reads or writes, or when
//     it reads one and every other float input of it is such a value too: a run of light ops
//     between float ops gets no point, a float-only consumer of an integer value reads its DQ,
//     and a light unit whose outputs only float ops read never turns a float op's output into
//     a point (a Concat of an integer h and a float LSTM's cell state c, a graph output fed
//     back as state, stays float with c unquantized).
// Units with keep_float nodes are never integer. Every other node that computes on float
// activations stays float, with a reason (FloatNode).
// Guarded by tests/quant/points_test.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "quant/qdq_rewrite.h"

namespace edgec::quant {

// The elementwise island of one value that ends at `last` (fold_qdq.h: MatchUnaryIsland and
// ElementwiseIslandSource, here with its inner values read once: the island stops at a value
// that has other readers, so an ELU feeding an Erf GELU are two islands), or nullopt.
std::optional<IslandMatch> MatchElementwiseIsland(const Node* last);

// A per-channel island (fold_qdq.h MatchChannelIsland: a PRelu, a standalone
// BatchNormalization, a Mul/Add by [C,1,1] constants, ...) as one unit: it folds into one
// QuantizedLookup with a table per channel.
std::optional<IslandMatch> MatchChannelIslandUnit(const Node* last);

// The matchers a QuantizeOptions without its own list uses: MatchElementwiseIsland, then
// MatchChannelIslandUnit.
std::vector<IslandMatcher> DefaultIslandMatchers();

// A Pad whose output keeps its input's quantization: reflect and edge only move values; a
// constant pad of 0 (absent or a scalar constant 0) is exact since every calibrated range holds
// 0 and the zero point is an integer. `why` (may be null) says why not.
bool PadKeepsQuantization(const Node& n, std::string* why = nullptr);

// A node left in float and why ("Sub '/Sub': no integer form").
struct FloatNode {
  const Node* node = nullptr;
  std::string why;
};

struct PointPlan {
  std::vector<std::string> points;  // in graph order (graph inputs first)
  std::vector<FloatNode> float_nodes;
};
PointPlan PlanPoints(const Graph& g, const QuantizeOptions& o);

// The float nodes as one line per (op kind, reason) with a count: "3 Sub: no integer form".
std::vector<std::string> SummarizeFloatNodes(const std::vector<FloatNode>& nodes);

}  // namespace edgec::quant
