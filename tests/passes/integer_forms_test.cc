// integer-forms: Sub, Div by a constant and a Softmax over a non-last axis become the forms
// that have integer counterparts (Add, Neg, Mul, Transpose + last-axis Softmax); each rewrite
// is checked against the graph before it on the reference kernels.
#include <gtest/gtest.h>

#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

TEST(IntegerForms, SubOfActivationsBecomesAddOfNeg) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 5, 6});
  Value* z = b.Input("z", {1, 1, 5, 6});  // broadcast over channels
  Graph before = b.Done({b.Op(OpKind::kSub, {b.Op(OpKind::kRelu, {x}), z})});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "integer-forms").ok());
  EXPECT_EQ(CountOp(g, OpKind::kSub), 0) << PrintGraph(g);
  EXPECT_EQ(CountOp(g, OpKind::kNeg), 1) << PrintGraph(g);
  EXPECT_EQ(CountOp(g, OpKind::kAdd), 1) << PrintGraph(g);
  ExpectSameOutputs(before, g, 0.0);
}

TEST(IntegerForms, SubAndDivByConstantsBecomeAddAndMul) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 5, 6});
  Value* s = b.Op(OpKind::kSub, {x, b.Random({4, 1, 1}, 3)});
  Value* d = b.Op(OpKind::kDiv, {s, b.Const(RandomTensor(DType::kF32, {4, 1, 1}, 4, 0.5, 3.0))});
  Value* h = b.Op(OpKind::kDiv, {d, b.Scalar(1.41421356f)});
  Graph before = b.Done({h});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "integer-forms").ok());
  EXPECT_EQ(CountOp(g, OpKind::kSub), 0) << PrintGraph(g);
  EXPECT_EQ(CountOp(g, OpKind::kDiv), 0) << PrintGraph(g);
  EXPECT_EQ(CountOp(g, OpKind::kNeg), 0) << PrintGraph(g);  // -C is a constant
  // x·(1/C) may differ from x/C in the last bit of an f32.
  ExpectSameOutputs(before, g, 1e-6);
}

TEST(IntegerForms, DivByZeroOrByAnActivationStays) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3});
  Value* y = b.Input("y", {1, 3});
  Tensor c = Tensor::FromVector<float>(DType::kF32, {3}, {1.f, 0.f, 2.f});
  Graph before = b.Done({b.Op(OpKind::kDiv, {x, b.Const(c)}), b.Op(OpKind::kDiv, {x, y})});
  Graph g = before.Clone();
  ASSERT_TRUE(RunPasses(g, "integer-forms").ok());
  EXPECT_EQ(CountOp(g, OpKind::kDiv), 2) << PrintGraph(g);
}

TEST(IntegerForms, SoftmaxOverAMiddleAxisMovesToTheLast) {
  for (int64_t axis : {1, 2, -2}) {
    SCOPED_TRACE(axis);
    LayoutBuilder b;
    Value* x = b.Input("x", {1, 4, 16, 6});
    Graph before = b.Done({b.Op(OpKind::kSoftmax, {x}, A({{"axis", axis}}))});
    Graph g = before.Clone();
    ASSERT_TRUE(RunPasses(g, "integer-forms").ok());
    const Node* s = OnlyNode(g, OpKind::kSoftmax);
    ASSERT_NE(s, nullptr) << PrintGraph(g);
    EXPECT_EQ(s->attrs.GetInt("axis", 0), -1);
    EXPECT_EQ(CountOp(g, OpKind::kTranspose), 2) << PrintGraph(g);
    ExpectSameOutputs(before, g, 0.0);
  }
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 5});
  Graph last = b.Done({b.Op(OpKind::kSoftmax, {x}, A({{"axis", int64_t{1}}}))});
  ASSERT_TRUE(RunPasses(last, "integer-forms").ok());
  EXPECT_EQ(CountOp(last, OpKind::kTranspose), 0);
}

}  // namespace
}  // namespace edgec
