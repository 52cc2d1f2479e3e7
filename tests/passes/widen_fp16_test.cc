// widen-fp16: a half-precision export computes in f32 with its interface unchanged, and the
// quantizer then finds float activations to quantize (the trained ISNet's case).
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "quant/pipeline.h"

namespace edgec {
namespace {

using namespace testing_passes;

// x (in_dtype) -> [Cast to f16] -> Conv(f16 weights, f16 bias) -> Relu -> [Cast to f32] -> y.
// With f32 interface the Casts are the exporter's wrapper; with f16 there are none.
Graph HalfConvNet(DType io) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(io, {1, 3, 8, 8}));
  Value* h = x;
  if (io != DType::kF16) {
    Node* c = g.AddNode(OpKind::kCast, "in_cast", {x}, 1);
    c->attrs.Set("to", static_cast<int64_t>(DType::kF16));
    h = c->output(0);
  }
  Value* w = g.AddConstant("w", RandomTensor(DType::kF16, {4, 3, 3, 3}, 1));
  Value* b = g.AddConstant("b", RandomTensor(DType::kF16, {4}, 2));
  Node* conv = g.AddNode(OpKind::kConv, "conv", {h, w, b}, 1);
  conv->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Value* r = g.AddNode(OpKind::kRelu, "relu", {conv->output(0)}, 1)->output(0);
  Value* y = r;
  if (io != DType::kF16) {
    Node* c = g.AddNode(OpKind::kCast, "out_cast", {r}, 1);
    c->attrs.Set("to", static_cast<int64_t>(io));
    y = c->output(0);
  }
  g.MarkOutput(y);
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

int CountHalfValues(const Graph& g) {
  int n = 0;
  for (const Node* node : g.nodes()) {
    for (const Value* v : node->inputs()) n += v && v->type.dtype == DType::kF16;
  }
  return n;
}

TEST(WidenFp16, ExporterCastsVanishAndComputeIsF32) {
  Graph before = HalfConvNet(DType::kF32);
  Graph after = before.Clone();
  auto ctx = RunPasses(after, "widen-fp16,eliminate-dead");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(OpSequence(after), "Conv,Relu");
  EXPECT_EQ(CountHalfValues(after), 0) << PrintGraph(after);
  // The weights are the f16 values exactly (widening is exact).
  const Node* conv = OnlyNode(after, OpKind::kConv);
  ASSERT_TRUE(conv->input(1)->is_constant());
  EXPECT_EQ(conv->input(1)->name(), "w");
  const auto wide = conv->input(1)->constant().ToDoubleVector();
  const auto half = before.FindValue("w")->constant().ToDoubleVector();
  ASSERT_EQ(wide.size(), half.size());
  for (size_t i = 0; i < wide.size(); ++i) EXPECT_EQ(wide[i], half[i]) << i;
  // Only the f16 rounding of the input and the output differs.
  ExpectSameOutputs(before, after, 2e-3);
}

TEST(WidenFp16, HalfInterfaceKeepsItsTypesAndNames) {
  Graph before = HalfConvNet(DType::kF16);
  const std::string out_name = before.outputs()[0]->name();
  Graph after = before.Clone();
  auto ctx = RunPasses(after, "widen-fp16,eliminate-dead");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(OpSequence(after), "Cast,Conv,Relu,Cast");
  ASSERT_EQ(after.inputs().size(), 1u);
  EXPECT_EQ(after.inputs()[0]->type.dtype, DType::kF16);
  EXPECT_EQ(after.outputs()[0]->type.dtype, DType::kF16);
  EXPECT_EQ(after.outputs()[0]->name(), out_name);
  EXPECT_EQ(OnlyNode(after, OpKind::kConv)->input(0)->type.dtype, DType::kF32);
  EXPECT_EQ(OnlyNode(after, OpKind::kRelu)->output(0)->type.dtype, DType::kF32);
  ExpectSameOutputs(before, after, 2e-3);
}

TEST(WidenFp16, F32GraphIsUnchanged) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 3}));
  g.MarkOutput(g.AddNode(OpKind::kRelu, "relu", {x}, 1)->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto ctx = RunPasses(g, "widen-fp16");
  ASSERT_TRUE(ctx.ok());
  EXPECT_FALSE(ctx->records().at(0).stats.changed());
}

// Before the pass every Conv of a half-precision export read an f16 activation, and the
// QDQ rewrite quantized none of them ("input 0 is not a float activation").
TEST(WidenFp16, PreparedHalfGraphHasFloatActivationsToQuantize) {
  Graph g = HalfConvNet(DType::kF32);
  ASSERT_TRUE(quant::PrepareForQuantization(g).ok());
  EXPECT_EQ(CountHalfValues(g), 0) << PrintGraph(g);
  EXPECT_EQ(OnlyNode(g, OpKind::kConv)->input(0)->type.dtype, DType::kF32);
}

}  // namespace
}  // namespace edgec
