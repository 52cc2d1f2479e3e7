// The fold of AveragePool islands (fold_qdq.h): DQ → AveragePool → Q becomes one
// QLinearAveragePool with the pool's attributes, whose float mode gives the island's outputs
// bit for bit and whose fixed-point mode is within one step of them; what does not fold says
// why; and the quantizer puts points around a pool of a quantized value so that it folds.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/infer.h"
#include "quant/fold_qdq.h"
#include "quant/pipeline.h"
#include "quant/qdq_rewrite.h"
#include "quant_test_util.h"
#include "runtime/reference_executor.h"

namespace edgec::quant {
namespace {

using testing_quant::Normal;

Value* Scalar(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }
Value* ZeroU8(Graph& g, const std::string& n, int v) {
  return g.AddConstant(n, Tensor::FromVector<uint8_t>(DType::kU8, {}, {static_cast<uint8_t>(v)}));
}
Node* Op(Graph& g, OpKind op, std::vector<Value*> in, const std::string& name, Attributes a = {}) {
  Node* n = g.AddNode(op, name, std::move(in), 1, {name + ":0"});
  n->attrs = std::move(a);
  return n;
}
int Count(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

Attributes Pool(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pads, int64_t ceil, int64_t include) {
  Attributes a;
  a.Set("kernel_shape", k);
  a.Set("strides", s);
  a.Set("pads", pads);
  a.Set("ceil_mode", ceil);
  a.Set("count_include_pad", include);
  return a;
}

// x → Q → DQ → AveragePool(a) → [Q(y) → DQ] → y (without the Q when !quantized_output).
Graph Island(const Dims& dims, const Attributes& a, bool quantized_output = true) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, dims));
  Value* sx = Scalar(g, "sx", 0.031f);
  Value* zx = ZeroU8(g, "zx", 100);
  Value* q = Op(g, OpKind::kQuantizeLinear, {x, sx, zx}, "xq")->output(0);
  Value* dq = Op(g, OpKind::kDequantizeLinear, {q, sx, zx}, "xdq")->output(0);
  Value* p = Op(g, OpKind::kAveragePool, {dq}, "pool", a)->output(0);
  if (quantized_output) {
    Value* sy = Scalar(g, "sy", 0.017f);
    Value* zy = ZeroU8(g, "zy", 90);
    Value* yq = Op(g, OpKind::kQuantizeLinear, {p, sy, zy}, "yq")->output(0);
    p = Op(g, OpKind::kDequantizeLinear, {yq, sy, zy}, "ydq")->output(0);
  }
  g.MarkOutput(p);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(FoldAveragePool, IslandBecomesQLinearAveragePoolWithTheIslandsBits) {
  // An inception branch's 3x3 s1 p1 pool (count_include_pad 0: the border windows divide by
  // 4 or 6), a DenseNet transition's 2x2 s2, and a ceil_mode 3x3 s2 whose last windows reach
  // past the input.
  const Dims d = {1, 5, 9, 7};
  for (const Attributes& a : {Pool({3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 0), Pool({2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0),
                              Pool({3, 3}, {2, 2}, {0, 1, 0, 1}, 1, 1), Pool({3, 2}, {2, 3}, {1, 0, 1, 1}, 1, 0)}) {
    Graph g = Island(d, a);
    Graph folded = g.Clone(), fixed = g.Clone();
    auto s = FoldQdqToInteger(folded);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    FoldOptions fp;
    fp.fixed_point = true;
    ASSERT_TRUE(FoldQdqToInteger(fixed, fp).ok());
    EXPECT_EQ(Count(folded, OpKind::kQLinearAveragePool), 1);
    EXPECT_EQ(Count(folded, OpKind::kAveragePool), 0);
    for (const Node* n : folded.nodes()) {
      if (n->op() != OpKind::kQLinearAveragePool) continue;
      EXPECT_EQ(n->attrs.GetInts("kernel_shape"), a.GetInts("kernel_shape"));
      EXPECT_EQ(n->attrs.GetInts("pads"), a.GetInts("pads"));
      EXPECT_EQ(n->attrs.GetInt("ceil_mode", 0), a.GetInt("ceil_mode", 0));
      EXPECT_EQ(n->attrs.GetInt("count_include_pad", 0), a.GetInt("count_include_pad", 0));
      EXPECT_EQ(n->attrs.GetString("edgec_requant", ""), "float");
    }
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      const std::map<std::string, Tensor> in = {{"x", Normal(d, seed, 2.0)}};
      auto want = ReferenceExecutor(g).Run(in);
      auto got = ReferenceExecutor(folded).Run(in);
      auto got_fixed = ReferenceExecutor(fixed).Run(in);
      ASSERT_TRUE(want.ok() && got.ok() && got_fixed.ok());
      const std::vector<double> w = (*want)[0].ToDoubleVector(), f = (*got)[0].ToDoubleVector(),
                                x = (*got_fixed)[0].ToDoubleVector();
      ASSERT_EQ(w.size(), f.size());
      EXPECT_EQ(w, f) << "seed " << seed;
      for (size_t i = 0; i < w.size(); ++i) ASSERT_LE(std::abs(w[i] - x[i]), 0.017 * 1.001) << "seed " << seed << " at " << i;
    }
  }
}

TEST(FoldAveragePool, WhatDoesNotFoldSaysWhy) {
  Graph g = Island({1, 3, 6, 6}, Pool({2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 0), /*quantized_output=*/false);
  auto s = FoldQdqToInteger(g);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Count(g, OpKind::kAveragePool), 1);
  ASSERT_EQ(s->skipped.size(), 1u);
  EXPECT_NE(s->skipped[0].find("'pool'"), std::string::npos) << s->skipped[0];
  EXPECT_NE(s->skipped[0].find("output has other uses than one Q"), std::string::npos) << s->skipped[0];
}

TEST(FoldAveragePool, QuantizerMakesAPoolOfAQuantizedValueFold) {
  // conv → relu → AveragePool 3x3 s1 p1 → conv: the pool's output becomes a point, so the
  // int8 graph has a QLinearAveragePool between the two QLinearConvs and no float pool.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value* c1 = testing_quant::Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({4, 3, 3, 3}, 1, 0.3))}, pad, "conv1");
  Value* r1 = testing_quant::Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* p = testing_quant::Add(g, OpKind::kAveragePool, {r1}, Pool({3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 0), "pool");
  Value* c2 = testing_quant::Add(g, OpKind::kConv, {p, g.AddConstant("w2", Normal({6, 4, 1, 1}, 2, 0.3))}, {}, "conv2");
  g.MarkOutput(c2);
  ASSERT_TRUE(InferShapes(g).ok());
  const std::vector<std::string> points = QuantizationPoints(g, {});
  EXPECT_NE(std::find(points.begin(), points.end(), "pool:0"), points.end());
  std::vector<Sample> samples;
  for (uint32_t i = 0; i < 6; ++i) samples.push_back({{"x", Normal({1, 3, 8, 8}, 40 + i)}});
  auto t = Calibrate(g, samples, {}, {}, false);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok()) << int8.status().ToString();
  EXPECT_EQ(Count(*int8, OpKind::kQLinearAveragePool), 1);
  EXPECT_EQ(Count(*int8, OpKind::kAveragePool), 0);
  EXPECT_EQ(Count(*int8, OpKind::kQLinearConv), 2);
}

}  // namespace
}  // namespace edgec::quant
