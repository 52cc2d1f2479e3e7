// Mixed precision with int16 activations (quant/mixed_precision.h): a promoted Softmax /
// LayerNorm gets int16 Q/DQ pairs, folds into the integer op with int16 types (within one int16
// step of its float island), exports as com.microsoft Q/DQ and reads back; the budget fit
// promotes the layer that removes the most error; the partition takes an int16 layer to the
// NPU where the vector cores declare i16 and names why not elsewhere.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "ir/infer.h"
#include "npu/target.h"
#include "partition/partition.h"
#include "quant/mixed_precision.h"
#include "quant/pipeline.h"
#include "quant_test_util.h"
#include "runtime/reference_executor.h"

namespace edgec::quant {
namespace {

using testing_quant::Add;
using testing_quant::Normal;

const Node* First(const Graph& g, OpKind op) {
  for (const Node* n : g.nodes())
    if (n->op() == op) return n;
  return nullptr;
}

// x [1, 12, 48] → MatMul → Softmax → MatMul → LayerNorm → y: sharp attention-like scores (the
// int8 softmax loses the small probabilities) and a normalization after.
Graph AttentionLike() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 12, 48}));
  Value* s = Add(g, OpKind::kMatMul, {x, g.AddConstant("w1", Normal({48, 40}, 1, 0.9))}, {}, "scores");
  Attributes axis;
  axis.Set("axis", int64_t{-1});
  Value* p = Add(g, OpKind::kSoftmax, {s}, axis, "softmax");
  Value* v = Add(g, OpKind::kMatMul, {p, g.AddConstant("w2", Normal({40, 32}, 2))}, {}, "values");
  Attributes ln = axis;
  ln.Set("epsilon", 1e-5f);
  Value* y = Add(g, OpKind::kLayerNormalization,
                 {v, g.AddConstant("gamma", Normal({32}, 3)), g.AddConstant("beta", Normal({32}, 4, 0.1))}, ln, "ln");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

std::vector<Sample> Samples(int n, uint32_t seed) {
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) out.push_back({{"x", Normal({1, 12, 48}, seed + i)}});
  return out;
}

struct Prepared {
  Graph g;
  ScaleTable table;
};
Prepared Prepare() {
  Prepared p{AttentionLike(), {}};
  EXPECT_TRUE(PrepareForQuantization(p.g).ok());
  CalibrationOptions co;
  co.storage = DType::kI8;
  auto t = Calibrate(p.g, Samples(6, 100), co, {}, false);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  p.table = *t;
  return p;
}

Value* Scalar(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }
Value* ZeroI16(Graph& g, const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int16_t>(DType::kI16, {}, {0})); }

// x → Q16 → DQ16 → body → Q16 → DQ16 → y folds into `want` with int16 types, within one int16
// step of the island on seeded inputs.
template <typename Body>
void CheckInt16Island(const Dims& dims, float x_scale, float y_scale, OpKind want, Body body) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, dims));
  Value* sx = Scalar(g, "sx", x_scale);
  Value* q = Add(g, OpKind::kQuantizeLinear, {x, sx, ZeroI16(g, "zx")}, {}, "xq");
  Value* dq = Add(g, OpKind::kDequantizeLinear, {q, sx, g.FindValue("zx")}, {}, "xdq");
  Value* f = body(g, dq);
  Value* sy = Scalar(g, "sy", y_scale);
  Value* yq = Add(g, OpKind::kQuantizeLinear, {f, sy, ZeroI16(g, "zy")}, {}, "yq");
  g.MarkOutput(Add(g, OpKind::kDequantizeLinear, {yq, sy, g.FindValue("zy")}, {}, "ydq"));
  ASSERT_TRUE(InferShapes(g).ok());
  auto folded = Int8Executable(g);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  const Node* n = First(*folded, want);
  ASSERT_NE(n, nullptr) << OpName(want);
  EXPECT_EQ(n->input(0)->type.dtype, DType::kI16);
  EXPECT_EQ(n->output(0)->type.dtype, DType::kI16);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::map<std::string, Tensor> in = {{"x", Normal(dims, seed, 2.0)}};
    auto a = ReferenceExecutor(g).Run(in);
    auto b = ReferenceExecutor(*folded).Run(in);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::vector<double> va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
    for (size_t i = 0; i < va.size(); ++i)
      ASSERT_LE(std::abs(va[i] - vb[i]), y_scale * 1.001) << OpName(want) << " seed " << seed << " value " << i;
  }
}

TEST(Int16Quantize, Int16IslandsFoldWithinOneStep) {
  Attributes axis;
  axis.Set("axis", int64_t{-1});
  CheckInt16Island({2, 5, 37}, 3e-4f, 1.f / 32767, OpKind::kQLinearSoftmax, [&](Graph& g, Value* x) {
    return Add(g, OpKind::kSoftmax, {x}, axis, "softmax");
  });
  Attributes ln = axis;
  ln.Set("epsilon", 1e-5f);
  CheckInt16Island({1, 6, 40}, 3e-4f, 2e-4f, OpKind::kQLinearLayerNormalization, [&](Graph& g, Value* x) {
    return Add(g, OpKind::kLayerNormalization,
               {x, g.AddConstant("gamma", Normal({40}, 9)), g.AddConstant("beta", Normal({40}, 10, 0.2))}, ln, "ln");
  });
  Attributes eps;
  eps.Set("epsilon", 1e-5f);
  CheckInt16Island({1, 4, 5, 6}, 3e-4f, 2e-4f, OpKind::kQLinearGroupNormalization, [&](Graph& g, Value* x) {
    return Add(g, OpKind::kInstanceNormalization,
               {x, g.AddConstant("s", Normal({4}, 5)), g.AddConstant("b", Normal({4}, 6, 0.3))}, eps, "in");
  });
}

TEST(Int16Quantize, PromotedSoftmaxFoldsWithInt16TypesAndExportsAsContribQdq) {
  Prepared p = Prepare();
  const std::vector<const Node*> cands = Int16Candidates(p.g, {});
  ASSERT_EQ(cands.size(), 2u);
  EXPECT_EQ(cands[0]->op(), OpKind::kSoftmax);
  EXPECT_EQ(cands[1]->op(), OpKind::kLayerNormalization);
  QuantizeOptions o;
  o.int16_nodes = {cands[0]->name()};
  Graph qdq = p.g.Clone();
  auto s = RewriteToQdq(qdq, p.table, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->int16_pairs, 2);  // the softmax's input and output
  auto folded = Int8Executable(qdq);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  const Node* sm = First(*folded, OpKind::kQLinearSoftmax);
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->input(0)->type.dtype, DType::kI16);
  EXPECT_EQ(sm->output(0)->type.dtype, DType::kI16);
  // Export: the int16 pairs are com.microsoft's QuantizeLinear / DequantizeLinear; reading the
  // file back gives int16 values again.
  auto proto = onnx_fe::ExportOnnxModel(qdq);
  ASSERT_TRUE(proto.ok()) << proto.status().ToString();
  int contrib = 0;
  for (const auto& n : proto->graph().node()) contrib += n.domain() == "com.microsoft";
  EXPECT_EQ(contrib, 4);
  bool imports_ms = false;
  for (const auto& op : proto->opset_import()) imports_ms |= op.domain() == "com.microsoft";
  EXPECT_TRUE(imports_ms);
  auto back = onnx_fe::ImportOnnxModel(*proto, ".", "int16.onnx");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  int q16 = 0;
  for (const Node* n : back->nodes())
    q16 += n->op() == OpKind::kQuantizeLinear && n->output(0)->type.dtype == DType::kI16;
  EXPECT_EQ(q16, 2);
}

// The MatMul after a promoted softmax reads its probabilities requantized to 8 bits (DQ16 →
// Q8 → DQ8) and folds into a QLinearMatMul; the softmax itself reads and writes int16, and the
// MatMul writing its input ("scores") folds too, its requantize writing int16.
TEST(Int16Quantize, MatMulAfterAnInt16PointStaysInt8) {
  Prepared p = Prepare();
  QuantizeOptions o;
  o.int16_nodes = {Int16Candidates(p.g, {}).at(0)->name()};  // the softmax
  Graph qdq = p.g.Clone();
  ASSERT_TRUE(RewriteToQdq(qdq, p.table, o).ok());
  auto folded = Int8Executable(qdq);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  const Node* sm = First(*folded, OpKind::kQLinearSoftmax);
  ASSERT_NE(sm, nullptr);
  ASSERT_EQ(sm->output(0)->type.dtype, DType::kI16);
  int int8_matmuls = 0, int16_writers = 0;
  for (const Node* n : folded->nodes())
    if (n->op() == OpKind::kQLinearMatMul) {
      EXPECT_EQ(n->input(0)->type.dtype, DType::kI8) << n->Label();
      ++int8_matmuls;
      int16_writers += n->output(0)->type.dtype == DType::kI16;
    }
  EXPECT_EQ(int8_matmuls, 2);  // "values", and "scores" writing the int16 point
  EXPECT_EQ(int16_writers, 1);
  for (const Node* n : folded->nodes()) EXPECT_NE(n->op(), OpKind::kMatMul) << n->Label();
}

// x → Q8 → DQ8 → op → Q16 → DQ16 → y: the op writing an int16 point folds into its integer
// form with an int16 output (QLinearConv, QLinearMatMul, the QKᵀ MatMul of two activations
// with its 1/√d scale, QLinearAdd of an 8-bit and an int16 operand), within one int16 step of
// the float island on seeded inputs; no float op is left.
TEST(Int16Quantize, WritersFoldToIntegerOps) {
  auto check = [](const Dims& dims, OpKind want, auto body) {
    Graph g;
    Value* x = g.AddInput("x", MakeType(DType::kF32, dims));
    Value* sx = Scalar(g, "sx", 0.02f);
    Value* zx = g.AddConstant("zx", Tensor::FromVector<int8_t>(DType::kI8, {}, {3}));
    Value* dq = Add(g, OpKind::kDequantizeLinear, {Add(g, OpKind::kQuantizeLinear, {x, sx, zx}, {}, "xq"), sx, zx}, {}, "xdq");
    // A second int16 source for the add.
    Value* s16 = Scalar(g, "s16", 2e-4f);
    Value* d16 = Add(g, OpKind::kDequantizeLinear,
                     {Add(g, OpKind::kQuantizeLinear, {x, s16, ZeroI16(g, "z16")}, {}, "x16"), s16, g.FindValue("z16")},
                     {}, "x16dq");
    Value* f = body(g, dq, d16);
    const float y_scale = 3e-4f;
    Value* sy = Scalar(g, "sy", y_scale);
    Value* yq = Add(g, OpKind::kQuantizeLinear, {f, sy, ZeroI16(g, "zy")}, {}, "yq");
    g.MarkOutput(Add(g, OpKind::kDequantizeLinear, {yq, sy, g.FindValue("zy")}, {}, "ydq"));
    ASSERT_TRUE(InferShapes(g).ok()) << PrintGraph(g);
    auto folded = Int8Executable(g);
    ASSERT_TRUE(folded.ok()) << folded.status().ToString();
    const Node* n = First(*folded, want);
    ASSERT_NE(n, nullptr) << OpName(want) << "\n" << PrintGraph(*folded);
    EXPECT_EQ(n->output(0)->type.dtype, DType::kI16);
    for (const Node* m : folded->nodes())
      EXPECT_TRUE(m->op() == want || m->op() == OpKind::kQuantizeLinear || m->op() == OpKind::kDequantizeLinear ||
                  m->op() == OpKind::kReshape || m->op() == OpKind::kTranspose)
          << m->Label() << " left in float";
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      const std::map<std::string, Tensor> in = {{"x", Normal(dims, seed, 1.0)}};
      auto a = ReferenceExecutor(g).Run(in);
      auto b = ReferenceExecutor(*folded).Run(in);
      ASSERT_TRUE(a.ok() && b.ok());
      const std::vector<double> va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
      for (size_t i = 0; i < va.size(); ++i)
        ASSERT_LE(std::abs(va[i] - vb[i]), y_scale * 1.001) << OpName(want) << " seed " << seed << " value " << i;
    }
  };
  auto weights = [](Graph& g, const std::string& name, const Dims& d, float scale) {
    Tensor w(DType::kI8, d);
    int8_t* p = w.data<int8_t>();
    for (int64_t i = 0; i < w.numel(); ++i) p[i] = static_cast<int8_t>((i * 37 + 11) % 255 - 127);
    Value* sw = Scalar(g, name + "_s", scale);
    Value* zw = g.AddConstant(name + "_z", Tensor::FromVector<int8_t>(DType::kI8, {}, {0}));
    return Add(g, OpKind::kDequantizeLinear, {g.AddConstant(name, w), sw, zw}, {}, name + "_dq");
  };
  check({1, 3, 6, 5}, OpKind::kQLinearConv, [&](Graph& g, Value* x, Value*) {
    Attributes a;
    a.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    return Add(g, OpKind::kConv, {x, weights(g, "w", {4, 3, 3, 3}, 1e-3f)}, a, "conv");
  });
  check({6, 20}, OpKind::kQLinearMatMul, [&](Graph& g, Value* x, Value*) {
    return Add(g, OpKind::kMatMul, {x, weights(g, "w", {20, 7}, 2e-3f)}, {}, "mm");
  });
  check({2, 5, 8}, OpKind::kQLinearMatMul, [&](Graph& g, Value* x, Value*) {
    Attributes perm;
    perm.Set("perm", std::vector<int64_t>{0, 2, 1});
    Value* kt = Add(g, OpKind::kTranspose, {x}, perm, "kt");
    Value* sx = g.FindValue("sx");
    Value* zx = g.FindValue("zx");  // the quantizer's pair on the transposed keys
    kt = Add(g, OpKind::kDequantizeLinear, {Add(g, OpKind::kQuantizeLinear, {kt, sx, zx}, {}, "ktq"), sx, zx}, {}, "ktdq");
    Value* s = Add(g, OpKind::kMatMul, {x, kt}, {}, "qk");
    return Add(g, OpKind::kMul, {s, Scalar(g, "inv_sqrt_d", 0.35f)}, {}, "scale");
  });
  check({2, 5, 8}, OpKind::kQLinearAdd, [&](Graph& g, Value* x, Value* x16) {
    return Add(g, OpKind::kAdd, {x, x16}, {}, "residual");
  });
}

// DQ16 → Transpose → Q8 (the transformer's head split after an int16 LayerNorm): the narrowing
// requantize moves ahead of the Transpose, which then runs on int8 values; the result equals
// the float island exactly (a permutation commutes with Q, and the requantize's float mode is
// the island's DQ then Q).
TEST(Int16Quantize, NarrowingRequantizeMovesAheadOfATranspose) {
  Graph g;
  const Dims d = {2, 6, 10};
  Value* x = g.AddInput("x", MakeType(DType::kF32, d));
  Value* s16 = Scalar(g, "s16", 2e-4f);
  Value* d16 = Add(g, OpKind::kDequantizeLinear,
                   {Add(g, OpKind::kQuantizeLinear, {x, s16, ZeroI16(g, "z16")}, {}, "x16"), s16, g.FindValue("z16")},
                   {}, "x16dq");
  Attributes perm;
  perm.Set("perm", std::vector<int64_t>{1, 0, 2});
  Value* t = Add(g, OpKind::kTranspose, {d16}, perm, "heads");
  Value* s8 = Scalar(g, "s8", 0.03f);
  Value* z8 = g.AddConstant("z8", Tensor::FromVector<int8_t>(DType::kI8, {}, {-2}));
  g.MarkOutput(Add(g, OpKind::kDequantizeLinear, {Add(g, OpKind::kQuantizeLinear, {t, s8, z8}, {}, "tq"), s8, z8}, {}, "y"));
  ASSERT_TRUE(InferShapes(g).ok());
  auto folded = Int8Executable(g);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  const Node* tr = First(*folded, OpKind::kTranspose);
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(tr->input(0)->type.dtype, DType::kI8) << PrintGraph(*folded);
  EXPECT_NE(First(*folded, OpKind::kQLinearRequantize), nullptr);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::map<std::string, Tensor> in = {{"x", Normal(d, seed, 2.0)}};
    auto a = ReferenceExecutor(g).Run(in);
    auto b = ReferenceExecutor(*folded).Run(in);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector()) << "seed " << seed;
  }
}

// The requantization between the int16 point and the 8-bit MatMul input (Q8(DQ16)) folds into
// one integer QLinearRequantize that feeds the MatMul; in float mode it is the island's f32
// arithmetic, so the folded model's output does not change.
TEST(Int16Quantize, RequantizeBetweenWidthsFolds) {
  Prepared p = Prepare();
  QuantizeOptions o;
  o.int16_nodes = {Int16Candidates(p.g, {}).at(0)->name()};  // the softmax
  Graph qdq = p.g.Clone();
  ASSERT_TRUE(RewriteToQdq(qdq, p.table, o).ok());
  auto folded = Int8Executable(qdq);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  const Node* sm = First(*folded, OpKind::kQLinearSoftmax);
  const Node* rq = First(*folded, OpKind::kQLinearRequantize);
  ASSERT_NE(sm, nullptr);
  ASSERT_NE(rq, nullptr);
  EXPECT_EQ(rq->input(0), sm->output(0));
  EXPECT_EQ(rq->output(0)->type.dtype, DType::kI8);
  ASSERT_EQ(rq->output(0)->uses().size(), 1u);
  EXPECT_EQ(rq->output(0)->uses()[0].node->op(), OpKind::kQLinearMatMul);
  EXPECT_EQ(partition::NpuSupport(*rq, npu::DefaultTarget()), "");
  // The same graph with the requantize left as its Q(DQ) island computes the same bytes.
  Graph island = folded->Clone();
  Node* r = nullptr;
  for (Node* n : island.nodes())
    if (n->op() == OpKind::kQLinearRequantize) r = n;
  ASSERT_NE(r, nullptr);
  Value* f = Add(island, OpKind::kDequantizeLinear, {r->input(0), r->input(1), r->input(2)}, {}, "rq_dq");
  Value* q = Add(island, OpKind::kQuantizeLinear, {f, r->input(3), r->input(4)}, {}, "rq_q");
  island.ReplaceAllUses(r->output(0), q);
  ASSERT_TRUE(island.TopoSort().ok());
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::map<std::string, Tensor> in = {{"x", Normal({1, 12, 48}, 900 + seed)}};
    auto a = ReferenceExecutor(*folded).Run(in);
    auto b = ReferenceExecutor(island).Run(in);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector()) << "seed " << seed;
  }
}

TEST(Int16Quantize, BudgetPromotesTheLayerThatRemovesMostError) {
  Prepared p = Prepare();
  const auto eval = Samples(4, 900);
  auto all8 = QuantizedAgreement(p.g, p.table, {}, eval);
  ASSERT_TRUE(all8.ok());
  double best = 0;
  std::string best_node;
  for (const Node* n : Int16Candidates(p.g, {})) {
    QuantizeOptions o;
    o.int16_nodes = {n->name()};
    auto a = QuantizedAgreement(p.g, p.table, o, eval);
    ASSERT_TRUE(a.ok());
    std::printf("int16 %s alone: cosine %.6f (all int8 %.6f)\n", n->Label().c_str(), a->mean_cosine, all8->mean_cosine);
    if (a->mean_cosine > best) best = a->mean_cosine, best_node = n->name();
  }
  ASSERT_GT(best, all8->mean_cosine) << "int16 removes no error";
  const double budget = (best + all8->mean_cosine) / 2;
  auto fit = FitAccuracyBudgetMixed(p.g, p.table, {}, {}, eval, budget, true);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  EXPECT_TRUE(fit->met);
  ASSERT_EQ(fit->int16.size(), 1u);
  EXPECT_EQ(fit->int16[0].node, best_node);
  EXPECT_GE(fit->int16[0].cosine_after, budget);
  EXPECT_TRUE(fit->float_fit.kept_float.empty());
  // Without int16 the same budget cannot be met by the (empty) float ranking.
  auto no16 = FitAccuracyBudgetMixed(p.g, p.table, {}, {}, eval, budget, false);
  ASSERT_TRUE(no16.ok());
  EXPECT_TRUE(no16->int16.empty());
  EXPECT_FALSE(no16->met);
}

TEST(Int16Quantize, PartitionTakesAnInt16LayerWhereTheVectorCoresDo) {
  Prepared p = Prepare();
  QuantizeOptions o;
  o.int16_nodes = {Int16Candidates(p.g, {}).at(0)->name()};  // the softmax
  Graph qdq = p.g.Clone();
  ASSERT_TRUE(RewriteToQdq(qdq, p.table, o).ok());
  auto folded = Int8Executable(qdq);
  ASSERT_TRUE(folded.ok());
  const Node* sm = First(*folded, OpKind::kQLinearSoftmax);
  ASSERT_NE(sm, nullptr);
  ASSERT_EQ(sm->input(0)->type.dtype, DType::kI16);
  npu::Target no16 = npu::DefaultTarget();
  no16.vector_cores.dtype_rates.erase("i16");
  EXPECT_NE(partition::NpuSupport(*sm, no16).find("vector cores take no i16"), std::string::npos)
      << partition::NpuSupport(*sm, no16);
  EXPECT_EQ(partition::NpuSupport(*sm, npu::DefaultTarget()), "");
}

}  // namespace
}  // namespace edgec::quant
