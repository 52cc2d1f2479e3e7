// The epilogue fusions (fuse-conv-bn, fuse-matmul-add, fuse-activation, fuse-residual-add)
// and their lowering (unfuse): Before/After structure, graphs that must not change,
// differential checks on the reference executor, provenance, and the unfuse round trip.
#include <gtest/gtest.h>

#include <onnx/checker.h>

#include <cmath>
#include <set>

#include "frontend/onnx/exporter.h"
#include "ir/epilogue.h"
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
  Value* Positive(Dims dims, uint32_t seed) {
    return Const(RandomTensor(DType::kF32, std::move(dims), seed, 0.5, 2.0), "p");
  }
  Value* Scalar(float v) { return Const(Tensor::Scalar(v), "s"); }
  Value* Op(OpKind op, std::vector<Value*> in, Attributes a = {}, std::string name = "") {
    if (name.empty()) name = fmt::format("{}{}", OpName(op), ++count_);
    Node* n = g_.AddNode(op, name, std::move(in), 1);
    n->attrs = std::move(a);
    return n->output(0);
  }
  Value* Conv(Value* x, int64_t in_c, int64_t out_c, bool bias, uint32_t seed, std::string name = "") {
    Attributes a;
    a.Set("pads", Ints{1, 1, 1, 1});
    std::vector<Value*> in = {x, Random({out_c, in_c, 3, 3}, seed)};
    if (bias) in.push_back(Random({out_c}, seed + 1));
    return Op(OpKind::kConv, in, a, name);
  }
  Value* BatchNorm(Value* x, int64_t c, uint32_t seed, std::string name = "") {
    return Op(OpKind::kBatchNormalization,
              {x, Positive({c}, seed), Random({c}, seed + 1), Random({c}, seed + 2), Positive({c}, seed + 3)},
              {}, name);
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

ActivationSpec ActivationOf(const Node* n) {
  auto a = ReadActivation(n->attrs);
  EXPECT_TRUE(a.ok());
  return a.ok() ? *a : ActivationSpec{};
}


// ---------------------------------------------------------------- fuse-conv-bn

TEST(FuseConvBn, FoldsIntoConvWithAndWithoutBias) {
  for (bool bias : {true, false}) {
    Builder b;
    Value* x = b.Input("x", {2, 3, 6, 6});
    Value* y = b.BatchNorm(b.Conv(x, 3, 4, bias, 1, "conv"), 4, 10, "bn");
    Graph g = b.Done({y});
    passes::PassContext ctx;
    Graph after = Optimized(g, "fuse-conv-bn", &ctx);
    EXPECT_EQ(OpSequence(after), "Conv");
    const Node* conv = OnlyNode(after, OpKind::kConv);
    ASSERT_NE(conv->input(2), nullptr);  // a bias is created when there was none
    EXPECT_TRUE(conv->input(1)->is_constant() && conv->input(2)->is_constant());
    EXPECT_TRUE(HasProvenance(conv, {"conv", "bn"}));
    EXPECT_EQ(after.outputs()[0]->name(), g.outputs()[0]->name());
    EXPECT_EQ(Rewrites(ctx, "Conv+BatchNormalization"), 1);
  }
}

TEST(FuseConvBn, WeightsByHand) {
  // 1x1 conv, 1 channel: w = 2, b = 1; BN scale 3, B 0.5, mean 1, var 3 (eps 1):
  // s = 3 / sqrt(4) = 1.5; w' = 3; b' = (1 - 1) * 1.5 + 0.5 = 0.5.
  Builder b;
  Value* x = b.Input("x", {1, 1, 2, 2});
  Value* c = b.Op(OpKind::kConv, {x, b.Const(Tensor::FromVector<float>(DType::kF32, {1, 1, 1, 1}, {2})),
                                  b.Const(Tensor::FromVector<float>(DType::kF32, {1}, {1}))});
  auto vec = [&](float v) { return b.Const(Tensor::FromVector<float>(DType::kF32, {1}, {v})); };
  Value* y = b.Op(OpKind::kBatchNormalization, {c, vec(3), vec(0.5f), vec(1), vec(3)}, A({{"epsilon", 1.0f}}));
  Graph g = b.Done({y});
  Graph after = Optimized(g, "fuse-conv-bn");
  const Node* conv = OnlyNode(after, OpKind::kConv);
  EXPECT_FLOAT_EQ(conv->input(1)->constant().data<float>()[0], 3.0f);
  EXPECT_FLOAT_EQ(conv->input(2)->constant().data<float>()[0], 0.5f);
}

TEST(FuseConvBn, FoldsIntoGemmMatMulAndFusedMatMul) {
  Builder b;
  Value* x = b.Input("x", {5, 8});
  // Gemm with transB, beta and a [1, 6] C; MatMul -> Gemm; FusedMatMul with a bias.
  Value* g1 = b.Op(OpKind::kGemm, {x, b.Random({6, 8}, 1), b.Random({1, 6}, 2)},
                   A({{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}}), "gemm");
  Value* y1 = b.BatchNorm(g1, 6, 10, "bn1");
  Value* y2 = b.BatchNorm(b.Op(OpKind::kMatMul, {x, b.Random({8, 3}, 3)}, {}, "mm"), 3, 20, "bn2");
  Value* y3 = b.BatchNorm(b.Op(OpKind::kFusedMatMul, {x, b.Random({8, 4}, 4), b.Random({4}, 5)}, {}, "fmm"), 4, 30);
  Value* y4 = b.BatchNorm(b.Op(OpKind::kGemm, {x, b.Random({8, 2}, 6), b.Random({5, 1}, 7)}, {}, "gemm2"), 2, 40);
  Graph g = b.Done({y1, y2, y3, y4});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-conv-bn", &ctx);
  EXPECT_EQ(CountOp(after, OpKind::kBatchNormalization), 0);
  EXPECT_EQ(CountOp(after, OpKind::kGemm), 3);  // the MatMul became a Gemm (it needs a bias)
  EXPECT_EQ(CountOp(after, OpKind::kMatMul), 0);
  EXPECT_EQ(CountOp(after, OpKind::kFusedMatMul), 1);
  for (const Node* n : after.nodes()) {
    if (n->op() == OpKind::kGemm) {
      EXPECT_EQ(n->attrs.GetFloat("beta", 1.0f), 1.0f);
    }
  }
  EXPECT_EQ(Rewrites(ctx, "Gemm+BatchNormalization"), 2);
  EXPECT_EQ(Rewrites(ctx, "MatMul+BatchNormalization"), 1);
  EXPECT_EQ(Rewrites(ctx, "FusedMatMul+BatchNormalization"), 1);
}

TEST(FuseConvBn, FoldsIntoConvTransposeByGroup) {
  // Weights [C_in, C_out / group, k...]: output channel g * (C_out / group) + j. Groups 1
  // and 2 (with strides and a bias), and a 1-d ConvTranspose.
  struct Case {
    Dims x, w;
    int64_t group;
    bool bias;
  };
  for (const Case& c : {Case{{1, 4, 5, 5}, {4, 3, 3, 3}, 1, true}, Case{{2, 4, 5, 5}, {4, 3, 2, 2}, 2, false},
                        Case{{1, 6, 7}, {6, 2, 3}, 3, true}}) {
    Builder b;
    Value* x = b.Input("x", c.x);
    const int64_t out_c = c.w[1] * c.group;
    std::vector<Value*> in = {x, b.Random(c.w, 1)};
    if (c.bias) in.push_back(b.Random({out_c}, 2));
    Attributes a = A({{"group", c.group}});
    if (c.x.size() == 4) a.Set("strides", Ints{2, 2});
    Value* y = b.BatchNorm(b.Op(OpKind::kConvTranspose, in, a, "deconv"), out_c, 10, "bn");
    Graph g = b.Done({y});
    passes::PassContext ctx;
    Graph after = Optimized(g, "fuse-conv-bn", &ctx);
    EXPECT_EQ(OpSequence(after), "ConvTranspose") << "group " << c.group;
    const Node* t = OnlyNode(after, OpKind::kConvTranspose);
    ASSERT_NE(t->input(2), nullptr);
    EXPECT_EQ(t->attrs.GetInt("group", 1), c.group);
    EXPECT_TRUE(HasProvenance(t, {"deconv", "bn"}));
    EXPECT_EQ(Rewrites(ctx, "ConvTranspose+BatchNormalization"), 1);
  }
}

// An Add or Mul by a constant that varies at most per output channel (a UNet's baked time
// embedding [1, C, 1, 1], a scalar, a [C] bias of a Gemm) folds like a BatchNormalization;
// one that varies along a spatial dim, or a second activation, does not.
TEST(FuseConvBn, PerChannelAddAndMulFold) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 6, 6});
  Value* t = b.Random({1, 4, 1, 1}, 40);
  Value* y1 = b.Op(OpKind::kAdd, {b.Conv(x, 3, 4, true, 1, "conv_t"), t}, {}, "add_time");
  Value* y2 = b.Op(OpKind::kMul, {b.Scalar(0.25f), b.Conv(x, 3, 4, false, 2, "conv_s")}, {}, "mul_scale");
  Value* x2 = b.Input("x2", {5, 8});
  Value* y3 = b.Op(OpKind::kAdd, {b.Op(OpKind::kMatMul, {x2, b.Random({8, 3}, 3)}, {}, "mm"), b.Random({3}, 4)}, {},
                   "mm_bias");
  // Must not change: a constant varying along W, and an Add of two activations.
  Value* y4 = b.Op(OpKind::kAdd, {b.Conv(x, 3, 4, true, 5, "conv_w"), b.Random({1, 1, 1, 6}, 6)}, {}, "add_w");
  Value* c6 = b.Conv(x, 3, 4, true, 7, "conv_a");
  Value* y5 = b.Op(OpKind::kAdd, {c6, b.Conv(x, 3, 4, true, 8, "conv_b")}, {}, "add_act");
  Graph g = b.Done({y1, y2, y3, y4, y5});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-conv-bn", &ctx);
  EXPECT_EQ(Rewrites(ctx, "Conv+Add"), 1);
  EXPECT_EQ(Rewrites(ctx, "Conv+Mul"), 1);
  EXPECT_EQ(Rewrites(ctx, "MatMul+Add"), 1);
  EXPECT_EQ(CountOp(after, OpKind::kMul), 0);
  EXPECT_EQ(CountOp(after, OpKind::kAdd), 2);  // add_w and add_act stay
  EXPECT_TRUE(ExplainedAs(ctx, "varies along more than the channels"));
  ExpectSameOutputs(g, after);
}

TEST(FuseConvBn, MustNotChange) {
  Builder b;
  Value* x = b.Input("x", {1, 3, 5, 5});
  Value* wx = b.Input("w_input", {4, 3, 3, 3});
  // (1) the conv output has another reader.
  Value* c1 = b.Conv(x, 3, 4, true, 1, "shared_conv");
  Value* y1 = b.BatchNorm(c1, 4, 10);
  Value* r1 = b.Op(OpKind::kRelu, {c1});
  // (2) training mode.
  Value* y2 = b.Op(OpKind::kBatchNormalization,
                   {b.Conv(x, 3, 4, true, 3), b.Positive({4}, 20), b.Random({4}, 21), b.Random({4}, 22), b.Positive({4}, 23)},
                   A({{"training_mode", int64_t{1}}}));
  // (3) weights are not constant.
  Value* y3 = b.BatchNorm(b.Op(OpKind::kConv, {x, wx}), 4, 30);
  // (4) BN statistics are not constant.
  Value* mean = b.Input("mean", {4});
  Value* y4 = b.Op(OpKind::kBatchNormalization, {b.Conv(x, 3, 4, true, 5), b.Positive({4}, 40), b.Random({4}, 41), mean, b.Positive({4}, 43)});
  // (5) a fused conv that already activates.
  Value* y5 = b.BatchNorm(b.Op(OpKind::kFusedConv, {x, b.Random({4, 3, 1, 1}, 6)}, A({{"activation", std::string("Relu")}})), 4, 50);
  // (6) a MatMul with a rank-3 output: BN's channel dim 1 is not the matmul's last dim.
  Value* x3 = b.Input("x3", {2, 4, 6});
  Value* y6 = b.BatchNorm(b.Op(OpKind::kMatMul, {x3, b.Random({6, 5}, 7)}), 4, 60);
  Graph g = b.Done({y1, r1, y2, y3, y4, y5, y6});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-conv-bn", &ctx);
  EXPECT_EQ(OpSequence(after), OpSequence(g));
  EXPECT_EQ(after.num_nodes(), g.num_nodes());
  EXPECT_TRUE(ExplainedAs(ctx, "output has other uses"));
  EXPECT_TRUE(ExplainedAs(ctx, "training mode"));
  EXPECT_TRUE(ExplainedAs(ctx, "weights are not constant"));
  EXPECT_TRUE(ExplainedAs(ctx, "input_mean is not constant"));
  EXPECT_TRUE(ExplainedAs(ctx, "residual or an activation"));
  EXPECT_TRUE(ExplainedAs(ctx, "is not the last dim"));
}

// ---------------------------------------------------------------- fuse-matmul-add

TEST(FuseMatMulAdd, GemmBecomesFusedMatMulWithBetaFolded) {
  Builder b;
  Value* a = b.Input("a", {4, 6});
  Value* c = b.Const(Tensor::FromVector<float>(DType::kF32, {3}, {1, 2, 3}));
  Value* y = b.Op(OpKind::kGemm, {a, b.Random({3, 6}, 1), c}, A({{"transB", int64_t{1}}, {"beta", 0.5f}, {"alpha", 2.0f}}), "gemm");
  Graph g = b.Done({y});
  Graph after = Optimized(g, "fuse-matmul-add");
  const Node* f = OnlyNode(after, OpKind::kFusedMatMul);
  EXPECT_EQ(after.num_nodes(), 1);
  EXPECT_EQ(f->attrs.GetInt("transB", 0), 1);
  EXPECT_EQ(f->attrs.GetFloat("alpha", 1.0f), 2.0f);
  EXPECT_FALSE(f->attrs.Has("beta"));
  ASSERT_TRUE(f->input(2)->is_constant());
  EXPECT_EQ(f->input(2)->constant().ToDoubleVector(), (std::vector<double>{0.5, 1, 1.5}));
  EXPECT_TRUE(HasProvenance(f, {"gemm"}));
}

TEST(FuseMatMulAdd, MatMulPlusConstantBias) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* bias = b.Random({5}, 2);
  Value* y1 = b.Op(OpKind::kAdd, {b.Op(OpKind::kMatMul, {x, b.Random({4, 5}, 1)}, {}, "mm"), bias}, {}, "add");
  Value* y2 = b.Op(OpKind::kAdd, {b.Random({3, 1}, 3), b.Op(OpKind::kMatMul, {x, b.Random({4, 2}, 4)})});  // bias first
  Graph g = b.Done({y1, y2});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-matmul-add", &ctx);
  EXPECT_EQ(OpSequence(after), "FusedMatMul,FusedMatMul");
  EXPECT_EQ(Rewrites(ctx, "MatMul+Add"), 2);
  for (const Node* n : after.nodes()) EXPECT_TRUE(n->input(2) && n->input(2)->is_constant());
  EXPECT_TRUE(HasProvenance(after.outputs()[0]->producer(), {"mm", "add"}));
}

TEST(FuseMatMulAdd, MustNotChange) {
  Builder b;
  Value* x = b.Input("x", {3, 4});
  Value* t = b.Input("t", {3, 5});
  Value* mm = b.Op(OpKind::kMatMul, {x, b.Random({4, 5}, 1)});
  Value* y1 = b.Op(OpKind::kAdd, {mm, t});                          // not a constant: a residual
  Value* y2 = b.Op(OpKind::kAdd, {b.Op(OpKind::kMatMul, {x, b.Random({4, 5}, 2)}), b.Random({2, 3, 5}, 3)});  // enlarges
  Value* mm3 = b.Op(OpKind::kMatMul, {x, b.Random({4, 5}, 4)});
  Value* y3 = b.Op(OpKind::kAdd, {mm3, b.Random({5}, 5)});
  Value* y3b = b.Op(OpKind::kRelu, {mm3});                          // second reader
  Value* y4 = b.Op(OpKind::kGemm, {x, b.Random({4, 5}, 6), t}, A({{"beta", 0.5f}}));  // beta with non-constant C
  Value* xi = b.Input("xi", {3, 4}, DType::kI64);
  Value* y5 = b.Op(OpKind::kAdd, {b.Op(OpKind::kMatMul, {xi, b.Const(Tensor(DType::kI64, {4, 5}))}), b.Const(Tensor(DType::kI64, {5}))});
  Graph g = b.Done({y1, y2, y3, y3b, y4, y5});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-matmul-add", &ctx);
  EXPECT_EQ(OpSequence(after), OpSequence(g));
  EXPECT_TRUE(ExplainedAs(ctx, "not a constant"));
  EXPECT_TRUE(ExplainedAs(ctx, "does not broadcast to the product"));
  EXPECT_TRUE(ExplainedAs(ctx, "output has other uses"));
  EXPECT_TRUE(ExplainedAs(ctx, "non-constant C"));
  EXPECT_TRUE(ExplainedAs(ctx, "not a float type"));
}

// ---------------------------------------------------------------- fuse-activation

struct FormCase {
  std::string name;
  ActivationSpec want;
  std::function<Value*(Builder&, Value*)> apply;
};

std::vector<FormCase> FormCases() {
  return {
      {"Relu", {Activation::kRelu}, [](Builder& b, Value* x) { return b.Op(OpKind::kRelu, {x}); }},
      {"Clip", {Activation::kClip, 0, 6}, [](Builder& b, Value* x) { return b.Op(OpKind::kClip, {x, b.Scalar(0), b.Scalar(6)}); }},
      {"Clip", {Activation::kClip, -1, INFINITY}, [](Builder& b, Value* x) { return b.Op(OpKind::kClip, {x, b.Scalar(-1)}); }},
      {"LeakyRelu", {Activation::kLeakyRelu, 0.2f, 0}, [](Builder& b, Value* x) { return b.Op(OpKind::kLeakyRelu, {x}, A({{"alpha", 0.2f}})); }},
      {"HardSigmoid", {Activation::kHardSigmoid, 0.3f, 0.4f},
       [](Builder& b, Value* x) { return b.Op(OpKind::kHardSigmoid, {x}, A({{"alpha", 0.3f}, {"beta", 0.4f}})); }},
      {"HardSwish", {Activation::kHardSwish}, [](Builder& b, Value* x) { return b.Op(OpKind::kHardSwish, {x}); }},
      {"x*HardSigmoid(x)", {Activation::kHardSwish},
       [](Builder& b, Value* x) {
         return b.Op(OpKind::kMul, {b.Op(OpKind::kHardSigmoid, {x}, A({{"alpha", 1.0f / 6}, {"beta", 0.5f}})), x});
       }},
      {"x*Sigmoid(x)", {Activation::kSilu}, [](Builder& b, Value* x) { return b.Op(OpKind::kMul, {x, b.Op(OpKind::kSigmoid, {x})}); }},
      {"Gelu", {Activation::kGelu}, [](Builder& b, Value* x) { return b.Op(OpKind::kGelu, {x}); }},
      {"Gelu", {Activation::kGeluTanh}, [](Builder& b, Value* x) { return b.Op(OpKind::kGelu, {x}, A({{"approximate", std::string("tanh")}})); }},
      {"Tanh", {Activation::kTanh}, [](Builder& b, Value* x) { return b.Op(OpKind::kTanh, {x}); }},
      {"Sigmoid", {Activation::kSigmoid}, [](Builder& b, Value* x) { return b.Op(OpKind::kSigmoid, {x}); }},
  };
}

TEST(FuseActivation, EveryFormOnEveryProducer) {
  struct Producer {
    std::string name;
    OpKind fused;
    std::function<Value*(Builder&, Value*)> make;
  };
  const std::vector<Producer> producers = {
      {"Conv", OpKind::kFusedConv, [](Builder& b, Value* x) { return b.Conv(x, 2, 3, true, 1, "p"); }},
      {"Gemm", OpKind::kFusedMatMul,
       [](Builder& b, Value* x) {
         return b.Op(OpKind::kGemm, {b.Op(OpKind::kFlatten, {x}), b.Random({3, 32}, 2), b.Random({3}, 3)},
                     A({{"transB", int64_t{1}}, {"beta", 0.5f}}), "p");
       }},
      {"MatMul", OpKind::kFusedMatMul, [](Builder& b, Value* x) { return b.Op(OpKind::kMatMul, {x, b.Random({4, 3}, 4)}, {}, "p"); }},
      {"FusedConv", OpKind::kFusedConv,
       [](Builder& b, Value* x) { return b.Op(OpKind::kFusedConv, {x, b.Random({3, 2, 1, 1}, 5), nullptr, b.Input("r", {2, 3, 4, 4})}, {}, "p"); }},
      {"FusedMatMul", OpKind::kFusedMatMul,
       [](Builder& b, Value* x) { return b.Op(OpKind::kFusedMatMul, {x, b.Random({3, 4}, 6)}, A({{"transB", int64_t{1}}}), "p"); }},
      {"FusedAdd", OpKind::kFusedAdd, [](Builder& b, Value* x) { return b.Op(OpKind::kFusedAdd, {x, b.Random({4}, 7)}, {}, "p"); }},
  };
  for (const Producer& p : producers) {
    for (const FormCase& f : FormCases()) {
      SCOPED_TRACE(p.name + "+" + f.name + " " + ActivationToString(f.want));
      Builder b;
      Value* x = b.Input("x", {2, 2, 4, 4});
      Value* y = f.apply(b, p.make(b, x));
      Graph g = b.Done({y});
      passes::PassContext ctx;
      Graph after = Optimized(g, "fuse-activation", &ctx);
      const Node* fused = OnlyNode(after, p.fused);
      ASSERT_NE(fused, nullptr) << PrintGraph(after);
      EXPECT_EQ(ActivationOf(fused), f.want);
      EXPECT_EQ(fused->output(0)->name(), g.outputs()[0]->name());  // the graph output keeps its name
      EXPECT_EQ(Rewrites(ctx, p.name + "+" + f.name), 1);
      // Every absorbed node is in the provenance.
      for (const Node* n : g.nodes()) {
        if (n->op() != OpKind::kFlatten) {
          EXPECT_TRUE(HasProvenance(fused, {n->name()})) << n->name();
        }
      }
      EXPECT_EQ(after.num_nodes(), p.name == "Gemm" ? 2 : 1) << PrintGraph(after);
    }
  }
}

TEST(FuseActivation, MustNotChange) {
  Builder b;
  Value* x = b.Input("x", {1, 2, 4, 4});
  // (1) the conv output is read by the activation and by someone else.
  Value* c1 = b.Conv(x, 2, 2, true, 1);
  Value* y1 = b.Op(OpKind::kAdd, {b.Op(OpKind::kRelu, {c1}), c1});
  // (2) Clip with a bound computed at run time.
  Value* lo = b.Input("lo", {});
  Value* y2 = b.Op(OpKind::kClip, {b.Conv(x, 2, 2, true, 3), lo});
  // (3) HardSigmoid*x with other parameters is not HardSwish (and x has two readers).
  Value* c3 = b.Conv(x, 2, 2, true, 5);
  Value* y3 = b.Op(OpKind::kMul, {c3, b.Op(OpKind::kHardSigmoid, {c3}, A({{"alpha", 0.2f}, {"beta", 0.5f}}))});
  // (4) an activation after a producer that already activates stays.
  Value* y4 = b.Op(OpKind::kTanh, {b.Op(OpKind::kFusedConv, {x, b.Random({2, 2, 1, 1}, 7)}, A({{"activation", std::string("Relu")}}))});
  // (5) the activation of a graph input, and of a MaxPool.
  Value* y5 = b.Op(OpKind::kRelu, {x});
  Value* y6 = b.Op(OpKind::kRelu, {b.Op(OpKind::kMaxPool, {x}, A({{"kernel_shape", Ints{2, 2}}}))});
  Graph g = b.Done({y1, y2, y3, y4, y5, y6});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-activation", &ctx);
  EXPECT_EQ(OpSequence(after), OpSequence(g));
  EXPECT_TRUE(ExplainedAs(ctx, "output has other uses"));
  EXPECT_TRUE(ExplainedAs(ctx, "Clip min is not a constant"));
  EXPECT_TRUE(ExplainedAs(ctx, "not 1/6 and 1/2"));
  EXPECT_TRUE(ExplainedAs(ctx, "already has activation Relu"));
}

TEST(FuseActivation, SqueezeExciteGateIsNotSilu) {
  // efficientnet's SE block: h * Sigmoid(Conv(Pool(h))): the Sigmoid reads another tensor,
  // so it is fused into its own conv, and the Mul stays.
  Builder b;
  Value* x = b.Input("x", {1, 4, 5, 5});
  Value* h = b.Op(OpKind::kMul, {b.Conv(x, 4, 4, true, 1), b.Op(OpKind::kSigmoid, {b.Conv(x, 4, 4, true, 1)})});
  Value* pooled = b.Op(OpKind::kGlobalAveragePool, {h});
  Value* gate = b.Op(OpKind::kSigmoid, {b.Op(OpKind::kConv, {pooled, b.Random({4, 4, 1, 1}, 3)})});
  Value* y = b.Op(OpKind::kMul, {h, gate});
  Graph g = b.Done({y});
  Graph after = Optimized(g, "cse,fuse-activation");
  // cse merged the two identical convs: Conv -> Sigmoid -> Mul is a SiLU.
  EXPECT_EQ(OpSequence(after), "FusedConv,GlobalAveragePool,FusedConv,Mul");
  std::multiset<Activation> acts;
  for (const Node* n : after.nodes()) {
    if (n->op() == OpKind::kFusedConv) acts.insert(ActivationOf(n).kind);
  }
  EXPECT_EQ(acts, (std::multiset<Activation>{Activation::kSigmoid, Activation::kSilu}));
}

// ---------------------------------------------------------------- fuse-residual-add

TEST(FuseResidualAdd, ResNetBlockBecomesOneFusedConv) {
  // x -> Conv -> BN -> Relu -> Conv -> BN -> Add(x) -> Relu, through the -O2 order.
  Builder b;
  Value* x = b.Input("x", {1, 4, 6, 6});
  Value* h = b.Op(OpKind::kRelu, {b.BatchNorm(b.Conv(x, 4, 4, false, 1, "conv1"), 4, 10, "bn1")}, {}, "relu1");
  Value* s = b.Op(OpKind::kAdd, {b.BatchNorm(b.Conv(h, 4, 4, false, 2, "conv2"), 4, 20, "bn2"), x}, {}, "add");
  Value* y = b.Op(OpKind::kRelu, {s}, {}, "relu2");
  Graph g = b.Done({y});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-conv-bn,fuse-matmul-add,fuse-activation,fuse-residual-add", &ctx);
  EXPECT_EQ(OpSequence(after), "FusedConv,FusedConv");
  const Node* last = after.outputs()[0]->producer();
  EXPECT_EQ(last->input(3), after.inputs()[0]);  // the identity is the residual
  EXPECT_EQ(ActivationOf(last).kind, Activation::kRelu);
  EXPECT_TRUE(HasProvenance(last, {"conv2", "bn2", "add", "relu2"}));
  EXPECT_EQ(Rewrites(ctx, "Conv+Add(residual)"), 1);
  EXPECT_EQ(Rewrites(ctx, "FusedConv+Relu"), 1);
  EXPECT_EQ(after.outputs()[0]->name(), g.outputs()[0]->name());
}

TEST(FuseResidualAdd, MatMulResidualAndFusedAdd) {
  Builder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* r = b.Input("r", {2, 3, 5});
  // FusedMatMul(bias) + Add(r) -> residual, then x*Sigmoid(x) after it.
  Value* fm = b.Op(OpKind::kFusedMatMul, {x, b.Random({4, 5}, 1), b.Random({5}, 2)}, {}, "fmm");
  Value* s = b.Op(OpKind::kAdd, {r, fm}, {}, "add");
  Value* y1 = b.Op(OpKind::kMul, {s, b.Op(OpKind::kSigmoid, {s}, {}, "sig")}, {}, "mul");
  // A plain Add of two inputs + Relu -> FusedAdd.
  Value* y2 = b.Op(OpKind::kRelu, {b.Op(OpKind::kAdd, {x, b.Input("z", {4})}, {}, "add2")}, {}, "relu");
  Graph g = b.Done({y1, y2});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-residual-add", &ctx);
  EXPECT_EQ(after.num_nodes(), 2) << PrintGraph(after);
  const Node* f = after.outputs()[0]->producer();
  EXPECT_EQ(f->input(3), after.FindValue("r"));
  EXPECT_EQ(ActivationOf(f).kind, Activation::kSilu);
  EXPECT_TRUE(HasProvenance(f, {"fmm", "add", "sig", "mul"}));
  const Node* fa = after.outputs()[1]->producer();
  EXPECT_EQ(fa->op(), OpKind::kFusedAdd);
  EXPECT_EQ(ActivationOf(fa).kind, Activation::kRelu);
  EXPECT_EQ(Rewrites(ctx, "Add+Relu"), 1);
}

TEST(FuseResidualAdd, MustNotChange) {
  Builder b;
  Value* x = b.Input("x", {1, 2, 4, 4});
  // (1) the other input broadcasts ([1, 2, 1, 1]) but is not the conv output's shape.
  Value* y1 = b.Op(OpKind::kAdd, {b.Conv(x, 2, 2, true, 1), b.Input("scale", {1, 2, 1, 1})});
  // (2) the conv already activates: act(conv) + r is not act(conv + r).
  Value* y2 = b.Op(OpKind::kAdd, {b.Op(OpKind::kFusedConv, {x, b.Random({2, 2, 1, 1}, 3)}, A({{"activation", std::string("Relu")}})), x});
  // (3) the conv output is also read elsewhere.
  Value* c3 = b.Conv(x, 2, 2, true, 4);
  Value* y3 = b.Op(OpKind::kAdd, {c3, x});
  Value* y3b = b.Op(OpKind::kSigmoid, {c3});
  Graph g = b.Done({y1, y2, y3, y3b});
  passes::PassContext ctx;
  Graph after = Optimized(g, "fuse-residual-add", &ctx);
  EXPECT_EQ(OpSequence(after), OpSequence(g));
  EXPECT_TRUE(ExplainedAs(ctx, "is not exactly the"));
  EXPECT_TRUE(ExplainedAs(ctx, "already has a residual or an activation"));
  EXPECT_TRUE(ExplainedAs(ctx, "output has other uses"));
}

// ---------------------------------------------------------------- unfuse round trip

void ExpectOnlyStandardOps(const Graph& g) {
  for (const Node* n : g.nodes()) EXPECT_FALSE(IsInternalOp(n->op())) << n->Label();
}

void ExpectPassesOnnxChecker(const Graph& g) {
  auto model = onnx_fe::ExportOnnxModel(g);
  ASSERT_TRUE(model.ok()) << model.status().message();
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ONNX checker: " << e.what() << "\n" << PrintGraph(g);
  }
}

TEST(UnfuseEpilogue, EveryActivationRoundTrips) {
  for (const FormCase& f : FormCases()) {
    SCOPED_TRACE(f.name + " " + ActivationToString(f.want));
    Builder b;
    Value* x = b.Input("x", {1, 2, 5, 5});
    Value* c = b.Op(OpKind::kAdd, {b.Conv(x, 2, 2, true, 1, "conv"), x}, {}, "add");
    Value* y1 = f.apply(b, c);
    Value* m = b.Op(OpKind::kGemm, {b.Op(OpKind::kFlatten, {x}), b.Random({50, 3}, 2), b.Random({3}, 3)}, {}, "gemm");
    Value* y2 = f.apply(b, m);
    Value* y3 = f.apply(b, b.Op(OpKind::kAdd, {x, b.Input("z", {5})}));
    Graph g = b.Done({y1, y2, y3});
    Graph fused = Optimized(g, "fuse-matmul-add,fuse-activation,fuse-residual-add");
    EXPECT_EQ(CountOp(fused, OpKind::kFusedConv) + CountOp(fused, OpKind::kFusedMatMul) + CountOp(fused, OpKind::kFusedAdd), 3)
        << PrintGraph(fused);
    Graph lowered = fused.Clone();
    ASSERT_TRUE(RunPasses(lowered, "unfuse").ok());
    ExpectOnlyStandardOps(lowered);
    ExpectSameOutputs(g, lowered, 1e-5);
    ExpectPassesOnnxChecker(lowered);
    for (const Node* n : lowered.nodes()) EXPECT_FALSE(n->provenance.empty());
  }
}

TEST(UnfuseEpilogue, BatchedFusedMatMulLowersToTransposeMatMulMulAdd) {
  Builder b;
  Value* a = b.Input("a", {2, 4, 3});
  Value* r = b.Input("r", {2, 3, 5});
  Value* y = b.Op(OpKind::kFusedMatMul, {a, b.Random({5, 4}, 1), b.Random({5}, 2), r},
                  A({{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.25f},
                     {"activation", std::string("GeluTanh")}}), "fmm");
  Graph g = b.Done({y});
  Graph lowered = g.Clone();
  ASSERT_TRUE(RunPasses(lowered, "unfuse").ok());
  ExpectOnlyStandardOps(lowered);
  EXPECT_EQ(CountOp(lowered, OpKind::kTranspose), 2);
  EXPECT_EQ(CountOp(lowered, OpKind::kMatMul), 1);
  EXPECT_EQ(CountOp(lowered, OpKind::kTanh), 1);
  for (const Node* n : lowered.nodes()) EXPECT_TRUE(HasProvenance(n, {"fmm"}));
  EXPECT_EQ(lowered.outputs()[0]->name(), g.outputs()[0]->name());
  ExpectSameOutputs(g, lowered, 1e-5);
  ExpectPassesOnnxChecker(lowered);
  // Rank 2 becomes one Gemm.
  Builder b2;
  Value* y2 = b2.Op(OpKind::kFusedMatMul, {b2.Input("a", {3, 4}), b2.Random({4, 2}, 3), b2.Random({1, 2}, 4)},
                    A({{"alpha", 3.0f}, {"activation", std::string("Clip")}, {"activation_beta", 0.5f}}));
  Graph g2 = b2.Done({y2});
  Graph lowered2 = g2.Clone();
  ASSERT_TRUE(RunPasses(lowered2, "unfuse").ok());
  EXPECT_EQ(OpSequence(lowered2), "Gemm,Clip");
  ExpectSameOutputs(g2, lowered2, 1e-6);
  ExpectPassesOnnxChecker(lowered2);
}

}  // namespace
}  // namespace edgec
