#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/infer.h"

namespace edgec {
namespace {

TEST(Graph, TopoSortOrdersProducersFirstAndKeepsUseLists) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2}));
  // Built out of order: b consumes a's output but is appended first.
  Node* b = g.AddNode(OpKind::kRelu, "b", {nullptr}, 1);
  Node* a = g.AddNode(OpKind::kNeg, "a", {x}, 1);
  g.SetInput(b, 0, a->output(0));
  g.MarkOutput(b->output(0));
  EXPECT_FALSE(Verify(g).ok());
  ASSERT_TRUE(g.TopoSort().ok());
  EXPECT_EQ(g.nodes()[0], a);
  EXPECT_EQ(g.nodes()[1], b);
  EXPECT_TRUE(Verify(g).ok()) << Verify(g).message();
  ASSERT_EQ(a->output(0)->uses().size(), 1u);
  EXPECT_EQ(a->output(0)->uses()[0].node, b);
}

TEST(Graph, TopoSortReportsCycle) {
  Graph g;
  Node* a = g.AddNode(OpKind::kNeg, "a", {nullptr}, 1);
  Node* b = g.AddNode(OpKind::kNeg, "b", {a->output(0)}, 1);
  g.SetInput(a, 0, b->output(0));
  Status s = g.TopoSort();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
}

TEST(Graph, ReplaceAllUsesMovesGraphOutputs) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2}));
  Node* a = g.AddNode(OpKind::kIdentity, "a", {x}, 1);
  g.MarkOutput(a->output(0));
  g.ReplaceAllUses(a->output(0), x);
  g.RemoveNode(a);
  EXPECT_EQ(g.outputs()[0], x);
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_TRUE(Verify(g).ok());
}

TEST(Graph, VerifierChecksPhysicalLayoutAgainstLogicalShape) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 4, 4}));
  Node* a = g.AddNode(OpKind::kRelu, "a", {x}, 1);
  a->output(0)->type = x->type;
  g.MarkOutput(a->output(0));
  a->output(0)->physical.layout = Layout::kNHWC;
  a->output(0)->physical.padded_dims = {1, 4, 4, 16};  // channels padded 3 -> 16: fine
  EXPECT_TRUE(Verify(g).ok()) << Verify(g).message();
  a->output(0)->physical.padded_dims = {1, 4, 4, 2};  // smaller than 3 channels: a bug
  EXPECT_FALSE(Verify(g).ok());
  a->output(0)->physical.padded_dims = {1, 4, 4, 16};
  a->output(0)->physical.alignment = 48;
  EXPECT_FALSE(Verify(g).ok());
}

TEST(Infer, BroadcastDims) {
  auto r = BroadcastDims({2, 1, 4}, {3, 1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (Dims{2, 3, 4}));
  EXPECT_FALSE(BroadcastDims({2, 3}, {4}).ok());
  auto u = BroadcastDims({-1, 4}, {1, 4});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ((*u)[0], -1);
}

TEST(Tensor, CheckedNumElementsRejectsOverflowAndNegative) {
  EXPECT_FALSE(CheckedNumElements(std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_FALSE(CheckedNumElements(std::vector<int64_t>{2, -3}).ok());
  EXPECT_EQ(*CheckedNumElements(std::vector<int64_t>{2, 3, 0}), 0);
}

TEST(DType, HalfRoundTripsAndRoundsToEven) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f);
  }
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.f + 1.f / 2048)), 1.f);
  EXPECT_EQ(HalfToFloat(FloatToHalf(1e6f)), INFINITY);
}

}  // namespace
}  // namespace edgec
