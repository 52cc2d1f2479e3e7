// Per-channel islands (fold_qdq.h MatchChannelIsland): DQ ─► f(x, c[C,1,1], ...) ─► Q folds into
// one QuantizedLookup with a table per channel, bit-exact against the island on the reference
// kernels (PRelu, BatchNormalization ─► Relu, Mul + Add by [C,1,1], PRelu ─► Mul, a PRelu of a
// 2-d [N, C] value, u8 and i8); islands that vary along two axes stay float; and a model with a
// PRelu and a standalone BatchNormalization quantizes with no float node left.
#include <gtest/gtest.h>

#include <random>

#include "ir/infer.h"
#include "quant/fold_qdq.h"
#include "quant/pipeline.h"
#include "runtime/reference_executor.h"

#include "quant_test_util.h"

namespace edgec::quant {
namespace {

using testing_quant::Add;
using testing_quant::Normal;

int Count(const Graph& g, OpKind op) {
  int c = 0;
  for (const Node* n : g.nodes()) c += n->op() == op;
  return c;
}

Tensor Scalar8(DType dt, int v) {
  return dt == DType::kU8 ? Tensor::FromVector<uint8_t>(dt, {}, {static_cast<uint8_t>(v)})
                          : Tensor::FromVector<int8_t>(dt, {}, {static_cast<int8_t>(v)});
}

// x ─► Q ─► DQ ─► island(build) ─► Q ─► DQ ─► y, quantized with `dt` (zero points 3 / -5 for
// u8 ... i8 alike: asymmetric, so the lowest code is not the zero).
struct IslandGraph {
  Graph g;
  Dims dims;
};
template <class Build>
IslandGraph MakeIsland(DType dt, Dims dims, Build build) {
  IslandGraph m;
  m.dims = dims;
  Graph& g = m.g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, dims));
  const int zin = dt == DType::kU8 ? 131 : 3, zout = dt == DType::kU8 ? 120 : -5;
  Value* s1 = g.AddConstant("s1", Tensor::Scalar(0.031f));
  Value* z1 = g.AddConstant("z1", Scalar8(dt, zin));
  Value* q = Add(g, OpKind::kQuantizeLinear, {x, s1, z1}, {}, "q_in");
  Value* d = Add(g, OpKind::kDequantizeLinear, {q, s1, z1}, {}, "dq_in");
  Value* f = build(g, d);
  Value* s2 = g.AddConstant("s2", Tensor::Scalar(0.027f));
  Value* z2 = g.AddConstant("z2", Scalar8(dt, zout));
  Value* q2 = Add(g, OpKind::kQuantizeLinear, {f, s2, z2}, {}, "q_out");
  g.MarkOutput(Add(g, OpKind::kDequantizeLinear, {q2, s2, z2}, {}, "y"));
  return m;
}

// A constant varying along axis 1 of a 4-d value: [C,1,1] (or `shape`).
Value* PerChannel(Graph& g, const std::string& name, Dims shape, uint32_t seed, double sd = 0.5) {
  return g.AddConstant(name, Normal(std::move(shape), seed, sd));
}

struct IslandCase {
  std::string name;
  Dims dims;
  int64_t axis;
  std::function<Value*(Graph&, Value*)> build;
  std::vector<OpKind> float_ops;  // what must be gone
};

std::vector<IslandCase> Cases() {
  std::vector<IslandCase> c;
  c.push_back({"prelu", {1, 5, 6, 7}, 1, [](Graph& g, Value* x) {
                 return Add(g, OpKind::kPRelu, {x, PerChannel(g, "slope", {5, 1, 1}, 1)}, {}, "prelu");
               }, {OpKind::kPRelu}});
  c.push_back({"batchnorm_relu", {2, 3, 4, 5}, 1, [](Graph& g, Value* x) {
                 Tensor var = Normal({3}, 5, 0.5);
                 for (int64_t i = 0; i < 3; ++i) var.data<float>()[i] = 0.3f + std::fabs(var.data<float>()[i]);
                 Value* bn = Add(g, OpKind::kBatchNormalization,
                                 {x, PerChannel(g, "gamma", {3}, 2, 1.0), PerChannel(g, "beta", {3}, 3),
                                  PerChannel(g, "mean", {3}, 4), g.AddConstant("var", var)},
                                 {}, "bn");
                 return Add(g, OpKind::kRelu, {bn}, {}, "relu");
               }, {OpKind::kBatchNormalization, OpKind::kRelu}});
  c.push_back({"mul_add", {1, 7, 3, 3}, 1, [](Graph& g, Value* x) {
                 Value* m = Add(g, OpKind::kMul, {x, PerChannel(g, "k", {7, 1, 1}, 6, 1.0)}, {}, "mul");
                 return Add(g, OpKind::kAdd, {m, PerChannel(g, "b", {1, 7, 1, 1}, 7)}, {}, "add");
               }, {OpKind::kMul, OpKind::kAdd}});
  c.push_back({"prelu_mul", {1, 4, 5, 2}, 1, [](Graph& g, Value* x) {
                 Value* p = Add(g, OpKind::kPRelu, {x, PerChannel(g, "slope", {4, 1, 1}, 8)}, {}, "prelu");
                 return Add(g, OpKind::kMul, {p, PerChannel(g, "k", {4, 1, 1}, 9, 1.0)}, {}, "mul");
               }, {OpKind::kPRelu, OpKind::kMul}});
  c.push_back({"prelu_2d", {3, 9}, 1, [](Graph& g, Value* x) {  // slope [C] of a [N, C] value: the last axis
                 return Add(g, OpKind::kPRelu, {x, PerChannel(g, "slope", {9}, 10)}, {}, "prelu");
               }, {OpKind::kPRelu}});
  c.push_back({"div_by_last_axis", {1, 4, 6}, 2, [](Graph& g, Value* x) {
                 Tensor k = Normal({6}, 11, 1.0);
                 for (int64_t i = 0; i < 6; ++i) k.data<float>()[i] = 0.5f + std::fabs(k.data<float>()[i]);
                 return Add(g, OpKind::kDiv, {x, g.AddConstant("k", k)}, {}, "div");
               }, {OpKind::kDiv}});
  return c;
}

// Inputs that cover every code of the input quantization.
Tensor Spread(const Dims& dims, uint32_t seed) { return Normal(dims, seed, 3.0); }

TEST(ChannelIsland, FoldsIntoOneTablePerChannelBitExact) {
  for (const IslandCase& ic : Cases()) {
    for (DType dt : {DType::kU8, DType::kI8}) {
      SCOPED_TRACE(ic.name + " " + std::string(DTypeName(dt)));
      IslandGraph m = MakeIsland(dt, ic.dims, ic.build);
      ASSERT_TRUE(InferShapes(m.g).ok());
      Graph folded = m.g.Clone();
      auto s = FoldQdqToInteger(folded);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ(s->tabulated, 1);
      ASSERT_EQ(Count(folded, OpKind::kQuantizedLookup), 1) << PrintGraph(folded);
      for (OpKind op : ic.float_ops) EXPECT_EQ(Count(folded, op), 0) << OpName(op);
      for (const Node* n : folded.nodes()) {
        if (n->op() != OpKind::kQuantizedLookup) continue;
        const Tensor& table = n->input(1)->constant();
        const int64_t rank = static_cast<int64_t>(ic.dims.size());
        EXPECT_EQ(table.dims(), (Dims{ic.dims[ic.axis], 256}));
        EXPECT_EQ(n->attrs.GetInt("axis", -100), ic.axis < 0 ? ic.axis + rank : ic.axis);
      }
      for (uint32_t seed : {1u, 2u, 3u}) {
        const Tensor x = Spread(ic.dims, seed);
        auto a = ReferenceExecutor(m.g).Run({{"x", x}});
        auto b = ReferenceExecutor(folded).Run({{"x", x}});
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector());
      }
    }
  }
}

// A constant that varies along two axes (a [C, H, 1] scale) is no per-channel island; nor is a
// constant of more dims than the value. They stay float islands.
TEST(ChannelIsland, ConstantsOfTwoAxesStayFloat) {
  IslandGraph m = MakeIsland(DType::kU8, {1, 3, 4, 5}, [](Graph& g, Value* x) {
    return Add(g, OpKind::kMul, {x, PerChannel(g, "k", {3, 4, 1}, 12)}, {}, "mul");
  });
  ASSERT_TRUE(InferShapes(m.g).ok());
  const Node* mul = m.g.outputs()[0]->producer()->input(0)->producer()->input(0)->producer();
  ASSERT_EQ(mul->op(), OpKind::kMul);
  EXPECT_FALSE(MatchChannelIsland(mul).has_value());
  Graph folded = m.g.Clone();
  ASSERT_TRUE(FoldQdqToInteger(folded).ok());
  EXPECT_EQ(Count(folded, OpKind::kQuantizedLookup), 0);
  EXPECT_EQ(Count(folded, OpKind::kMul), 1);
}

// x ─► conv1 ─► PRelu[C,1,1] ─► MaxPool ─► conv2 ─► Concat(·, pool) ─► BatchNormalization ─►
// Relu ─► conv3 ─► y: the PRelu's output is a point (its MaxPool then runs on int8 values), the
// BatchNormalization ─► Relu island sits between the Concat's point and conv3's, and the
// integer graph has no float node between its input Quantize and its output Dequantize.
TEST(ChannelIsland, PReluModelQuantizesWithNoFloatNode) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 12, 12}));
  Attributes pad;
  pad.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({6, 3, 3, 3}, 21, 0.4))}, pad, "conv1");
  Value* pr = Add(g, OpKind::kPRelu, {c1, g.AddConstant("slope", Normal({6, 1, 1}, 22, 0.3))}, {}, "prelu");
  Attributes mp;
  mp.Set("kernel_shape", std::vector<int64_t>{2, 2});
  mp.Set("strides", std::vector<int64_t>{2, 2});
  Value* pool = Add(g, OpKind::kMaxPool, {pr}, mp, "pool");
  Value* c2 = Add(g, OpKind::kConv, {pool, g.AddConstant("w2", Normal({4, 6, 3, 3}, 23, 0.3))}, pad, "conv2");
  Attributes ax;
  ax.Set("axis", int64_t{1});
  Value* cat = Add(g, OpKind::kConcat, {c2, pool}, ax, "concat");
  Tensor var = Normal({10}, 24, 0.5);
  for (int64_t i = 0; i < 10; ++i) var.data<float>()[i] = 0.2f + std::fabs(var.data<float>()[i]);
  Value* bn = Add(g, OpKind::kBatchNormalization,
                  {cat, g.AddConstant("gamma", Normal({10}, 25, 1.0)), g.AddConstant("beta", Normal({10}, 26, 0.5)),
                   g.AddConstant("mean", Normal({10}, 27, 0.5)), g.AddConstant("var", var)},
                  {}, "bn");
  Value* relu = Add(g, OpKind::kRelu, {bn}, {}, "relu");
  Value* y = Add(g, OpKind::kConv, {relu, g.AddConstant("w3", Normal({5, 10, 1, 1}, 28, 0.3))}, {}, "conv3");
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  const std::vector<std::string> points = QuantizationPoints(g, {});
  auto has = [&](const Value* v) { return std::find(points.begin(), points.end(), v->name()) != points.end(); };
  EXPECT_TRUE(has(pr));        // the PRelu island's end
  EXPECT_FALSE(has(bn));       // inside the BatchNormalization -> Relu island
  EXPECT_TRUE(has(relu));
  std::vector<Sample> samples;
  for (uint32_t i = 0; i < 4; ++i) samples.push_back({{"x", Normal({1, 3, 12, 12}, 30 + i)}});
  auto t = Calibrate(g, samples, {}, {}, false);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Graph qdq = g.Clone();
  ASSERT_TRUE(RewriteToQdq(qdq, *t, {}).ok());
  auto folded = Int8Executable(qdq);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(Count(*folded, OpKind::kQuantizedLookup), 2) << PrintGraph(*folded);
  for (const Node* n : folded->nodes()) {
    if (n->op() == OpKind::kQuantizeLinear && n->input(0)->is_graph_input()) continue;
    if (n->op() == OpKind::kDequantizeLinear && n->output(0)->is_graph_output()) continue;
    for (const Value* v : n->outputs()) EXPECT_NE(v->type.dtype, DType::kF32) << n->Label() << "\n" << PrintGraph(*folded);
  }
  // The integer graph against the QDQ graph in float: the lookups are exact, so within a step.
  for (uint32_t i = 0; i < 2; ++i) {
    const Sample s = {{"x", Normal({1, 3, 12, 12}, 40 + i)}};
    auto a = ReferenceExecutor(*folded).Run(s);
    auto b = ReferenceExecutor(qdq).Run(s);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::vector<double> va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
    const double step = t->activations.at(y->name()).scale;
    for (size_t k = 0; k < va.size(); ++k) EXPECT_NEAR(va[k], vb[k], step * 1.01) << k;
  }
}

}  // namespace
}  // namespace edgec::quant
