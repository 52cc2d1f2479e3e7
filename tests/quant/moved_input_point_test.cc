// A float graph input that a value-moving op hands to a quantized op (a transformer's
// Transpose to sequence-first) is quantized once, at the input: the move runs on int8 and the
// input's other reader (the residual Add) folds to an integer op instead of a float island.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/infer.h"
#include "quant/pipeline.h"

#include "quant_test_util.h"
#include "quantize_test_util.h"

namespace edgec::quant {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

// x[1,6,6] -> Transpose(0,2,1) -> MatMul(W[6,6]) -> m; y = x + m.
Graph TransposeMatMulResidual() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 6, 6}));
  Attributes perm;
  perm.Set("perm", Ints{0, 2, 1});
  Value* t = Add(g, OpKind::kTranspose, {x}, perm, "transpose");
  Value* m = Add(g, OpKind::kMatMul, {t, g.AddConstant("w", Normal({6, 6}, 3, 0.4))}, {}, "matmul");
  Value* y = Add(g, OpKind::kAdd, {x, m}, {}, "residual");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(Qdq, MovedGraphInputIsQuantizedOnce) {
  Graph g = TransposeMatMulResidual();
  const std::vector<std::string> p = QuantizationPoints(g, {});
  EXPECT_NE(std::find(p.begin(), p.end(), "x"), p.end());
  EXPECT_NE(std::find(p.begin(), p.end(), "residual:0"), p.end());  // an Add of two points
  Graph q = testing_quant::QuantizeAndFold(TransposeMatMulResidual(), "x", {1, 6, 6}, 20);
  int float_nodes = 0, quantizes = 0;
  for (const Node* n : q.nodes()) {
    quantizes += n->op() == OpKind::kQuantizeLinear;
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kDequantizeLinear) continue;
    for (const Value* v : n->outputs()) float_nodes += v && v->type.dtype == DType::kF32;
  }
  // One Quantize at the input, one Dequantize at the output, nothing float between them.
  EXPECT_EQ(quantizes, 1);
  EXPECT_EQ(float_nodes, 0);
}

}  // namespace
}  // namespace edgec::quant
