// attention-3d: the [1, H, S, d] tensors around a MatMul of two activations and a last-axis
// Softmax become 3-d (Transposes drop their first axis, Reshapes get the 3-d shape, other
// readers see the 4-d value through a Reshape); the reference outputs do not change; a
// group with a 4-d graph output stays as it was.
#include <gtest/gtest.h>

#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

// x [1, S, H·d] -> heads -> scores -> scale -> softmax -> context -> back to [1, S, H·d];
// `probs_out`: the probabilities are also a graph output (4-d), read by a Relu; `int16`: the
// probabilities are an int16 point read through a QLinearRequantize to 8 bits (mixed precision).
Graph Attention(bool probs_out, bool relu_reader, bool int16 = false) {
  const int64_t S = 6, H = 3, d = 4;
  LayoutBuilder b;
  Value* x = b.Input("x", {1, S, H * d});
  Value* q = b.Reshape(b.Op(OpKind::kRelu, {x}), {1, S, H, d});
  Value* qt = b.Transpose(q, {0, 2, 1, 3});
  Value* kt = b.Transpose(b.Reshape(b.Op(OpKind::kNeg, {x}), {1, S, H, d}), {0, 2, 3, 1});
  Value* s = b.Op(OpKind::kMatMul, {qt, kt});
  Value* m = b.Op(OpKind::kMul, {s, b.Scalar(0.5f)});
  Attributes a;
  a.Set("axis", int64_t{-1});
  Value* p = b.Op(OpKind::kSoftmax, {m}, a, "probs");
  Value* pc = p;
  if (int16) {
    Value* s16 = b.Scalar(1.f / 32767);
    Value* z16 = b.Const(Tensor::FromVector<int16_t>(DType::kI16, {}, {0}), "z16");
    Value* s8 = b.Scalar(1.f / 255);
    Value* z8 = b.Const(Tensor::FromVector<uint8_t>(DType::kU8, {}, {0}), "z8");
    Value* p16 = b.Op(OpKind::kQuantizeLinear, {p, s16, z16});
    Value* p8 = b.Op(OpKind::kQLinearRequantize, {p16, s16, z16, s8, z8}, {}, "narrow");
    pc = b.Op(OpKind::kDequantizeLinear, {p8, s8, z8});
  }
  Value* c = b.Op(OpKind::kMatMul, {pc, qt});
  Value* y = b.Reshape(b.Transpose(c, {0, 2, 1, 3}), {1, S, H * d});
  std::vector<Value*> outs = {y};
  if (relu_reader) outs.push_back(b.Op(OpKind::kRelu, {p}));
  if (probs_out) outs.push_back(p);
  return b.Done(outs);
}

TEST(Attention3d, AttentionTensorsBecome3d) {
  Graph before = Attention(false, true);
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "attention-3d");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kMatMul || n->op() == OpKind::kSoftmax || n->op() == OpKind::kMul)
      EXPECT_EQ(n->output(0)->type.rank(), 3) << n->name() << "\n" << PrintGraph(g);
    if (n->op() == OpKind::kTranspose) EXPECT_EQ(n->attrs.GetInts("perm").size(), 3u) << n->name();
  }
  EXPECT_EQ(OnlyNode(g, OpKind::kSoftmax)->output(0)->type.dims, (Dims{3, 6, 6}));
  // The Relu (not of the group) reads the 4-d probabilities through a Reshape.
  const Node* relu_of_p = nullptr;
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kRelu && n->input(0)->type.rank() == 4) relu_of_p = n;
  ASSERT_NE(relu_of_p, nullptr) << PrintGraph(g);
  EXPECT_EQ(relu_of_p->input(0)->producer()->op(), OpKind::kReshape);
  ExpectSameOutputs(before, g, 0.0);
}

// The requantize of an int16 softmax's probabilities belongs to the group: no Reshape around it.
TEST(Attention3d, RequantizedProbabilitiesStay3d) {
  Graph before = Attention(false, false, true);
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "attention-3d");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  const Node* rq = OnlyNode(g, OpKind::kQLinearRequantize);
  ASSERT_NE(rq, nullptr);
  EXPECT_EQ(rq->output(0)->type.rank(), 3) << PrintGraph(g);
  EXPECT_NE(rq->input(0)->producer()->op(), OpKind::kReshape) << PrintGraph(g);
  ExpectSameOutputs(before, g, 0.0);
}

TEST(Attention3d, GroupWithA4dGraphOutputIsKept) {
  Graph before = Attention(true, false);
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "attention-3d");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(PrintGraph(g), PrintGraph(before));
}

// YOLOv8's DFL: a softmax over the 16 bins of [1, 4, 16, A] (axis 2, moved last by a
// Transpose pair) whose result a per-bin table reads (QuantizedLookup, Table [16, 256] on
// axis 2: the Mul by the bin index, quantized). A table per channel ties its axis: the
// lookup keeps its 4-d input, and the outputs do not change.
TEST(Attention3d, PerChannelLookupKeepsItsAxis) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 16, 8});
  Attributes a;
  a.Set("axis", int64_t{-1});
  Value* p = b.Transpose(b.Op(OpKind::kSoftmax, {b.Transpose(x, {0, 1, 3, 2})}, a, "probs"), {0, 1, 3, 2});
  Value* s = b.Scalar(1.f / 255);
  Value* z = b.Const(Tensor::FromVector<uint8_t>(DType::kU8, {}, {0}), "z");
  std::vector<uint8_t> table(16 * 256);
  for (int c = 0; c < 16; ++c)
    for (int v = 0; v < 256; ++v) table[c * 256 + v] = static_cast<uint8_t>(std::min(255, v * c / 15));
  Value* t = b.Const(Tensor::FromVector<uint8_t>(DType::kU8, {16, 256}, table), "bins");
  Attributes la;
  la.Set("axis", int64_t{2});
  Value* l = b.Op(OpKind::kQuantizedLookup, {b.Op(OpKind::kQuantizeLinear, {p, s, z}), t}, la, "dfl");
  Graph before = b.Done({b.Op(OpKind::kNeg, {b.Op(OpKind::kDequantizeLinear, {l, s, z})})});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "attention-3d").ok());
  EXPECT_EQ(OnlyNode(g, OpKind::kSoftmax)->output(0)->type.rank(), 3) << "the group became 3-d\n" << PrintGraph(g);
  EXPECT_EQ(OnlyNode(g, OpKind::kQuantizedLookup)->input(0)->type.dims, (Dims{1, 4, 16, 8})) << PrintGraph(g);
  ExpectSameOutputs(before, g, 0.0);
}

}  // namespace
}  // namespace edgec
