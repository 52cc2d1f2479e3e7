// convtranspose-subpixel: the rewritten graph (Conv over the stride phases, pixel shuffle as
// DepthToSpace or Reshape/Transpose/Reshape, crop) computes the reference ConvTranspose on seeded shapes: strides 1-3, kernels 1-5 (not
// multiples of the stride too), pads, output_padding, bias or none; and what it refuses stays.
#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;
using Ints = std::vector<int64_t>;

Graph Deconv(int64_t c, int64_t k, int64_t h, int64_t w, Ints kernel, Ints strides, Ints pads, Ints out_pad, bool bias,
             uint32_t seed, int64_t group = 1) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, c, h, w}));
  std::vector<Value*> in = {x, g.AddConstant("w", RandomTensor(DType::kF32, {c, k / group, kernel[0], kernel[1]}, seed))};
  if (bias) in.push_back(g.AddConstant("b", RandomTensor(DType::kF32, {k}, seed + 1)));
  Node* n = g.AddNode(OpKind::kConvTranspose, "up", in, 1);
  n->attrs.Set("strides", strides);
  n->attrs.Set("pads", pads);
  n->attrs.Set("group", group);
  if (!out_pad.empty()) n->attrs.Set("output_padding", out_pad);
  g.MarkOutput(n->output(0));
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

TEST(ConvTransposeSubpixel, MatchesTheTransposedConvolution) {
  std::mt19937 rng(3);
  int rewrites = 0, square = 0;
  for (int i = 0; i < 24; ++i) {
    const int64_t sh = 1 + rng() % 3, sw = 1 + rng() % 3;
    const int64_t kh = 1 + rng() % 5, kw = 1 + rng() % 5;
    // Pads below half the kernel keep every output size positive.
    const Ints pads = {static_cast<int64_t>(rng() % ((kh + 1) / 2)), static_cast<int64_t>(rng() % ((kw + 1) / 2)),
                       static_cast<int64_t>(rng() % ((kh + 1) / 2)), static_cast<int64_t>(rng() % ((kw + 1) / 2))};
    Ints out_pad;
    if (i % 4 == 3) out_pad = {static_cast<int64_t>(rng() % sh), static_cast<int64_t>(rng() % sw)};
    Graph before = Deconv(1 + rng() % 5, 1 + rng() % 6, 1 + rng() % 6, 1 + rng() % 6, {kh, kw}, {sh, sw}, pads,
                          out_pad, i % 2 == 0, 100 + i);
    Graph after = before.Clone();
    auto ctx = RunPasses(after, "convtranspose-subpixel", true);
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    const bool rewritten = CountOp(after, OpKind::kConvTranspose) == 0;
    if (!rewritten) {
      // Only an output_padding past the last phase is refused.
      ASSERT_FALSE(out_pad.empty()) << PrintGraph(after);
      continue;
    }
    EXPECT_EQ(CountOp(after, OpKind::kConv), 1);
    // Equal strides shuffle by one DepthToSpace, others by Reshape → Transpose → Reshape.
    EXPECT_EQ(CountOp(after, OpKind::kDepthToSpace), sh == sw ? 1 : 0);
    EXPECT_EQ(CountOp(after, OpKind::kTranspose), sh == sw ? 0 : 1);
    ExpectSameOutputs(before, after, 1e-5, 7 + i);
    ++rewrites;
    square += sh == sw;
  }
  EXPECT_GE(rewrites, 20);
  EXPECT_GE(square, 4);
}

// ConvTranspose -> Relu and ConvTranspose -> Sigmoid (the graph output): the activation moves
// before the shuffle (its input is the Conv's output) and the outputs stay the same.
TEST(ConvTransposeSubpixel, ActivationRunsOnThePhases) {
  for (OpKind act : {OpKind::kRelu, OpKind::kSigmoid}) {
    Graph before;
    Value* x = before.AddInput("x", MakeType(DType::kF32, {1, 3, 4, 5}));
    Node* up = before.AddNode(OpKind::kConvTranspose, "up",
                              {x, before.AddConstant("w", RandomTensor(DType::kF32, {3, 2, 2, 2}, 31)),
                               before.AddConstant("b", RandomTensor(DType::kF32, {2}, 32))}, 1);
    up->attrs.Set("strides", Ints{2, 2});
    Node* a = before.AddNode(act, "act", {up->output(0)}, 1, {"prob"});
    before.MarkOutput(a->output(0));
    ASSERT_TRUE(InferShapes(before).ok());
    Graph after = before.Clone();
    auto ctx = RunPasses(after, "convtranspose-subpixel", true);
    ASSERT_TRUE(ctx.ok()) << ctx.status().message();
    ASSERT_EQ(CountOp(after, OpKind::kDepthToSpace), 1);
    ASSERT_EQ(CountOp(after, act), 1);
    for (const Node* n : after.nodes())
      if (n->op() == act) EXPECT_EQ(n->input(0)->producer()->op(), OpKind::kConv) << PrintGraph(after);
    ASSERT_EQ(after.outputs().size(), 1u);
    EXPECT_EQ(after.outputs()[0]->name(), "prob");
    ExpectSameOutputs(before, after, 1e-5, 41);
  }
}

TEST(ConvTransposeSubpixel, KeepsWhatItDoesNotRewrite) {
  Graph g = Deconv(4, 4, 3, 3, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}, true, 9, /*group=*/2);
  auto ctx = RunPasses(g, "convtranspose-subpixel", true);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(CountOp(g, OpKind::kConvTranspose), 1);
  bool said = false;
  for (const std::string& e : ctx->explanations()) said |= e.find("group") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace edgec
