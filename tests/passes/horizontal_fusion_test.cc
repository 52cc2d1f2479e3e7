// horizontal-fusion: parallel Conv/Gemm/MatMul/FusedMatMul on one input -> one wider op +
// Split; slices tiling an axis -> Split; Split+Concat cancellation. Before/After structure,
// provenance, names of graph outputs, cases that must not fuse, differential checks.
#include <gtest/gtest.h>

#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

TEST(HorizontalFusion, ParallelMatMulsBecomeOneAndASplit) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 5, 8});
  Value* q = b.Op(OpKind::kMatMul, {x, b.Random({8, 4}, 1)}, {}, "q");
  Value* k = b.Op(OpKind::kMatMul, {x, b.Random({8, 4}, 2)}, {}, "k");
  Value* v = b.Op(OpKind::kMatMul, {x, b.Random({8, 6}, 3)}, {}, "v");
  Graph g = b.Done({b.Op(OpKind::kRelu, {q}), k, b.Op(OpKind::kNeg, {v})});
  Graph before = g.Clone();
  std::string k_name = k->name();
  auto ctx = RunPasses(g, "horizontal-fusion");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  const Node* mm = OnlyNode(g, OpKind::kMatMul);
  EXPECT_EQ(mm->input(1)->type.dims, (Dims{8, 14}));
  EXPECT_EQ(mm->provenance, (std::vector<std::string>{"q", "k", "v"}));
  const Node* split = OnlyNode(g, OpKind::kSplit);
  EXPECT_EQ(split->attrs.GetInt("axis"), 2);
  EXPECT_EQ(split->input(1)->constant().ToInt64Vector(), (Ints{4, 4, 6}));
  // The graph output k keeps its name: the Split's second output carries it.
  EXPECT_EQ(split->output(1)->name(), k_name);
  EXPECT_TRUE(split->output(1)->is_graph_output());
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("parallel MatMul"), 1);
  EXPECT_EQ(ctx->records().back().stats.nodes_fused, 3);
  ExpectSameOutputs(before, g);
}

TEST(HorizontalFusion, ConvsWithAndWithoutBias) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 6, 6});
  Value* c1 = b.Conv(x, 4, 3, 3, 1, /*bias=*/true);
  Value* c2 = b.Conv(x, 4, 5, 3, 2, /*bias=*/false);
  Graph g = b.Done({b.Op(OpKind::kRelu, {c1}), b.Op(OpKind::kSigmoid, {c2})});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "horizontal-fusion").ok());
  const Node* conv = OnlyNode(g, OpKind::kConv);
  EXPECT_EQ(conv->input(1)->type.dims, (Dims{8, 4, 3, 3}));
  ASSERT_NE(conv->input(2), nullptr);
  auto bias = conv->input(2)->constant().ToDoubleVector();
  ASSERT_EQ(bias.size(), 8u);
  for (int i = 3; i < 8; ++i) EXPECT_EQ(bias[i], 0.0);  // the bias-less branch
  EXPECT_EQ(OnlyNode(g, OpKind::kSplit)->attrs.GetInt("axis"), 1);
  ExpectSameOutputs(before, g);
}

TEST(HorizontalFusion, GemmTransBWithBias) {
  LayoutBuilder b;
  Value* x = b.Input("x", {3, 8});
  Attributes a;
  a.Set("transB", int64_t{1});
  a.Set("alpha", 0.5f);
  Value* y1 = b.Op(OpKind::kGemm, {x, b.Random({6, 8}, 1), b.Random({6}, 2)}, a);
  Value* y2 = b.Op(OpKind::kGemm, {x, b.Random({2, 8}, 3), b.Random({2}, 4)}, a);
  Graph g = b.Done({y1, y2});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "horizontal-fusion").ok());
  const Node* gemm = OnlyNode(g, OpKind::kGemm);
  EXPECT_EQ(gemm->input(1)->type.dims, (Dims{8, 8}));  // [N, K]: concatenated on axis 0
  EXPECT_EQ(gemm->input(2)->type.dims, (Dims{8}));
  ExpectSameOutputs(before, g);
}

TEST(HorizontalFusion, FusedMatMulEpiloguesMergeWhenEqual) {
  LayoutBuilder b;
  Value* x = b.Input("x", {4, 8});
  Attributes relu;
  relu.Set("activation", std::string("Relu"));
  Value* y1 = b.Op(OpKind::kFusedMatMul, {x, b.Random({8, 3}, 1), b.Random({3}, 2)}, relu);
  Value* y2 = b.Op(OpKind::kFusedMatMul, {x, b.Random({8, 3}, 3), b.Random({3}, 4)}, relu);
  Attributes tanh;
  tanh.Set("activation", std::string("Tanh"));
  Value* y3 = b.Op(OpKind::kFusedMatMul, {x, b.Random({8, 3}, 5), b.Random({3}, 6)}, tanh);
  Graph g = b.Done({y1, y2, y3});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "horizontal-fusion").ok());
  EXPECT_EQ(CountOp(g, OpKind::kFusedMatMul), 2);  // the Relu pair fused, the Tanh one alone
  EXPECT_EQ(CountOp(g, OpKind::kSplit), 1);
  ExpectSameOutputs(before, g);
}

TEST(HorizontalFusion, MustNotFuse) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 6, 6});
  Value* x2 = b.Input("x2", {1, 4, 6, 6});
  Value* w = b.Input("w", {3, 4, 3, 3});
  std::vector<Value*> outs;
  // Different strides.
  outs.push_back(b.Conv(x, 4, 3, 3, 1, true, {1, 1}));
  outs.push_back(b.Conv(x, 4, 3, 3, 2, true, {2, 2}));
  // Different inputs.
  outs.push_back(b.Conv(x2, 4, 3, 1, 3));
  // A weight that is not a constant (the other 1x1 Conv on x2 has nothing to pair with).
  Attributes k3;
  k3.Set("pads", Ints{1, 1, 1, 1});
  outs.push_back(b.Op(OpKind::kConv, {x2, w}, k3));
  outs.push_back(b.Conv(x2, 4, 3, 3, 4));
  // Grouped convolutions.
  Attributes grouped;
  grouped.Set("group", int64_t{2});
  outs.push_back(b.Op(OpKind::kConv, {x, b.Random({4, 2, 1, 1}, 5)}, grouped));
  outs.push_back(b.Op(OpKind::kConv, {x, b.Random({4, 2, 1, 1}, 6)}, grouped));
  Graph g = b.Done(outs);
  std::string text = PrintGraph(g);
  auto ctx = RunPasses(g, "horizontal-fusion", true);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(PrintGraph(g), text);
  bool said = false;
  for (const auto& e : ctx->explanations()) said |= e.find("group 2") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(HorizontalFusion, WideBranchesAndResidualsStay) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 16});
  Value* r = b.Input("r", {2, 4});
  Value* w1 = b.Op(OpKind::kMatMul, {x, b.Random({16, 2048}, 1)});
  Value* w2 = b.Op(OpKind::kMatMul, {x, b.Random({16, 8}, 2)});
  Value* f1 = b.Op(OpKind::kFusedMatMul, {x, b.Random({16, 4}, 3), nullptr, r});
  Value* f2 = b.Op(OpKind::kFusedMatMul, {x, b.Random({16, 4}, 4), nullptr, r});
  Graph g = b.Done({w1, w2, f1, f2});
  auto ctx = RunPasses(g, "horizontal-fusion", true);
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(CountOp(g, OpKind::kMatMul), 2);
  EXPECT_EQ(CountOp(g, OpKind::kFusedMatMul), 2);
  bool wide = false, residual = false;
  for (const auto& e : ctx->explanations()) {
    wide |= e.find("2048 output channels") != std::string::npos;
    residual |= e.find("residual") != std::string::npos;
  }
  EXPECT_TRUE(wide);
  EXPECT_TRUE(residual);
}

TEST(HorizontalFusion, SlicesTilingAnAxisBecomeASplit) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 2, 2});
  Value* lo = b.Op(OpKind::kSlice, {x, b.Ints1({0}), b.Ints1({3}), b.Ints1({1})});
  Value* hi = b.Op(OpKind::kSlice, {x, b.Ints1({3}), b.Ints1({1 << 30}), b.Ints1({1})});
  Value* odd = b.Op(OpKind::kSlice, {x, b.Ints1({1}), b.Ints1({2}), b.Ints1({2})});  // another axis
  Graph g = b.Done({b.Op(OpKind::kRelu, {lo}), b.Op(OpKind::kNeg, {hi}), odd});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "horizontal-fusion").ok());
  EXPECT_EQ(CountOp(g, OpKind::kSlice), 1);
  const Node* split = OnlyNode(g, OpKind::kSplit);
  EXPECT_EQ(split->input(1)->constant().ToInt64Vector(), (Ints{3, 5}));
  ExpectSameOutputs(before, g);
}

TEST(HorizontalFusion, SplitThenConcatInOrderCancels) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 6});
  Attributes a;
  a.Set("axis", int64_t{1});
  Node* split = b.Node_(OpKind::kSplit, {b.Op(OpKind::kRelu, {x}), b.Ints1({2, 4})}, a, 2);
  Value* whole = b.Op(OpKind::kConcat, {split->output(0), split->output(1)}, a);
  Node* split2 = b.Node_(OpKind::kSplit, {b.Op(OpKind::kNeg, {x}), b.Ints1({3, 3})}, a, 2);
  Value* swapped = b.Op(OpKind::kConcat, {split2->output(1), split2->output(0)}, a);  // not in order
  Graph g = b.Done({whole, swapped});
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "horizontal-fusion");
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(CountOp(g, OpKind::kSplit), 1);
  EXPECT_EQ(CountOp(g, OpKind::kConcat), 1);
  EXPECT_EQ(g.outputs()[0]->producer()->op(), OpKind::kRelu);
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("cancelled Split+Concat"), 1);
  EXPECT_EQ(ctx->records().back().stats.copy_bytes_removed, 12 * 4);  // the [2, 6] Concat
  ExpectSameOutputs(before, g);
}

}  // namespace
}  // namespace edgec
