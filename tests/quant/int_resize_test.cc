// The integer Resize (quant/int_resize.h): a hand-computed bilinear row, nearest is exact
// selection, and on random 8-bit data the integer form stays within one step of the float
// resize rounded (the fidelity the fixed-point weights cost, measured: mean and worst error).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ir/infer.h"
#include "quant/int_resize.h"
#include "runtime/reference_executor.h"

namespace edgec {
namespace {

// y = Resize(x) to `out` with sizes, as a one-node graph run by the reference executor.
Tensor RunResize(const Tensor& x, const Dims& out, const std::string& mode, const std::string& coord) {
  Graph g;
  Value* in = g.AddInput("x", MakeType(x.dtype(), x.dims()));
  Value* roi = g.AddConstant("roi", Tensor::FromVector<float>(DType::kF32, {0}, {}));
  Value* sizes = g.AddConstant("sizes", Tensor::FromVector<int64_t>(DType::kI64, {4}, out));
  Node* n = g.AddNode(OpKind::kResize, "r", {in, roi, nullptr, sizes}, 1);
  n->attrs.Set("mode", mode);
  n->attrs.Set("coordinate_transformation_mode", coord);
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  auto y = ReferenceExecutor(g).Run({{"x", x}});
  EXPECT_TRUE(y.ok()) << y.status().ToString();
  return y.ok() ? (*y)[0] : Tensor();
}

TEST(IntResize, BilinearRowByHand) {
  // x = (o + 0.5) / 2 - 0.5 for o = 0..3: -0.25, 0.25, 0.75, 1.25 -> 0, 25, 75, 100.
  Tensor x = Tensor::FromVector<uint8_t>(DType::kU8, {1, 1, 1, 2}, {0, 100});
  Tensor y = RunResize(x, {1, 1, 1, 4}, "linear", "half_pixel");
  EXPECT_EQ(y.ToInt64Vector(), (std::vector<int64_t>{0, 25, 75, 100}));
  // Negative values round half up too: i8 -100 .. 100 gives -100, -50, 50, 100.
  Tensor xi = Tensor::FromVector<int8_t>(DType::kI8, {1, 1, 1, 2}, {-100, 100});
  EXPECT_EQ(RunResize(xi, {1, 1, 1, 4}, "linear", "half_pixel").ToInt64Vector(),
            (std::vector<int64_t>{-100, -50, 50, 100}));
}

TEST(IntResize, OnlyNearestAndLinearOverHeightAndWidth) {
  ResizeRules r;
  r.mode = ResizeRules::Mode::kCubic;
  EXPECT_FALSE(quant::PlanIntResize(r, {1, 2, 3, 3}, {1, 2, 6, 6}, {}, {}).ok());
  r.mode = ResizeRules::Mode::kLinear;
  EXPECT_TRUE(quant::PlanIntResize(r, {1, 2, 3, 3}, {1, 2, 6, 6}, {}, {}).ok());
  EXPECT_FALSE(quant::PlanIntResize(r, {1, 2, 3, 3}, {1, 4, 6, 6}, {}, {}).ok());  // C resized
  EXPECT_FALSE(quant::PlanIntResize(r, {2, 3, 3}, {2, 6, 6}, {}, {}).ok());        // not 4-d
  r.coordinate_mode = "tf_crop_and_resize";
  EXPECT_FALSE(quant::PlanIntResize(r, {1, 2, 3, 3}, {1, 2, 6, 6}, {}, {}).ok());
}

TEST(IntResize, WithinOneStepOfTheFloatResize) {
  std::mt19937 rng(5);
  double worst = 0, sum = 0;
  int64_t count = 0;
  for (const char* mode : {"nearest", "linear"}) {
    for (const char* coord : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"}) {
      const Dims in = {1, 3, 1 + static_cast<int64_t>(rng() % 9), 1 + static_cast<int64_t>(rng() % 9)};
      const Dims out = {1, 3, 1 + static_cast<int64_t>(rng() % 20), 1 + static_cast<int64_t>(rng() % 20)};
      Tensor q = *Tensor::Create(DType::kU8, in);
      for (int64_t i = 0; i < q.numel(); ++i) q.data<uint8_t>()[i] = static_cast<uint8_t>(rng());
      const std::vector<double> got = RunResize(q, out, mode, coord).ToDoubleVector();
      const std::vector<double> want = RunResize(q.CastTo(DType::kF32), out, mode, coord).ToDoubleVector();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        const double e = std::fabs(got[i] - want[i]);
        if (std::string(mode) == "nearest") ASSERT_EQ(got[i], want[i]) << coord << " at " << i;
        worst = std::max(worst, e);
        sum += e;
        ++count;
      }
    }
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_LT(sum / count, 0.3);
}

}  // namespace
}  // namespace edgec
