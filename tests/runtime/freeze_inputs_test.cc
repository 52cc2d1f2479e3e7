// FreezeInputs (runtime/shape_binding.h, `--freeze`): an input made a constant leaves the
// graph's inputs, and an If on it folds into its taken branch at -O1 and above — silero VAD's
// shape, where `sr` picks the 16 kHz or the 8 kHz network. The frozen graph must compute
// what the original computes when fed the same value; bad values are refused naming the input.
#include <gtest/gtest.h>

#include "driver/load.h"
#include "ir/control_flow.h"
#include "ir/infer.h"
#include "passes/pass.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"

namespace edgec {
namespace {

// y = If(sr == 16000, then: Relu(x · w) , else: x · w · 0.5), sr an i64 scalar input.
Graph SampleRateSwitch() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 4}));
  Value* sr = g.AddInput("sr", MakeType(DType::kI64, {}));
  std::vector<float> wv(12);
  for (int i = 0; i < 12; ++i) wv[i] = 0.1f * static_cast<float>(i - 5);
  Value* w = g.AddConstant("w", Tensor::FromVector<float>(DType::kF32, {4, 3}, wv));
  Node* cond = g.AddNode(OpKind::kEqual, "is16k", {sr, g.AddConstant("k16", Tensor::ScalarI64(16000))}, 1);
  auto then_g = std::make_shared<Graph>(), else_g = std::make_shared<Graph>();
  for (Graph* b : {then_g.get(), else_g.get()}) {
    Value* bx = b->AddInput("bx", MakeType(DType::kF32, {2, 4}));
    Value* bw = b->AddInput("bw", MakeType(DType::kF32, {4, 3}));
    Node* mm = b->AddNode(OpKind::kMatMul, b == then_g.get() ? "then_mm" : "else_mm", {bx, bw}, 1);
    if (b == then_g.get()) {
      b->MarkOutput(b->AddNode(OpKind::kRelu, "then_relu", {mm->output(0)}, 1)->output(0));
    } else {
      Value* half = b->AddConstant("half", Tensor::Scalar(0.5f));
      b->MarkOutput(b->AddNode(OpKind::kMul, "else_mul", {mm->output(0), half}, 1)->output(0));
    }
    EXPECT_TRUE(InferShapes(*b).ok());
  }
  Node* n = g.AddNode(OpKind::kIf, "if", {cond->output(0), x, w}, 1, {"y"});
  n->attrs.Set("then_branch", SubgraphPtr(then_g));
  n->attrs.Set("else_branch", SubgraphPtr(else_g));
  n->attrs.Set(kCapturesAttr, int64_t{2});
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(FreezeInputs, IfOnAFrozenInputBecomesItsBranch) {
  for (int64_t rate : {16000, 8000}) {
    SCOPED_TRACE(rate);
    Graph original = SampleRateSwitch();
    auto in = RandomInputs(original, 3);
    in["sr"] = Tensor::ScalarI64(rate);
    auto want = ReferenceExecutor(original).Run(in);
    ASSERT_TRUE(want.ok()) << want.status().message();

    Graph g = original.Clone();
    ASSERT_TRUE(FreezeInputs(g, {{"sr", Tensor::ScalarI64(rate)}}).ok());
    ASSERT_EQ(g.inputs().size(), 1u);
    EXPECT_EQ(g.inputs()[0]->name(), "x");
    passes::PassContext ctx;
    ASSERT_TRUE(driver::Optimize(g, 1, "", ctx).ok());
    for (const Node* n : g.nodes()) EXPECT_NE(n->op(), OpKind::kIf) << PrintGraph(g);
    bool relu = false;
    for (const Node* n : g.nodes()) relu |= n->op() == OpKind::kRelu;
    EXPECT_EQ(relu, rate == 16000) << PrintGraph(g);

    in.erase("sr");
    auto got = ReferenceExecutor(g).Run(in);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ASSERT_EQ(got->size(), 1u);
    const auto a = (*want)[0].ToDoubleVector(), b = (*got)[0].ToDoubleVector();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << i;
  }
}

TEST(FreezeInputs, BadValuesNameTheInput) {
  auto message = [](const std::string& name, Tensor value) {
    Graph g = SampleRateSwitch();
    Status st = FreezeInputs(g, {{name, std::move(value)}});
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(g.inputs().size(), 2u) << "a refused freeze changes nothing";
    return std::string(st.message());
  };
  EXPECT_EQ(message("rate", Tensor::ScalarI64(16000)),
            "'rate' is not an input of the model (inputs: 'x', 'sr')");
  EXPECT_EQ(message("sr", Tensor::Scalar(16000.f)), "input 'sr' is i64[], the frozen value is f32[]");
  EXPECT_EQ(message("sr", Tensor::VectorI64({16000, 8000})), "input 'sr' is i64[], the frozen value is i64[2]");
  EXPECT_EQ(message("x", Tensor::FromVector<float>(DType::kF32, {4, 2}, std::vector<float>(8, 1.f))),
            "input 'x' is f32[2, 4], the frozen value is f32[4, 2]");
}

}  // namespace
}  // namespace edgec
