// gather-as-slice: Gathers at constant scalar indices of a Reshape that read one block of its
// input (attention's qkv split) become Slice + Reshape, on seeded shapes; the reference
// outputs do not change; a Gather that reads across the input's blocks stays.
#include <gtest/gtest.h>

#include <random>

#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

int CountOps(const Graph& g, OpKind op) {
  int c = 0;
  for (const Node* n : g.nodes()) c += n->op() == op;
  return c;
}

// x [1, parts·heads·d, h, w] -> Reshape [1, parts, heads, d, h·w] -> Gather(k) on axis 1 for each k.
Graph QkvSplit(int64_t parts, int64_t heads, int64_t d, int64_t h, int64_t w) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, parts * heads * d, h, w});
  Value* r = b.Reshape(b.Op(OpKind::kRelu, {x}), {1, parts, heads, d, h * w});
  std::vector<Value*> outs;
  for (int64_t k = 0; k < parts; ++k) {
    Attributes a;
    a.Set("axis", int64_t{1});
    outs.push_back(b.Op(OpKind::kNeg, {b.Op(OpKind::kGather, {r, b.Const(Tensor::ScalarI64(k - (k % 2) * parts))}, a)}));
  }
  return b.Done(outs);
}

TEST(GatherAsSlice, QkvSplitBecomesChannelSlices) {
  std::mt19937 rng(5);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  for (int i = 0; i < 8; ++i) {
    const int64_t parts = U(2, 4), heads = U(1, 3), d = U(2, 5), h = U(1, 4), w = U(1, 4);
    SCOPED_TRACE(fmt::format("parts {} heads {} d {} h {} w {}", parts, heads, d, h, w));
    Graph before = QkvSplit(parts, heads, d, h, w);
    Graph g = before.Clone();
    auto ctx = RunPasses(g, "gather-as-slice");
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    EXPECT_EQ(CountOps(g, OpKind::kGather), 0) << PrintGraph(g);
    EXPECT_EQ(CountOps(g, OpKind::kSlice), parts) << PrintGraph(g);
    for (const Node* n : g.nodes())
      if (n->op() == OpKind::kSlice) EXPECT_EQ(n->input(0)->producer()->op(), OpKind::kRelu) << PrintGraph(g);
    ExpectSameOutputs(before, g, 0.0);
  }
}

TEST(GatherAsSlice, GatherAcrossBlocksStays) {
  // Column 1 of Reshape([1, 6, 4] -> [1, 4, 6]) takes one element of every row: no block of x.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 6, 4});
  Value* r = b.Reshape(b.Op(OpKind::kRelu, {x}), {1, 4, 6});
  Attributes a;
  a.Set("axis", int64_t{2});
  Graph before = b.Done({b.Op(OpKind::kGather, {r, b.Const(Tensor::ScalarI64(1))}, a)});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "gather-as-slice").ok());
  EXPECT_EQ(CountOps(g, OpKind::kGather), 1) << PrintGraph(g);
  ExpectSameOutputs(before, g, 0.0);
}

}  // namespace
}  // namespace edgec
