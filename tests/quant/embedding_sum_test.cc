// An embedding sum Add(Gather(table, ids), position) — a token embedding read at computed
// indices plus a constant position embedding — is quantized as an integer Add: the Gather runs
// on the int8 table (it keeps the table's values), the position constant is int8, and no float
// Add or Quantize remains between the ids and the output.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/infer.h"
#include "quant/pipeline.h"
#include "quant/qdq_rewrite.h"
#include "runtime/reference_executor.h"

#include "quant_test_util.h"

namespace edgec::quant {
namespace {

using testing_quant::Add;
using testing_quant::Normal;

// ids[1,5] (int64) -> Gather(table[12,8]) -> + position[1,5,8] -> y.
Graph EmbeddingSum() {
  Graph g;
  Value* ids = g.AddInput("ids", MakeType(DType::kI64, {1, 5}));
  Value* t = Add(g, OpKind::kGather, {g.AddConstant("table", Normal({12, 8}, 3)), ids}, {}, "tokens");
  Value* y = Add(g, OpKind::kAdd, {t, g.AddConstant("position", Normal({1, 5, 8}, 4, 0.5))}, {}, "sum");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

std::vector<Sample> Ids(int count, uint32_t seed) {
  std::vector<Sample> s;
  for (int i = 0; i < count; ++i) {
    std::vector<int64_t> v(5);
    for (int k = 0; k < 5; ++k) v[k] = (seed + 7 * i + 5 * k) % 12;
    s.push_back({{"ids", Tensor::FromVector<int64_t>(DType::kI64, {1, 5}, v)}});
  }
  return s;
}

int Count(const Graph& g, OpKind op) {
  int c = 0;
  for (const Node* n : g.nodes()) c += n->op() == op;
  return c;
}

TEST(Qdq, EmbeddingSumFoldsToAnIntegerAdd) {
  Graph g = EmbeddingSum();
  ASSERT_TRUE(MatchTableSum(g.FindValue("sum:0")->producer()).has_value());
  const Graph fp = g.Clone();
  CalibrationOptions co;
  co.storage = DType::kI8;
  co.method = CalibrationMethod::kMinMax;  // no outlier clip: the bound below is rounding only
  auto table = Calibrate(g, Ids(12, 1), co, {}, false);  // every (position, id) pair
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_TRUE(RewriteToQdq(g, *table, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok()) << int8.status().ToString();
  EXPECT_EQ(Count(*int8, OpKind::kQLinearAdd), 1);
  EXPECT_EQ(Count(*int8, OpKind::kAdd), 0);
  EXPECT_EQ(Count(*int8, OpKind::kQuantizeLinear), 0);
  int int8_gathers = 0;
  for (const Node* n : int8->nodes())
    int8_gathers += n->op() == OpKind::kGather && n->input(0)->type.dtype == DType::kI8;
  EXPECT_EQ(int8_gathers, 1);
  // Within half a step of each of the table, the position and the output (the three
  // roundings) of the float sum.
  double bound = 0;
  for (const Node* n : int8->nodes())
    if (n->op() == OpKind::kQLinearAdd)
      for (int i : {1, 4, 6}) bound += 0.5 * n->input(i)->constant().ToDoubleVector()[0];
  ASSERT_GT(bound, 0);
  for (const Sample& s : Ids(8, 40)) {
    auto a = ReferenceExecutor(fp).Run(s);
    auto b = ReferenceExecutor(*int8).Run(s);
    ASSERT_TRUE(a.ok() && b.ok());
    const auto va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
    ASSERT_EQ(va.size(), vb.size());
    for (size_t i = 0; i < va.size(); ++i) ASSERT_LE(std::abs(va[i] - vb[i]), bound * 1.001) << "element " << i;
  }
}

}  // namespace
}  // namespace edgec::quant
