// The random family's seed rule (ir/infer_random.cc): the same seed gives the same values on
// every run, another seed other values, no seed the values of seed 0; Bernoulli and
// Multinomial follow their probabilities; the loss family against hand-computed values.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "runtime/reference_executor.h"

namespace edgec {
namespace {

std::vector<double> Eval(OpKind op, std::vector<Tensor> inputs, Attributes a, int outputs = 1, int which = 0) {
  Graph g;
  std::vector<Value*> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(g.AddConstant("in" + std::to_string(i), inputs[i]));
  Node* n = g.AddNode(op, "n", in, outputs);
  n->attrs = std::move(a);
  std::vector<const Tensor*> ptrs;
  for (auto& t : inputs) ptrs.push_back(&t);
  auto out = EvaluateNode(*n, ptrs);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? (*out)[which].ToDoubleVector() : std::vector<double>();
}

Attributes Uniform(float seed, bool with_seed = true) {
  Attributes a;
  a.Set("shape", std::vector<int64_t>{1000});
  a.Set("low", -2.f);
  a.Set("high", 3.f);
  if (with_seed) a.Set("seed", seed);
  return a;
}

TEST(Random, SameSeedSameValuesOtherSeedOthers) {
  auto a = Eval(OpKind::kRandomUniform, {}, Uniform(7.f));
  EXPECT_EQ(a, Eval(OpKind::kRandomUniform, {}, Uniform(7.f)));
  EXPECT_NE(a, Eval(OpKind::kRandomUniform, {}, Uniform(8.f)));
  EXPECT_EQ(Eval(OpKind::kRandomUniform, {}, Uniform(0.f)), Eval(OpKind::kRandomUniform, {}, Uniform(0.f, false)));
  double sum = 0;
  for (double v : a) {
    EXPECT_GE(v, -2.0);
    EXPECT_LT(v, 3.0);
    sum += v;
  }
  EXPECT_NEAR(sum / a.size(), 0.5, 0.2);  // the mean of U(-2, 3) over 1000 draws
}

TEST(Random, NormalHasItsMeanAndScale) {
  Attributes a;
  a.Set("shape", std::vector<int64_t>{4000});
  a.Set("mean", 1.f);
  a.Set("scale", 2.f);
  auto v = Eval(OpKind::kRandomNormal, {}, a);
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s += (x - m) * (x - m);
  EXPECT_NEAR(m, 1.0, 0.15);
  EXPECT_NEAR(std::sqrt(s / v.size()), 2.0, 0.15);
}

TEST(Random, BernoulliFollowsItsProbabilities) {
  Tensor p = Tensor::FromVector<float>(DType::kF32, {6}, {0, 1, 0, 1, 0, 1});
  EXPECT_EQ(Eval(OpKind::kBernoulli, {p}, {}), (std::vector<double>{0, 1, 0, 1, 0, 1}));
  Tensor half(DType::kF32, {2000});
  for (int i = 0; i < 2000; ++i) half.data<float>()[i] = 0.25f;
  double ones = 0;
  for (double v : Eval(OpKind::kBernoulli, {half}, {})) ones += v;
  EXPECT_NEAR(ones / 2000, 0.25, 0.05);
}

TEST(Random, MultinomialPicksOnlyPossibleClasses) {
  // log-probabilities: class 1 only (the others -inf-like).
  Tensor x = Tensor::FromVector<float>(DType::kF32, {2, 3}, {-100, 0, -100, -100, -100, 0});
  Attributes a;
  a.Set("sample_size", int64_t{5});
  EXPECT_EQ(Eval(OpKind::kMultinomial, {x}, a), (std::vector<double>{1, 1, 1, 1, 1, 2, 2, 2, 2, 2}));
}

TEST(Loss, NegativeLogLikelihoodReductionsAndIgnoredTargets) {
  Tensor x = Tensor::FromVector<float>(DType::kF32, {3, 2}, {-1, -2, -3, -4, -5, -6});
  Tensor t = Tensor::FromVector<int64_t>(DType::kI64, {3}, {1, 0, 1});
  Tensor w = Tensor::FromVector<float>(DType::kF32, {2}, {1, 3});
  Attributes none;
  none.Set("reduction", std::string("none"));
  EXPECT_EQ(Eval(OpKind::kNegativeLogLikelihoodLoss, {x, t}, none), (std::vector<double>{2, 3, 6}));
  // mean with weights: (3·2 + 1·3 + 3·6) / (3 + 1 + 3)
  EXPECT_NEAR(Eval(OpKind::kNegativeLogLikelihoodLoss, {x, t, w}, {})[0], 27.0 / 7, 1e-6);
  Attributes ignore;
  ignore.Set("ignore_index", int64_t{0});
  EXPECT_NEAR(Eval(OpKind::kNegativeLogLikelihoodLoss, {x, t}, ignore)[0], (2.0 + 6.0) / 2, 1e-6);
}

TEST(Loss, SoftmaxCrossEntropyIsNllOfLogSoftmax) {
  Tensor x = Tensor::FromVector<float>(DType::kF32, {1, 2}, {0, 0});
  Tensor t = Tensor::FromVector<int64_t>(DType::kI64, {1}, {1});
  EXPECT_NEAR(Eval(OpKind::kSoftmaxCrossEntropyLoss, {x, t}, {}, 2)[0], std::log(2.0), 1e-6);
  EXPECT_NEAR(Eval(OpKind::kSoftmaxCrossEntropyLoss, {x, t}, {}, 2, 1)[1], -std::log(2.0), 1e-6);
}

}  // namespace
}  // namespace edgec
