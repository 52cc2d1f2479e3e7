// A small transformer block in float (what `unfuse` leaves of one: linear layers as MatMul
// + bias Add on 3-d activations, head reshapes and transposes, scores = QKᵀ · 1/√d, softmax,
// AV, and an Erf GELU feed-forward) quantized, rewritten to QDQ and folded: every linear layer
// with its bias (and ReLU) is one QLinearMatMul, the attention MatMuls of two activations are
// QLinearMatMuls too (the score scale absorbed in the output scale), the GELU is one lookup,
// and nothing float remains between the input's Quantize and the output's Dequantize. The
// int8 graph stays close to fp32 and to the QDQ graph's float arithmetic.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/infer.h"
#include "quant/fold_qdq.h"
#include "quant/pipeline.h"
#include "quant/qdq_rewrite.h"
#include "runtime/reference_executor.h"

#include "quant_test_util.h"

namespace edgec::quant {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

constexpr int64_t kS = 8, kD = 16, kH = 2, kF = 32;

Value* Const(Graph& g, const std::string& name, Tensor t) { return g.AddConstant(name, std::move(t)); }
Value* Scalar(Graph& g, const std::string& name, float v) { return g.AddConstant(name, Tensor::Scalar(v)); }

// x -> MatMul(W) -> Add(b) [-> Relu]
Value* Linear(Graph& g, Value* x, int64_t k, int64_t n, uint32_t seed, const std::string& name, bool relu = false) {
  Value* y = Add(g, OpKind::kMatMul, {x, Const(g, name + "_w", Normal({k, n}, seed, 1.0 / std::sqrt(double(k))))}, {},
                 name);
  y = Add(g, OpKind::kAdd, {y, Const(g, name + "_b", Normal({n}, seed + 1, 0.1))}, {}, name + "/bias");
  return relu ? Add(g, OpKind::kRelu, {y}, {}, name + "/relu") : y;
}

Value* Perm(Graph& g, Value* x, Ints perm, const std::string& name) {
  Attributes a;
  a.Set("perm", perm);
  return Add(g, OpKind::kTranspose, {x}, a, name);
}

// Erf GELU: h · (1 + erf(h / √2)) · 0.5, five nodes.
Value* ErfGelu(Graph& g, Value* h) {
  Value* e = Add(g, OpKind::kErf, {Add(g, OpKind::kDiv, {h, Scalar(g, "sqrt2", std::sqrt(2.f))}, {}, "gelu/div")}, {},
                 "gelu/erf");
  Value* one = Add(g, OpKind::kAdd, {e, Scalar(g, "one", 1.f)}, {}, "gelu/add");
  return Add(g, OpKind::kMul, {Add(g, OpKind::kMul, {h, one}, {}, "gelu/mul"), Scalar(g, "half", 0.5f)}, {},
             "gelu/half");
}

Graph Block() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, kS, kD}));
  Value* heads = Const(g, "heads", Tensor::VectorI64({kS, kH, kD / kH}));
  auto split = [&](Value* v, const std::string& n) {
    return Add(g, OpKind::kReshape, {v, heads}, {}, n + "/heads");  // [S, H, dh]
  };
  Value* q = Perm(g, split(Linear(g, x, kD, kD, 10, "q"), "q"), {1, 0, 2}, "q/t");   // [H, S, dh]
  Value* kt = Perm(g, split(Linear(g, x, kD, kD, 20, "k"), "k"), {1, 2, 0}, "k/t");  // [H, dh, S]
  Value* v = Perm(g, split(Linear(g, x, kD, kD, 30, "v"), "v"), {1, 0, 2}, "v/t");   // [H, S, dh]
  Value* s = Add(g, OpKind::kMatMul, {q, kt}, {}, "scores");
  s = Add(g, OpKind::kMul, {s, Scalar(g, "inv_sqrt_d", 1.f / std::sqrt(float(kD / kH)))}, {}, "scaled");
  Attributes last;
  last.Set("axis", int64_t{-1});
  Value* p = Add(g, OpKind::kSoftmax, {s}, last, "probs");
  Value* c = Add(g, OpKind::kMatMul, {p, v}, {}, "context");
  c = Add(g, OpKind::kReshape, {Perm(g, c, {1, 0, 2}, "c/t"), Const(g, "merged", Tensor::VectorI64({1, kS, kD}))}, {},
          "c/merge");
  Value* o = Linear(g, c, kD, kD, 40, "out", /*relu=*/true);
  g.MarkOutput(Linear(g, ErfGelu(g, Linear(g, o, kD, kF, 50, "ff1")), kF, kD, 60, "ff2"));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

std::vector<Sample> Samples(int n, uint32_t seed) {
  std::vector<Sample> s;
  for (int i = 0; i < n; ++i) s.push_back({{"x", Normal({1, kS, kD}, seed + i)}});
  return s;
}

int Count(const Graph& g, OpKind op) {
  int c = 0;
  for (const Node* n : g.nodes()) c += n->op() == op;
  return c;
}

// g calibrated on 8 samples and rewritten to QDQ in place; folded = its integer form.
void QdqAndFold(Graph& g, Graph& folded) {
  auto t = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  folded = g.Clone();
  auto s = FoldQdqToInteger(folded);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
}

TEST(FoldAttention, LinearBiasAttentionAndGeluFoldToIntegerOps) {
  Graph fp = Block();
  Graph g = fp.Clone(), folded;
  ASSERT_NO_FATAL_FAILURE(QdqAndFold(g, folded));
  // 6 linear layers (their bias Adds and the ReLU inside) and the two attention MatMuls.
  EXPECT_EQ(Count(folded, OpKind::kQLinearMatMul), 8);
  EXPECT_EQ(Count(folded, OpKind::kMatMul), 0);
  EXPECT_EQ(Count(folded, OpKind::kAdd), 0);
  EXPECT_EQ(Count(folded, OpKind::kRelu), 0);
  EXPECT_EQ(Count(folded, OpKind::kErf), 0);
  EXPECT_EQ(Count(folded, OpKind::kMul), 0);
  EXPECT_EQ(Count(folded, OpKind::kDiv), 0);
  EXPECT_EQ(Count(folded, OpKind::kQuantizedLookup), 1);  // the GELU
  EXPECT_EQ(Count(folded, OpKind::kQLinearSoftmax), 1);
  // Only the input's Quantize and the output's Dequantize are left.
  EXPECT_EQ(Count(folded, OpKind::kQuantizeLinear), 1);
  EXPECT_EQ(Count(folded, OpKind::kDequantizeLinear), 1);
  int with_bias = 0, from_input = 0;
  for (const Node* n : folded.nodes()) {
    if (n->op() != OpKind::kQLinearMatMul) continue;
    with_bias += n->num_inputs() > 8 && n->input(8);
    from_input += !n->input(3)->is_constant();
  }
  EXPECT_EQ(with_bias, 6);
  EXPECT_EQ(from_input, 2);
  // int8 vs fp32, and vs the QDQ graph's float arithmetic.
  auto vs_fp = CompareOnSamples(fp, folded, Samples(6, 500), false);
  ASSERT_TRUE(vs_fp.ok());
  EXPECT_GT(vs_fp->outputs[0].mean_cosine, 0.98);
  auto vs_qdq = CompareOnSamples(g, folded, Samples(6, 500), false);
  ASSERT_TRUE(vs_qdq.ok());
  EXPECT_GT(vs_qdq->outputs[0].mean_cosine, 0.995);
}

// The score scale is absorbed exactly: the folded scores equal the QDQ graph's quantized
// scaled scores up to one step (the f32 requantization of a product vs a product of two
// roundings), and a scale of 1 (removed) changes them.
TEST(FoldAttention, ScoreScaleMovesIntoTheOutputScale) {
  Graph g = Block();
  auto t = Calibrate(g, Samples(4, 100), {}, {}, false);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  Graph folded = g.Clone();
  ASSERT_TRUE(FoldQdqToInteger(folded).ok());
  auto scores_of = [&](const Graph& graph, bool integer) {
    std::vector<double> v;
    ReferenceExecutor r(graph);
    r.set_node_hook([&](const Node& n, const std::vector<Tensor>& out) {
      const bool is_scores = integer ? n.op() == OpKind::kQLinearMatMul && !n.input(3)->is_constant() && v.empty()
                                     : n.op() == OpKind::kQuantizeLinear && n.input(0)->name() == "scaled:0";
      if (is_scores) v = out[0].ToDoubleVector();
    });
    EXPECT_TRUE(r.Run(Samples(1, 900)[0]).ok());
    return v;
  };
  const std::vector<double> a = scores_of(folded, true), b = scores_of(g, false);
  ASSERT_EQ(a.size(), static_cast<size_t>(kH * kS * kS));
  ASSERT_EQ(a.size(), b.size());
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE(std::abs(a[i] - b[i]), 1) << i;
    differ += a[i] != b[i];
  }
  EXPECT_LT(differ, static_cast<int>(a.size()) / 10);
}

}  // namespace

// GEGLU (a Stable-Diffusion feed-forward): h = Linear(x) sliced in two halves a, b, out =
// a · GELU(b) with the Erf GELU. The GELU island feeds a Mul of two activations, so it is
// quantized at its end: one lookup, and the gate multiply is an integer QLinearMul; nothing
// float is left between the input's Quantize and the output's Dequantize.
Graph Geglu() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, kS, kD}));
  Value* h = Linear(g, x, kD, 2 * kF, 70, "proj");
  // torch exports chunk(2, -1) as two Slices.
  auto half = [&](int64_t begin, const std::string& name) {
    return Add(g, OpKind::kSlice,
               {h, Const(g, name + "_starts", Tensor::VectorI64({begin})),
                Const(g, name + "_ends", Tensor::VectorI64({begin + kF})), Const(g, name + "_axes", Tensor::VectorI64({-1}))},
               {}, name);
  };
  Value* a = half(0, "a");
  Value* b = half(kF, "b");
  Value* gated = Add(g, OpKind::kMul, {a, ErfGelu(g, b)}, {}, "gate");
  g.MarkOutput(Linear(g, gated, kF, kD, 80, "out"));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(FoldAttention, GegluGateIsIntegerAndGeluOneLookup) {
  Graph fp = Geglu();
  Graph g = fp.Clone(), folded;
  ASSERT_NO_FATAL_FAILURE(QdqAndFold(g, folded));
  EXPECT_EQ(Count(folded, OpKind::kQuantizedLookup), 1);  // the GELU
  EXPECT_EQ(Count(folded, OpKind::kQLinearMul), 1);       // the gate
  EXPECT_EQ(Count(folded, OpKind::kErf), 0);
  EXPECT_EQ(Count(folded, OpKind::kMul), 0);
  EXPECT_EQ(Count(folded, OpKind::kDiv), 0);
  EXPECT_EQ(Count(folded, OpKind::kQuantizeLinear), 1);
  EXPECT_EQ(Count(folded, OpKind::kDequantizeLinear), 1);
  auto vs_fp = CompareOnSamples(fp, folded, Samples(6, 500), false);
  ASSERT_TRUE(vs_fp.ok());
  EXPECT_GT(vs_fp->outputs[0].mean_cosine, 0.98);
}

}  // namespace edgec::quant
