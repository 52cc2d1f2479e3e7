// eliminate-dead: a node whose output equals its input goes; one that only keeps the shape
// stays. A Slice with a negative step keeps its input's shape and reverses the axis: it must
// stay (torch's F.pad computes its pads through one, and dropping it swapped the pads of
// the batch and channel dims with those of the spatial dims).
#include <gtest/gtest.h>

#include <limits>

#include "layout_test_util.h"
#include "passes/pass_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

// x -> Relu -> Slice(starts, ends, axes, steps) -> Neg
Graph SliceGraph(Dims dims, const Ints& starts, const Ints& ends, const Ints& axes, const Ints& steps) {
  LayoutBuilder b;
  Value* x = b.Input("x", std::move(dims));
  Value* s = b.Op(OpKind::kSlice, {b.Op(OpKind::kRelu, {x}), b.Ints1(starts), b.Ints1(ends), b.Ints1(axes), b.Ints1(steps)});
  return b.Done({b.Op(OpKind::kNeg, {s})});
}

TEST(EliminateDead, ReversingSliceStays) {
  const int64_t kMin = std::numeric_limits<int64_t>::min() + 1;
  for (const auto& [axis, step] : std::vector<std::pair<int64_t, int64_t>>{{0, -1}, {1, -1}, {2, -1}}) {
    SCOPED_TRACE(fmt::format("axis {} step {}", axis, step));
    Graph before = SliceGraph({4, 3, 5}, {-1}, {kMin}, {axis}, {step});
    Graph g = before.Clone();
    ASSERT_TRUE(RunPasses(g, "eliminate-dead").ok());
    EXPECT_EQ(CountOp(g, OpKind::kSlice), 1) << PrintGraph(g);
    ExpectSameOutputs(before, g, 0.0);
  }
}

TEST(EliminateDead, WholeSliceGoes) {
  // Every element in order (a step of 1, or a step past a dim of 1): the identity.
  Graph before = SliceGraph({4, 1, 5}, {0, 0}, {100, 1}, {0, 1}, {1, 3});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "eliminate-dead").ok());
  EXPECT_EQ(CountOp(g, OpKind::kSlice), 0) << PrintGraph(g);
  ExpectSameOutputs(before, g, 0.0);
}

TEST(EliminateDead, TorchPadChainKeepsItsPads) {
  // torch.nn.functional.pad(x, (0, 1, 0, 1)) at opset 13: the pads [0, 1, 0, 1] (last dim
  // first, begin/end pairs) padded to rank 4, reshaped to [4, 2], reversed by Slice(step
  // -1), transposed and flattened into ONNX's [begins..., ends...] = [0, 0, 0, 0, 0, 0, 1, 1].
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 2, 3, 3});
  Value* pairs = b.Op(OpKind::kConcat, {b.Ints1({0, 1, 0, 1}), b.Ints1({0, 0, 0, 0})}, A({{"axis", int64_t{0}}}));
  Value* rows = b.Reshape(pairs, {-1, 2});
  Value* reversed = b.Op(OpKind::kSlice, {rows, b.Ints1({-1}), b.Ints1({std::numeric_limits<int64_t>::min() + 1}),
                                          b.Ints1({0}), b.Ints1({-1})});
  Value* pads = b.Reshape(b.Transpose(reversed, {1, 0}), {-1});
  Graph before = b.Done({b.Op(OpKind::kPad, {b.Op(OpKind::kRelu, {x}), pads})});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "eliminate-dead,fold-constants").ok());
  const Node* pad = OnlyNode(g, OpKind::kPad);
  ASSERT_NE(pad, nullptr);
  const Tensor* folded = passes::ConstantOf(pad->input(1));
  ASSERT_NE(folded, nullptr) << PrintGraph(g);
  EXPECT_EQ(folded->ToInt64Vector(), (Ints{0, 0, 0, 0, 0, 0, 1, 1}));
  ExpectSameOutputs(before, g, 0.0);
}

}  // namespace
}  // namespace edgec
