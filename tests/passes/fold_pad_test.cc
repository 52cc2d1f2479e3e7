// fold-pad: a constant Pad of the spatial dims folds into the Conv / AveragePool that reads it
// when they pad with the same value; the reference outputs do not change (exactly); a Pad that
// pads with another value, crops, pads the channels or feeds an op without padding stays.
#include <gtest/gtest.h>

#include "layout_test_util.h"

namespace edgec {
namespace {

using namespace testing_passes;

Value* PadOf(LayoutBuilder& b, Value* x, const Ints& pads, std::optional<float> fill = std::nullopt,
             const std::string& mode = "constant") {
  Attributes a;
  a.Set("mode", mode);
  std::vector<Value*> in = {x, b.Ints1(pads)};
  if (fill) in.push_back(b.Scalar(*fill));
  return b.Op(OpKind::kPad, in, a);
}

TEST(FoldPad, AsymmetricSamePaddingFoldsIntoTheConv) {
  // TensorFlow's "same" at stride 2: one row/column more at the end, before a Conv that pads 1.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 3, 9, 10});
  Value* p = PadOf(b, b.Op(OpKind::kRelu, {x}), {0, 0, 0, 1, 0, 0, 1, 2});
  Graph before = b.Done({b.Conv(p, 3, 4, 3, 1, true, {2, 2})});
  passes::PassContext ctx;
  Graph g = Optimized(before, "fold-pad", &ctx, 0.0);
  EXPECT_EQ(CountOp(g, OpKind::kPad), 0) << PrintGraph(g);
  const Node* conv = OnlyNode(g, OpKind::kConv);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.GetInts("pads"), (Ints{1, 2, 2, 3}));
  EXPECT_EQ(conv->input(0)->producer()->op(), OpKind::kRelu);
  EXPECT_TRUE(HasProvenance(conv, {"Pad2"}));
  EXPECT_EQ(Rewrites(ctx, "pad folded into its reader"), 1);
}

TEST(FoldPad, EveryReaderThatCanTakesIt) {
  // One Pad read by a Conv, an AveragePool counting the pads, an AveragePool that does not,
  // and a Relu: the first two fold, the Pad stays for the others.
  LayoutBuilder b;
  Value* x = b.Input("x", {1, 2, 6, 6});
  Value* p = PadOf(b, x, {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f);
  Attributes counted, uncounted;
  for (Attributes* a : {&counted, &uncounted}) a->Set("kernel_shape", Ints{3, 3});
  counted.Set("count_include_pad", int64_t{1});
  Graph before = b.Done({b.Conv(p, 2, 3, 3, 5), b.Op(OpKind::kAveragePool, {p}, counted),
                         b.Op(OpKind::kAveragePool, {p}, uncounted), b.Op(OpKind::kRelu, {p})});
  passes::PassContext ctx;
  Graph g = Optimized(before, "fold-pad", &ctx, 0.0);
  EXPECT_EQ(CountOp(g, OpKind::kPad), 1);
  EXPECT_EQ(Rewrites(ctx, "pad folded into its reader"), 2);
  EXPECT_TRUE(ExplainedAs(ctx, "count_include_pad = 0"));
  EXPECT_TRUE(ExplainedAs(ctx, "no padding of its own"));
}

TEST(FoldPad, PadsThatAreNotTheReadersOwnStay) {
  struct Case {
    const char* what;
    Ints pads;
    std::optional<float> fill;
    std::string mode;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"fill 1", {0, 0, 1, 1, 0, 0, 1, 1}, 1.0f, "constant", "pads with 0, the Pad with 1"},
      {"reflect", {0, 0, 1, 1, 0, 0, 1, 1}, std::nullopt, "reflect", "not a constant pad"},
      {"channels", {0, 1, 1, 1, 0, 0, 1, 1}, std::nullopt, "constant", "pads the batch or channel dim"},
      {"crop", {0, 0, -1, 0, 0, 0, 1, 1}, std::nullopt, "constant", "a negative pad (a crop)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    LayoutBuilder b;
    Value* x = b.Input("x", {1, 2, 6, 6});
    Value* p = PadOf(b, x, c.pads, c.fill, c.mode);
    const int64_t ch = c.pads[1] + 2;
    Graph before = b.Done({b.Conv(p, ch, 3, 3, 9)});
    passes::PassContext ctx;
    Graph g = Optimized(before, "fold-pad", &ctx, 0.0);
    EXPECT_EQ(CountOp(g, OpKind::kPad), 1);
    EXPECT_TRUE(ExplainedAs(ctx, c.why)) << c.why;
  }
}

TEST(FoldPad, IntegerConvPadsWithTheZeroPoint) {
  // ConvInteger pads with its input zero point: a Pad of that value folds, a Pad of 0 does not.
  for (int fill : {3, 0}) {
    SCOPED_TRACE(fill);
    LayoutBuilder b;
    Value* x = b.Input("x", {1, 2, 5, 5}, DType::kU8);
    Tensor f(DType::kU8, {});
    f.data<uint8_t>()[0] = static_cast<uint8_t>(fill);
    Attributes pa;
    pa.Set("mode", std::string("constant"));
    Value* p = b.Op(OpKind::kPad, {x, b.Ints1({0, 0, 1, 0, 0, 0, 0, 1}), b.Const(f)}, pa);
    Tensor w(DType::kU8, {3, 2, 3, 3});
    for (int64_t i = 0; i < w.numel(); ++i) w.data<uint8_t>()[i] = static_cast<uint8_t>((i * 37) % 251);
    Tensor zp(DType::kU8, {});
    zp.data<uint8_t>()[0] = 3;
    Attributes ca;
    ca.Set("kernel_shape", Ints{3, 3});
    Graph before = b.Done({b.Op(OpKind::kConvInteger, {p, b.Const(w), b.Const(zp)}, ca)});
    Graph g = Optimized(before, "fold-pad", nullptr, 0.0);
    EXPECT_EQ(CountOp(g, OpKind::kPad), fill == 3 ? 0 : 1);
  }
}

}  // namespace
}  // namespace edgec
