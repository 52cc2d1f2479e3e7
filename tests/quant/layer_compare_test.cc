// Per-layer comparison through provenance: a model against itself (no error), against its
// fused -O2 form (matched across fusion), against a copy with one corrupted layer (the jump
// is marked there), and against its QDQ form (finite error at every quantized layer).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/infer.h"
#include "passes/pass.h"
#include "quant/layer_compare.h"
#include "quant/pipeline.h"
#include "runtime/reference_executor.h"

namespace edgec::quant {
namespace {

Tensor Normal(Dims dims, uint32_t seed, float sd) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.f, sd);
  Tensor t(DType::kF32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = n(rng);
  return t;
}

// x -> conv1 -> relu1 -> conv2 -> relu2 -> conv3 -> y; provenance as an importer sets it.
Graph Chain(float conv2_gain = 1.0f) {
  Graph g;
  Value* v = g.AddInput("x", MakeType(DType::kF32, {1, 4, 6, 6}));
  for (int i = 1; i <= 3; ++i) {
    Attributes pad;
    pad.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    Tensor w = Normal({4, 4, 3, 3}, 10 + i, 0.3f);
    if (i == 2)
      for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] *= conv2_gain;
    Node* c = g.AddNode(OpKind::kConv, fmt::format("conv{}", i),
                        {v, g.AddConstant(fmt::format("w{}", i), w), g.AddConstant(fmt::format("b{}", i), Normal({4}, 20 + i, 0.1f))}, 1);
    c->attrs = pad;
    c->provenance = {c->name()};
    v = c->output(0);
    if (i < 3) {
      Node* r = g.AddNode(OpKind::kRelu, fmt::format("relu{}", i), {v}, 1);
      r->provenance = {r->name()};
      v = r->output(0);
    }
  }
  g.MarkOutput(v);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

std::map<std::string, Tensor> Input() { return {{"x", Normal({1, 4, 6, 6}, 3, 1.0f)}}; }

TEST(LayerCompare, SameModelHasNoError) {
  Graph a = Chain(), b = Chain();
  auto r = CompareLayers(a, b, Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->layers.size(), 5u);  // 3 convs, 2 relus
  for (const auto& l : r->layers) {
    EXPECT_EQ(l.max_abs, 0.0) << l.source;
    EXPECT_TRUE(std::isinf(l.sqnr_db));
  }
  EXPECT_EQ(r->first_jump, -1);
}

TEST(LayerCompare, MatchesAcrossFusion) {
  Graph a = Chain(), b = Chain();
  passes::PassContext ctx;
  ctx.evaluator = EvaluateNode;
  ASSERT_TRUE(passes::RunPipeline(b, *passes::ParsePipeline("fuse-activation"), ctx).ok());
  auto r = CompareLayers(a, b, Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  // conv1+relu1 and conv2+relu2 fused: their ends (relu1, relu2) and conv3 match.
  ASSERT_EQ(r->layers.size(), 3u);
  EXPECT_EQ(r->layers[0].source, "relu1");
  EXPECT_EQ(r->layers[1].source, "relu2");
  EXPECT_EQ(r->layers[2].source, "conv3");
  for (const auto& l : r->layers) EXPECT_LT(l.max_abs, 1e-5) << l.source;
}

TEST(LayerCompare, MarksWhereTheErrorJumps) {
  Graph a = Chain(), b = Chain(/*conv2_gain=*/1.2f);
  auto r = CompareLayers(a, b, Input());
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->first_jump, 0);
  EXPECT_EQ(r->layers[r->first_jump].source, "conv2");
  EXPECT_EQ(r->layers[0].max_abs, 0.0);  // conv1 untouched
}

TEST(LayerCompare, QdqFormHasFiniteErrorAtQuantizedLayers) {
  Graph a = Chain(), b = Chain();
  std::vector<Sample> samples;
  for (int i = 0; i < 4; ++i) samples.push_back({{"x", Normal({1, 4, 6, 6}, 50 + i, 1.0f)}});
  auto t = Calibrate(b, samples, {}, {}, false);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(RewriteToQdq(b, *t, {}).ok());
  auto r = CompareLayers(a, b, Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->layers.size(), 5u);
  for (const auto& l : r->layers) {
    EXPECT_TRUE(std::isfinite(l.sqnr_db)) << l.source;
    EXPECT_GT(l.sqnr_db, 15.0) << l.source;
    EXPECT_GT(l.cosine, 0.98) << l.source;
  }
  EXPECT_EQ(r->layers.back().b_op, "DequantizeLinear");
}

}  // namespace

// A B whose nodes share no name or provenance with A's (as after a rewrite that renames
// everything): the graph outputs still pair, so the model's output error is reported.
TEST(LayerCompare, OutputsPairByPosition) {
  Graph a = Chain(), b = Chain(1.5f);
  for (Node* n : b.nodes()) n->provenance = {"renamed/" + n->name()};
  auto r = CompareLayers(a, b, Input());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->layers.size(), 1u);
  EXPECT_EQ(r->layers[0].a_value, a.outputs()[0]->name());
  EXPECT_EQ(r->layers[0].b_value, b.outputs()[0]->name());
  EXPECT_GT(r->layers[0].max_abs, 0.0);  // conv2's gain changes the output
  EXPECT_LT(r->layers[0].cosine, 1.0);
}

}  // namespace edgec::quant
