// The fold of normalization and softmax islands (fold_qdq.h): DQ → LayerNormalization /
// InstanceNormalization / Softmax / torch's decomposed GroupNorm → Q becomes one integer op
// (Int8Executable fuses the decomposed forms first), whose outputs are within one quantization
// step of the float island's on seeded inputs; and the quantizer puts its points around them.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/infer.h"
#include "quant/pipeline.h"
#include "quant/qdq_rewrite.h"
#include "quant_test_util.h"
#include "runtime/reference_executor.h"

namespace edgec::quant {
namespace {

using testing_quant::Normal;

struct Island {
  Graph g;
  float y_scale = 0;
};

Value* Scalar(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }
Value* ZeroI8(Graph& g, const std::string& n, int v) {
  return g.AddConstant(n, Tensor::FromVector<int8_t>(DType::kI8, {}, {static_cast<int8_t>(v)}));
}
Node* Op(Graph& g, OpKind op, std::vector<Value*> in, const std::string& name, Attributes a = {}) {
  Node* n = g.AddNode(op, name, std::move(in), 1, {name + ":0"});
  n->attrs = std::move(a);
  return n;
}

// x [dims] → Q → DQ → body(·) → Q(y_scale) → DQ → y.
template <typename Body>
Island MakeIsland(const Dims& dims, float x_scale, float y_scale, int y_zp, Body body) {
  Island is;
  Graph& g = is.g;
  is.y_scale = y_scale;
  Value* x = g.AddInput("x", MakeType(DType::kF32, dims));
  Value* sx = Scalar(g, "sx", x_scale);
  Value* zx = ZeroI8(g, "zx", 3);
  Value* q = Op(g, OpKind::kQuantizeLinear, {x, sx, zx}, "xq")->output(0);
  Value* dq = Op(g, OpKind::kDequantizeLinear, {q, sx, zx}, "xdq")->output(0);
  Value* f = body(g, dq);
  Value* sy = Scalar(g, "sy", y_scale);
  Value* zy = ZeroI8(g, "zy", y_zp);
  Value* yq = Op(g, OpKind::kQuantizeLinear, {f, sy, zy}, "yq")->output(0);
  Value* y = Op(g, OpKind::kDequantizeLinear, {yq, sy, zy}, "ydq")->output(0);
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return is;
}

int Count(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

// Folds, checks that `want` replaced the island, and compares on seeded inputs.
void CheckFold(const Island& is, OpKind want, const Dims& dims) {
  auto int8 = Int8Executable(is.g);
  ASSERT_TRUE(int8.ok()) << int8.status().ToString();
  EXPECT_EQ(Count(*int8, want), 1) << OpName(want);
  for (OpKind op : {OpKind::kLayerNormalization, OpKind::kInstanceNormalization, OpKind::kSoftmax,
                    OpKind::kGroupNormalization, OpKind::kQuantizeLinear})
    EXPECT_EQ(Count(*int8, op), op == OpKind::kQuantizeLinear ? 1 : 0) << OpName(op) << " left";
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const std::map<std::string, Tensor> in = {{"x", Normal(dims, seed, 2.0)}};
    auto a = ReferenceExecutor(is.g).Run(in);
    auto b = ReferenceExecutor(*int8).Run(in);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::vector<double> va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
    for (size_t i = 0; i < va.size(); ++i)
      ASSERT_LE(std::abs(va[i] - vb[i]), is.y_scale * 1.001) << OpName(want) << " seed " << seed << " value " << i;
  }
}

Attributes Eps() {
  Attributes a;
  a.Set("epsilon", 1e-5f);
  return a;
}

TEST(FoldNorm, LayerNormIslandBecomesQLinearLayerNormalization) {
  const Dims d = {1, 6, 40};
  Island is = MakeIsland(d, 0.05f, 0.03f, 0, [&](Graph& g, Value* x) {
    Attributes a = Eps();
    a.Set("axis", int64_t{-1});
    return Op(g, OpKind::kLayerNormalization,
              {x, g.AddConstant("gamma", Normal({40}, 9)), g.AddConstant("beta", Normal({40}, 10, 0.2))}, "ln", a)
        ->output(0);
  });
  CheckFold(is, OpKind::kQLinearLayerNormalization, d);
}

TEST(FoldNorm, DecomposedLayerNormIsFusedThenFolded) {
  const Dims d = {1, 5, 32};
  Island is = MakeIsland(d, 0.05f, 0.03f, -4, [&](Graph& g, Value* x) {
    Attributes keep;
    keep.Set("keepdims", int64_t{1});
    Value* axes = g.AddConstant("axes", Tensor::VectorI64({-1}));
    Value* m = Op(g, OpKind::kReduceMean, {x, axes}, "mean", keep)->output(0);
    Value* dd = Op(g, OpKind::kSub, {x, m}, "sub")->output(0);
    Value* p = Op(g, OpKind::kPow, {dd, Scalar(g, "two", 2.f)}, "pow")->output(0);
    Value* v = Op(g, OpKind::kReduceMean, {p, axes}, "var", keep)->output(0);
    Value* e = Op(g, OpKind::kAdd, {v, Scalar(g, "eps", 1e-5f)}, "add_eps")->output(0);
    Value* s = Op(g, OpKind::kSqrt, {e}, "sqrt")->output(0);
    Value* n = Op(g, OpKind::kDiv, {dd, s}, "div")->output(0);
    Value* gm = Op(g, OpKind::kMul, {n, g.AddConstant("gamma", Normal({32}, 3))}, "gamma_mul")->output(0);
    return Op(g, OpKind::kAdd, {gm, g.AddConstant("beta", Normal({32}, 4, 0.1))}, "beta_add")->output(0);
  });
  CheckFold(is, OpKind::kQLinearLayerNormalization, d);
}

TEST(FoldNorm, SoftmaxIslandBecomesQLinearSoftmax) {
  const Dims d = {2, 7, 19};
  Island is = MakeIsland(d, 0.08f, 1.f / 255, -128, [&](Graph& g, Value* x) {
    Attributes a;
    a.Set("axis", int64_t{-1});
    return Op(g, OpKind::kSoftmax, {x}, "softmax", a)->output(0);
  });
  CheckFold(is, OpKind::kQLinearSoftmax, d);
}

TEST(FoldNorm, InstanceNormIsAGroupNormOfOneChannelPerGroup) {
  const Dims d = {1, 4, 5, 6};
  Island is = MakeIsland(d, 0.05f, 0.04f, 2, [&](Graph& g, Value* x) {
    return Op(g, OpKind::kInstanceNormalization, {x, g.AddConstant("s", Normal({4}, 5)), g.AddConstant("b", Normal({4}, 6, 0.3))},
              "in", Eps())
        ->output(0);
  });
  CheckFold(is, OpKind::kQLinearGroupNormalization, d);
}

TEST(FoldNorm, TorchGroupNormIsFusedThenFolded) {
  const Dims d = {1, 8, 4, 5};
  Island is = MakeIsland(d, 0.05f, 0.04f, 0, [&](Graph& g, Value* x) {
    Value* grouped = Op(g, OpKind::kReshape, {x, g.AddConstant("gshape", Tensor::VectorI64({1, 2, -1}))}, "grouped")->output(0);
    Value* ones = g.AddConstant("ones", Tensor::FromVector<float>(DType::kF32, {2}, {1, 1}));
    Value* zeros = g.AddConstant("zeros", Tensor::FromVector<float>(DType::kF32, {2}, {0, 0}));
    Value* n = Op(g, OpKind::kInstanceNormalization, {grouped, ones, zeros}, "in", Eps())->output(0);
    Value* back = Op(g, OpKind::kReshape, {n, g.AddConstant("shape", Tensor::VectorI64({1, 8, 4, 5}))}, "back")->output(0);
    Value* gm = Op(g, OpKind::kMul, {back, g.AddConstant("gamma", Normal({8, 1, 1}, 7))}, "gamma")->output(0);
    return Op(g, OpKind::kAdd, {gm, g.AddConstant("beta", Normal({8, 1, 1}, 8, 0.2))}, "beta")->output(0);
  });
  CheckFold(is, OpKind::kQLinearGroupNormalization, d);
}

// The quantizer quantizes the input and output of a normalization of a quantized value, and
// none of torch's GroupNorm's inside.
TEST(FoldNorm, QuantizerPutsPointsAroundNormalizations) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Value* c = Op(g, OpKind::kConv, {x, g.AddConstant("w", Normal({8, 3, 1, 1}, 1))}, "conv")->output(0);
  Value* grouped = Op(g, OpKind::kReshape, {c, g.AddConstant("gshape", Tensor::VectorI64({1, 2, -1}))}, "grouped")->output(0);
  Value* n = Op(g, OpKind::kInstanceNormalization,
                {grouped, g.AddConstant("ones", Tensor::FromVector<float>(DType::kF32, {2}, {1, 1})),
                 g.AddConstant("zeros", Tensor::FromVector<float>(DType::kF32, {2}, {0, 0}))},
                "in", Eps())
                 ->output(0);
  Value* back = Op(g, OpKind::kReshape, {n, g.AddConstant("shape", Tensor::VectorI64({1, 8, 8, 8}))}, "back")->output(0);
  Value* gm = Op(g, OpKind::kMul, {back, g.AddConstant("gamma", Normal({8, 1, 1}, 7))}, "gamma")->output(0);
  Value* y = Op(g, OpKind::kAdd, {gm, g.AddConstant("beta", Normal({8, 1, 1}, 8))}, "beta")->output(0);
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  const std::vector<std::string> points = QuantizationPoints(g, {});
  EXPECT_EQ(points, (std::vector<std::string>{"x", "conv:0", "beta:0"}));
}

}  // namespace
}  // namespace edgec::quant
