// edgec's own int8 execution of a QDQ graph: the Q/DQ patterns around Conv, Gemm and
// MatMul fold into integer ops, so the multiply-accumulates run on int8 operands with
// int32 accumulators and a requantization, as an int8 runtime does:
//
//   DQ(x_q) ─► Conv(DQ(W_q), DQ(b_q)) ─► [Relu|Clip] ─► Q   ⇒  QLinearConv(x_q, W_q, b_q)
//   DQ(x_q) ─► Gemm(DQ(W_q), DQ(b_q)) ─► Q                   ⇒  Reshape ─► QLinearConv 1×1 ─► Reshape
//   DQ(a_q) ─► MatMul(DQ(B_q)) ─► Q                          ⇒  QLinearMatMul(a_q, B_q)
//
// A Relu/Clip in between is dropped when the output's quantized range already lies inside
// its bounds (zero point at the bottom of the range for Relu); otherwise it runs on the
// dequantized result and is quantized again with the same scale, which is exact.
// Everything else stays as it is: DQ ─► float op ─► Q islands.
#pragma once

#include "edgec/status.h"
#include "ir/graph.h"

namespace edgec::quant {

struct FoldSummary {
  int folded = 0;                    // Conv/Gemm/MatMul nodes now integer
  std::vector<std::string> skipped;  // quantized-looking nodes that did not fold, with why
};

StatusOr<FoldSummary> FoldQdqToInteger(Graph& g);

}  // namespace edgec::quant
