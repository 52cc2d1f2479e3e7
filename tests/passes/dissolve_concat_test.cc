// dissolve-concat: a channel Concat read by a group-1 Conv becomes one partial Conv per
// input chained through residual epilogues; pools move above a channel Concat. Structure,
// provenance, the cost rule, cases that must not change, differential checks.
#include <gtest/gtest.h>

#include "ir/epilogue.h"
#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

Attributes ConvAttrs(int64_t k, const std::string& activation = "") {
  Attributes a;
  a.Set("kernel_shape", Ints{k, k});
  a.Set("pads", Ints{k / 2, k / 2, k / 2, k / 2});
  if (!activation.empty()) a.Set("activation", activation);
  return a;
}

Value* ChannelConcat(LayoutBuilder& b, std::vector<Value*> parts, int64_t axis = 1) {
  Attributes a;
  a.Set("axis", axis);
  return b.Op(OpKind::kConcat, std::move(parts), a, "cat");
}

TEST(DissolveConcat, SqueezeConvBecomesTwoPartialConvs) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 6, 6});
  Value* e1 = b.Conv(x, 4, 8, 1, 1);
  Value* e3 = b.Conv(x, 4, 8, 3, 2);
  Value* cat = ChannelConcat(b, {e1, e3});
  Value* y = b.Op(OpKind::kFusedConv, {cat, b.Random({3, 16, 1, 1}, 3), b.Random({3}, 4)}, ConvAttrs(1, "Relu"),
                  "squeeze");
  Graph g = b.Done({y});
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "dissolve-concat");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(CountOp(g, OpKind::kConcat), 0);
  ASSERT_EQ(CountOp(g, OpKind::kFusedConv), 2);
  const Node* last = g.outputs()[0]->producer();
  ASSERT_EQ(last->op(), OpKind::kFusedConv);
  const Node* first = last->input(3)->producer();  // the residual is the first part
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->op(), OpKind::kFusedConv);
  EXPECT_EQ(first->input(0), e1);
  EXPECT_EQ(last->input(0), e3);
  EXPECT_EQ(first->input(1)->type.dims, (Dims{3, 8, 1, 1}));
  EXPECT_EQ(last->input(1)->type.dims, (Dims{3, 8, 1, 1}));
  ASSERT_GE(first->num_inputs(), 3);
  EXPECT_NE(first->input(2), nullptr);  // the bias, once
  EXPECT_EQ(last->input(2), nullptr);
  EXPECT_FALSE(first->attrs.Has("activation"));
  EXPECT_EQ(last->attrs.GetString("activation"), "Relu");
  for (const Node* n : {first, last}) {
    EXPECT_EQ(n->provenance, (std::vector<std::string>{"squeeze", "cat"}));
  }
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("Concat -> Conv"), 1);
  EXPECT_GT(ctx->records().back().stats.copy_bytes_removed, 0);
  ExpectSameOutputs(before, g);
}

TEST(DissolveConcat, ThreeInputsA3x3ConvAndAnOriginalResidual) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 5, 7, 7});
  Value* r = b.Input("r", {2, 2, 7, 7});
  Value* a = b.Op(OpKind::kRelu, {x});
  Value* c = b.Op(OpKind::kSigmoid, {x});
  Value* d = b.Conv(x, 5, 3, 3, 9);
  Value* cat = ChannelConcat(b, {a, c, d});  // 13 channels
  Attributes attrs = ConvAttrs(3, "Clip");
  attrs.Set("activation_alpha", -0.5f);
  attrs.Set("activation_beta", 0.75f);
  Value* y = b.Op(OpKind::kFusedConv, {cat, b.Random({2, 13, 3, 3}, 5), b.Random({2}, 6), r}, attrs);
  Graph g = b.Done({y});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "dissolve-concat").ok());
  EXPECT_EQ(CountOp(g, OpKind::kConcat), 0);
  EXPECT_EQ(CountOp(g, OpKind::kFusedConv), 3);
  // The chain: the last part's residual is the second's output, whose residual is the
  // first's, which carries the original residual input.
  const Node* p2 = g.outputs()[0]->producer();
  const Node* p1 = p2->input(3)->producer();
  const Node* p0 = p1->input(3)->producer();
  EXPECT_EQ(p0->input(3), r);
  EXPECT_EQ(p0->input(1)->type.dims, (Dims{2, 5, 3, 3}));
  EXPECT_EQ(p1->input(1)->type.dims, (Dims{2, 5, 3, 3}));
  EXPECT_EQ(p2->input(1)->type.dims, (Dims{2, 3, 3, 3}));
  ExpectSameOutputs(before, g);
}

TEST(DissolveConcat, EveryConvReaderSplitsOrNone) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 6, 5, 5});
  Value* a = b.Op(OpKind::kRelu, {x});
  Value* c = b.Op(OpKind::kTanh, {x});
  // Two readers of 2 and 3 channels from 12: 5 output channels in all, split.
  Value* cat = ChannelConcat(b, {a, c});
  Value* y1 = b.Op(OpKind::kConv, {cat, b.Random({2, 12, 1, 1}, 1)}, ConvAttrs(1));
  Value* y2 = b.Op(OpKind::kFusedConv, {cat, b.Random({3, 12, 3, 3}, 2), b.Random({3}, 3)}, ConvAttrs(3, "Sigmoid"));
  // Two readers of 7 channels each from 12: together 14 > 12, so neither splits.
  Value* cat2 = ChannelConcat(b, {a, c});
  Value* z1 = b.Op(OpKind::kConv, {cat2, b.Random({7, 12, 1, 1}, 4)}, ConvAttrs(1));
  Value* z2 = b.Op(OpKind::kConv, {cat2, b.Random({7, 12, 1, 1}, 5)}, ConvAttrs(1));
  Graph g = b.Done({y1, y2, z1, z2});
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "dissolve-concat", true);
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(CountOp(g, OpKind::kConcat), 1);
  EXPECT_EQ(CountOp(g, OpKind::kConv), 2);       // z1, z2
  EXPECT_EQ(CountOp(g, OpKind::kFusedConv), 4);  // two parts for each of y1, y2
  EXPECT_EQ(g.outputs()[1]->producer()->attrs.GetString("activation"), "Sigmoid");
  bool said = false;
  for (const auto& e : ctx->explanations()) said |= e.find("of 2 reader(s)") != std::string::npos;
  EXPECT_TRUE(said);
  ExpectSameOutputs(before, g);
}

TEST(DissolveConcat, APoolMovesAboveTheConcatWhichThenDissolves) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 8, 8});
  Value* a = b.Conv(x, 3, 6, 1, 1);
  Value* c = b.Conv(x, 3, 6, 3, 2);
  Value* cat = ChannelConcat(b, {a, c});
  Attributes pool;
  pool.Set("kernel_shape", Ints{3, 3});
  pool.Set("strides", Ints{2, 2});
  Value* p = b.Op(OpKind::kMaxPool, {cat}, pool, "pool");
  Value* y = b.Op(OpKind::kConv, {p, b.Random({2, 12, 1, 1}, 3)}, ConvAttrs(1));
  Graph g = b.Done({y});
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "dissolve-concat");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(CountOp(g, OpKind::kConcat), 0);
  EXPECT_EQ(CountOp(g, OpKind::kMaxPool), 2);
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("Concat -> pool"), 1);
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("Concat -> Conv"), 1);
  ExpectSameOutputs(before, g);
}

TEST(DissolveConcat, APoolThatIsAGraphOutputKeepsItsName) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 2, 4, 4});
  Value* x2 = b.Input("x2", {1, 3, 4, 4});
  Value* cat = ChannelConcat(b, {b.Op(OpKind::kRelu, {x}), b.Op(OpKind::kRelu, {x2})});
  Value* p = b.Op(OpKind::kGlobalAveragePool, {cat}, {}, "gap");
  Graph g = b.Done({p});
  const std::string name = p->name();
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "dissolve-concat").ok());
  EXPECT_EQ(CountOp(g, OpKind::kGlobalAveragePool), 2);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0]->name(), name);
  EXPECT_EQ(g.outputs()[0]->producer()->op(), OpKind::kConcat);
  EXPECT_EQ(g.outputs()[0]->type.dims, (Dims{1, 5, 1, 1}));
  ExpectSameOutputs(before, g);
}

TEST(DissolveConcat, MustNotChange) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 6, 6});
  Value* a = b.Op(OpKind::kRelu, {x});
  Value* c = b.Op(OpKind::kSigmoid, {x});
  std::vector<Value*> outs;
  // The cost rule: 16 output channels from 8 concatenated ones.
  outs.push_back(b.Op(OpKind::kConv, {ChannelConcat(b, {a, c}), b.Random({16, 8, 1, 1}, 1)}, ConvAttrs(1)));
  // A grouped convolution.
  Attributes grouped = ConvAttrs(1);
  grouped.Set("group", int64_t{2});
  outs.push_back(b.Op(OpKind::kConv, {ChannelConcat(b, {a, c}), b.Random({2, 4, 1, 1}, 2)}, grouped));
  // A Concat with a second reader.
  Value* shared = ChannelConcat(b, {a, c});
  outs.push_back(b.Op(OpKind::kConv, {shared, b.Random({2, 8, 1, 1}, 3)}, ConvAttrs(1)));
  outs.push_back(b.Op(OpKind::kNeg, {shared}));
  // Along another axis.
  outs.push_back(b.Op(OpKind::kConv, {ChannelConcat(b, {a, c}, 2), b.Random({2, 4, 1, 1}, 4)}, ConvAttrs(1)));
  // A weight that is not a constant.
  Value* w = b.Input("w", {2, 8, 1, 1});
  outs.push_back(b.Op(OpKind::kConv, {ChannelConcat(b, {a, c}), w}, ConvAttrs(1)));
  // A Concat with a constant input.
  outs.push_back(b.Op(OpKind::kConv, {ChannelConcat(b, {a, b.Random({1, 4, 6, 6}, 5)}), b.Random({2, 8, 1, 1}, 6)},
                      ConvAttrs(1)));
  Graph g = b.Done(outs);
  const std::string text = PrintGraph(g);
  auto ctx = RunPasses(g, "dissolve-concat", true);
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(PrintGraph(g), text);
  std::string all;
  for (const auto& e : ctx->explanations()) all += e + "\n";
  for (const char* reason : {"more time", "group 2", "also read by Neg", "joins axis 2", "weight is not a constant",
                             "absent, constant"}) {
    EXPECT_NE(all.find(reason), std::string::npos) << reason << " not in\n" << all;
  }
}

}  // namespace
}  // namespace edgec
