// The views pass and the shared memory model (ir/physical_layout.h): which movement nodes
// become zero-copy views (dense or strided), producers that write a transposed order,
// in-place Concat, channel Pad folded into its producer; copy bytes checked against sums
// by hand; graphs that must not change; reference numbers unchanged.
#include <gtest/gtest.h>

#include <limits>

#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

// --- the memory model

TEST(PhysicalLayout, StridesOfLayouts) {
  TensorType t = MakeType(DType::kF32, {1, 8, 4, 5});
  auto rm = LogicalStrides(t, PhysicalLayout());
  ASSERT_TRUE(rm);
  EXPECT_EQ(*rm, (Strides{160, 20, 5, 1}));
  auto nhwc = LogicalStrides(t, NhwcLayout(t.dims));
  ASSERT_TRUE(nhwc);
  EXPECT_EQ(*nhwc, (Strides{160, 1, 40, 8}));  // C innermost, W stride C, H stride W·C
  auto padded = LogicalStrides(t, NhwcLayout(t.dims, 16));
  EXPECT_EQ(*padded, (Strides{320, 1, 80, 16}));
  PhysicalLayout blocked;
  blocked.layout = Layout::kNC16HW16;
  EXPECT_FALSE(LogicalStrides(t, blocked));
  EXPECT_TRUE(IsDenseRowMajor({1, 8, 1, 1}, {8, 1, 8, 8}));  // NHWC [1, 8, 1, 1]
  EXPECT_FALSE(IsDenseRowMajor({1, 8, 4, 5}, *nhwc));
  EXPECT_TRUE(IsDenseInSomeOrder({1, 8, 4, 5}, *nhwc));
  EXPECT_FALSE(IsDenseInSomeOrder({1, 8, 4, 5}, *padded));
}

// A fuzzed model declared [2^31, 2^31, 2^31, 8]: the element count passes int64. The density
// checks saturate as RowMajorStrides does instead of overflowing (undefined behaviour), so the
// shape reaches the check that refuses it by name.
TEST(PhysicalLayout, DensityOfShapesPastInt64) {
  const int64_t big = int64_t{1} << 31;
  Dims dims{big, big, big, 8};
  Strides rm = RowMajorStrides(dims);
  EXPECT_EQ(rm[0], std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(IsDenseRowMajor(dims, rm));
  EXPECT_TRUE(IsDenseInSomeOrder(dims, rm));
  Strides off = rm;
  off[1] += 8;
  EXPECT_FALSE(IsDenseRowMajor(dims, off));
  EXPECT_FALSE(IsDenseInSomeOrder(dims, off));
}

TEST(PhysicalLayout, ReshapeStrides) {
  // Row-major: always possible, dense.
  auto a = ReshapeStrides({2, 3, 4}, {12, 4, 1}, {6, 4});
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, (Strides{4, 1}));
  // Splitting the last axis of a strided slice (row stride 768): strided result.
  auto b = ReshapeStrides({128, 1, 256}, {768, 768, 1}, {128, 4, 64});
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, (Strides{768, 64, 1}));
  // NHWC [1, 8, 4, 5] to [1, 160]: C is innermost, H·W outer: cannot regroup.
  EXPECT_FALSE(ReshapeStrides({1, 8, 4, 5}, {160, 1, 40, 8}, {1, 160}));
  // ... but H and W merge (W stride C, H stride W·C).
  auto c = ReshapeStrides({1, 8, 4, 5}, {160, 1, 40, 8}, {1, 8, 20});
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)[1], 1);  // C
  EXPECT_EQ((*c)[2], 8);  // H·W, stepping over the channels (a size-1 axis' stride is free)
}

// --- the pass

TEST(Views, RowMajorReshapesAndSize1TransposesAreViews) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 4, 1, 6});
  Value* r = b.Reshape(b.Op(OpKind::kRelu, {x}), {4, 6});
  Value* t = b.Transpose(b.Op(OpKind::kRelu, {x}), {2, 1, 0, 3});  // moves only size-1 axes
  Graph g = b.Done({b.Op(OpKind::kNeg, {r}), b.Op(OpKind::kNeg, {t})});
  Graph before = g.Clone();
  EXPECT_EQ(GraphCopyBytes(g), 24 * 4);  // the Transpose
  auto ctx = RunPasses(g, "views");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  EXPECT_TRUE(OnlyNode(g, OpKind::kReshape)->output(0)->physical.is_view);
  const Value* tv = OnlyNode(g, OpKind::kTranspose)->output(0);
  EXPECT_TRUE(tv->physical.is_view);
  EXPECT_TRUE(tv->physical.strides.empty());  // dense
  EXPECT_EQ(GraphCopyBytes(g), 0);
  EXPECT_EQ(ctx->records().back().stats.copy_bytes_removed, 96);
  ExpectSameOutputs(before, g);
}

TEST(Views, ReshapeOfNhwcReallyMovesData) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 4, 4});
  Value* c = b.Conv(x, 8, 8, 3, 1);
  Value* r = b.Reshape(c, {1, 128});
  Value* p = b.Op(OpKind::kGlobalAveragePool, {c});
  Value* f = b.Op(OpKind::kFlatten, {p});
  Graph g = b.Done({r, f});
  c->physical = NhwcLayout(c->type.dims);
  p->physical = NhwcLayout(p->type.dims);
  Graph before = g.Clone();
  EXPECT_EQ(NodeCopyBytes(*r->producer()), 512);  // NHWC [1, 8, 4, 4] gathered into [1, 128]
  EXPECT_EQ(NodeCopyBytes(*f->producer()), 0);    // NHWC [1, 8, 1, 1] is dense row-major
  auto ctx = RunPasses(g, "views");
  ASSERT_TRUE(ctx.ok());
  EXPECT_FALSE(g.FindValue(r->name())->physical.is_view);
  EXPECT_TRUE(g.FindValue(f->name())->physical.is_view);
  EXPECT_EQ(GraphCopyBytes(g), 512);
  EXPECT_EQ(ctx->records().back().stats.copy_bytes_removed, 0);
  ExpectSameOutputs(before, g);
}

TEST(Views, ARelayoutOfAnNhwcPlacedTransposeSettles) {
  // PP-OCRv4's recognizer: tokens [1, 40, 120] -> Reshape [1, 1, 40, 120] -> Transpose
  // (0, 3, 1, 2) -> [1, 120, 1, 40] for a conv. The Transpose is a strided view whose strides
  // are NHWC's, so the conversion to the conv's NHWC region places elements identically and
  // was proposed as a view; a conv takes no strides, so it was withdrawn, and proposed again,
  // until the analysis gave up ("did not settle").
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 40, 120});
  Value* t = b.Transpose(b.Reshape(b.Op(OpKind::kRelu, {x}), {1, 1, 40, 120}), {0, 3, 1, 2});
  Attributes a;
  a.Set("pads", Ints{0, 1, 0, 1});
  a.Set("kernel_shape", Ints{1, 3});
  Value* c = b.Op(OpKind::kConv, {t, b.Random({16, 120, 1, 3}, 3)}, a);
  Value* c2 = b.Op(OpKind::kConv, {b.Op(OpKind::kRelu, {c}), b.Random({8, 16, 1, 3}, 4)}, a);
  Graph before = b.Done({c2});
  Graph g = before.Clone();
  auto ctx = RunPasses(g, "layout{max_concat_copy_per_mac=1;max_copy_per_mac=1},views");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  ExpectSameOutputs(before, g);
}

TEST(Views, NhwcToNhwcOrderTransposeIsAView) {
  // Transpose (0, 2, 3, 1) of an NHWC value is its memory read as row-major.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 3, 3});
  Value* c = b.Conv(x, 8, 8, 3, 1);
  Graph g = b.Done({b.Op(OpKind::kNeg, {b.Transpose(c, {0, 2, 3, 1})})});
  g.FindValue(c->name())->physical = NhwcLayout({1, 8, 3, 3});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "views").ok());
  const Value* t = OnlyNode(g, OpKind::kTranspose)->output(0);
  EXPECT_TRUE(t->physical.is_view);
  EXPECT_TRUE(IsDenseRowMajor(*t));
  EXPECT_EQ(GraphCopyBytes(g), 0);
  ExpectSameOutputs(before, g);
}

TEST(Views, ProducerWritesTransposedOrder) {
  // MatMul [2, 3, 5] -> Transpose (1, 0, 2) -> Reshape [3, 10]: the MatMul writes with
  // strides that make the Transpose's output dense: then both movements are views.
  LayoutBuilder b;
  Value* a = b.Input("a", {2, 3, 4});
  Value* m = b.Op(OpKind::kMatMul, {a, b.Random({4, 5}, 1)});
  Value* t = b.Transpose(m, {1, 0, 2});
  Graph g = b.Done({b.Op(OpKind::kRelu, {b.Reshape(t, {3, 10})})});
  Graph before = g.Clone();
  EXPECT_EQ(GraphCopyBytes(g), 30 * 4);
  auto ctx = RunPasses(g, "views");
  ASSERT_TRUE(ctx.ok());
  // Transposed output [3, 2, 5] is dense [10, 5, 1]; the MatMul's axis perm[i] gets
  // stride dense[i]: axis 1 -> 10, axis 0 -> 5, axis 2 -> 1.
  const Value* mv = OnlyNode(g, OpKind::kMatMul)->output(0);
  EXPECT_EQ(mv->physical.strides, (Ints{5, 10, 1}));
  EXPECT_FALSE(mv->physical.is_view);
  EXPECT_TRUE(OnlyNode(g, OpKind::kTranspose)->output(0)->physical.is_view);
  EXPECT_TRUE(OnlyNode(g, OpKind::kReshape)->output(0)->physical.is_view);
  EXPECT_EQ(GraphCopyBytes(g), 0);
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("MatMul writes transposed"), 1);
  EXPECT_TRUE(Verify(g).ok());
  ExpectSameOutputs(before, g);
}

TEST(Views, StridedViewsOnlyForReadersThatAcceptThem) {
  // Slice of the last axis: strided [6, 1]. A MatMul reads it in place; a Softmax does not,
  // so that slice stays a copy.
  LayoutBuilder b;
  Value* x = b.Input("x", {4, 6});
  Value* s1 = b.Op(OpKind::kSlice, {x, b.Ints1({0}), b.Ints1({3}), b.Ints1({1})});
  Value* m = b.Op(OpKind::kMatMul, {s1, b.Random({3, 2}, 1)});
  Value* s2 = b.Op(OpKind::kSlice, {x, b.Ints1({3}), b.Ints1({6}), b.Ints1({1})});
  Attributes sm;
  sm.Set("axis", int64_t{-1});
  Value* soft = b.Op(OpKind::kSoftmax, {s2}, sm);
  Graph g = b.Done({m, soft});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "views").ok());
  const Value* v1 = g.FindValue(s1->name());
  const Value* v2 = g.FindValue(s2->name());
  EXPECT_TRUE(v1->physical.is_view);
  EXPECT_EQ(v1->physical.strides, (Ints{6, 1}));
  EXPECT_FALSE(v2->physical.is_view);
  ExpectSameOutputs(before, g);
}

TEST(Views, HeadSplitChainIsStridedViewsIntoTheProjection) {
  // Transformer heads: Slice [128, 1, 768] -> Reshape [128, 4, 64] -> Transpose -> Div.
  LayoutBuilder b;
  Value* x = b.Input("x", {128, 1, 768});
  Value* q = b.Op(OpKind::kSlice, {x, b.Ints1({0}), b.Ints1({256}), b.Ints1({2})});
  Value* t = b.Transpose(b.Reshape(q, {128, 4, 64}), {1, 0, 2});
  Graph g = b.Done({b.Op(OpKind::kDiv, {t, b.Scalar(8.f)})});
  Graph before = g.Clone();
  EXPECT_EQ(GraphCopyBytes(g), 128 * 256 * 4);
  ASSERT_TRUE(RunPasses(g, "views").ok());
  EXPECT_EQ(OnlyNode(g, OpKind::kTranspose)->output(0)->physical.strides, (Ints{64, 768, 1}));
  EXPECT_EQ(GraphCopyBytes(g), 0);
  ExpectSameOutputs(before, g);
}

TEST(Views, SplitAlongOutermostAxisIsDense) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 2, 2});
  Attributes a;
  a.Set("axis", int64_t{1});
  Node* split = b.Node_(OpKind::kSplit, {b.Op(OpKind::kRelu, {x}), b.Ints1({3, 5})}, a, 2);
  Graph g = b.Done({b.Op(OpKind::kNeg, {split->output(0)}), b.Op(OpKind::kNeg, {split->output(1)})});
  Graph before = g.Clone();
  ASSERT_TRUE(RunPasses(g, "views").ok());
  const Node* s = OnlyNode(g, OpKind::kSplit);
  for (const Value* o : s->outputs()) {
    EXPECT_TRUE(o->physical.is_view);
    EXPECT_TRUE(o->physical.strides.empty());
  }
  ExpectSameOutputs(before, g);
}

TEST(Views, ConcatInPlace) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 2, 3, 3});
  Value* a = b.Op(OpKind::kRelu, {x});
  Value* c = b.Op(OpKind::kSigmoid, {x});
  Attributes cat;
  cat.Set("axis", int64_t{1});
  Value* y = b.Op(OpKind::kConcat, {a, c}, cat);
  // Not in place: along H with C > 1 (slots interleave), and with a graph input.
  Attributes cat2;
  cat2.Set("axis", int64_t{2});
  Value* h = b.Op(OpKind::kConcat, {b.Op(OpKind::kNeg, {x}), b.Op(OpKind::kAbs, {x})}, cat2);
  Value* gi = b.Op(OpKind::kConcat, {x, b.Op(OpKind::kExp, {x})}, cat);
  Graph g = b.Done({b.Op(OpKind::kNeg, {y}), b.Op(OpKind::kNeg, {h}), b.Op(OpKind::kNeg, {gi})});
  Graph before = g.Clone();
  EXPECT_EQ(GraphCopyBytes(g), 3 * 36 * 4);
  auto ctx = RunPasses(g, "views");
  ASSERT_TRUE(ctx.ok());
  EXPECT_TRUE(g.FindValue(y->name())->physical.is_view);
  EXPECT_FALSE(g.FindValue(h->name())->physical.is_view);
  EXPECT_FALSE(g.FindValue(gi->name())->physical.is_view);
  EXPECT_EQ(GraphCopyBytes(g), 2 * 36 * 4);
  EXPECT_EQ(ctx->records().back().stats.copy_bytes_removed, 144);
  EXPECT_EQ(ctx->records().back().stats.rewrites.at("Concat in place"), 1);
  ExpectSameOutputs(before, g);
}

TEST(Views, ChannelPadFoldedIntoProducer) {
  // Conv [1, 3, 4, 4] -> Pad channels to 16 (zeros at the end) -> Conv: the first Conv
  // writes 16 channel slots (zero padding), the Pad is a view of that buffer.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 4, 4});
  Value* c = b.Conv(x, 3, 3, 3, 1);
  Value* p = b.Op(OpKind::kPad, {c, b.Ints1({0, 0, 0, 0, 0, 13, 0, 0})});
  Graph g = b.Done({b.Conv(p, 16, 2, 1, 2)});
  Graph before = g.Clone();
  EXPECT_EQ(GraphCopyBytes(g), 16 * 16 * 4);
  auto ctx = RunPasses(g, "views");
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  const Value* cv = g.FindValue(c->name());
  EXPECT_EQ(cv->physical.padded_dims, (Dims{1, 16, 4, 4}));
  EXPECT_TRUE(g.FindValue(p->name())->physical.is_view);
  EXPECT_EQ(GraphCopyBytes(g), 0);
  EXPECT_EQ(ctx->records().back().stats.copy_bytes_removed, 1024);
  EXPECT_TRUE(Verify(g).ok());
  ExpectSameOutputs(before, g);
}

TEST(Views, PadsThatAreNotTrailingZeroChannelsStay) {
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 4, 4});
  Value* c = b.Conv(x, 3, 3, 3, 1);
  Value* spatial = b.Op(OpKind::kPad, {c, b.Ints1({0, 0, 1, 1, 0, 0, 1, 1})});
  Value* c2 = b.Conv(x, 3, 3, 3, 2);
  Value* ones = b.Op(OpKind::kPad, {c2, b.Ints1({0, 0, 0, 0, 0, 5, 0, 0}), b.Scalar(1.f)});
  Graph g = b.Done({spatial, ones});
  ASSERT_TRUE(RunPasses(g, "views").ok());
  EXPECT_FALSE(g.FindValue(spatial->name())->physical.is_view);
  EXPECT_FALSE(g.FindValue(ones->name())->physical.is_view);
  EXPECT_TRUE(g.FindValue(c->name())->physical.padded_dims.empty());
}

TEST(Views, SameLayoutConversionIsAView) {
  // After layout: a conversion of NHWC [1, 8, 1, 1] to row-major moves nothing.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 8, 1, 1});
  Value* r = b.Op(OpKind::kRelu, {x});
  Attributes a;
  a.Set("perm", Ints{0, 1, 2, 3});
  a.Set(std::string(kRelayoutAttr), int64_t{1});
  Value* conv = b.Op(OpKind::kTranspose, {r}, a);
  Graph g = b.Done({b.Op(OpKind::kNeg, {conv})});
  g.FindValue(r->name())->physical = NhwcLayout({1, 8, 1, 1});
  EXPECT_EQ(GraphCopyBytes(g), 32);
  ASSERT_TRUE(RunPasses(g, "views").ok());
  EXPECT_TRUE(g.FindValue(conv->name())->physical.is_view);
  EXPECT_EQ(GraphCopyBytes(g), 0);
}

}  // namespace
}  // namespace edgec
