// lift-1d-windows: the 1-d convolutions, pools and group norms of an integer graph and the
// elementwise ops between them become 2-d with H = 1 (weights [M, C/g, 1, K], kernel_shape,
// strides, dilations [1, .], pads [0, b, 0, e], auto_pad kept), one Unsqueeze where a region
// is entered and one Squeeze where it is left, graph outputs with their names and 3-d shapes;
// the reference outputs are the same bit for bit. A conv whose weights are not a constant and
// a max pool with indices are not lifted.
#include <gtest/gtest.h>

#include "layout_test_util.h"
#include "quant/fold_qdq.h"
#include "quant/pipeline.h"
#include "quant/qdq_rewrite.h"

#include "../quant/quant_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;
using testing_quant::Normal;

// The float graph calibrated on seeded samples and rewritten to QDQ.
Graph Qdq(Graph g, const Dims& x) {
  EXPECT_TRUE(quant::PrepareForQuantization(g).ok());
  std::vector<quant::Sample> samples;
  for (uint32_t i = 0; i < 3; ++i) samples.push_back({{"x", Normal(x, 40 + i)}});
  auto table = quant::Calibrate(g, samples, {}, {}, false);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_TRUE(quant::RewriteToQdq(g, *table, {}).ok());
  EXPECT_TRUE(RunPasses(g, "fuse-layernorm,fuse-groupnorm").ok());  // as Int8Executable does first
  return g;
}

// That QDQ graph folded to integer ops, without the passes Int8Executable runs after the fold
// (the graph this pass sees).
Graph Integer(Graph g, const Dims& x) {
  g = Qdq(std::move(g), x);
  EXPECT_TRUE(quant::FoldQdqToInteger(g).ok());
  return g;
}

Attributes Window(Ints k, Ints s = {1}, Ints p = {0, 0}, Ints d = {1}, int64_t group = 1) {
  Attributes a;
  a.Set("kernel_shape", k);
  a.Set("strides", s);
  a.Set("pads", p);
  a.Set("dilations", d);
  if (group != 1) a.Set("group", group);
  return a;
}

Value* Conv1d(LayoutBuilder& b, Value* x, int64_t c, int64_t m, int64_t k, Attributes a, uint32_t seed,
              const std::string& name) {
  const int64_t g = a.GetInt("group", 1);
  return b.Op(OpKind::kConv, {x, b.Const(Normal({m, c / g, k}, seed, 0.3), "w"), b.Const(Normal({m}, seed + 1, 0.1), "b")},
              a, name);
}

// x [1, 8, 40] -> conv k3 -> relu -> conv k9 s2 (+ 1x1 s2 shortcut) -> add -> relu -> max pool
// k2 s2 -> average pool k3 -> global average pool -> flatten -> gemm.
Graph ResidualChainFloat() {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 40});
  Value* c0 = b.Op(OpKind::kRelu, {Conv1d(b, x, 8, 16, 3, Window({3}, {1}, {1, 1}), 1, "conv0")});
  Value* c1 = Conv1d(b, c0, 16, 16, 9, Window({9}, {2}, {4, 4}), 3, "conv1");
  Value* sc = Conv1d(b, c0, 16, 16, 1, Window({1}, {2}), 5, "shortcut");
  Value* r = b.Op(OpKind::kRelu, {b.Op(OpKind::kAdd, {c1, sc}, {}, "add")}, {}, "relu");
  Value* mp = b.Op(OpKind::kMaxPool, {r}, Window({2}, {2}), "maxpool");
  Attributes avg = Window({3}, {1}, {1, 1});
  avg.Erase("dilations");
  Value* ap = b.Op(OpKind::kAveragePool, {mp}, avg, "avgpool");
  Value* gap = b.Op(OpKind::kGlobalAveragePool, {ap}, {}, "gap");
  Value* f = b.Op(OpKind::kFlatten, {gap});
  Attributes tb;
  tb.Set("transB", int64_t{1});
  Value* fc = b.Op(OpKind::kGemm, {f, b.Const(Normal({12, 16}, 7, 0.3), "wf"), b.Const(Normal({12}, 8, 0.1), "bf")}, tb, "fc");
  return b.Done({fc});
}

Graph ResidualChain() { return Integer(ResidualChainFloat(), {1, 8, 40}); }

// Depthwise (dilated), grouped and auto_pad convs, a channel Concat, a gate (x · tanh(x)), a
// group norm and a ceil-mode max pool.
Graph Branches() {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 33});
  Value* dw = Conv1d(b, x, 8, 8, 3, Window({3}, {1}, {2, 2}, {2}, 8), 11, "dw");
  Attributes same = Window({4}, {2}, {0, 0}, {1}, 2);
  same.Erase("pads");
  same.Set("auto_pad", std::string("SAME_UPPER"));
  Value* gc = Conv1d(b, x, 8, 8, 4, same, 13, "grouped_same");
  Value* up = Conv1d(b, dw, 8, 8, 1, Window({1}, {2}), 15, "pw");
  Attributes cat;
  cat.Set("axis", int64_t{1});
  Value* cc = b.Op(OpKind::kConcat, {up, gc}, cat, "concat");
  Value* scaled = b.Op(OpKind::kMul, {cc, b.Op(OpKind::kTanh, {cc})}, {}, "gate");
  Attributes gn;
  gn.Set("num_groups", int64_t{4});
  Value* n = b.Op(OpKind::kGroupNormalization, {scaled, b.Const(Normal({16}, 19, 0.3), "gamma"),
                                                b.Const(Normal({16}, 21, 0.1), "beta")}, gn, "groupnorm");
  Value* s = b.Op(OpKind::kSigmoid, {n}, {}, "sigmoid");
  Attributes mp = Window({3}, {2});
  mp.Erase("dilations");
  mp.Set("ceil_mode", int64_t{1});
  Value* y = b.Op(OpKind::kMaxPool, {s}, mp, "maxpool_ceil");
  // A pointwise conv reads the pool: the quantizer's points rule keeps a Sigmoid -> MaxPool
  // that ends the graph after a GroupNorm in float (noticed at the merge of the rule).
  Value* head = Conv1d(b, y, 16, 8, 1, Window({1}, {1}), 23, "head");
  return Integer(b.Done({head}), {1, 8, 33});
}

int Count(const Graph& g, OpKind op) { return CountOp(g, op); }

TEST(Lift1dWindows, ChainBecomes2dWithOneEntryAndExitsOnly) {
  Graph before = ResidualChain();
  ASSERT_GE(Count(before, OpKind::kQLinearConv), 3) << PrintGraph(before);
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "lift-1d-windows");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kQLinearConv && n->name().rfind("fc", 0) != 0) {  // the Gemm is a 1x1 conv already
      EXPECT_EQ(n->input(0)->type.rank(), 4) << n->name() << "\n" << PrintGraph(g);
      const Dims& w = n->input(3)->type.dims;
      ASSERT_EQ(w.size(), 4u) << n->name();
      EXPECT_EQ(w[2], 1) << n->name();
      EXPECT_EQ(n->attrs.GetInts("kernel_shape"), (Ints{1, w[3]})) << n->name();
      EXPECT_EQ(n->attrs.GetInts("strides")[0], 1) << n->name();
      EXPECT_EQ(n->attrs.GetInts("dilations"), (Ints{1, 1})) << n->name();
      const Ints p = n->attrs.GetInts("pads");
      ASSERT_EQ(p.size(), 4u) << n->name();
      EXPECT_EQ(p[0], 0);
      EXPECT_EQ(p[2], 0);
    }
    if (n->op() == OpKind::kMaxPool || n->op() == OpKind::kQLinearAveragePool ||
        n->op() == OpKind::kQLinearGlobalAveragePool || n->op() == OpKind::kQLinearAdd) {
      EXPECT_EQ(n->output(0)->type.rank(), 4) << n->name() << "\n" << PrintGraph(g);
    }
  }
  // conv1: k9 s2 pads [4, 4] -> [0, 4, 0, 4]; its weights [16, 16, 1, 9].
  const Node* conv1 = nullptr;
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQLinearConv && n->name().rfind("conv1", 0) == 0) conv1 = n;
  ASSERT_NE(conv1, nullptr) << PrintGraph(g);
  EXPECT_EQ(conv1->attrs.GetInts("pads"), (Ints{0, 4, 0, 4}));
  EXPECT_EQ(conv1->attrs.GetInts("strides"), (Ints{1, 2}));
  EXPECT_EQ(conv1->input(3)->type.dims, (Dims{16, 16, 1, 9}));
  // One Unsqueeze at the entry, one Squeeze where the region is left: the global pool's
  // [1, 16, 1] result (read by Flatten).
  EXPECT_EQ(Count(g, OpKind::kUnsqueeze), 1) << PrintGraph(g);
  EXPECT_EQ(Count(g, OpKind::kSqueeze), 1) << PrintGraph(g);
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kSqueeze) {
      EXPECT_EQ(n->output(0)->type.rank(), 3);
      EXPECT_EQ(n->input(0)->type.rank(), 4);
    }
  // The graph outputs keep their names and shapes.
  ASSERT_EQ(g.outputs().size(), before.outputs().size());
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    EXPECT_EQ(g.outputs()[i]->name(), before.outputs()[i]->name());
    EXPECT_EQ(g.outputs()[i]->type.dims, before.outputs()[i]->type.dims);
  }
  EXPECT_GE(Rewrites(*ctx, "1-d window op -> 2-d"), 6);
  ExpectSameOutputs(before, g, 0.0);
  ExpectSameOutputs(before, g, 0.0, 99);
}

// The CPU's fold (`edgec run/bench --int8`, a Session or Model::FoldQdq on a QDQ model) lifts
// too: its int8 kernels are 2-d, a 1-d conv would run on the reference kernel.
TEST(Lift1dWindows, TheCpuFoldLiftsToo) {
  const Graph qdq = Qdq(ResidualChainFloat(), {1, 8, 40});
  Graph plain = qdq.Clone();
  ASSERT_TRUE(quant::FoldQdqToInteger(plain).ok());
  Graph cpu = qdq.Clone();
  auto folded = quant::FoldQdqForCpu(cpu, {});
  ASSERT_TRUE(folded.ok()) << folded.status().message();
  EXPECT_GT(folded->folded, 0);
  int convs = 0;
  for (const Node* n : cpu.nodes())
    if (n->op() == OpKind::kQLinearConv && n->name().rfind("fc", 0) != 0) {
      EXPECT_EQ(n->input(0)->type.rank(), 4) << n->name() << "\n" << PrintGraph(cpu);
      ++convs;
    }
  EXPECT_EQ(convs, 3) << PrintGraph(cpu);
  ExpectSameOutputs(plain, cpu, 0.0);
}

TEST(Lift1dWindows, DepthwiseGroupedAutoPadConcatGroupNormKeepTheNumbers) {
  Graph before = Branches();
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "lift-1d-windows");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  int convs = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kQLinearConv) {
      ++convs;
      EXPECT_EQ(n->output(0)->type.rank(), 4) << n->name();
      if (n->attrs.GetInt("group", 1) == 2) {
        EXPECT_EQ(n->attrs.GetString("auto_pad"), "SAME_UPPER") << n->name();
        EXPECT_FALSE(n->attrs.Has("pads")) << n->name();
        EXPECT_EQ(n->input(3)->type.dims, (Dims{8, 4, 1, 4})) << n->name();
      }
      if (n->attrs.GetInt("group", 1) == 8) {
        EXPECT_EQ(n->attrs.GetInts("dilations"), (Ints{1, 2})) << n->name();
      }
    }
    if (n->op() == OpKind::kConcat) {
      EXPECT_EQ(n->attrs.GetInt("axis", 0), 1);
    }
    if (n->op() == OpKind::kQLinearGroupNormalization || n->op() == OpKind::kConcat || n->op() == OpKind::kMaxPool) {
      EXPECT_EQ(n->output(0)->type.rank(), 4) << n->name() << "\n" << PrintGraph(g);
    }
  }
  EXPECT_EQ(convs, 4) << PrintGraph(g);
  EXPECT_EQ(Count(g, OpKind::kUnsqueeze), 1) << PrintGraph(g);
  EXPECT_EQ(Count(g, OpKind::kSqueeze), 1) << PrintGraph(g);
  ExpectSameOutputs(before, g, 0.0);
  ExpectSameOutputs(before, g, 0.0, 123);
}

// An integer graph built by hand: a QLinearConv whose weights come from a graph input, and a
// max pool with indices, next to one that is lifted.
TEST(Lift1dWindows, ConvOfActivationWeightsAndPoolWithIndicesStay1d) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 20}, DType::kI8);
  Value* w = b.Input("w", {6, 4, 3}, DType::kI8);
  auto scalar_i8 = [&]() { return b.Const(Tensor::FromVector<int8_t>(DType::kI8, {}, {0}), "z"); };
  Attributes a = Window({3}, {1}, {1, 1});
  Value* y = b.Op(OpKind::kQLinearConv, {x, b.Scalar(0.05f), scalar_i8(), w, b.Scalar(0.02f), scalar_i8(),
                                          b.Scalar(0.1f), scalar_i8()}, a, "conv_of_activation");
  Attributes mp = Window({2}, {2});
  mp.Erase("dilations");
  Node* with_idx = b.Node_(OpKind::kMaxPool, {y}, mp, 2, "pool_with_indices");
  Value* lifted = b.Op(OpKind::kMaxPool, {y}, mp, "pool");
  Graph before = b.Done({with_idx->output(0), with_idx->output(1), lifted});
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "lift-1d-windows");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(OnlyNode(g, OpKind::kQLinearConv)->output(0)->type.rank(), 3) << PrintGraph(g);
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kMaxPool) {
      EXPECT_EQ(n->output(0)->type.rank(), n->num_outputs() == 2 ? 3 : 4) << n->name() << "\n" << PrintGraph(g);
    }
  }
  ExpectSameOutputs(before, g, 0.0);
}

// A per-channel constant operand [C, 1] of a QLinearAdd after a 1-d max pool becomes [C, 1, 1].
TEST(Lift1dWindows, PerChannelConstantGainsTheUnitDim) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 6, 15}, DType::kI8);
  auto i8 = [&](Dims d, std::vector<int8_t> v) { return b.Const(Tensor::FromVector<int8_t>(DType::kI8, std::move(d), v), "q"); };
  Attributes mp = Window({3}, {1}, {1, 1});
  mp.Erase("dilations");
  Value* p = b.Op(OpKind::kMaxPool, {x}, mp, "pool");
  Value* y = b.Op(OpKind::kQLinearAdd, {p, b.Scalar(0.05f), i8({}, {3}), i8({6, 1}, {-9, 40, 7, -100, 0, 77}), b.Scalar(0.02f),
                                        i8({}, {-2}), b.Scalar(0.06f), i8({}, {1})}, {}, "add_per_channel");
  Graph before = b.Done({y});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "lift-1d-windows").ok());
  const Node* add = OnlyNode(g, OpKind::kQLinearAdd);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(3)->type.dims, (Dims{6, 1, 1})) << PrintGraph(g);
  EXPECT_EQ(add->output(0)->type.dims, (Dims{1, 6, 1, 15})) << PrintGraph(g);
  // The graph output keeps its name and 3-d shape (a Squeeze writes it).
  EXPECT_EQ(g.outputs()[0]->name(), before.outputs()[0]->name());
  EXPECT_EQ(g.outputs()[0]->type.dims, (Dims{1, 6, 15}));
  EXPECT_EQ(g.outputs()[0]->producer()->op(), OpKind::kSqueeze);
  ExpectSameOutputs(before, g, 0.0);
}

// A graph with no 1-d window op is left as it was (elementwise ops alone are not lifted).
TEST(Lift1dWindows, ElementwiseOnlyAnd2dGraphsAreUnchanged) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 20}, DType::kI8);
  Value* r = b.Op(OpKind::kRelu, {x});
  Value* x4 = b.Input("x4", {1, 4, 6, 6}, DType::kI8);
  Attributes mp;
  mp.Set("kernel_shape", Ints{2, 2});
  Value* p = b.Op(OpKind::kMaxPool, {x4}, mp);
  Graph before = b.Done({r, p});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "lift-1d-windows").ok());
  EXPECT_EQ(PrintGraph(g), PrintGraph(before));
}

}  // namespace
}  // namespace edgec
