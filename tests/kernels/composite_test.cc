// The composite family (Gelu, RmsNormalization, Attention): hand-computed cases, the same
// results as the decomposed op sequences on the reference kernels (attribute variants,
// batch broadcasting, masks, dtypes), shape inference at compile time, and errors.
#include "conv_test_util.h"

namespace edgec {
namespace {

using namespace testing_conv;

Tensor Scalar(DType dt, double v) {
  Tensor t(dt, {});
  StoreFromDouble(dt, t.raw(), 0, v);
  return t;
}

// --- Gelu ---

TEST(GeluTest, ErfFormByHand) {
  Tensor y = Run1(OpKind::kGelu, {F32({6}, {-2, -1, 0, 0.5, 1, 3})});
  ExpectF32(y, {6}, {-0.04550026389635842, -0.15865525393145707, 0.0, 0.34573123063700656,
                     0.8413447460685429, 2.99595030590511});
}

TEST(GeluTest, TanhFormByHand) {
  Tensor y = Run1(OpKind::kGelu, {F32({2, 3}, {-2, -1, 0, 0.5, 1, 3})}, Attrs({{"approximate", std::string("tanh")}}));
  ExpectF32(y, {2, 3}, {-0.04540230591222494, -0.15880800939172324, 0.0, 0.34571400982514394,
                        0.8411919906082768, 2.996362607918227});
}

// x * 0.5 * (1 + erf(x / sqrt(2))) and the tanh formula, op by op.
Tensor DecomposedGelu(const Tensor& x, bool tanh_form) {
  const DType dt = x.dtype();
  Tensor inner;
  if (tanh_form) {
    Tensor x3 = Run1(OpKind::kMul, {Run1(OpKind::kMul, {x, x}), x});
    Tensor s = Run1(OpKind::kAdd, {x, Run1(OpKind::kMul, {x3, Scalar(dt, 0.044715)})});
    inner = Run1(OpKind::kTanh, {Run1(OpKind::kMul, {s, Scalar(dt, std::sqrt(2.0 / M_PI))})});
  } else {
    inner = Run1(OpKind::kErf, {Run1(OpKind::kDiv, {x, Scalar(dt, std::sqrt(2.0))})});
  }
  Tensor b = Run1(OpKind::kAdd, {inner, Scalar(dt, 1.0)});
  return Run1(OpKind::kMul, {Run1(OpKind::kMul, {x, b}), Scalar(dt, 0.5)});
}

TEST(GeluTest, MatchesTheDecomposedSequence) {
  for (DType dt : {DType::kF32, DType::kF64}) {
    for (bool tanh_form : {false, true}) {
      Tensor x = Random(dt, {3, 7, 5}, 11);
      for (int64_t i = 0; i < x.numel(); ++i) StoreFromDouble(dt, x.raw(), i, 4 * LoadAsDouble(dt, x.raw(), i));
      Attributes a = Attrs({{"approximate", std::string(tanh_form ? "tanh" : "none")}});
      ExpectClose(Run1(OpKind::kGelu, {x}, a), DecomposedGelu(x, tanh_form), 1e-6);
    }
  }
}

TEST(GeluTest, HalfFloatRoundsOnce) {
  Tensor y = Run1(OpKind::kGelu, {F16({3}, {-1, 0, 1})});
  ExpectValues(y, DType::kF16, {3}, {-0.15865525393145707, 0, 0.8413447460685429}, 1e-3);
}

TEST(GeluTest, Errors) {
  std::string err = ErrorOf(OpKind::kGelu, {F32({2}, {1, 2})}, Attrs({{"approximate", std::string("fast")}}));
  EXPECT_NE(err.find("Gelu 'n1': attribute approximate is 'fast'"), std::string::npos) << err;
  err = ErrorOf(OpKind::kGelu, {I32({2}, {1, 2})});
  EXPECT_NE(err.find("Gelu 'n1'"), std::string::npos) << err;
  EXPECT_NE(err.find("i32"), std::string::npos) << err;
}

// --- RmsNormalization ---

TEST(RmsNormTest, ByHand) {
  // rows [3, 4] and [1, 1]: rms sqrt(12.5) and 1; scale [2, 0.5]; epsilon 0.
  Tensor y = Run1(OpKind::kRmsNormalization, {F32({2, 2}, {3, 4, 1, 1}), F32({2}, {2, 0.5})},
                  Attrs({{"epsilon", 0.0f}}));
  const double r = std::sqrt(12.5);
  ExpectF32(y, {2, 2}, {3 / r * 2, 4 / r * 0.5, 2, 0.5});
}

TEST(RmsNormTest, EpsilonIsAddedToTheMeanSquare) {
  Tensor y = Run1(OpKind::kRmsNormalization, {F32({1, 2}, {1, 1}), F32({}, {1})}, Attrs({{"epsilon", 3.0f}}));
  ExpectF32(y, {1, 2}, {0.5, 0.5});  // 1 / sqrt(1 + 3)
}

// x / sqrt(mean(x*x over axes) + eps) * scale, op by op.
Tensor DecomposedRms(const Tensor& x, const Tensor& scale, std::vector<int64_t> axes, float eps) {
  const DType dt = x.dtype();
  Tensor ms = Run1(OpKind::kReduceMean, {Run1(OpKind::kMul, {x, x}), Tensor::VectorI64(axes)},
                   Attrs({{"keepdims", int64_t{1}}}));
  Tensor rms = Run1(OpKind::kSqrt, {Run1(OpKind::kAdd, {ms, Scalar(dt, eps)})});
  return Run1(OpKind::kMul, {Run1(OpKind::kDiv, {x, rms}), scale});
}

TEST(RmsNormTest, MatchesTheDecomposedSequenceForEveryAxis) {
  for (DType dt : {DType::kF32, DType::kF64}) {
    const Tensor x = Random(dt, {2, 3, 4, 5}, 3);
    for (int64_t axis : {-1, -2, 1, 0}) {
      const int first = axis < 0 ? 4 + static_cast<int>(axis) : static_cast<int>(axis);
      std::vector<int64_t> axes;
      Dims scale_dims;
      for (int d = first; d < 4; ++d) axes.push_back(d), scale_dims.push_back(x.dim(d));
      const Tensor scale = Random(dt, scale_dims, 5);
      Attributes a = Attrs({{"axis", axis}, {"epsilon", 1e-3f}});
      ExpectClose(Run1(OpKind::kRmsNormalization, {x, scale}, a), DecomposedRms(x, scale, axes, 1e-3f), 1e-6);
    }
  }
}

TEST(RmsNormTest, ScaleBroadcastsOverLeadingDims) {
  const Tensor x = Random(DType::kF32, {2, 3, 4}, 8);
  const Tensor scale = Random(DType::kF32, {2, 1, 4}, 9);  // varies over dim 0 as well
  ExpectClose(Run1(OpKind::kRmsNormalization, {x, scale}, Attrs({{"axis", int64_t{1}}})),
              DecomposedRms(x, scale, {1, 2}, 1e-5f), 1e-6);
}

TEST(RmsNormTest, CompileTimeTypes) {
  auto t = InferTypes(OpKind::kRmsNormalization,
                      {MakeType(DType::kF32, {kUnknownDim, 8}), MakeType(DType::kF32, {8})});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)[0].dims, (Dims{kUnknownDim, 8}));
  auto u = InferTypes(OpKind::kRmsNormalization, {UnknownRank(DType::kF32), MakeType(DType::kF32, {8})});
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE((*u)[0].rank_known);
}

TEST(RmsNormTest, Errors) {
  const Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  std::string err = ErrorOf(OpKind::kRmsNormalization, {x, F32({2}, {1, 1})});
  EXPECT_NE(err.find("RmsNormalization 'n1': input 1 (Scale) f32[2] does not broadcast to [2, 3]"), std::string::npos) << err;
  err = ErrorOf(OpKind::kRmsNormalization, {x, F32({3}, {1, 1, 1})}, Attrs({{"axis", int64_t{2}}}));
  EXPECT_NE(err.find("axis"), std::string::npos) << err;
  err = ErrorOf(OpKind::kRmsNormalization, {x, F64({3}, {1, 1, 1})});
  EXPECT_NE(err.find("input 1 has dtype f64"), std::string::npos) << err;
  err = ErrorOf(OpKind::kRmsNormalization, {x});
  EXPECT_NE(err.find("RmsNormalization 'n1'"), std::string::npos) << err;
}

// --- Attention ---

TEST(AttentionTest, ByHand) {
  // One query [1, 0] against keys [1, 0] and [0, 1] (scale 1): scores 1 and 0,
  // weights e/(1+e) and 1/(1+e) over the values [1, 2] and [3, 4].
  const Tensor q = F32({1, 2}, {1, 0});
  const Tensor k = F32({2, 2}, {1, 0, 0, 1});
  const Tensor v = F32({2, 2}, {1, 2, 3, 4});
  const double e = std::exp(1.0), w0 = e / (1 + e), w1 = 1 / (1 + e);
  ExpectF32(Run1(OpKind::kAttention, {q, k, v}, Attrs({{"scale", 1.0f}})), {1, 2}, {w0 + 3 * w1, 2 * w0 + 4 * w1});
  // The default scale is 1/sqrt(2); a mask of -inf on key 0 leaves only value 1.
  const double s = 1 / std::sqrt(2.0), d0 = std::exp(s) / (std::exp(s) + 1), d1 = 1 - d0;
  ExpectF32(Run1(OpKind::kAttention, {q, k, v}), {1, 2}, {d0 + 3 * d1, 2 * d0 + 4 * d1});
  ExpectF32(Run1(OpKind::kAttention, {q, k, v, F32({2}, {-INFINITY, 0})}), {1, 2}, {3, 4});
}

// softmax(Q·Kᵀ·scale + mask)·V, op by op.
Tensor DecomposedAttention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                           bool k_transposed, double scale) {
  Tensor kt = k;
  if (!k_transposed) {
    std::vector<int64_t> perm(k.rank());
    for (int i = 0; i < k.rank(); ++i) perm[i] = i;
    std::swap(perm[k.rank() - 1], perm[k.rank() - 2]);
    kt = Run1(OpKind::kTranspose, {k}, Attrs({{"perm", perm}}));
  }
  Tensor s = Run1(OpKind::kMul, {Run1(OpKind::kMatMul, {q, kt}), Scalar(q.dtype(), scale)});
  if (mask) s = Run1(OpKind::kAdd, {s, *mask});
  Tensor p = Run1(OpKind::kSoftmax, {s}, Attrs({{"axis", int64_t{-1}}}));
  return Run1(OpKind::kMatMul, {p, v});
}

TEST(AttentionTest, MatchesTheDecomposedSequence) {
  struct Case {
    Dims q, k, v;
    std::optional<Dims> mask;
    bool k_transposed;
  };
  const std::vector<Case> cases = {
      {{2, 4, 6, 8}, {2, 4, 5, 8}, {2, 4, 5, 3}, std::nullopt, false},
      {{2, 4, 6, 8}, {2, 4, 8, 5}, {2, 4, 5, 3}, Dims{6, 5}, true},
      // Batch dims broadcast as MatMul: [2, 1] x [3] x [1, 1] -> [2, 3].
      {{2, 1, 6, 8}, {3, 5, 8}, {1, 1, 5, 4}, Dims{2, 1, 1, 5}, false},
      {{7, 8}, {1, 8, 9}, {9, 2}, Dims{1}, true},
  };
  for (DType dt : {DType::kF32, DType::kF64}) {
    for (const Case& c : cases) {
      const Tensor q = Random(dt, c.q, 1), k = Random(dt, c.k, 2), v = Random(dt, c.v, 3);
      std::optional<Tensor> mask;
      if (c.mask) mask = Random(dt, *c.mask, 4);
      Inputs in = {q, k, v};
      if (mask) in.push_back(*mask);
      const double scale = 0.3;
      Tensor got = Run1(OpKind::kAttention, in, Attrs({{"scale", 0.3f}, {"k_transposed", int64_t{c.k_transposed}}}));
      ExpectClose(got, DecomposedAttention(q, k, v, mask ? &*mask : nullptr, c.k_transposed, scale), 1e-6);
    }
  }
}

TEST(AttentionTest, LargeScoresStayFinite) {
  // Scores around 1000: a softmax without the max subtraction overflows.
  const Tensor q = F32({1, 1}, {1000});
  const Tensor k = F32({2, 1}, {1, 0.999f});
  const Tensor v = F32({2, 1}, {1, 0});
  Tensor y = Run1(OpKind::kAttention, {q, k, v}, Attrs({{"scale", 1.0f}}));
  const double d = 1000 * (1 - 0.999f);  // the score difference
  ExpectF32(y, {1, 1}, {1 / (1 + std::exp(-d))});
}

TEST(AttentionTest, CompileTimeTypes) {
  auto t = InferTypes(OpKind::kAttention, {MakeType(DType::kF32, {kUnknownDim, 4, 16, 8}),
                                           MakeType(DType::kF32, {kUnknownDim, 4, 8, 32}),
                                           MakeType(DType::kF32, {kUnknownDim, 4, 32, 8})},
                      Attrs({{"k_transposed", int64_t{1}}}));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)[0].dims, (Dims{kUnknownDim, 4, 16, 8}));
}

TEST(AttentionTest, Errors) {
  const Tensor q = Random(DType::kF32, {2, 3, 4}, 1);
  const Tensor v = Random(DType::kF32, {2, 5, 4}, 2);
  std::string err = ErrorOf(OpKind::kAttention, {q, Random(DType::kF32, {2, 5, 6}, 3), v});
  EXPECT_NE(err.find("Attention 'n1': head dims do not match"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAttention, {q, Random(DType::kF32, {2, 4, 6}, 3), v}, Attrs({{"k_transposed", int64_t{1}}}));
  EXPECT_NE(err.find("key lengths do not match"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAttention, {q, Random(DType::kF32, {2, 5, 4}, 3), v, Random(DType::kF32, {5, 5}, 4)});
  EXPECT_NE(err.find("input 3 (Mask) f32[5, 5] does not broadcast to [2, 3, 5]"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAttention, {Random(DType::kF32, {4}, 1), v, v});
  EXPECT_NE(err.find("input 0 (Q) is f32[4], expected at least 2 dims"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAttention, {q, Random(DType::kF32, {3, 5, 4}, 3), v});
  EXPECT_NE(err.find("do not broadcast"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAttention, {q, Random(DType::kF64, {2, 5, 4}, 3), v});
  EXPECT_NE(err.find("input 1 has dtype f64"), std::string::npos) << err;
  err = ErrorOf(OpKind::kAttention, {q, q}, Attrs({}));
  EXPECT_NE(err.find("Attention 'n1'"), std::string::npos) << err;
}

}  // namespace
}  // namespace edgec
