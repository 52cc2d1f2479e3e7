// BatchNormalization (inference and training mode), InstanceNormalization and
// LayerNormalization (axis, epsilon, stash_type, Mean/InvStdDev outputs): hand-computed
// cases and errors.
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

const Attributes kNoEpsilon = Attrs({{"epsilon", 0.0f}});

// --- BatchNormalization ---

TEST(BatchNormTest, InferenceModeUsesGivenStatistics) {
  // channel 0: (x - 1) / 1 * 1 + 0;  channel 1: (x - 3) / 2 * 2 + 1
  const Tensor x = F32({1, 2, 1, 2}, {1, 2, 3, 4});
  Tensor y =
      Run1(OpKind::kBatchNormalization,
           {x, F32({2}, {1, 2}), F32({2}, {0, 1}), F32({2}, {1, 3}), F32({2}, {1, 4})}, kNoEpsilon);
  ExpectF32(y, {1, 2, 1, 2}, {0, 1, 1, 2});
}

TEST(BatchNormTest, EpsilonIsAddedToTheVariance) {
  const Tensor x = F32({1, 1, 1}, {2});
  Tensor y = Run1(OpKind::kBatchNormalization,
                  {x, F32({1}, {1}), F32({1}, {0}), F32({1}, {0}), F32({1}, {3})},
                  Attrs({{"epsilon", 1.0f}}));
  ExpectF32(y, {1, 1, 1}, {1});  // 2 / sqrt(3 + 1)
}

TEST(BatchNormTest, TrainingModeUsesBatchStatisticsAndBlendsRunningOnes) {
  // One channel over (N=2, L=2): values 1, 3, 5, 7 -> mean 4, population variance 5.
  const Tensor x = F32({2, 1, 2}, {1, 3, 5, 7});
  auto r = RunOp(OpKind::kBatchNormalization,
                 {x, F32({1}, {1}), F32({1}, {0}), F32({1}, {0}), F32({1}, {1})},
                 Attrs({{"epsilon", 0.0f}, {"training_mode", int64_t{1}}, {"momentum", 0.9f}}), 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double s = std::sqrt(5.0);
  ExpectF32((*r)[0], {2, 1, 2}, {-3 / s, -1 / s, 1 / s, 3 / s});
  ExpectF32((*r)[1], {1}, {0 * 0.9 + 4 * 0.1});
  ExpectF32((*r)[2], {1}, {1 * 0.9 + 5 * 0.1});
}

TEST(BatchNormTest, RankOneInputHasOneChannel) {
  Tensor y = Run1(OpKind::kBatchNormalization,
                  {F32({3}, {1, 2, 3}), F32({1}, {2}), F32({1}, {1}), F32({1}, {2}), F32({1}, {1})},
                  kNoEpsilon);
  ExpectF32(y, {3}, {-1, 1, 3});
}

TEST(BatchNormTest, Errors) {
  const Tensor x = F32({1, 2, 2}, {1, 2, 3, 4});
  const Tensor v2 = F32({2}, {1, 1});
  std::string err = ErrorOf(OpKind::kBatchNormalization, {x, F32({3}, {1, 1, 1}), v2, v2, v2});
  EXPECT_NE(err.find("BatchNormalization 'n1': input 1 (scale)"), std::string::npos) << err;
  EXPECT_NE(err.find("vector of the 2 channels"), std::string::npos) << err;
  err = ErrorOf(OpKind::kBatchNormalization, {x, v2, v2, v2});
  EXPECT_NE(err.find("expected 5 inputs"), std::string::npos) << err;
}

// --- InstanceNormalization ---

TEST(InstanceNormTest, PerSampleAndChannel) {
  // (n0, c0) = [1, 3]: mean 2, var 1;  (n0, c1) = [2, 6]: mean 4, var 4.
  const Tensor x = F32({1, 2, 2}, {1, 3, 2, 6});
  Tensor y =
      Run1(OpKind::kInstanceNormalization, {x, F32({2}, {1, 3}), F32({2}, {0, 10})}, kNoEpsilon);
  ExpectF32(y, {1, 2, 2}, {-1, 1, 10 - 3, 10 + 3});
}

TEST(InstanceNormTest, DefaultEpsilonAndErrors) {
  const Tensor x = F32({1, 1, 2}, {0, 2});  // mean 1, var 1
  Tensor y = Run1(OpKind::kInstanceNormalization, {x, F32({1}, {1}), F32({1}, {0})});
  ExpectF32(y, {1, 1, 2}, {-1 / std::sqrt(1 + 1e-5), 1 / std::sqrt(1 + 1e-5)}, 1e-6);
  const std::string err = ErrorOf(OpKind::kInstanceNormalization,
                                  {F32({2, 2}, {1, 2, 3, 4}), F32({2}, {1, 1}), F32({2}, {0, 0})});
  EXPECT_NE(err.find("expected at least 3"), std::string::npos) << err;
}

// --- LayerNormalization ---

TEST(LayerNormTest, LastAxisWithScaleAndBias) {
  // rows [1, 3] and [2, 6]: means 2 and 4, variances 1 and 4.
  const Tensor x = F32({2, 2}, {1, 3, 2, 6});
  auto r =
      RunOp(OpKind::kLayerNormalization, {x, F32({2}, {2, 3}), F32({2}, {1, 0})}, kNoEpsilon, 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectF32((*r)[0], {2, 2}, {-2 + 1, 3, -2 + 1, 3});
  ExpectF32((*r)[1], {2, 1}, {2, 4});
  ExpectF32((*r)[2], {2, 1}, {1, 0.5});
}

TEST(LayerNormTest, AxisZeroNormalizesEverything) {
  const Tensor x = F32({2, 2}, {1, 3, 2, 6});  // mean 3, var (4 + 0 + 1 + 9) / 4 = 3.5
  auto r = RunOp(OpKind::kLayerNormalization, {x, F32({2, 2}, {1, 1, 1, 1})},
                 Attrs({{"axis", int64_t{0}}, {"epsilon", 0.0f}}), 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double s = std::sqrt(3.5);
  ExpectF32((*r)[0], {2, 2}, {-2 / s, 0, -1 / s, 3 / s});
  ExpectF32((*r)[1], {1, 1}, {3});
  ExpectF32((*r)[2], {1, 1}, {1 / s});
}

TEST(LayerNormTest, NegativeAxisEpsilonAndOneOutput) {
  // axis -2 of (1, 2, 2): normalize each sample's 4 values [0, 2, 4, 6]: mean 3, var 5.
  const Tensor x = F32({1, 2, 2}, {0, 2, 4, 6});
  Tensor y = Run1(OpKind::kLayerNormalization, {x, F32({2, 2}, {1, 1, 1, 1})},
                  Attrs({{"axis", int64_t{-2}}, {"epsilon", 4.0f}}));
  ExpectF32(y, {1, 2, 2}, {-1, -1.0 / 3, 1.0 / 3, 1});  // (x - 3) / sqrt(5 + 4)
}

TEST(LayerNormTest, ScaleBroadcastsAndStashTypeSetsStatisticsDtype) {
  const Tensor x = F64({2, 2}, {1, 3, 2, 6});
  auto r = RunOp(OpKind::kLayerNormalization, {x, F64({1}, {2})},
                 Attrs({{"epsilon", 0.0f}, {"stash_type", int64_t{11}}}), 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectValues((*r)[0], DType::kF64, {2, 2}, {-2, 2, -2, 2});
  ExpectValues((*r)[1], DType::kF64, {2, 1}, {2, 4});
  auto f32_stats = RunOp(OpKind::kLayerNormalization, {x, F64({1}, {2})}, kNoEpsilon, 3);
  ASSERT_TRUE(f32_stats.ok());
  EXPECT_EQ((*f32_stats)[2].dtype(), DType::kF32);
}

TEST(LayerNormTest, Errors) {
  const Tensor x = F32({2, 2}, {1, 3, 2, 6});
  std::string err =
      ErrorOf(OpKind::kLayerNormalization, {x, F32({2}, {1, 1})}, Attrs({{"axis", int64_t{2}}}));
  EXPECT_NE(err.find("LayerNormalization 'n1': attribute axis 2 out of range"), std::string::npos)
      << err;
  err = ErrorOf(OpKind::kLayerNormalization, {x, F32({3}, {1, 1, 1})});
  EXPECT_NE(err.find("input 1 (Scale) f32[3] does not broadcast"), std::string::npos) << err;
  err = ErrorOf(OpKind::kLayerNormalization, {x, F32({2}, {1, 1})},
                Attrs({{"stash_type", int64_t{6}}}));
  EXPECT_NE(err.find("stash_type is 6"), std::string::npos) << err;
  err = ErrorOf(OpKind::kLayerNormalization, {x, F64({2}, {1, 1})});
  EXPECT_NE(err.find("dtype f64"), std::string::npos) << err;
}

}  // namespace
}  // namespace edgec
