// merge-chains, canonicalize and the exporter-pattern fusions (fuse-layernorm, fuse-rmsnorm,
// fuse-gelu, fuse-channel-shuffle, fuse-attention) and the composite lowering (unfuse): Before/After structure, graphs
// that must not change, differential checks on the reference executor, provenance, and
// the unfuse round trip through ONNX's checker.
#include <gtest/gtest.h>

#include <onnx/checker.h>

#include <cmath>

#include "frontend/onnx/exporter.h"
#include "pass_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;
using Ints = std::vector<int64_t>;

// Builds a graph op by op; node names are "<op><n>" unless given.
class Builder {
 public:
  Value* Input(const std::string& name, Dims dims, DType dt = DType::kF32) {
    return g_.AddInput(name, MakeType(dt, std::move(dims)));
  }
  Value* Const(Tensor t, const std::string& name = "c") { return g_.AddConstant(g_.FreshName(name), std::move(t)); }
  Value* Random(Dims dims, uint32_t seed) { return Const(RandomTensor(DType::kF32, std::move(dims), seed), "w"); }
  Value* Scalar(float v) { return Const(Tensor::Scalar(v), "s"); }
  Value* Axes(Ints a) { return Const(Tensor::VectorI64(a), "axes"); }
  Value* Op(OpKind op, std::vector<Value*> in, Attributes a = {}, std::string name = "") {
    if (name.empty()) name = fmt::format("{}{}", OpName(op), ++count_);
    Node* n = g_.AddNode(op, name, std::move(in), 1);
    n->attrs = std::move(a);
    return n->output(0);
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

// (pass_test_util.h's CountOp compares iterators of two temporaries; counted here instead.)
int NumOps(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}


std::string Explanations(const passes::PassContext& ctx) {
  std::string s;
  for (const std::string& e : ctx.explanations()) s += e + "\n";
  return s;
}

// The pass must leave the graph as it was (same ops) and say why.
void ExpectUnchanged(const Graph& g, const std::string& pass, const std::string& reason) {
  passes::PassContext ctx;
  Graph after = Optimized(g, pass, &ctx);
  EXPECT_EQ(OpSequence(after), OpSequence(g));
  EXPECT_TRUE(ExplainedAs(ctx, reason)) << "expected '" << reason << "' in\n" << Explanations(ctx);
}

// Lowers internal ops, checks that only standard ops remain, the numbers agree with the
// original and ONNX's checker accepts the export.
void ExpectUnfuseRoundTrip(const Graph& original, const Graph& fused) {
  Graph lowered = fused.Clone();
  auto ctx = RunPasses(lowered, "unfuse");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  for (const Node* n : lowered.nodes()) EXPECT_FALSE(IsInternalOp(n->op())) << n->Label();
  ExpectSameOutputs(original, lowered);
  auto model = onnx_fe::ExportOnnxModel(lowered);
  ASSERT_TRUE(model.ok()) << model.status().message();
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ONNX checker: " << e.what() << "\n" << PrintGraph(lowered);
  }
}

// ================================================================ merge-chains

TEST(MergeChains, ReshapeReshapeBecomesOneReshape) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* r1 = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({6, 4}))}, {}, "r1");
  Value* r2 = b.Op(OpKind::kReshape, {r1, b.Const(Tensor::VectorI64({4, -1}))}, {}, "r2");
  Graph g = b.Done({b.Op(OpKind::kRelu, {r2})});
  passes::PassContext ctx;
  Graph after = Optimized(g, "merge-chains", &ctx);
  EXPECT_EQ(OpSequence(after), "Reshape,Relu");
  const Node* r = OnlyNode(after, OpKind::kReshape);
  EXPECT_EQ(r->input(0)->name(), "x");
  EXPECT_EQ(r->input(1)->constant().ToInt64Vector(), (Ints{4, 6}));
  EXPECT_TRUE(HasProvenance(r, {"r1", "r2"}));
  EXPECT_EQ(Rewrites(ctx, "Reshape chain"), 1);
}

TEST(MergeChains, FlattenSqueezeAndUnsqueezeAfterReshapeMerge) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* r = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({2, 12, 1}))});
  Value* f = b.Op(OpKind::kFlatten, {r}, A({{"axis", int64_t{2}}}));  // [24, 1]
  Value* s = b.Op(OpKind::kSqueeze, {f, b.Axes({1})});               // [24]
  Value* u = b.Op(OpKind::kUnsqueeze, {s, b.Axes({0})});             // [1, 24]
  Graph g = b.Done({b.Op(OpKind::kRelu, {u})});
  Graph after = Optimized(g, "merge-chains");
  EXPECT_EQ(OpSequence(after), "Reshape,Relu");
  EXPECT_EQ(OnlyNode(after, OpKind::kReshape)->output(0)->type.dims, (Dims{1, 24}));
}

TEST(MergeChains, ChainBackToTheInputShapeDisappears) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* r1 = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({24}))});
  Value* r2 = b.Op(OpKind::kReshape, {r1, b.Const(Tensor::VectorI64({2, 3, 4}))});
  Graph g = b.Done({b.Op(OpKind::kRelu, {r2})});
  EXPECT_EQ(OpSequence(Optimized(g, "merge-chains")), "Relu");
}

TEST(MergeChains, SqueezeUnsqueezePairsCancelWithDynamicShapes) {
  Builder b;
  Value* x = b.Input("x", {kUnknownDim, 4});
  Value* u = b.Op(OpKind::kUnsqueeze, {x, b.Axes({-1})});  // [N, 4, 1]
  Value* s = b.Op(OpKind::kSqueeze, {u, b.Axes({2})});
  Value* y1 = b.Op(OpKind::kRelu, {s});
  Value* x2 = b.Input("x2", {kUnknownDim, 1, 4});
  Value* s2 = b.Op(OpKind::kSqueeze, {x2, b.Axes({1})});
  Value* u2 = b.Op(OpKind::kUnsqueeze, {s2, b.Axes({-2})});
  Value* y2 = b.Op(OpKind::kRelu, {u2});
  Graph g = b.Done({y1, y2});
  EXPECT_EQ(OpSequence(Optimized(g, "merge-chains")), "Relu,Relu");
}

TEST(MergeChains, DynamicReshapeWithConstantTargetMerges) {
  Builder b;
  Value* x = b.Input("x", {kUnknownDim, 12});
  Value* r1 = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({-1, 3, 4}))});
  Value* r2 = b.Op(OpKind::kReshape, {r1, b.Const(Tensor::VectorI64({-1, 6}))});
  Graph g = b.Done({b.Op(OpKind::kRelu, {r2})});
  Graph after = Optimized(g, "merge-chains");
  EXPECT_EQ(OpSequence(after), "Reshape,Relu");
  EXPECT_EQ(OnlyNode(after, OpKind::kReshape)->input(1)->constant().ToInt64Vector(), (Ints{-1, 6}));
}

TEST(MergeChains, ReshapesThatMustStay) {
  {  // The middle value is a graph output.
    Builder b;
    Value* x = b.Input("x", {2, 3, 4});
    Value* r1 = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({6, 4}))});
    Value* r2 = b.Op(OpKind::kReshape, {r1, b.Const(Tensor::VectorI64({4, 6}))});
    ExpectUnchanged(b.Done({r1, b.Op(OpKind::kRelu, {r2})}), "merge-chains", "has other uses (graph output)");
  }
  {  // A 0 in a dynamic target copies a dim of the middle value.
    Builder b;
    Value* x = b.Input("x", {kUnknownDim, 12});
    Value* r1 = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({-1, 3, 4}))});
    Value* r2 = b.Op(OpKind::kReshape, {r1, b.Const(Tensor::VectorI64({0, 0, 2, 2}))});
    ExpectUnchanged(b.Done({b.Op(OpKind::kRelu, {r2})}), "merge-chains", "neither static nor a constant without 0");
  }
}

TEST(MergeChains, TransposePairsComposeOrCancel) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* t1 = b.Op(OpKind::kTranspose, {x}, A({{"perm", Ints{1, 0, 2}}}), "t1");
  Value* t2 = b.Op(OpKind::kTranspose, {t1}, A({{"perm", Ints{0, 2, 1}}}), "t2");
  Value* y1 = b.Op(OpKind::kRelu, {t2});
  Value* t3 = b.Op(OpKind::kTranspose, {x}, A({{"perm", Ints{0, 2, 1}}}));
  Value* t4 = b.Op(OpKind::kTranspose, {t3}, A({{"perm", Ints{0, 2, 1}}}));
  Value* y2 = b.Op(OpKind::kRelu, {t4});
  Value* t5 = b.Op(OpKind::kTranspose, {x});  // default: reversed
  Value* t6 = b.Op(OpKind::kTranspose, {t5});
  Value* y3 = b.Op(OpKind::kRelu, {t6});
  Graph g = b.Done({y1, y2, y3});
  Graph after = Optimized(g, "merge-chains");
  const Node* t = OnlyNode(after, OpKind::kTranspose);
  // y[i] = t1[perm2[i]] = x[perm1[perm2[i]]]
  EXPECT_EQ(t->attrs.GetInts("perm"), (Ints{1, 2, 0}));
  EXPECT_TRUE(HasProvenance(t, {"t1", "t2"}));
  EXPECT_EQ(NumOps(after, OpKind::kRelu), 3);
}

TEST(MergeChains, TransposeFeedingTwoConsumersStays) {
  Builder b;
  Value* x = b.Input("x", {2, 3});
  Value* t1 = b.Op(OpKind::kTranspose, {x}, A({{"perm", Ints{1, 0}}}));
  Value* t2 = b.Op(OpKind::kTranspose, {t1}, A({{"perm", Ints{1, 0}}}));
  ExpectUnchanged(b.Done({b.Op(OpKind::kRelu, {t2}), b.Op(OpKind::kExp, {t1})}), "merge-chains", "has other uses");
}

Value* CastTo(Builder& b, Value* x, DType dt) {
  return b.Op(OpKind::kCast, {x}, A({{"to", static_cast<int64_t>(dt)}}));
}

TEST(MergeChains, LosslessCastChains) {
  Builder b;
  Value* x = b.Input("x", {3, 4});
  Value* y1 = b.Op(OpKind::kRelu, {CastTo(b, CastTo(b, x, DType::kF64), DType::kF32)});  // identity
  Value* y2 = CastTo(b, CastTo(b, x, DType::kF64), DType::kI32);                         // one Cast
  Value* i = b.Input("i", {5}, DType::kI8);
  Value* y3 = CastTo(b, CastTo(b, i, DType::kI32), DType::kF32);                         // one Cast
  Graph g = b.Done({y1, y2, y3});
  passes::PassContext ctx;
  Graph after = Optimized(g, "merge-chains", &ctx);
  EXPECT_EQ(NumOps(after, OpKind::kCast), 2);
  EXPECT_EQ(Rewrites(ctx, "Cast+Cast"), 3);
  for (const Node* n : after.nodes()) {
    if (n->op() == OpKind::kCast) EXPECT_TRUE(n->input(0)->is_graph_input()) << n->Label();
  }
}

TEST(MergeChains, LossyCastChainsStay) {
  {  // int64 -> int32 -> int64 truncates large values.
    Builder b;
    Value* x = b.Input("x", {4}, DType::kI64);
    ExpectUnchanged(b.Done({CastTo(b, CastTo(b, x, DType::kI32), DType::kI64)}), "merge-chains",
                    "the middle type i32 does not hold every i64 value");
  }
  {  // f32 -> f16 -> f32 rounds.
    Builder b;
    Value* x = b.Input("x", {4});
    ExpectUnchanged(b.Done({CastTo(b, CastTo(b, x, DType::kF16), DType::kF32)}), "merge-chains",
                    "the middle type f16 does not hold every f32 value");
  }
  {  // u8 -> f32 -> i8 would turn a wrapping conversion into a float one.
    Builder b;
    Value* x = b.Input("x", {4}, DType::kU8);
    ExpectUnchanged(b.Done({CastTo(b, CastTo(b, x, DType::kF32), DType::kI8)}), "merge-chains",
                    "turns an integer conversion into a float one");
  }
}

TEST(MergeChains, ConstantMulAndAddChainsCombine) {
  Builder b;
  Value* x = b.Input("x", {3, 4});
  Value* m1 = b.Op(OpKind::kMul, {x, b.Const(Tensor::FromVector<float>(DType::kF32, {4}, {1, 2, 3, 4}))}, {}, "m1");
  Value* m2 = b.Op(OpKind::kMul, {b.Scalar(0.5f), m1}, {}, "m2");
  Value* a1 = b.Op(OpKind::kAdd, {m2, b.Const(Tensor::FromVector<float>(DType::kF32, {1, 4}, {1, 1, 1, 1}))}, {}, "a1");
  Value* a2 = b.Op(OpKind::kAdd, {a1, b.Const(Tensor::FromVector<float>(DType::kF32, {4}, {0, 1, 2, 3}))}, {}, "a2");
  Graph g = b.Done({a2});
  passes::PassContext ctx;
  Graph after = Optimized(g, "merge-chains", &ctx);
  EXPECT_EQ(OpSequence(after), "Mul,Add");
  const Node* mul = OnlyNode(after, OpKind::kMul);
  EXPECT_EQ(mul->input(0)->name(), "x");
  EXPECT_EQ(mul->input(1)->constant().ToDoubleVector(), (std::vector<double>{0.5, 1, 1.5, 2}));
  EXPECT_TRUE(HasProvenance(mul, {"m1", "m2"}));
  const Node* add = OnlyNode(after, OpKind::kAdd);
  EXPECT_EQ(add->input(1)->constant().dims(), (Dims{1, 4}));
  EXPECT_EQ(add->input(1)->constant().ToDoubleVector(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(after.outputs()[0]->name(), g.outputs()[0]->name());
  EXPECT_EQ(Rewrites(ctx, "Mul+Mul by constants"), 1);
  EXPECT_EQ(Rewrites(ctx, "Add+Add by constants"), 1);
}

TEST(MergeChains, ConstantChainsThatMustStay) {
  {  // The intermediate product is read elsewhere.
    Builder b;
    Value* x = b.Input("x", {3, 4});
    Value* m1 = b.Op(OpKind::kMul, {x, b.Scalar(2)});
    Value* m2 = b.Op(OpKind::kMul, {m1, b.Scalar(3)});
    ExpectUnchanged(b.Done({m2, b.Op(OpKind::kRelu, {m1})}), "merge-chains", "has other uses");
  }
  {  // Integer chains stay (wrapping arithmetic).
    Builder b;
    Value* x = b.Input("x", {3}, DType::kI32);
    Value* m1 = b.Op(OpKind::kAdd, {x, b.Const(Tensor::FromVector<int32_t>(DType::kI32, {}, {2}))});
    Value* m2 = b.Op(OpKind::kAdd, {m1, b.Const(Tensor::FromVector<int32_t>(DType::kI32, {}, {3}))});
    ExpectUnchanged(b.Done({m2}), "merge-chains", "is not a float type");
  }
  {  // A column times a row would make a larger constant.
    Builder b;
    Value* x = b.Input("x", {3, 4});
    Value* m1 = b.Op(OpKind::kMul, {x, b.Random({3, 1}, 1)});
    Value* m2 = b.Op(OpKind::kMul, {m1, b.Random({1, 4}, 2)});
    ExpectUnchanged(b.Done({m2}), "merge-chains", "larger than both");
  }
}

// ================================================================ fuse-layernorm

struct LayerNormOptions {
  bool pow = true;  // Pow(d, 2), else Mul(d, d)
  bool gamma = true, beta = true;
  Ints axes = {-1};
  Dims gamma_dims = {8};
};

// torch's decomposed LayerNorm, node names "/ln/<Op>".
Value* DecomposedLayerNorm(Builder& b, Value* x, const LayerNormOptions& o) {
  Value* m = b.Op(OpKind::kReduceMean, {x, b.Axes(o.axes)}, {}, "/ln/ReduceMean");
  Value* d = b.Op(OpKind::kSub, {x, m}, {}, "/ln/Sub");
  Value* p = o.pow ? b.Op(OpKind::kPow, {d, b.Scalar(2)}, {}, "/ln/Pow") : b.Op(OpKind::kMul, {d, d}, {}, "/ln/Mul_sq");
  Value* v = b.Op(OpKind::kReduceMean, {p, b.Axes(o.axes)}, {}, "/ln/ReduceMean_1");
  Value* a = b.Op(OpKind::kAdd, {v, b.Scalar(1e-5f)}, {}, "/ln/Add");
  Value* s = b.Op(OpKind::kSqrt, {a}, {}, "/ln/Sqrt");
  Value* y = b.Op(OpKind::kDiv, {d, s}, {}, "/ln/Div");
  if (o.gamma) y = b.Op(OpKind::kMul, {y, b.Random(o.gamma_dims, 5)}, {}, "/ln/Mul");
  if (o.beta) y = b.Op(OpKind::kAdd, {y, b.Random(o.gamma_dims, 6)}, {}, "/ln/Add_1");
  return y;
}

TEST(FuseLayerNorm, TorchPatternBecomesLayerNormalization) {
  Builder b;
  Value* x = b.Input("x", {2, 5, 8});
  Graph g = b.Done({DecomposedLayerNorm(b, x, {})});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-layernorm", &ctx);
  EXPECT_EQ(OpSequence(after), "LayerNormalization");
  const Node* ln = OnlyNode(after, OpKind::kLayerNormalization);
  EXPECT_EQ(ln->name(), "/ln/LayerNormalization");
  EXPECT_EQ(ln->attrs.GetInt("axis"), 2);
  EXPECT_FLOAT_EQ(ln->attrs.GetFloat("epsilon"), 1e-5f);
  ASSERT_EQ(ln->num_inputs(), 3);
  EXPECT_EQ(ln->input(0)->name(), "x");
  EXPECT_TRUE(HasProvenance(ln, {"/ln/ReduceMean", "/ln/Sub", "/ln/Pow", "/ln/ReduceMean_1", "/ln/Add",
                                 "/ln/Sqrt", "/ln/Div", "/ln/Mul", "/ln/Add_1"}));
  EXPECT_EQ(after.outputs()[0]->name(), g.outputs()[0]->name());
  EXPECT_EQ(Rewrites(ctx, "LayerNorm"), 1);
}

TEST(FuseLayerNorm, MulSquareWithoutGammaOrBeta) {
  Builder b;
  Value* x = b.Input("x", {3, 8});
  LayerNormOptions o;
  o.pow = false;
  o.gamma = o.beta = false;
  Graph g = b.Done({b.Op(OpKind::kRelu, {DecomposedLayerNorm(b, x, o)})});
  Graph after = Optimized(g, "fuse-layernorm");
  EXPECT_EQ(OpSequence(after), "LayerNormalization,Relu");
  const Node* ln = OnlyNode(after, OpKind::kLayerNormalization);
  ASSERT_EQ(ln->num_inputs(), 2);  // B absent
  EXPECT_EQ(ln->input(1)->constant().dims(), (Dims{8}));
  EXPECT_EQ(ln->input(1)->constant().ToDoubleVector(), std::vector<double>(8, 1.0));
}

TEST(FuseLayerNorm, TwoTrailingAxesAndBroadcastGamma) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4, 8});
  LayerNormOptions o;
  o.axes = {2, 3};
  o.gamma_dims = {1, 1, 1, 8};  // broadcast over the normalized [4, 8]: materialized
  Graph g = b.Done({DecomposedLayerNorm(b, x, o)});
  Graph after = Optimized(g, "fuse-layernorm");
  const Node* ln = OnlyNode(after, OpKind::kLayerNormalization);
  EXPECT_EQ(ln->attrs.GetInt("axis"), 2);
  EXPECT_EQ(ln->input(1)->type.dims, (Dims{4, 8}));
  EXPECT_EQ(ln->input(2)->type.dims, (Dims{4, 8}));
}

TEST(FuseLayerNorm, GammaOverOtherDimsStaysOutside) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 8});
  LayerNormOptions o;
  o.gamma_dims = {3, 1};  // varies over a dim that is not normalized
  o.beta = false;
  Graph g = b.Done({DecomposedLayerNorm(b, x, o)});
  Graph after = Optimized(g, "fuse-layernorm");
  EXPECT_EQ(OpSequence(after), "LayerNormalization,Mul");
}

TEST(FuseLayerNorm, PatternsThatMustNotChange) {
  {  // The mean is used elsewhere.
    Builder b;
    Value* x = b.Input("x", {2, 8});
    Value* m = b.Op(OpKind::kReduceMean, {x, b.Axes({-1})});
    Value* d = b.Op(OpKind::kSub, {x, m});
    Value* v = b.Op(OpKind::kReduceMean, {b.Op(OpKind::kPow, {d, b.Scalar(2)}), b.Axes({-1})});
    Value* y = b.Op(OpKind::kDiv, {d, b.Op(OpKind::kSqrt, {b.Op(OpKind::kAdd, {v, b.Scalar(1e-5f)})})});
    ExpectUnchanged(b.Done({y, b.Op(OpKind::kRelu, {m})}), "fuse-layernorm", "is also used outside the pattern");
  }
  {  // The reduced axis is not trailing.
    Builder b;
    Value* x = b.Input("x", {2, 8, 3});
    LayerNormOptions o;
    o.axes = {1};
    o.gamma = o.beta = false;
    ExpectUnchanged(b.Done({DecomposedLayerNorm(b, x, o)}), "fuse-layernorm", "not the trailing dims");
  }
  {  // The square is of a different value.
    Builder b;
    Value* x = b.Input("x", {2, 8});
    Value* m = b.Op(OpKind::kReduceMean, {x, b.Axes({-1})});
    Value* d = b.Op(OpKind::kSub, {x, m});
    Value* v = b.Op(OpKind::kReduceMean, {b.Op(OpKind::kPow, {x, b.Scalar(2)}), b.Axes({-1})});
    Value* y = b.Op(OpKind::kDiv, {d, b.Op(OpKind::kSqrt, {b.Op(OpKind::kAdd, {v, b.Scalar(1e-5f)})})});
    ExpectUnchanged(b.Done({y}), "fuse-layernorm", "not the mean of Pow(d, 2)");
  }
}

// ================================================================ fuse-rmsnorm

enum class RmsForm { kDiv, kReciprocal, kDivOne, kPowHalf };

Value* DecomposedRms(Builder& b, Value* x, RmsForm form, bool square_by_mul, Value* scale) {
  Value* sq = square_by_mul ? b.Op(OpKind::kMul, {x, x}, {}, "/rms/Mul_sq") : b.Op(OpKind::kPow, {x, b.Scalar(2)}, {}, "/rms/Pow");
  Value* ms = b.Op(OpKind::kReduceMean, {sq, b.Axes({-1})}, {}, "/rms/ReduceMean");
  Value* a = b.Op(OpKind::kAdd, {ms, b.Scalar(1e-6f)}, {}, "/rms/Add");
  Value* y = nullptr;
  switch (form) {
    case RmsForm::kDiv: y = b.Op(OpKind::kDiv, {x, b.Op(OpKind::kSqrt, {a})}, {}, "/rms/Div"); break;
    case RmsForm::kReciprocal:
      y = b.Op(OpKind::kMul, {b.Op(OpKind::kReciprocal, {b.Op(OpKind::kSqrt, {a})}), x}, {}, "/rms/Mul_r");
      break;
    case RmsForm::kDivOne:
      y = b.Op(OpKind::kMul, {x, b.Op(OpKind::kDiv, {b.Scalar(1), b.Op(OpKind::kSqrt, {a})})}, {}, "/rms/Mul_r");
      break;
    case RmsForm::kPowHalf:
      y = b.Op(OpKind::kMul, {x, b.Op(OpKind::kPow, {a, b.Scalar(-0.5f)})}, {}, "/rms/Mul_r");
      break;
  }
  return scale ? b.Op(OpKind::kMul, {scale, y}, {}, "/rms/Mul") : y;
}

TEST(FuseRmsNorm, EveryFormBecomesRmsNormalization) {
  for (RmsForm form : {RmsForm::kDiv, RmsForm::kReciprocal, RmsForm::kDivOne, RmsForm::kPowHalf}) {
    for (bool square_by_mul : {false, true}) {
      for (bool with_scale : {true, false}) {
        SCOPED_TRACE(fmt::format("form {} mul {} scale {}", static_cast<int>(form), square_by_mul, with_scale));
        Builder b;
        Value* x = b.Input("x", {2, 3, 16});
        Value* scale = with_scale ? b.Random({16}, 3) : nullptr;
        Graph g = b.Done({b.Op(OpKind::kRelu, {DecomposedRms(b, x, form, square_by_mul, scale)})});
        passes::PassContext ctx;
        Graph after = Optimized(g, "fuse-rmsnorm", &ctx);
        EXPECT_EQ(OpSequence(after), "RmsNormalization,Relu");
        const Node* n = OnlyNode(after, OpKind::kRmsNormalization);
        EXPECT_EQ(n->attrs.GetInt("axis"), 2);
        EXPECT_NEAR(n->attrs.GetFloat("epsilon"), 1e-6, 1e-12);
        EXPECT_EQ(n->input(0)->name(), "x");
        EXPECT_EQ(n->input(1)->type.dims, with_scale ? Dims{16} : Dims{});
        EXPECT_TRUE(HasProvenance(n, {"/rms/ReduceMean", "/rms/Add"}));
        if (with_scale) EXPECT_TRUE(HasProvenance(n, {"/rms/Mul"}));
        EXPECT_EQ(Rewrites(ctx, "RMSNorm"), 1);
        ExpectUnfuseRoundTrip(g, after);
      }
    }
  }
}

TEST(FuseRmsNorm, PatternsThatMustNotChange) {
  {  // The mean of squares is read elsewhere.
    Builder b;
    Value* x = b.Input("x", {2, 16});
    Value* sq = b.Op(OpKind::kMul, {x, x});
    Value* ms = b.Op(OpKind::kReduceMean, {sq, b.Axes({-1})});
    Value* y = b.Op(OpKind::kDiv, {x, b.Op(OpKind::kSqrt, {b.Op(OpKind::kAdd, {ms, b.Scalar(1e-6f)})})});
    ExpectUnchanged(b.Done({y, ms}), "fuse-rmsnorm", "is also used outside the pattern");
  }
  {  // Mean over a leading axis.
    Builder b;
    Value* x = b.Input("x", {2, 16});
    Value* ms = b.Op(OpKind::kReduceMean, {b.Op(OpKind::kMul, {x, x}), b.Axes({0})});
    Value* y = b.Op(OpKind::kDiv, {x, b.Op(OpKind::kSqrt, {b.Op(OpKind::kAdd, {ms, b.Scalar(1e-6f)})})});
    ExpectUnchanged(b.Done({y}), "fuse-rmsnorm", "not the trailing dims");
  }
  {  // The squared value is not the one divided.
    Builder b;
    Value* x = b.Input("x", {2, 16});
    Value* z = b.Input("z", {2, 16});
    Value* ms = b.Op(OpKind::kReduceMean, {b.Op(OpKind::kMul, {z, z}), b.Axes({-1})});
    Value* y = b.Op(OpKind::kDiv, {x, b.Op(OpKind::kSqrt, {b.Op(OpKind::kAdd, {ms, b.Scalar(1e-6f)})})});
    ExpectUnchanged(b.Done({y}), "fuse-rmsnorm", "of the normalized x");
  }
}

// ================================================================ fuse-groupnorm

Tensor Fill(double v, int64_t n) { return Tensor::FromVector<float>(DType::kF32, {n}, std::vector<float>(n, static_cast<float>(v))); }

// torch's GroupNorm export: Reshape [N, G, -1] → InstanceNormalization(ones, zeros) → Reshape
// back → Mul(gamma [C, 1, 1]) → Add(beta [C, 1, 1]).
Value* TorchGroupNorm(Builder& b, Value* x, const Dims& d, int64_t groups, Tensor in_scale, Tensor in_bias) {
  Value* grouped = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({d[0], groups, -1}))}, {}, "/gn/Reshape");
  Value* n = b.Op(OpKind::kInstanceNormalization, {grouped, b.Const(std::move(in_scale)), b.Const(std::move(in_bias))},
                  A({{"epsilon", 1e-5f}}), "/gn/InstanceNormalization");
  Value* back = b.Op(OpKind::kReshape, {n, b.Const(Tensor::VectorI64(Ints(d.begin(), d.end())))}, {}, "/gn/Reshape_1");
  Value* gm = b.Op(OpKind::kMul, {back, b.Random({d[1], 1, 1}, 5)}, {}, "/gn/Mul");
  return b.Op(OpKind::kAdd, {gm, b.Random({d[1], 1, 1}, 6)}, {}, "/gn/Add");
}

TEST(FuseGroupNorm, TorchPatternBecomesGroupNormalization) {
  const Dims d = {2, 6, 5, 4};
  Builder b;
  Value* x = b.Input("x", d);
  Graph g = b.Done({b.Op(OpKind::kRelu, {TorchGroupNorm(b, x, d, 3, Fill(1.0, 3), Fill(0.0, 3))})});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-groupnorm", &ctx);
  EXPECT_EQ(OpSequence(after), "GroupNormalization,Relu");
  const Node* n = OnlyNode(after, OpKind::kGroupNormalization);
  EXPECT_EQ(n->attrs.GetInt("num_groups"), 3);
  EXPECT_EQ(n->input(0)->name(), "x");
  EXPECT_EQ(n->input(1)->type.dims, Dims{6});
  EXPECT_EQ(n->input(2)->type.dims, Dims{6});
  EXPECT_TRUE(HasProvenance(n, {"/gn/Reshape", "/gn/InstanceNormalization", "/gn/Mul", "/gn/Add"}));
  EXPECT_EQ(Rewrites(ctx, "GroupNorm"), 1);
  ExpectUnfuseRoundTrip(g, after);
  // The lowering is the pattern again: fusing it once more gives the same op.
  Graph lowered = after.Clone();
  ASSERT_TRUE(RunPasses(lowered, "unfuse,fuse-groupnorm").ok());
  EXPECT_EQ(OpSequence(lowered), "GroupNormalization,Relu");
}

TEST(FuseGroupNorm, PatternsThatMustNotChange) {
  const Dims d = {1, 4, 3, 3};
  {  // InstanceNormalization with its own scale: not torch's GroupNorm.
    Builder b;
    Value* x = b.Input("x", d);
    Graph g = b.Done({TorchGroupNorm(b, x, d, 2, Tensor::FromVector<float>(DType::kF32, {2}, {1, 2}), Fill(0.0, 2))});
    ExpectUnchanged(g, "fuse-groupnorm", "ones and zeros");
  }
  {  // The grouped Reshape regroups the batch.
    Builder b;
    Value* x = b.Input("x", {2, 4, 3, 3});
    Value* grouped = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({1, 4, -1}))});
    Value* n = b.Op(OpKind::kInstanceNormalization, {grouped, b.Const(Fill(1.0, 4)), b.Const(Fill(0.0, 4))});
    Value* back = b.Op(OpKind::kReshape, {n, b.Const(Tensor::VectorI64({2, 4, 3, 3}))});
    Graph g = b.Done({b.Op(OpKind::kMul, {back, b.Random({4, 1, 1}, 1)})});
    ExpectUnchanged(g, "fuse-groupnorm", "does not group the channels");
  }
}

// A decomposed LayerNorm whose means canonicalize made GlobalAveragePools (a rank-3 tensor's
// mean over the last dim) still fuses.
TEST(FuseLayerNorm, MeansAsGlobalAveragePools) {
  Builder b;
  Value* x = b.Input("x", {1, 6, 32});
  Value* m = b.Op(OpKind::kGlobalAveragePool, {x});
  Value* dd = b.Op(OpKind::kSub, {x, m});
  Value* v = b.Op(OpKind::kGlobalAveragePool, {b.Op(OpKind::kPow, {dd, b.Scalar(2)})});
  Value* n = b.Op(OpKind::kDiv, {dd, b.Op(OpKind::kSqrt, {b.Op(OpKind::kAdd, {v, b.Scalar(1e-5f)})})});
  Graph g = b.Done({b.Op(OpKind::kAdd, {b.Op(OpKind::kMul, {n, b.Random({32}, 2)}), b.Random({32}, 3)})});
  Graph after = Optimized(g, "fuse-layernorm");
  EXPECT_EQ(OpSequence(after), "LayerNormalization");
}

// ================================================================ fuse-gelu

enum class Half { kFirst, kLast, kOnBracket };

// x * 0.5 * (1 + f(...)) with the halving placed as `h`; `bracket_fn` is Erf or Tanh.
Value* HalfXTimes(Builder& b, Value* x, Value* bracket, Half h, bool div_by_two) {
  auto halve = [&](Value* v) {
    return div_by_two ? b.Op(OpKind::kDiv, {v, b.Scalar(2)}, {}, "/g/half") : b.Op(OpKind::kMul, {b.Scalar(0.5f), v}, {}, "/g/half");
  };
  switch (h) {
    case Half::kFirst: return b.Op(OpKind::kMul, {halve(x), bracket}, {}, "/g/Mul_out");
    case Half::kLast: return halve(b.Op(OpKind::kMul, {x, bracket}, {}, "/g/Mul_x"));
    case Half::kOnBracket: return b.Op(OpKind::kMul, {x, halve(bracket)}, {}, "/g/Mul_out");
  }
  return nullptr;
}

Value* ErfGelu(Builder& b, Value* x, Half h, bool div_sqrt2, bool div_by_two) {
  Value* u = div_sqrt2 ? b.Op(OpKind::kDiv, {x, b.Scalar(1.4142135f)}, {}, "/g/Div")
                       : b.Op(OpKind::kMul, {x, b.Scalar(0.70710678f)}, {}, "/g/Mul_in");
  Value* e = b.Op(OpKind::kErf, {u}, {}, "/g/Erf");
  Value* p = b.Op(OpKind::kAdd, {b.Scalar(1), e}, {}, "/g/Add");
  return HalfXTimes(b, x, p, h, div_by_two);
}

Value* TanhGelu(Builder& b, Value* x, Half h, bool pow_cube) {
  Value* x3 = pow_cube ? b.Op(OpKind::kPow, {x, b.Scalar(3)}, {}, "/g/Pow")
                       : b.Op(OpKind::kMul, {x, b.Op(OpKind::kMul, {x, x}, {}, "/g/Mul_sq")}, {}, "/g/Mul_cube");
  Value* inner = b.Op(OpKind::kAdd, {x, b.Op(OpKind::kMul, {b.Scalar(0.044715f), x3})}, {}, "/g/Add_inner");
  Value* t = b.Op(OpKind::kTanh, {b.Op(OpKind::kMul, {inner, b.Scalar(0.7978846f)})}, {}, "/g/Tanh");
  return HalfXTimes(b, x, b.Op(OpKind::kAdd, {t, b.Scalar(1)}, {}, "/g/Add"), h, false);
}

TEST(FuseGelu, ErfFormInEveryArrangement) {
  for (Half h : {Half::kFirst, Half::kLast, Half::kOnBracket}) {
    for (bool div_sqrt2 : {true, false}) {
      for (bool div_by_two : {false, true}) {
        SCOPED_TRACE(fmt::format("half {} div_sqrt2 {} div_by_two {}", static_cast<int>(h), div_sqrt2, div_by_two));
        Builder b;
        Value* x = b.Input("x", {2, 3, 8});
        Graph g = b.Done({ErfGelu(b, b.Op(OpKind::kAdd, {x, b.Random({8}, 1)}, {}, "bias"), h, div_sqrt2, div_by_two)});
        passes::PassContext ctx;
        Graph after = Optimized(g, "fuse-gelu", &ctx);
        EXPECT_EQ(OpSequence(after), "Add,Gelu");
        const Node* gelu = OnlyNode(after, OpKind::kGelu);
        EXPECT_EQ(gelu->attrs.GetString("approximate"), "none");
        EXPECT_EQ(gelu->name(), "/g/Gelu");
        EXPECT_TRUE(HasProvenance(gelu, {"/g/Erf", "/g/Add", "/g/half"}));
        EXPECT_EQ(after.outputs()[0]->name(), g.outputs()[0]->name());
        EXPECT_EQ(Rewrites(ctx, "Gelu (erf)"), 1);
        ExpectUnfuseRoundTrip(g, after);
      }
    }
  }
}

TEST(FuseGelu, TanhFormInEveryArrangement) {
  for (Half h : {Half::kFirst, Half::kLast, Half::kOnBracket}) {
    for (bool pow_cube : {true, false}) {
      Builder b;
      Value* x = b.Input("x", {4, 8});
      Graph g = b.Done({b.Op(OpKind::kRelu, {TanhGelu(b, x, h, pow_cube)})});
      passes::PassContext ctx;
      Graph after = Optimized(g, "fuse-gelu", &ctx);
      EXPECT_EQ(OpSequence(after), "Gelu,Relu");
      EXPECT_EQ(OnlyNode(after, OpKind::kGelu)->attrs.GetString("approximate"), "tanh");
      EXPECT_EQ(Rewrites(ctx, "Gelu (tanh)"), 1);
      ExpectUnfuseRoundTrip(g, after);
    }
  }
}

TEST(FuseGelu, PatternsThatMustNotChange) {
  {  // A constant off by more than 1e-4 relative.
    Builder b;
    Value* x = b.Input("x", {8});
    Value* e = b.Op(OpKind::kErf, {b.Op(OpKind::kDiv, {x, b.Scalar(1.415f)})});
    ExpectUnchanged(b.Done({b.Op(OpKind::kMul, {b.Op(OpKind::kMul, {x, b.Scalar(0.5f)}), b.Op(OpKind::kAdd, {e, b.Scalar(1)})})}),
                    "fuse-gelu", "not Div(x, 1.4142)");
  }
  {  // erf's output is also a graph output.
    Builder b;
    Value* x = b.Input("x", {8});
    Value* e = b.Op(OpKind::kErf, {b.Op(OpKind::kDiv, {x, b.Scalar(1.4142135f)})});
    Value* y = b.Op(OpKind::kMul, {b.Op(OpKind::kMul, {x, b.Scalar(0.5f)}), b.Op(OpKind::kAdd, {e, b.Scalar(1)})});
    ExpectUnchanged(b.Done({y, e}), "fuse-gelu", "only reader is not Add(·, 1)");
  }
  {  // The halved value is not the erf argument.
    Builder b;
    Value* x = b.Input("x", {8});
    Value* z = b.Input("z", {8});
    Value* e = b.Op(OpKind::kErf, {b.Op(OpKind::kDiv, {x, b.Scalar(1.4142135f)})});
    ExpectUnchanged(b.Done({b.Op(OpKind::kMul, {b.Op(OpKind::kMul, {z, b.Scalar(0.5f)}), b.Op(OpKind::kAdd, {e, b.Scalar(1)})})}),
                    "fuse-gelu", "not multiplied by x and 0.5");
  }
  {  // A plain Tanh (a pooler).
    Builder b;
    Value* x = b.Input("x", {8});
    ExpectUnchanged(b.Done({b.Op(OpKind::kTanh, {b.Op(OpKind::kMul, {x, b.Scalar(2)})})}), "fuse-gelu", "sqrt(2/pi)");
  }
}

// ================================================================ canonicalize

TEST(Canonicalize, SpatialReduceMeanBecomesGlobalAveragePool) {
  for (int keep : {0, 1}) {
    for (Ints axes : {Ints{2, 3}, Ints{-1, -2}}) {
      Builder b;
      Value* x = b.Input("x", {2, 5, 4, 3});
      Value* y = b.Op(OpKind::kReduceMean, {x, b.Axes(axes)}, A({{"keepdims", int64_t{keep}}}), "mean");
      const Graph g0 = b.Done({b.Op(OpKind::kRelu, {y})});
      passes::PassContext ctx;
      Graph after = Optimized(g0, "canonicalize", &ctx);
      EXPECT_EQ(OpSequence(after), keep ? "GlobalAveragePool,Relu" : "GlobalAveragePool,Flatten,Relu");
      EXPECT_EQ(Rewrites(ctx, "ReduceMean -> GlobalAveragePool"), 1);
    }
  }
  {  // Rank 3 (a 1-D signal).
    Builder b;
    Value* x = b.Input("x", {1, 6, 10});
    const Graph g0 = b.Done({b.Op(OpKind::kReduceMean, {x, b.Axes({2})})});
    EXPECT_EQ(OpSequence(Optimized(g0, "canonicalize")), "GlobalAveragePool");
  }
}

TEST(Canonicalize, OtherReductionsStay) {
  for (Ints axes : {Ints{1, 2, 3}, Ints{3}, Ints{1}}) {
    Builder b;
    Value* x = b.Input("x", {1, 5, 4, 3});
    ExpectUnchanged(b.Done({b.Op(OpKind::kReduceMean, {x, b.Axes(axes)})}), "canonicalize", "not exactly the spatial dims");
  }
  Builder b;
  Value* x = b.Input("x", {4, 6});
  ExpectUnchanged(b.Done({b.Op(OpKind::kReduceMean, {x, b.Axes({1})})}), "canonicalize", "rank >= 3");
}

// ================================================================ fuse-channel-shuffle

// x [1, C, 5, 6] -> Reshape [1, g, C/g, 5, 6] -> Transpose perm -> Reshape back (-> Relu).
Graph ShuffleGraph(int64_t c, int64_t g, Ints perm = {0, 2, 1, 3, 4}, bool split_also_output = false) {
  Builder b;
  Value* x = b.Input("x", {1, c, 5, 6});
  Value* split = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({1, g, c / g, 5, 6}), "view")}, {}, "reshape_a");
  Value* t = b.Op(OpKind::kTranspose, {split}, A({{"perm", perm}}), "transpose");
  Value* y = b.Op(OpKind::kReshape, {t, b.Const(Tensor::VectorI64({1, c, 5, 6}), "shape")}, {}, "reshape_b");
  std::vector<Value*> outs = {b.Op(OpKind::kRelu, {y})};
  if (split_also_output) outs.push_back(split);
  return b.Done(outs);
}

TEST(FuseChannelShuffle, ReshapeTransposeReshapeBecomesOneOp) {
  for (int64_t g : {2, 3, 4}) {
    const Graph g0 = ShuffleGraph(12, g);
    passes::PassContext ctx;
    Graph after = Optimized(g0, "fuse-channel-shuffle", &ctx, 0);
    EXPECT_EQ(OpSequence(after), "ChannelShuffle,Relu");
    EXPECT_EQ(Rewrites(ctx, "ChannelShuffle"), 1);
    for (const Node* n : after.nodes()) {
      if (n->op() != OpKind::kChannelShuffle) continue;
      EXPECT_EQ(n->attrs.GetInt("group", 0), g);
      EXPECT_TRUE(HasProvenance(n, {"reshape_a", "transpose", "reshape_b"}));
    }
    ExpectUnfuseRoundTrip(g0, after);
  }
}

TEST(FuseChannelShuffle, PatternsThatMustNotChange) {
  ExpectUnchanged(ShuffleGraph(12, 2, {0, 1, 2, 4, 3}), "fuse-channel-shuffle", "does not swap dims 1 and 2 only");
  ExpectUnchanged(ShuffleGraph(12, 2, {0, 2, 1, 3, 4}, /*split_also_output=*/true), "fuse-channel-shuffle",
                  "other readers");
  {  // The view splits a spatial dim, not the channels.
    Builder b;
    Value* x = b.Input("x", {1, 4, 6, 5});
    Value* v = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({1, 4, 2, 3, 5}), "view")});
    Value* t = b.Op(OpKind::kTranspose, {v}, A({{"perm", Ints{0, 2, 1, 3, 4}}}));
    ExpectUnchanged(b.Done({b.Op(OpKind::kReshape, {t, b.Const(Tensor::VectorI64({1, 8, 3, 5}), "shape")})}),
                    "fuse-channel-shuffle", "do not split the channels");
  }
}

// ================================================================ fuse-attention

// Heads split as exporters do: [B, S, H*D] -> Reshape [B, S, H, D] -> Transpose.
Value* Heads(Builder& b, Value* x, Ints perm, const std::string& name) {
  Value* r = b.Op(OpKind::kReshape, {x, b.Const(Tensor::VectorI64({1, 6, 2, 4}))}, {}, name + "/Reshape");
  return b.Op(OpKind::kTranspose, {r}, A({{"perm", perm}}), name + "/Transpose");
}

TEST(FuseAttention, BertStyleWithKeyTransposeFolded) {
  Builder b;
  Value* x = b.Input("x", {1, 6, 8});
  Value* q = Heads(b, b.Op(OpKind::kMatMul, {x, b.Random({8, 8}, 1)}), {0, 2, 1, 3}, "/q");
  Value* kt = Heads(b, b.Op(OpKind::kMatMul, {x, b.Random({8, 8}, 2)}), {0, 2, 3, 1}, "/k");
  Value* v = Heads(b, b.Op(OpKind::kMatMul, {x, b.Random({8, 8}, 3)}), {0, 2, 1, 3}, "/v");
  Value* s = b.Op(OpKind::kMatMul, {q, kt}, {}, "/attn/MatMul");
  Value* d = b.Op(OpKind::kDiv, {s, b.Scalar(2)}, {}, "/attn/Div");
  Value* p = b.Op(OpKind::kSoftmax, {d}, A({{"axis", int64_t{-1}}}), "/attn/Softmax");
  Value* c = b.Op(OpKind::kMatMul, {p, v}, {}, "/attn/MatMul_1");
  Value* merged = b.Op(OpKind::kTranspose, {c}, A({{"perm", Ints{0, 2, 1, 3}}}));
  Graph g = b.Done({b.Op(OpKind::kReshape, {merged, b.Const(Tensor::VectorI64({1, 6, 8}))})});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-attention", &ctx);
  const Node* att = OnlyNode(after, OpKind::kAttention);
  EXPECT_EQ(att->name(), "/attn/Attention");
  EXPECT_FLOAT_EQ(att->attrs.GetFloat("scale"), 0.5f);
  EXPECT_EQ(att->attrs.GetInt("k_transposed"), 0);
  EXPECT_EQ(att->num_inputs(), 3);
  // K is now split like Q and V; the head split/merge transposes stay.
  const Node* k_split = att->input(1)->producer();
  ASSERT_NE(k_split, nullptr);
  EXPECT_EQ(k_split->op(), OpKind::kTranspose);
  EXPECT_EQ(k_split->attrs.GetInts("perm"), (Ints{0, 2, 1, 3}));
  EXPECT_EQ(NumOps(after, OpKind::kTranspose), 4);
  EXPECT_EQ(NumOps(after, OpKind::kSoftmax), 0);
  EXPECT_EQ(NumOps(after, OpKind::kMatMul), 3);
  EXPECT_TRUE(HasProvenance(att, {"/attn/MatMul", "/attn/Div", "/attn/Softmax", "/attn/MatMul_1", "/k/Transpose"}));
  EXPECT_EQ(Rewrites(ctx, "Attention"), 1);
  ExpectUnfuseRoundTrip(g, after);
  // Lowered, the head split of K and the swap are one Transpose again, as exported.
  Graph lowered = after.Clone();
  ASSERT_TRUE(RunPasses(lowered, "unfuse").ok());
  EXPECT_EQ(NumOps(lowered, OpKind::kTranspose), 4);
  for (const Node* n : lowered.nodes()) {
    if (n->op() == OpKind::kTranspose && HasProvenance(n, {"/k/Transpose"})) {
      EXPECT_EQ(n->attrs.GetInts("perm"), (Ints{0, 2, 3, 1}));
    }
  }
}

TEST(FuseAttention, MaskAndSplitScalesWithPureKeySwap) {
  // torch's scaled_dot_product_attention export: Q and K each scaled by sqrt(scale), the
  // swap Transpose of K absorbed entirely, an additive mask.
  Builder b;
  Value* q = b.Input("q", {2, 3, 5, 4});
  Value* k = b.Input("k", {2, 3, 7, 4});
  Value* v = b.Input("v", {2, 3, 7, 6});
  Value* mask = b.Input("mask", {5, 7});
  const float r = std::sqrt(1 / std::sqrt(4.0f));
  Value* qs = b.Op(OpKind::kMul, {q, b.Scalar(r)});
  Value* kt = b.Op(OpKind::kTranspose, {k}, A({{"perm", Ints{0, 1, 3, 2}}}), "kt");
  Value* ks = b.Op(OpKind::kMul, {kt, b.Scalar(r)});
  Value* s = b.Op(OpKind::kAdd, {mask, b.Op(OpKind::kMatMul, {qs, ks})});
  Value* y = b.Op(OpKind::kMatMul, {b.Op(OpKind::kSoftmax, {s}, A({{"axis", int64_t{3}}})), v});
  Graph g = b.Done({y});
  Graph after = Optimized(g, "fuse-attention");
  EXPECT_EQ(OpSequence(after), "Attention");
  const Node* att = OnlyNode(after, OpKind::kAttention);
  EXPECT_NEAR(att->attrs.GetFloat("scale"), 0.5, 1e-6);
  EXPECT_EQ(att->attrs.GetInt("k_transposed"), 0);
  EXPECT_EQ(att->input(1)->name(), "k");
  EXPECT_EQ(att->input(3)->name(), "mask");
  EXPECT_TRUE(HasProvenance(att, {"kt"}));
  ExpectUnfuseRoundTrip(g, after);
}

TEST(FuseAttention, KeyAlreadyTransposedAndScaleBeforeTheTranspose) {
  for (bool transpose : {false, true}) {
    Builder b;
    Value* q = b.Input("q", {4, 9, 8});
    Value* k = b.Input("k", {4, 8, 9});  // [D, Sk] as given (UNet self-attention)
    Value* v = b.Input("v", {4, 9, 8});
    Value* kp = k;
    if (transpose) {  // K given [Sk, D], scaled, then transposed
      kp = b.Input("k2", {4, 9, 8});
      kp = b.Op(OpKind::kTranspose, {b.Op(OpKind::kDiv, {kp, b.Scalar(4)})}, A({{"perm", Ints{0, 2, 1}}}));
    }
    Value* s = b.Op(OpKind::kMatMul, {q, kp});
    Value* y = b.Op(OpKind::kMatMul, {b.Op(OpKind::kSoftmax, {s}), v});
    Graph g = b.Done({y, b.Op(OpKind::kRelu, {k})});
    Graph after = Optimized(g, "fuse-attention");
    const Node* att = OnlyNode(after, OpKind::kAttention);
    EXPECT_EQ(att->attrs.GetInt("k_transposed"), transpose ? 0 : 1);
    EXPECT_FLOAT_EQ(att->attrs.GetFloat("scale"), transpose ? 0.25f : 1.0f);
    EXPECT_EQ(NumOps(after, OpKind::kTranspose), 0);
    ExpectUnfuseRoundTrip(g, after);
  }
}

TEST(FuseAttention, PatternsThatMustNotChange) {
  {  // Softmax over another axis.
    Builder b;
    Value* q = b.Input("q", {3, 5, 4});
    Value* k = b.Input("k", {3, 4, 5});
    Value* v = b.Input("v", {3, 5, 4});
    Value* p = b.Op(OpKind::kSoftmax, {b.Op(OpKind::kMatMul, {q, k})}, A({{"axis", int64_t{1}}}));
    ExpectUnchanged(b.Done({b.Op(OpKind::kMatMul, {p, v})}), "fuse-attention", "not the last axis");
  }
  {  // The probabilities are an output too.
    Builder b;
    Value* q = b.Input("q", {3, 5, 4});
    Value* k = b.Input("k", {3, 4, 5});
    Value* v = b.Input("v", {3, 5, 4});
    Value* p = b.Op(OpKind::kSoftmax, {b.Op(OpKind::kMatMul, {q, k})});
    ExpectUnchanged(b.Done({b.Op(OpKind::kMatMul, {p, v}), p}), "fuse-attention", "not read only by MatMul");
  }
  {  // A mask that grows the scores (a batch the scores do not have).
    Builder b;
    Value* q = b.Input("q", {5, 4});
    Value* k = b.Input("k", {4, 5});
    Value* v = b.Input("v", {5, 4});
    Value* mask = b.Input("mask", {2, 5, 5});
    Value* p = b.Op(OpKind::kSoftmax, {b.Op(OpKind::kAdd, {b.Op(OpKind::kMatMul, {q, k}), mask})});
    ExpectUnchanged(b.Done({b.Op(OpKind::kMatMul, {p, v})}), "fuse-attention", "a mask that broadcasts");
  }
  {  // The scores are read elsewhere.
    Builder b;
    Value* q = b.Input("q", {5, 4});
    Value* k = b.Input("k", {4, 5});
    Value* v = b.Input("v", {5, 4});
    Value* s = b.Op(OpKind::kMatMul, {q, k});
    Value* p = b.Op(OpKind::kSoftmax, {b.Op(OpKind::kMul, {s, b.Scalar(0.5f)})});
    ExpectUnchanged(b.Done({b.Op(OpKind::kMatMul, {p, v}), b.Op(OpKind::kRelu, {s})}), "fuse-attention",
                    "not (scaled) MatMul(Q, K)");
  }
}

// ================================================================ unfuse

TEST(UnfuseComposite, LowersNodesBuiltDirectly) {
  Builder b;
  Value* x = b.Input("x", {2, 4, 8});
  Value* gelu = b.Op(OpKind::kGelu, {x}, A({{"approximate", std::string("tanh")}}), "gelu");
  Value* rms = b.Op(OpKind::kRmsNormalization, {gelu, b.Random({4, 8}, 1)}, A({{"axis", int64_t{1}}, {"epsilon", 1e-3f}}), "rms");
  Value* att = b.Op(OpKind::kAttention, {rms, x, x, b.Random({4, 4}, 2)}, {}, "att");  // default scale 1/sqrt(8)
  Graph g = b.Done({att});
  Graph lowered = g.Clone();
  ASSERT_TRUE(RunPasses(lowered, "unfuse").ok());
  for (const Node* n : lowered.nodes()) {
    EXPECT_FALSE(IsInternalOp(n->op())) << n->Label();
    EXPECT_FALSE(n->provenance.empty());
  }
  EXPECT_EQ(NumOps(lowered, OpKind::kTanh), 1);
  EXPECT_EQ(NumOps(lowered, OpKind::kReduceMean), 1);
  EXPECT_EQ(NumOps(lowered, OpKind::kSoftmax), 1);
  EXPECT_EQ(lowered.outputs()[0]->name(), g.outputs()[0]->name());
  ExpectUnfuseRoundTrip(g, g);
}

// ================================================================ all together

TEST(FuseComposite, TransformerBlockFusesEveryPattern) {
  Builder b;
  Value* x = b.Input("x", {1, 6, 8});
  LayerNormOptions o;
  Value* h = DecomposedLayerNorm(b, x, o);
  Value* q = Heads(b, b.Op(OpKind::kMatMul, {h, b.Random({8, 8}, 1)}), {0, 2, 1, 3}, "/q");
  Value* kt = Heads(b, b.Op(OpKind::kMatMul, {h, b.Random({8, 8}, 2)}), {0, 2, 3, 1}, "/k");
  Value* v = Heads(b, b.Op(OpKind::kMatMul, {h, b.Random({8, 8}, 3)}), {0, 2, 1, 3}, "/v");
  Value* p = b.Op(OpKind::kSoftmax, {b.Op(OpKind::kMul, {b.Op(OpKind::kMatMul, {q, kt}), b.Scalar(0.5f)})});
  Value* c = b.Op(OpKind::kTranspose, {b.Op(OpKind::kMatMul, {p, v})}, A({{"perm", Ints{0, 2, 1, 3}}}));
  Value* r = b.Op(OpKind::kReshape, {c, b.Const(Tensor::VectorI64({6, 8}))});
  Value* r2 = b.Op(OpKind::kReshape, {r, b.Const(Tensor::VectorI64({1, 6, 8}))});
  Value* ff = b.Op(OpKind::kMatMul, {b.Op(OpKind::kAdd, {x, r2}), b.Random({8, 8}, 4)});
  Graph g = b.Done({ErfGelu(b, ff, Half::kLast, true, false)});
  passes::PassContext ctx;
  Graph after = Optimized(g, "merge-chains,fuse-layernorm,fuse-rmsnorm,fuse-gelu,fuse-attention", &ctx);
  EXPECT_EQ(NumOps(after, OpKind::kLayerNormalization), 1);
  EXPECT_EQ(NumOps(after, OpKind::kAttention), 1);
  EXPECT_EQ(NumOps(after, OpKind::kGelu), 1);
  EXPECT_EQ(NumOps(after, OpKind::kRmsNormalization), 0);
  EXPECT_EQ(NumOps(after, OpKind::kReshape), 4);  // 3 head splits + the merged pair
  ExpectUnfuseRoundTrip(g, after);
}

}  // namespace
}  // namespace edgec
