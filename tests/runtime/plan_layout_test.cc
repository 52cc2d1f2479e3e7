// The CPU plan on graphs whose values the layout and views passes placed in NHWC, as strided
// views, with padded channels, in-place Concats and folded Pads: every plan (fast kernels,
// and reference kernels only) must compute what the reference executor computes on the
// unoptimized graph, and say where it had to stage copies.
#include <gtest/gtest.h>

#include "../passes/layout_test_util.h"
#include "passes/pass.h"
#include "runtime/plan.h"
#include "runtime/reference_executor.h"

namespace edgec {
namespace {

using testing_passes::Ints;
using testing_passes::LayoutBuilder;

void ExpectPlanMatchesReference(const Graph& original, const std::string& pipeline, bool fast,
                                std::vector<std::string>* staged = nullptr) {
  SCOPED_TRACE(pipeline + (fast ? " (fast kernels)" : " (reference kernels)"));
  auto inputs = RandomInputs(original, 11, 1);
  auto want = ReferenceExecutor(original).Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().message();
  Graph g = original.Clone();
  auto p = passes::ParsePipeline(pipeline);
  ASSERT_TRUE(p.ok()) << p.status().message();
  passes::PassContext ctx;
  ctx.evaluator = EvaluateNode;
  Status st = passes::RunPipeline(g, *p, ctx);
  ASSERT_TRUE(st.ok()) << st.message();
  PlanOptions po;
  po.fast_kernels = fast;
  auto plan = Plan::Build(std::move(g), po);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  if (staged) {
    for (const auto& s : (*plan)->steps()) {
      for (const auto& what : s.staged) staged->push_back(s.node->name() + ": " + what);
    }
  }
  PlanExecutor exec(**plan);
  std::vector<Tensor> got;
  for (int rep = 0; rep < 2; ++rep) {  // the second run sees the first run's arena contents
    ASSERT_TRUE(exec.Run(inputs, &got).ok());
    ASSERT_EQ(got.size(), want->size());
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].dims(), (*want)[o].dims());
      const float* a = got[o].data<float>();
      const float* b = (*want)[o].data<float>();
      double worst = 0, scale = 1e-6;
      for (int64_t i = 0; i < got[o].numel(); ++i) {
        worst = std::max(worst, static_cast<double>(std::abs(a[i] - b[i])));
        scale = std::max(scale, static_cast<double>(std::abs(b[i])));
      }
      EXPECT_LE(worst / scale, 1e-5) << "output " << o << " run " << rep;
    }
  }
}

// Conv -> Relu -> Pad(zero channels) -> Conv; Split; Softmax over channels (not NHWC-able);
// Concat of two Convs; Slice; global pool -> Flatten -> Gemm.
Graph Cnn() {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 12, 12});
  Value* c1 = b.Op(OpKind::kRelu, {b.Conv(x, 3, 6, 3, 1)});
  Value* pad = b.Op(OpKind::kPad, {c1, b.Ints1({0, 0, 0, 0, 0, 2, 0, 0})});
  Value* c2 = b.Conv(pad, 8, 8, 3, 2);
  Attributes split;
  split.Set("axis", int64_t{1});
  Node* sp = b.Node_(OpKind::kSplit, {c2, b.Ints1({4, 4})}, split, 2);
  Attributes sm;
  sm.Set("axis", int64_t{1});
  Value* soft = b.Op(OpKind::kSoftmax, {sp->output(0)}, sm);
  Value* c3 = b.Conv(sp->output(1), 4, 4, 1, 3);
  Attributes cat;
  cat.Set("axis", int64_t{1});
  Value* both = b.Op(OpKind::kConcat, {b.Conv(soft, 4, 4, 3, 4), c3}, cat);
  Value* sl = b.Op(OpKind::kSlice, {both, b.Ints1({1, 2}), b.Ints1({7, 11}), b.Ints1({1, 2})});
  Value* gap = b.Op(OpKind::kGlobalAveragePool, {sl});
  Attributes fl;
  fl.Set("axis", int64_t{1});
  Value* flat = b.Op(OpKind::kFlatten, {gap}, fl);
  Value* fc = b.Op(OpKind::kGemm, {flat, b.Random({6, 5}, 9)});
  return b.Done({fc, sl});
}

// Q, K, V projections of one input, heads split by Reshape/Transpose, attention by hand
// (MatMul, scale, Softmax, MatMul), heads merged: strided views into the projection and an
// output written in transposed order.
Graph Heads() {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 16});
  auto heads = [&](uint32_t seed) {
    Value* p = b.Op(OpKind::kMatMul, {x, b.Random({16, 16}, seed)});
    return b.Transpose(b.Reshape(p, {1, 8, 2, 8}), {0, 2, 1, 3});
  };
  Value* q = heads(1);
  Value* k = b.Transpose(heads(2), {0, 1, 3, 2});
  Value* v = heads(3);
  Value* s = b.Op(OpKind::kMul, {b.Op(OpKind::kMatMul, {q, k}), b.Scalar(0.35f)});
  Attributes sm;
  sm.Set("axis", int64_t{-1});
  Value* a = b.Op(OpKind::kMatMul, {b.Op(OpKind::kSoftmax, {s}, sm), v});
  Value* merged = b.Reshape(b.Transpose(a, {0, 2, 1, 3}), {1, 8, 16});
  Value* y = b.Op(OpKind::kRelu, {b.Op(OpKind::kMatMul, {merged, b.Random({16, 16}, 4)})});
  return b.Done({y});
}

TEST(PlanLayouts, CnnThroughLayoutsAndViewsMatchesReference) {
  const Graph g = Cnn();
  for (const std::string pipeline : {"views", "layout,views", "layout{pad_channels=16},views",
                                     "layout{max_copy_per_mac=1},views", "-O3"}) {
    std::string text = pipeline == "-O3" ? passes::NamedPipelineText(3) : pipeline;
    ExpectPlanMatchesReference(g, text, true);
    ExpectPlanMatchesReference(g, text, false);
  }
}

TEST(PlanLayouts, ReferenceKernelsOnNhwcValuesAreStaged) {
  std::vector<std::string> staged;
  ExpectPlanMatchesReference(Cnn(), "layout{max_copy_per_mac=1},views", false, &staged);
  // Reference kernels read row-major: every NHWC input they get is copied first.
  bool nhwc_staged = false;
  for (const auto& s : staged) nhwc_staged |= s.find("nhwc -> row-major") != std::string::npos;
  EXPECT_TRUE(nhwc_staged) << ::testing::PrintToString(staged);
}

TEST(PlanLayouts, AttentionHeadsThroughViewsMatchReference) {
  const Graph g = Heads();
  for (const std::string pipeline : {"views", "fuse-attention,views", "-O3"}) {
    std::string text = pipeline == "-O3" ? passes::NamedPipelineText(3) : pipeline;
    ExpectPlanMatchesReference(g, text, true);
    ExpectPlanMatchesReference(g, text, false);
  }
}

TEST(PlanLayouts, StridedInputToAKernelThatNeedsDenseIsStaged) {
  // A Transpose made a strided view (its reader, an Add, accepts strides) also read by a
  // Relu, which does not: the views pass withdraws such views, so mark it by hand.
  LayoutBuilder b;
  Value* x = b.Input("x", {4, 6});
  Value* t0 = b.Op(OpKind::kRelu, {x});
  Value* t = b.Transpose(t0, {1, 0});
  Value* y = b.Op(OpKind::kSigmoid, {t});
  Graph g = b.Done({y});
  Graph marked = g.Clone();
  for (Node* n : marked.nodes()) {
    if (n->op() == OpKind::kTranspose) {
      n->output(0)->physical = StridedLayout({6, 4}, {1, 6}, /*is_view=*/true);
    }
  }
  auto inputs = RandomInputs(g, 5, 1);
  auto want = ReferenceExecutor(g).Run(inputs);
  ASSERT_TRUE(want.ok());
  for (bool fast : {true, false}) {
    PlanOptions po;
    po.fast_kernels = fast;
    auto plan = Plan::Build(marked.Clone(), po);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    bool staged = false;
    for (const auto& s : (*plan)->steps()) {
      if (s.node->op() == OpKind::kSigmoid) staged = !s.staged.empty() && s.staged[0].starts_with("input 0 strided");
    }
    EXPECT_TRUE(staged);
    EXPECT_GT((*plan)->staged_bytes(), 0);
    PlanExecutor exec(**plan);
    std::vector<Tensor> got;
    ASSERT_TRUE(exec.Run(inputs, &got).ok());
    for (int64_t i = 0; i < got[0].numel(); ++i) EXPECT_FLOAT_EQ(got[0].data<float>()[i], (*want)[0].data<float>()[i]);
  }
}

}  // namespace
}  // namespace edgec
