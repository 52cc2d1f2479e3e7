// Resize: every mode and coordinate transformation on small hand-computed cases, an n-d
// case checked against a closed formula, inference with and without known values, errors.
#include "movement_test_util.h"

namespace edgec {
namespace {

using namespace testing_mv;

Attributes ResizeAttrs(const std::string& mode, const std::string& ctm,
                       const std::string& nearest = "round_prefer_floor") {
  return Attrs({{"mode", mode}, {"coordinate_transformation_mode", ctm}, {"nearest_mode", nearest}});
}

// Resize with the sizes input (roi and scales absent).
Tensor ResizeToSizes(const Tensor& x, std::vector<int64_t> sizes, const Attributes& attrs) {
  return Run1(OpKind::kResize, {x, std::nullopt, std::nullopt, I64s(sizes)}, attrs);
}

TEST(ResizeTest, NearestUpsampleHalfPixel) {
  Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y = Run1(OpKind::kResize, {x, std::nullopt, F32({4}, {1, 1, 2, 3})}, Attrs({{"mode", std::string("nearest")}}));
  ExpectTensor(y, {1, 1, 4, 6},
               {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(ResizeTest, NearestModesAsymmetric) {
  Tensor x = F32({4}, {1, 2, 3, 4});
  // Scale 2: x = o / 2 = 0, .5, 1, 1.5, ...: the modes differ on the halves.
  ExpectTensor(ResizeToSizes(x, {8}, ResizeAttrs("nearest", "asymmetric", "round_prefer_floor")), {8},
               {1, 1, 2, 2, 3, 3, 4, 4});
  ExpectTensor(ResizeToSizes(x, {8}, ResizeAttrs("nearest", "asymmetric", "round_prefer_ceil")), {8},
               {1, 2, 2, 3, 3, 4, 4, 4});
  // Scale 1.5: x = 0, .67, 1.33, 2, 2.67, 3.33.
  ExpectTensor(ResizeToSizes(x, {6}, ResizeAttrs("nearest", "asymmetric", "floor")), {6}, {1, 1, 2, 3, 3, 4});
  ExpectTensor(ResizeToSizes(x, {6}, ResizeAttrs("nearest", "asymmetric", "ceil")), {6}, {1, 2, 3, 3, 4, 4});
  ExpectTensor(ResizeToSizes(x, {6}, ResizeAttrs("nearest", "asymmetric", "round_prefer_floor")), {6},
               {1, 2, 2, 3, 4, 4});
}

TEST(ResizeTest, NearestTfHalfPixelForNn) {
  // x = (o + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75 -> rounded 0, 1, 1, 2 (clamped to 1).
  ExpectTensor(ResizeToSizes(F32({2}, {5, 7}), {4}, ResizeAttrs("nearest", "tf_half_pixel_for_nn")), {4},
               {5, 7, 7, 7});
}

TEST(ResizeTest, BilinearHalfPixel) {
  Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor y = Run1(OpKind::kResize, {x, std::nullopt, F32({4}, {1, 1, 2, 2})}, Attrs({{"mode", std::string("linear")}}));
  ExpectTensor(y, {1, 1, 4, 4},
               {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(ResizeTest, LinearAlignCornersAndPytorchHalfPixel) {
  ExpectTensor(ResizeToSizes(F32({3}, {1, 2, 3}), {5}, ResizeAttrs("linear", "align_corners")), {5},
               {1, 1.5, 2, 2.5, 3});
  // pytorch_half_pixel with one output element samples x = -0.5: the first element.
  ExpectTensor(ResizeToSizes(F32({4}, {3, 5, 7, 9}), {1}, ResizeAttrs("linear", "pytorch_half_pixel")), {1}, {3});
  // With more elements it is half_pixel: x = (o + 0.5) * 2 - 0.5 = 0.5, 2.5.
  ExpectTensor(ResizeToSizes(F32({4}, {3, 5, 7, 9}), {2}, ResizeAttrs("linear", "pytorch_half_pixel")), {2}, {4, 8});
}

TEST(ResizeTest, CubicCoefficientsAndExcludeOutside) {
  Tensor x = F32({4}, {1, 2, 4, 8});
  // Asymmetric, scale 2: x = o / 2. At x = 1.5 the Keys kernel (a = -0.75) weighs
  // taps 0..3 by -0.09375, 0.59375, 0.59375, -0.09375.
  Tensor y = ResizeToSizes(x, {8}, ResizeAttrs("cubic", "asymmetric"));
  ASSERT_EQ(y.dims(), Dims({8}));
  std::vector<float> v = Floats(y);
  EXPECT_FLOAT_EQ(v[0], 1);
  EXPECT_FLOAT_EQ(v[2], 2);  // integer coordinate: the element itself
  EXPECT_NEAR(v[3], -0.09375 * 1 + 0.59375 * 2 + 0.59375 * 4 - 0.09375 * 8, 1e-6);
  // x = 0.5: tap -1 is outside; clamped it reads element 0 ...
  EXPECT_NEAR(v[1], -0.09375 * 1 + 0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4, 1e-6);
  // ... with exclude_outside its weight is dropped and the rest renormalized.
  Attributes ex = ResizeAttrs("cubic", "asymmetric");
  ex.Set("exclude_outside", int64_t{1});
  Tensor z = ResizeToSizes(x, {8}, ex);
  EXPECT_NEAR(Floats(z)[1], (0.59375 * 1 + 0.59375 * 2 - 0.09375 * 4) / (0.59375 + 0.59375 - 0.09375), 1e-6);
  // cubic_coeff_a changes the weights: a = -0.5 gives -0.0625, 0.5625, 0.5625, -0.0625.
  Attributes a = ResizeAttrs("cubic", "asymmetric");
  a.Set("cubic_coeff_a", -0.5f);
  EXPECT_NEAR(Floats(ResizeToSizes(x, {8}, a))[3], -0.0625 * 1 + 0.5625 * 2 + 0.5625 * 4 - 0.0625 * 8, 1e-6);
}

TEST(ResizeTest, CubicAtScaleOneIsIdentity) {
  Tensor x = F32({1, 1, 3, 3}, {0.5f, -1, 2, 7, 3, -4, 1, 0, 9});
  Tensor y = Run1(OpKind::kResize, {x, std::nullopt, F32({4}, {1, 1, 1, 1})}, Attrs({{"mode", std::string("cubic")}}));
  EXPECT_EQ(Floats(y), Floats(x));
}

TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  Tensor x = F32({4}, {0, 1, 2, 3});
  Attributes attrs = ResizeAttrs("linear", "tf_crop_and_resize");
  attrs.Set("extrapolation_value", 10.f);
  // roi [0, 1.5]: x = o * 1.5 * 3 / 3 = 0, 1.5, 3, 4.5; the last is outside [0, 3].
  Tensor y = Run1(OpKind::kResize, {x, F32({2}, {0, 1.5f}), std::nullopt, I64s({4})}, attrs);
  ExpectTensor(y, {4}, {0, 1.5, 3, 10});
  // Outside on one axis of two is enough.
  Tensor m = F32({2, 2}, {1, 2, 3, 4});
  Tensor z = Run1(OpKind::kResize, {m, F32({4}, {0, 0, 1, 2}), std::nullopt, I64s({2, 2})}, attrs);
  // rows x = 0, 1; cols x = 0, 2 (outside).
  ExpectTensor(z, {2, 2}, {1, 10, 3, 10});
}

TEST(ResizeTest, TrilinearOnALinearFunctionIsExact) {
  // f(z, y, x) = 100 z + 10 y + x on a [2, 3, 4] grid, resized to [3, 5, 7] with
  // align_corners: output (k, j, i) samples z = k / 2, y = j / 2, x = i / 2.
  Tensor in(DType::kF32, {2, 3, 4});
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) in.data<float>()[(z * 3 + y) * 4 + x] = 100.f * z + 10.f * y + x;
  Tensor out = ResizeToSizes(in, {3, 5, 7}, ResizeAttrs("linear", "align_corners"));
  ASSERT_EQ(out.dims(), Dims({3, 5, 7}));
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 7; ++i) {
        EXPECT_NEAR(out.data<float>()[(k * 5 + j) * 7 + i], 100 * k / 2.0 + 10 * j / 2.0 + i / 2.0, 1e-4);
      }
}

TEST(ResizeTest, ScalesFloorTheOutputSizeAndEmptyScalesMeanSizes) {
  Tensor x = F32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // 2 * 0.6 = 1.2 -> 1, 4 * 0.6 = 2.4 -> 2; x = (o + .5) / .6 - .5 = 0.33, 2 -> elements 0, 2.
  Tensor y = Run1(OpKind::kResize, {x, std::nullopt, F32({4}, {1, 1, 0.6f, 0.6f})},
                  Attrs({{"mode", std::string("nearest")}}));
  ExpectTensor(y, {1, 1, 1, 2}, {1, 3});
  Tensor z = Run1(OpKind::kResize, {x, F32({0}, {}), F32({0}, {}), I64s({1, 1, 1, 2})},
                  Attrs({{"mode", std::string("nearest")}}));
  EXPECT_EQ(z.dims(), Dims({1, 1, 1, 2}));
}

TEST(ResizeTest, IntegerOutputsRoundToNearestEven) {
  Tensor x = Tensor::FromVector<uint8_t>(DType::kU8, {2}, {0, 10});
  // half_pixel scale 2: x = -0.25, 0.25, 0.75, 1.25 -> 0, 2.5, 7.5, 10.
  Tensor y = ResizeToSizes(x, {4}, ResizeAttrs("linear", "half_pixel"));
  ASSERT_EQ(y.dtype(), DType::kU8);
  ExpectTensor(y, {4}, {0, 2, 8, 10});
}

TEST(ResizeTest, InferenceAndErrors) {
  InferArg x = Unknown(Type(DType::kF32, {1, 3, 8, 8}));
  TensorType t = Infer1(OpKind::kResize, {x, std::nullopt, Unknown(Type(DType::kF32, {4}))});
  EXPECT_EQ(t.dims, Dims({-1, -1, -1, -1}));
  TensorType s = Infer1(OpKind::kResize, {x, std::nullopt, Known(F32({4}, {1, 1, 0.6f, 2}))});
  EXPECT_EQ(s.dims, Dims({1, 3, 4, 16}));
  TensorType z = Infer1(OpKind::kResize, {x, std::nullopt, Unknown(Type(DType::kF32, {0})), Known(I64s({1, 3, 5, 5}))});
  EXPECT_EQ(z.dims, Dims({1, 3, 5, 5}));

  Tensor in = F32({2}, {1, 2});
  auto err = [&](const Inputs& inputs, const Attributes& a = {}) { return RunError(OpKind::kResize, inputs, a); };
  EXPECT_NE(err({in, std::nullopt, F32({1}, {2}), I64s({4})}).find("only one"), std::string::npos);
  EXPECT_NE(err({in}).find("must be given"), std::string::npos);
  EXPECT_NE(err({in, std::nullopt, F32({2}, {1, 2})}).find("rank 1"), std::string::npos);
  EXPECT_NE(err({in, std::nullopt, F32({1}, {0})}).find("not positive"), std::string::npos);
  EXPECT_NE(err({in, std::nullopt, F32({1}, {2})}, Attrs({{"mode", std::string("area")}})).find("mode"),
            std::string::npos);
  EXPECT_NE(err({in, std::nullopt, std::nullopt, I64s({4})}, ResizeAttrs("linear", "tf_crop_and_resize")).find("roi"),
            std::string::npos);
}

}  // namespace
}  // namespace edgec
