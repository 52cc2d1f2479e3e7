// What the QDQ folds share (fold_qdq.cc, fold_tables.cc); internal to quant/.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace edgec::quant {

// The DequantizeLinear producing `v`, or null.
Node* DqOf(const Value* v);

// The (scale, zero point, dtype) of a per-tensor DQ or Q node with constant parameters.
struct QParams {
  double scale = 0;
  int64_t zero_point = 0;
  DType dtype = DType::kUndefined;
  bool operator==(const QParams&) const = default;
};
std::optional<QParams> ParamsOf(const Node* n, DType dtype);

// Q(f(DQ(q))) for a single-input float island f (an elementwise unary op U, x·U(x), or up to
// 8 elementwise nodes of one value): one QuantizedLookup of a 256-entry table computed on the
// reference kernels. False when `q` ends no such island.
StatusOr<bool> TabulateIsland(Graph& g, Node* q, int* tabulated);

// The island dq ─► chain ─► q (chain in graph order, every non-island operand a constant) run
// on the reference kernels for `input` in place of dq's input: the values Q(f(DQ(input))).
StatusOr<Tensor> EvaluateIsland(const Node* dq, const std::vector<Node*>& chain, const Node* q, const Tensor& input);

// Q(f(DQ(q))) for a per-channel island f (MatchChannelIsland, fold_qdq.h): one QuantizedLookup
// with a table [C, 256] per channel along the island's axis, computed on the reference
// kernels (fold_channel_tables.cc). False when `q` ends no such island.
StatusOr<bool> TabulateChannelIsland(Graph& g, Node* q, int* tabulated);

// DQ16(x) ─► M ─► Q8 with M a single-data-input op that keeps its input's values: the Q8 moves
// ahead of M (fold_narrowing.cc), so M runs on 8-bit values. False when `n` is no such M.
StatusOr<bool> HoistNarrowingQuantize(Graph& g, Node* n);

}  // namespace edgec::quant
