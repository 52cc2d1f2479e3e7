// fuse-hard-activation: the HardSigmoid and HardSwish decompositions of exporters become one
// op (Before/After structure and the reference executor's numbers), graphs that must not
// change say why, and the fused ops reach a Conv's epilogue and an NHWC region.
#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;
using Ints = std::vector<int64_t>;

class Builder {
 public:
  Value* Input(const std::string& name, Dims dims) { return g_.AddInput(name, MakeType(DType::kF32, std::move(dims))); }
  Value* Const(Tensor t) { return g_.AddConstant(g_.FreshName("c"), std::move(t)); }
  Value* Scalar(float v) { return Const(Tensor::Scalar(v)); }
  Value* Op(OpKind op, std::vector<Value*> in, Attributes a = {}) {
    Node* n = g_.AddNode(op, fmt::format("{}{}", OpName(op), ++count_), std::move(in), 1);
    n->attrs = std::move(a);
    return n->output(0);
  }
  // clip(x + b, 0, c), the Add's operands in either order.
  Value* ShiftedClip(Value* x, float b, float c, bool swap = false) {
    Value* add = swap ? Op(OpKind::kAdd, {Scalar(b), x}) : Op(OpKind::kAdd, {x, Scalar(b)});
    return Op(OpKind::kClip, {add, Scalar(0), Scalar(c)});
  }
  // v / c as Div(v, c), or Mul(v, 1/c) in either operand order.
  Value* DivideBy(Value* v, float c, int form) {
    if (form == 0) return Op(OpKind::kDiv, {v, Scalar(c)});
    if (form == 1) return Op(OpKind::kMul, {v, Scalar(1 / c)});
    return Op(OpKind::kMul, {Scalar(1 / c), v});
  }
  Graph Done(std::vector<Value*> outputs) {
    for (Value* v : outputs) g_.MarkOutput(v);
    Status st = InferShapes(g_);
    EXPECT_TRUE(st.ok()) << st.message();
    return std::move(g_);
  }

 private:
  Graph g_;
  int count_ = 0;
};

TEST(FuseHardActivation, HardSwishInEveryOrder) {
  for (int form = 0; form < 3; ++form) {
    for (bool divide_first : {false, true}) {
      for (bool swap : {false, true}) {
        Builder b;
        Value* x = b.Input("x", {2, 3, 5, 5});
        Value* clip = b.ShiftedClip(x, 3, 6, swap);
        Value* y = divide_first ? b.Op(OpKind::kMul, {swap ? x : b.DivideBy(clip, 6, form), swap ? b.DivideBy(clip, 6, form) : x})
                                : b.DivideBy(swap ? b.Op(OpKind::kMul, {clip, x}) : b.Op(OpKind::kMul, {x, clip}), 6, form);
        Graph g = b.Done({y});
        Graph after = Optimized(g, "fuse-hard-activation");
        EXPECT_EQ(OpSequence(after), "HardSwish") << "form " << form << " divide_first " << divide_first << " swap " << swap;
        EXPECT_EQ(after.outputs()[0]->name(), g.outputs()[0]->name());
        EXPECT_EQ(OnlyNode(after, OpKind::kHardSwish)->provenance.size(), 4u);
      }
    }
  }
}

TEST(FuseHardActivation, HardSigmoidWithAnyShiftAndWidth) {
  // clip(x + 1, 0, 4) / 4 = HardSigmoid(alpha 0.25, beta 0.25); clip(x + 3, 0, 6) / 6 alone.
  for (auto [shift, width] : {std::pair{1.f, 4.f}, std::pair{3.f, 6.f}, std::pair{-2.f, 0.5f}}) {
    Builder b;
    Value* x = b.Input("x", {4, 7});
    Value* y = b.DivideBy(b.ShiftedClip(x, shift, width), width, 1);
    Graph g = b.Done({y});
    Graph after = Optimized(g, "fuse-hard-activation");
    ASSERT_EQ(OpSequence(after), "HardSigmoid");
    const Node* h = OnlyNode(after, OpKind::kHardSigmoid);
    EXPECT_FLOAT_EQ(h->attrs.GetFloat("alpha", 0), 1 / width);
    EXPECT_FLOAT_EQ(h->attrs.GetFloat("beta", 0), shift / width);
  }
}

TEST(FuseHardActivation, GatedHardSigmoidBecomesHardSwish) {
  Builder b;
  Value* x = b.Input("x", {3, 8});
  Attributes a;
  a.Set("alpha", 1.0f / 6);
  a.Set("beta", 0.5f);
  Value* y = b.Op(OpKind::kMul, {x, b.Op(OpKind::kHardSigmoid, {x}, a)});
  Graph g = b.Done({y});
  EXPECT_EQ(OpSequence(Optimized(g, "fuse-hard-activation")), "HardSwish");
}

TEST(FuseHardActivation, MustNotChange) {
  Builder b;
  Value* x = b.Input("x", {2, 6});
  // (1) the clip's lower bound is not 0.
  Value* y1 = b.DivideBy(b.Op(OpKind::kClip, {b.Op(OpKind::kAdd, {x, b.Scalar(3)}), b.Scalar(-1), b.Scalar(6)}), 6, 0);
  // (2) divided by something other than the clip's width.
  Value* y2 = b.DivideBy(b.ShiftedClip(x, 3, 6), 5, 0);
  // (3) an intermediate read outside the pattern (the gate is also an output).
  Attributes gate;
  gate.Set("alpha", 1.0f / 6);
  gate.Set("beta", 0.5f);
  Value* g3 = b.Op(OpKind::kHardSigmoid, {x}, gate);
  Value* y3 = b.Op(OpKind::kMul, {g3, x});
  // (4) x · clip(x + 1, 0, 4) / 4 is not HardSwish.
  Value* y4 = b.DivideBy(b.Op(OpKind::kMul, {x, b.ShiftedClip(x, 1, 4)}), 4, 0);
  // (5) a gate with other parameters.
  Attributes a;
  a.Set("alpha", 0.2f);
  Value* y5 = b.Op(OpKind::kMul, {x, b.Op(OpKind::kHardSigmoid, {x}, a)});
  Graph g = b.Done({y1, y2, y3, g3, y4, y5});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-hard-activation", &ctx);
  EXPECT_EQ(OpSequence(after), OpSequence(g));
  EXPECT_TRUE(ExplainedAs(ctx, "not constants 0 and c > 0"));
  EXPECT_TRUE(ExplainedAs(ctx, "neither divided by c nor multiplied by x"));
  EXPECT_TRUE(ExplainedAs(ctx, "also used outside the pattern"));
  EXPECT_TRUE(ExplainedAs(ctx, "is not HardSwish"));
  EXPECT_TRUE(ExplainedAs(ctx, "not 1/6 and 1/2"));
}

TEST(FuseHardActivation, FusedIntoConvAndKeptInNhwc) {
  // Conv -> hardswish decomposition -> Conv: the -O3 pipeline fuses the HardSwish into the
  // first conv's epilogue and leaves no row-major island between the convs.
  Builder b;
  Value* x = b.Input("x", {1, 8, 6, 6});
  Attributes pads;
  pads.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = b.Op(OpKind::kConv, {x, b.Const(RandomTensor(DType::kF32, {8, 8, 3, 3}, 1)), b.Const(RandomTensor(DType::kF32, {8}, 2))}, pads);
  Value* hs = b.DivideBy(b.Op(OpKind::kMul, {c1, b.ShiftedClip(c1, 3, 6)}), 6, 0);
  Value* c2 = b.Op(OpKind::kConv, {hs, b.Const(RandomTensor(DType::kF32, {8, 8, 3, 3}, 3))}, pads);
  Value* hsig = b.DivideBy(b.ShiftedClip(c2, 3, 6), 6, 1);
  Graph g = b.Done({b.Op(OpKind::kAdd, {hsig, x})});
  Graph after = Optimized(g, "fuse-hard-activation,fuse-activation,layout");
  EXPECT_EQ(CountOp(after, OpKind::kClip), 0);
  EXPECT_EQ(CountOp(after, OpKind::kTranspose), 0) << PrintGraph(after);
  for (const Node* n : after.nodes()) {
    if (n->op() == OpKind::kFusedConv) {
      const std::string act = n->attrs.GetString("activation", "");
      EXPECT_TRUE(act == "HardSwish" || act == "HardSigmoid") << n->Label() << " " << act;
    }
  }
}

}  // namespace
}  // namespace edgec
