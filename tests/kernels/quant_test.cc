// QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul, MatMulInteger and
// ConvInteger: per-tensor and per-axis/per-channel parameters, round half to even,
// saturation, zero-point padding, and errors.
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

Tensor ScalarF(float v) { return F32({}, {v}); }

// --- QuantizeLinear ---

TEST(QuantizeLinearTest, PerTensorUint8) {
  // The ONNX docs' example: 3 / 2 = 1.5 rounds to 2.
  Tensor y = Run1(OpKind::kQuantizeLinear,
                  {F32({6}, {0, 2, 3, 1000, -254, -1000}), ScalarF(2), U8({}, {128})});
  ExpectValues(y, DType::kU8, {6}, {128, 129, 130, 255, 1, 0});
}

TEST(QuantizeLinearTest, RoundsHalfToEven) {
  Tensor y =
      Run1(OpKind::kQuantizeLinear, {F32({6}, {1, 3, 5, -1, -3, -5}), ScalarF(2), I8({}, {0})});
  ExpectValues(y, DType::kI8, {6}, {0, 2, 2, 0, -2, -2});
}

TEST(QuantizeLinearTest, SaturatesAndDefaultsToUint8) {
  ExpectValues(Run1(OpKind::kQuantizeLinear, {F32({2}, {300, -300}), ScalarF(1), I8({}, {10})}),
               DType::kI8, {2}, {127, -128});
  ExpectValues(Run1(OpKind::kQuantizeLinear, {F32({3}, {-1, 1, 300}), ScalarF(1)}), DType::kU8, {3},
               {0, 1, 255});
  // int32 input is allowed; 7 / 2 = 3.5 -> 4, -3.5 -> -4.
  ExpectValues(Run1(OpKind::kQuantizeLinear, {I32({2}, {7, -7}), ScalarF(2), I8({1}, {0})}),
               DType::kI8, {2}, {4, -4});
}

TEST(QuantizeLinearTest, PerAxis) {
  const Tensor x = F32({1, 2, 2}, {1, 2, 3, 4});
  const Tensor scale = F32({2}, {1, 2});
  const Tensor zp = U8({2}, {0, 10});
  // axis 1 (default): channel 1 is [3, 4] / 2 + 10 = [1.5 -> 2, 2] + 10.
  ExpectValues(Run1(OpKind::kQuantizeLinear, {x, scale, zp}), DType::kU8, {1, 2, 2},
               {1, 2, 12, 12});
  // axis 2 and -1: the channel is the last index.
  for (int64_t axis : {2, -1}) {
    ExpectValues(Run1(OpKind::kQuantizeLinear, {x, scale, zp}, Attrs({{"axis", axis}})), DType::kU8,
                 {1, 2, 2}, {1, 11, 3, 12});
  }
}

TEST(QuantizeLinearTest, Errors) {
  const Tensor x = F32({1, 2, 2}, {1, 2, 3, 4});
  std::string err = ErrorOf(OpKind::kQuantizeLinear, {x, F32({3}, {1, 1, 1})});
  EXPECT_NE(err.find("QuantizeLinear 'n1': input 1 (scale) f32[3] has 3 entries but X f32[1, 2, 2] "
                     "has 2 along axis 1"),
            std::string::npos)
      << err;
  err = ErrorOf(OpKind::kQuantizeLinear, {x, F32({2}, {1, 1}), U8({3}, {0, 0, 0})});
  EXPECT_NE(err.find("does not match the shape of its scale"), std::string::npos) << err;
  err = ErrorOf(OpKind::kQuantizeLinear, {x, ScalarF(1), I32({}, {0})});
  EXPECT_NE(err.find("dtype i32"), std::string::npos) << err;
  err = ErrorOf(OpKind::kQuantizeLinear, {x, F32({2}, {1, 1})}, Attrs({{"axis", int64_t{3}}}));
  EXPECT_NE(err.find("axis 3 out of range"), std::string::npos) << err;
}

// --- DequantizeLinear ---

TEST(DequantizeLinearTest, PerTensorPerAxisAndInt32) {
  ExpectF32(Run1(OpKind::kDequantizeLinear, {U8({4}, {0, 3, 128, 255}), ScalarF(2), U8({}, {128})}),
            {4}, {-256, -250, 0, 254});
  ExpectF32(Run1(OpKind::kDequantizeLinear,
                 {U8({1, 2, 2}, {1, 2, 3, 4}), F32({2}, {1, 0.5}), U8({2}, {1, 2})}),
            {1, 2, 2}, {0, 1, 0.5, 1});
  ExpectF32(Run1(OpKind::kDequantizeLinear, {I8({2}, {-128, 127}), ScalarF(0.5)}), {2},
            {-64, 63.5});
  ExpectF32(Run1(OpKind::kDequantizeLinear, {I32({2}, {-300, 5}), ScalarF(0.5)}), {2}, {-150, 2.5});
}

TEST(DequantizeLinearTest, Errors) {
  std::string err = ErrorOf(OpKind::kDequantizeLinear, {I32({1}, {1}), ScalarF(1), I32({}, {3})});
  EXPECT_NE(err.find("must be 0 for int32 input, got 3"), std::string::npos) << err;
  err = ErrorOf(OpKind::kDequantizeLinear, {U8({1}, {1}), ScalarF(1), I8({}, {0})});
  EXPECT_NE(err.find("(zero point) has dtype i8, expected u8"), std::string::npos) << err;
}

// --- MatMulInteger ---

TEST(MatMulIntegerTest, ZeroPointsPerTensorRowAndColumn) {
  const Tensor a = U8({2, 2}, {1, 2, 3, 4});
  const Tensor id = U8({2, 2}, {1, 0, 0, 1});
  ExpectValues(Run1(OpKind::kMatMulInteger, {a, id, U8({}, {1})}), DType::kI32, {2, 2},
               {0, 1, 2, 3});
  // Per row of A: rows shift by 1 and 2.
  ExpectValues(Run1(OpKind::kMatMulInteger, {a, id, U8({2}, {1, 2})}), DType::kI32, {2, 2},
               {0, 1, 1, 2});
  // The same as an N-D [M, 1] zero point.
  ExpectValues(Run1(OpKind::kMatMulInteger, {a, id, U8({2, 1}, {1, 2})}), DType::kI32, {2, 2},
               {0, 1, 1, 2});
  // Per column of B: B - zp = [[0, 0], [-1, 1]].
  ExpectValues(Run1(OpKind::kMatMulInteger, {a, id, std::nullopt, U8({2}, {1, 0})}), DType::kI32,
               {2, 2}, {-2, 2, -4, 4});
  // int8 operands.
  ExpectValues(Run1(OpKind::kMatMulInteger,
                    {I8({1, 2}, {-1, 2}), I8({2, 1}, {3, -4}), std::nullopt, I8({}, {-1})}),
               DType::kI32, {1, 1}, {-10});
}

TEST(MatMulIntegerTest, BatchedAndErrors) {
  const Tensor a = U8({2, 1, 2}, {1, 2, 3, 4});
  ExpectValues(Run1(OpKind::kMatMulInteger, {a, U8({2, 1}, {1, 1})}), DType::kI32, {2, 1, 1},
               {3, 7});
  std::string err = ErrorOf(OpKind::kMatMulInteger, {a, U8({3, 1}, {1, 1, 1})});
  EXPECT_NE(err.find("MatMulInteger 'n1': inner dims do not match"), std::string::npos) << err;
  err = ErrorOf(OpKind::kMatMulInteger,
                {U8({2, 2}, {1, 2, 3, 4}), U8({2, 2}, {1, 0, 0, 1}), U8({3}, {1, 2, 3})});
  EXPECT_NE(err.find("one zero point per row"), std::string::npos) << err;
}

// --- QLinearMatMul ---

Inputs QMatMulInputs(Tensor a, float a_scale, Tensor a_zp, Tensor b, Tensor b_scale, Tensor b_zp,
                     float y_scale, Tensor y_zp) {
  return {a, ScalarF(a_scale), a_zp, b, b_scale, b_zp, ScalarF(y_scale), y_zp};
}

TEST(QLinearMatMulTest, RequantizesPerTensorAndPerColumn) {
  // a - 2 = [0, 2] (scale 0.5), b - 1 = [[2, 2], [4, 4]]: int sums [8, 8].
  const Tensor a = U8({1, 2}, {2, 4});
  const Tensor b = U8({2, 2}, {3, 3, 5, 5});
  // 8 * 0.5 * 1 / 0.25 = 16, + 10.
  ExpectValues(Run1(OpKind::kQLinearMatMul, QMatMulInputs(a, 0.5, U8({}, {2}), b, ScalarF(1),
                                                          U8({}, {1}), 0.25, U8({}, {10}))),
               DType::kU8, {1, 2}, {26, 26});
  // Per column of b: scales [1, 0.5] -> [16, 8] + 10.
  ExpectValues(
      Run1(OpKind::kQLinearMatMul, QMatMulInputs(a, 0.5, U8({}, {2}), b, F32({2}, {1, 0.5}),
                                                 U8({}, {1}), 0.25, U8({}, {10}))),
      DType::kU8, {1, 2}, {26, 18});
}

TEST(QLinearMatMulTest, RoundsHalfToEvenAndSaturates) {
  // Int sums [8, 24] times 0.3125 = [2.5, 7.5] -> [2, 8].
  const Tensor a = U8({1, 2}, {2, 4});
  const Tensor b = U8({2, 2}, {3, 3, 5, 13});
  ExpectValues(Run1(OpKind::kQLinearMatMul, QMatMulInputs(a, 0.3125, U8({}, {2}), b, ScalarF(1),
                                                          U8({}, {1}), 1, I8({}, {-128}))),
               DType::kI8, {1, 2}, {-126, -120});
  ExpectValues(Run1(OpKind::kQLinearMatMul, QMatMulInputs(a, 0.3125, U8({}, {2}), b, ScalarF(1),
                                                          U8({}, {1}), 1, I8({}, {127}))),
               DType::kI8, {1, 2}, {127, 127});
}

TEST(QLinearMatMulTest, Errors) {
  const Tensor a = U8({1, 2}, {2, 4});
  const Tensor b = U8({2, 2}, {3, 3, 5, 5});
  const std::string err = ErrorOf(
      OpKind::kQLinearMatMul,
      QMatMulInputs(a, 1, U8({}, {0}), b, F32({3}, {1, 1, 1}), U8({}, {0}), 1, U8({}, {0})));
  EXPECT_NE(
      err.find("input 4 (b_scale) is f32[3], expected a scalar or a vector of the 2 columns of b"),
      std::string::npos)
      << err;
}

// --- ConvInteger ---

TEST(ConvIntegerTest, ZeroPointShiftAndZeroPointPadding) {
  // x - 1 = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]; W = ones 2x2.
  const Tensor x = U8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const Tensor w = U8({1, 1, 2, 2}, {1, 1, 1, 1});
  ExpectValues(Run1(OpKind::kConvInteger, {x, w, U8({}, {1})}), DType::kI32, {1, 1, 2, 2},
               {12, 16, 24, 28});
  // Padding is the zero point, so it adds nothing.
  ExpectValues(Run1(OpKind::kConvInteger, {x, w, U8({}, {1})}, Attrs({{"pads", Ints{1, 1, 1, 1}}})),
               DType::kI32, {1, 1, 4, 4}, {1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9});
}

TEST(ConvIntegerTest, PerChannelWeightZeroPoint) {
  // x - 1 = [3, 5]; W - zp = [3 - 1, 5 - 2] = [2, 3] per output channel.
  ExpectValues(Run1(OpKind::kConvInteger, {U8({1, 1, 1, 2}, {4, 6}), U8({2, 1, 1, 1}, {3, 5}),
                                           U8({}, {1}), U8({2}, {1, 2})}),
               DType::kI32, {1, 2, 1, 2}, {6, 10, 9, 15});
  // Signed operands, no zero points.
  ExpectValues(Run1(OpKind::kConvInteger, {I8({1, 1, 3}, {-1, 2, -3}), I8({1, 1, 2}, {4, -5})}),
               DType::kI32, {1, 1, 2}, {-14, 23});
}

// --- QLinearConv ---

// x - 1 = [3, 5] at scale 0.5; W - zp = [2, 3] per channel; y = 0.25 steps + zero point.
Inputs QConvInputs(Tensor w_scale, Tensor bias, Tensor y_zp) {
  return {U8({1, 1, 1, 2}, {4, 6}),
          ScalarF(0.5),
          U8({}, {1}),
          U8({2, 1, 1, 1}, {3, 5}),
          w_scale,
          U8({2}, {1, 2}),
          ScalarF(0.25),
          y_zp,
          bias};
}

TEST(QLinearConvTest, PerChannelScalesAndBias) {
  // acc = [3*2 + 1, 5*2 + 1] and [3*3 - 1, 5*3 - 1]; multipliers 0.5*1/0.25 = 2 and 0.5*0.5/0.25
  // = 1.
  Tensor y =
      Run1(OpKind::kQLinearConv, QConvInputs(F32({2}, {1, 0.5}), I32({2}, {1, -1}), U8({}, {10})));
  ExpectValues(y, DType::kU8, {1, 2, 1, 2}, {24, 32, 18, 24});
}

TEST(QLinearConvTest, RoundsHalfToEvenAndSaturates) {
  // Channel 0: acc [5, 9] times 0.5*0.25/0.25 = 0.5 -> [2.5, 4.5] -> [2, 4].
  Tensor y = Run1(OpKind::kQLinearConv,
                  QConvInputs(F32({2}, {0.25, 0.5}), I32({2}, {-1, -1}), U8({}, {10})));
  ExpectValues(y, DType::kU8, {1, 2, 1, 2}, {12, 14, 18, 24});
  Tensor sat =
      Run1(OpKind::kQLinearConv, QConvInputs(F32({2}, {1, 0.5}), I32({2}, {1, -1}), U8({}, {240})));
  ExpectValues(sat, DType::kU8, {1, 2, 1, 2}, {254, 255, 248, 254});
}

TEST(QLinearConvTest, Errors) {
  Inputs in = QConvInputs(F32({2}, {1, 1}), I32({2}, {0, 0}), U8({}, {0}));
  in[1] = F32({2}, {1, 1});
  std::string err = ErrorOf(OpKind::kQLinearConv, in);
  EXPECT_NE(err.find("QLinearConv 'n1': input 1 (x_scale) is f32[2], expected a scalar"),
            std::string::npos)
      << err;
  err = ErrorOf(OpKind::kQLinearConv,
                QConvInputs(F32({3}, {1, 1, 1}), I32({2}, {0, 0}), U8({}, {0})));
  EXPECT_NE(err.find("vector of the 2 output channels"), std::string::npos) << err;
  // The conv checks apply too.
  in = QConvInputs(F32({2}, {1, 1}), I32({2}, {0, 0}), U8({}, {0}));
  in[3] = U8({2, 3, 1, 1}, {1, 1, 1, 1, 1, 1});
  err = ErrorOf(OpKind::kQLinearConv, in);
  EXPECT_NE(err.find("channel mismatch"), std::string::npos) << err;
}

}  // namespace
}  // namespace edgec
