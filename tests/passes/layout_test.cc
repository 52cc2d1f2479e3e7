// The layout pass: transpose cancellation (pairs, sinking through elementwise chains),
// NHWC assignment per region with explicit conversions at its boundary, the cost rule,
// copy-byte accounting by hand, graphs that must not change, and differential checks
// (the reference executor ignores physical layouts, so numbers must be identical).
#include <gtest/gtest.h>

#include "frontend/onnx/exporter.h"
#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

// --- part 1: logical transposes

TEST(LayoutTransposes, InversePairCancels) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* t1 = b.Transpose(x, {1, 0, 2});
  Value* t2 = b.Transpose(t1, {1, 0, 2});
  Graph g = b.Done({b.Op(OpKind::kRelu, {t2}, {}, "relu")});
  Graph before = g.Clone();
  EXPECT_EQ(GraphCopyBytes(g), 2 * 24 * 4);
  auto ctx = RunPasses(g, "layout{to=nchw}");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(OpSequence(g), "Relu");
  EXPECT_EQ(OnlyNode(g, OpKind::kRelu)->input(0)->name(), "x");
  const auto& stats = ctx->records().back().stats;
  EXPECT_EQ(stats.rewrites.at("cancelled Transpose pair"), 1);
  EXPECT_EQ(stats.copy_bytes_removed, 192);  // two Transposes of 24 floats
  ExpectSameOutputs(before, g);
}

TEST(LayoutTransposes, NonInversePairMergesIntoOne) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* t1 = b.Transpose(x, {1, 2, 0});
  Graph g = b.Done({b.Transpose(t1, {1, 2, 0}, "t2")});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "layout{to=nchw}").ok());
  const Node* t = OnlyNode(g, OpKind::kTranspose);
  // out axis i reads t1 axis q[i], which reads x axis p[q[i]]: [p1, p2, p0] = [2, 0, 1].
  EXPECT_EQ(t->attrs.GetInts("perm"), (Ints{2, 0, 1}));
  EXPECT_EQ(g.outputs()[0]->name(), before.outputs()[0]->name());
  EXPECT_EQ(t->provenance.size(), 2u);
  ExpectSameOutputs(before, g);
}

TEST(LayoutTransposes, SinksThroughElementwiseChainAndCancels) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 3, 3});
  Value* t = b.Transpose(x, {0, 2, 3, 1});  // NCHW -> NHWC
  Value* r = b.Op(OpKind::kRelu, {t});
  Value* a = b.Op(OpKind::kAdd, {r, b.Random({4}, 1)});  // a per-channel constant, last axis
  Value* m = b.Op(OpKind::kMul, {a, b.Scalar(0.5f)});
  Graph g = b.Done({b.Transpose(m, {0, 3, 1, 2}, "back")});
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "layout{to=nchw}");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(OpSequence(g), "Relu,Add,Mul");
  EXPECT_EQ(CountOp(g, OpKind::kTranspose), 0);
  // The constant [4] broadcast over the NHWC last axis becomes [1, 4, 1, 1] over NCHW.
  const Node* add = OnlyNode(g, OpKind::kAdd);
  EXPECT_EQ(add->input(1)->type.dims, (Dims{1, 4, 1, 1}));
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("Transpose sunk through elementwise and cancelled"), 1);
  EXPECT_EQ(ctx->records().back().stats.copy_bytes_removed, 2 * 36 * 4);
  ExpectSameOutputs(before, g);
}

TEST(LayoutTransposes, BinaryOfTwoEqualTransposesSinksBoth) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 3, 5});
  Value* y = b.Input("y", {2, 3, 5});
  Value* s = b.Op(OpKind::kSub, {b.Transpose(x, {2, 0, 1}), b.Transpose(y, {2, 0, 1})});
  Graph g = b.Done({b.Transpose(s, {1, 2, 0})});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "layout{to=nchw}").ok());
  EXPECT_EQ(OpSequence(g), "Sub");
  EXPECT_EQ(OnlyNode(g, OpKind::kSub)->input(0)->name(), "x");
  ExpectSameOutputs(before, g);
}

TEST(LayoutTransposes, TransposeFeedingTwoConsumersDoesNotMove) {
  // One reader would cancel the Transpose, the other needs it: nothing changes.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 3, 3});
  Value* t = b.Transpose(x, {0, 2, 3, 1});
  Value* r = b.Op(OpKind::kRelu, {t});
  Value* back = b.Transpose(r, {0, 3, 1, 2});
  Attributes sm;
  sm.Set("axis", int64_t{-1});
  Value* soft = b.Op(OpKind::kSoftmax, {t}, sm);
  Graph g = b.Done({back, soft});
  std::string text = PrintGraph(g);
  auto ctx = RunPasses(g, "layout{to=nchw}", /*explain=*/true);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(PrintGraph(g), text);
  bool said = false;
  for (const auto& e : ctx->explanations()) said |= e.find("has 2 uses") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(LayoutTransposes, ChainEndingInAnotherPermutationDoesNotMove) {
  LayoutBuilder b;
  Value* x = b.Input("x", {2, 3, 4});
  Value* r = b.Op(OpKind::kRelu, {b.Transpose(x, {1, 0, 2})});
  Graph g = b.Done({b.Transpose(r, {2, 1, 0})});
  std::string text = PrintGraph(g);
  ASSERT_TRUE(RunPasses(g, "layout{to=nchw}").ok());
  EXPECT_EQ(PrintGraph(g), text);
}

// --- part 2: NHWC assignment

// image [1, 3, 8, 8] -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm
Graph SmallCnn() {
  LayoutBuilder b;
  Value* x = b.Input("image", {1, 3, 8, 8});
  Value* c = b.Conv(x, 3, 8, 3, 1);
  Value* r = b.Op(OpKind::kRelu, {c}, {}, "relu");
  Value* p = b.Op(OpKind::kGlobalAveragePool, {r}, {}, "gap");
  Value* f = b.Op(OpKind::kFlatten, {p}, {}, "flatten");
  Attributes gemm;
  gemm.Set("transB", int64_t{1});
  return b.Done({b.Op(OpKind::kGemm, {f, b.Random({5, 8}, 2), b.Random({5}, 3)}, gemm, "fc")});
}

TEST(LayoutNhwc, ConvChainNeedsNoConversion) {
  Graph g = SmallCnn();
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "layout");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(CountRelayouts(g), 0);
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("NHWC region"), 1);
  // Conv (3 input channels) reads the row-major image; its output is NHWC [1, 8, 8, 8].
  const Value* conv = OnlyNode(g, OpKind::kConv)->output(0);
  EXPECT_EQ(conv->physical.layout, Layout::kNHWC);
  EXPECT_EQ(conv->physical.padded_dims, (Dims{1, 8, 8, 8}));
  EXPECT_EQ(g.FindValue("image")->physical.layout, Layout::kRowMajor);
  EXPECT_EQ(OnlyNode(g, OpKind::kGlobalAveragePool)->output(0)->physical.layout, Layout::kNHWC);
  // Flatten reads NHWC [1, 8, 1, 1], which is dense row-major: no copy.
  EXPECT_EQ(OnlyNode(g, OpKind::kFlatten)->output(0)->physical.layout, Layout::kRowMajor);
  EXPECT_EQ(GraphCopyBytes(g), 0);
  ExpectSameOutputs(before, g);
}

TEST(LayoutNhwc, AConstantFirstOperandJoinsTheRegion) {
  // PaddleOCR writes a learnable scale as Mul(scale [1], x) and a per-channel bias as
  // Add(b [1, C, 1, 1], x): the activation is the second operand. Both stay inside the conv
  // chain's NHWC region (before, input 0 had to be the activation, and every such Mul cut the
  // region: PP-OCRv4's detector ran row-major with reorders around each conv, 18.4 ms -> 9.3).
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 8, 8});
  Value* c = b.Conv(x, 3, 8, 3, 1);
  Value* m = b.Op(OpKind::kMul, {b.Const(Tensor::FromVector<float>(DType::kF32, {1}, {0.7f})), c});
  Value* a = b.Op(OpKind::kAdd, {b.Random({1, 8, 1, 1}, 9), m});
  Graph g = b.Done({b.Op(OpKind::kFlatten, {b.Op(OpKind::kGlobalAveragePool, {b.Conv(a, 8, 8, 3, 2)})})});
  Graph before = g.Clone();
  auto ctx = RunPasses(g, "layout");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(CountRelayouts(g), 0) << PrintGraph(g);
  EXPECT_EQ(OnlyNode(g, OpKind::kMul)->output(0)->physical.layout, Layout::kNHWC);
  EXPECT_EQ(OnlyNode(g, OpKind::kAdd)->output(0)->physical.layout, Layout::kNHWC);
  ExpectSameOutputs(before, g);
}

// x [1, 8, 4, 4] -> Conv -> c; s = Softmax(c, axis 1); y = Add(c, s)
Graph ConvSoftmaxAdd() {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 4, 4});
  Value* c = b.Conv(x, 8, 8, 3, 1);
  Attributes sm;
  sm.Set("axis", int64_t{1});
  Value* s = b.Op(OpKind::kSoftmax, {c}, sm, "softmax");
  return b.Done({b.Op(OpKind::kAdd, {c, s}, {}, "y_add")});
}

TEST(LayoutNhwc, CostlyRegionStaysRowMajorByDefault) {
  Graph g = ConvSoftmaxAdd();
  std::string text = PrintGraph(g);
  auto ctx = RunPasses(g, "layout", /*explain=*/true);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(PrintGraph(g), text);  // no annotation, no conversion
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("region kept row-major (conversions would copy)"), 1);
  bool said = false;
  for (const auto& e : ctx->explanations()) said |= e.find("conversions would copy 2048 bytes") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(LayoutNhwc, BoundaryCrossingsAreExplicitConversions) {
  Graph g = ConvSoftmaxAdd();
  Graph before = g.Clone();
  std::string out_name = g.outputs()[0]->name();
  // Conv MACs: 8·4·4 outputs × 8·3·3 = 9216; conversions 4 × 512 bytes = 2048 <= 9216.
  auto ctx = RunPasses(g, "layout{max_copy_per_mac=1}");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  // x -> NHWC (Conv has 8 input channels), c -> row-major for Softmax, s -> NHWC for Add,
  // and the graph output y back to row-major.
  EXPECT_EQ(CountRelayouts(g), 4);
  const auto& stats = ctx->records().back().stats;
  EXPECT_EQ(stats.rewrites.at("conversion to NHWC"), 2);
  EXPECT_EQ(stats.rewrites.at("conversion to row-major"), 2);
  EXPECT_EQ(GraphCopyBytes(g), 4 * 8 * 4 * 4 * 4);
  EXPECT_EQ(stats.copy_bytes_removed, -2048);
  for (const Node* n : g.nodes()) {
    if (!IsRelayout(*n)) continue;
    EXPECT_EQ(n->attrs.GetInts("perm"), (Ints{0, 1, 2, 3}));
    EXPECT_NE(SamePlacement(n->input(0)->physical, n->output(0)->physical), true) << n->Label();
  }
  // The graph output keeps its name and is row-major.
  EXPECT_EQ(g.outputs()[0]->name(), out_name);
  EXPECT_EQ(g.outputs()[0]->physical.layout, Layout::kRowMajor);
  EXPECT_TRUE(IsRelayout(*g.outputs()[0]->producer()));
  EXPECT_EQ(OnlyNode(g, OpKind::kSoftmax)->input(0)->physical.layout, Layout::kRowMajor);
  EXPECT_EQ(OnlyNode(g, OpKind::kAdd)->output(0)->physical.layout, Layout::kNHWC);
  ExpectSameOutputs(before, g);

  // eliminate-dead keeps conversions; the exporter drops them (the output gets an Identity).
  ASSERT_TRUE(RunPasses(g, "eliminate-dead").ok());
  EXPECT_EQ(CountRelayouts(g), 4);
  auto proto = onnx_fe::ExportOnnxModel(g);
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  int transposes = 0, identities = 0;
  for (const auto& n : proto->graph().node()) {
    transposes += n.op_type() == "Transpose";
    identities += n.op_type() == "Identity";
  }
  EXPECT_EQ(transposes, 0);
  EXPECT_EQ(identities, 1);
}

TEST(LayoutNhwc, PaddedChannels) {
  Graph g = SmallCnn();
  ASSERT_TRUE(RunPasses(g, "layout{pad_channels=16}").ok());
  const Value* conv = OnlyNode(g, OpKind::kConv)->output(0);
  EXPECT_EQ(conv->physical.layout, Layout::kNHWC);
  EXPECT_EQ(conv->physical.padded_dims, (Dims{1, 8, 8, 16}));
  // The pooled [1, 8, 1, 1] with 16 channel slots still holds its 8 values first and
  // contiguously: Flatten reads it in place.
  EXPECT_EQ(CountRelayouts(g), 0);
  EXPECT_EQ(GraphCopyBytes(g), 0);
  EXPECT_TRUE(Verify(g).ok());
}

TEST(LayoutNhwc, OneChannelOutputIsFree) {
  // A conv chain whose graph output has one channel (a segmentation map): the output's
  // NHWC bytes are its row-major bytes, so its conversion costs nothing, the region goes
  // NHWC at the default budget, and the conversion becomes a view.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 6, 6});
  Value* c = b.Op(OpKind::kRelu, {b.Conv(x, 3, 8, 3, 1)});
  Graph g = b.Done({b.Conv(c, 8, 1, 3, 2)});
  Graph before = g.Clone();
  const std::string out_name = g.outputs()[0]->name();
  auto ctx = RunPasses(g, "layout,views");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_EQ(OnlyNode(g, OpKind::kRelu)->output(0)->physical.layout, Layout::kNHWC);
  // The first conv reads the 3-channel image as it is; the output's conversion is a view.
  EXPECT_EQ(CountRelayouts(g), 1);
  EXPECT_EQ(g.outputs()[0]->name(), out_name);
  EXPECT_TRUE(IsRelayout(*g.outputs()[0]->producer()));
  EXPECT_TRUE(g.outputs()[0]->physical.is_view);
  EXPECT_EQ(GraphCopyBytes(g), 0);
  ExpectSameOutputs(before, g);
}

TEST(LayoutNhwc, ChannelConcatThatWouldBeInPlaceKeepsRowMajor) {
  // Two convolutions concatenated on channels: in place when row-major (views), a copy in
  // NHWC, so the region stays row-major at the default budget.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 6, 6});
  Value* a = b.Op(OpKind::kRelu, {b.Conv(x, 3, 4, 1, 1)});
  Value* c = b.Op(OpKind::kRelu, {b.Conv(x, 3, 4, 3, 2)});
  Attributes cat;
  cat.Set("axis", int64_t{1});
  Graph g = b.Done({b.Conv(b.Op(OpKind::kConcat, {a, c}, cat), 8, 2, 1, 3)});
  auto ctx = RunPasses(g, "layout", true);
  ASSERT_TRUE(ctx.ok());
  EXPECT_EQ(CountRelayouts(g), 0);
  EXPECT_EQ(OnlyNode(g, OpKind::kConcat)->output(0)->physical.layout, Layout::kRowMajor);
  bool said = false;
  for (const auto& e : ctx->explanations()) said |= e.find("would no longer be in place") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(LayoutNhwc, ConcatBudgetIsSeparateFromConversions) {
  // The same graph as above: the Concat's lost in-place placement is charged against
  // max_concat_copy_per_mac only (counted on the fused FusedConv MACs too).
  auto build = [] {
    LayoutBuilder b;
    Value* x = b.Input("x", {1, 3, 6, 6});
    Value* a = b.Op(OpKind::kRelu, {b.Conv(x, 3, 4, 1, 1)});
    Value* c = b.Op(OpKind::kRelu, {b.Conv(x, 3, 4, 3, 2)});
    Attributes cat;
    cat.Set("axis", int64_t{1});
    Value* pooled = b.Op(OpKind::kGlobalAveragePool, {b.Conv(b.Op(OpKind::kConcat, {a, c}, cat), 8, 2, 1, 3)});
    return b.Done({b.Op(OpKind::kFlatten, {pooled})});  // reads NHWC [1, 2, 1, 1] as it is
  };
  // MACs: 4·36·3 + 4·36·27 + 2·36·8 = 4896; the Concat copies 8·36·4 = 1152 bytes (0.235 per MAC).
  for (const auto& [options, nhwc] : std::vector<std::pair<std::string, bool>>{
           {"layout{max_concat_copy_per_mac=0.3}", true},
           {"layout{max_concat_copy_per_mac=0.2}", false},
           {"layout{max_copy_per_mac=0.3}", true},  // the concat budget defaults to it
           {"layout{max_copy_per_mac=0.3;max_concat_copy_per_mac=0}", false},
           {"fuse-activation,layout{max_concat_copy_per_mac=0.3}", true}}) {
    Graph g = build();
    Graph before = g.Clone();
    auto ctx = RunPasses(g, options);
    ASSERT_TRUE(ctx.ok()) << options << ": " << ctx.status().message();
    EXPECT_EQ(OnlyNode(g, OpKind::kConcat)->output(0)->physical.layout, nhwc ? Layout::kNHWC : Layout::kRowMajor)
        << options;
    EXPECT_EQ(CountRelayouts(g), 0) << options;
    ExpectSameOutputs(before, g);
  }
  Graph g = build();
  auto bad = RunPasses(g, "layout{max_concat_copy_per_mac=-1}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("max_concat_copy_per_mac=-1"), std::string::npos) << bad.status().message();
}

TEST(LayoutNhwc, NchwKeepsRowMajorAndBadOptionsFail) {
  Graph g = SmallCnn();
  ASSERT_TRUE(RunPasses(g, "layout{to=nchw}").ok());
  for (const Node* n : g.nodes()) EXPECT_EQ(n->output(0)->physical.layout, Layout::kRowMajor);
  Graph h = SmallCnn();
  auto bad = RunPasses(h, "layout{to=nc16hw16}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nc16hw16"), std::string::npos);
  auto bad_pad = RunPasses(h, "layout{pad_channels=0}");
  ASSERT_FALSE(bad_pad.ok());
  EXPECT_NE(bad_pad.status().message().find("pad_channels"), std::string::npos);
}

TEST(LayoutNhwc, UnknownShapesStayRowMajor) {
  LayoutBuilder b;
  TensorType t = MakeType(DType::kF32, {kUnknownDim, 3, 8, 8});
  Value* x = b.graph().AddInput("x", t);
  Graph g = b.Done({b.Op(OpKind::kRelu, {b.Conv(x, 3, 4, 3, 1)})});
  ASSERT_TRUE(RunPasses(g, "layout").ok());
  for (const Node* n : g.nodes()) EXPECT_EQ(n->output(0)->physical.layout, Layout::kRowMajor);
}

}  // namespace
}  // namespace edgec
