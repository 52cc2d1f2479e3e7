// The QDQ rewrite and edgec's int8 execution of it on a small CNN (Conv-Relu-Conv-Add-
// GlobalAveragePool-Flatten-Gemm): which values get Q/DQ, the structure after the rewrite,
// Q/DQ folding into QLinearConv, int8 vs the QDQ graph in float (within one step), weight
// quantization by hand, planted outliers that per-channel weights and clipping calibrators
// fix, and the scale table's JSON round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "ir/infer.h"
#include "quant/exact_scale.h"
#include "quant/fold_qdq.h"
#include "quant/pipeline.h"
#include "runtime/reference_executor.h"

#include "quant_test_util.h"

namespace edgec::quant {
namespace {

using Ints = std::vector<int64_t>;

using testing_quant::Add;
using testing_quant::Normal;

// x[1,3,8,8] -> conv1 -> relu1 -> conv2 -> add(relu1) -> gap -> flatten -> fc[5] -> y
// outlier_bias: conv1's channel 0 gets this bias (a large, nearly constant activation
// channel) while conv2 and fc nearly ignore that channel, so it widens the per-tensor
// activation ranges without carrying signal.
// dead_channels: conv2's output channels 1 and 2 trained away (weights times 1e-38 and 1e-33).
Graph SmallCnn(float outlier_weight = 0, float outlier_bias = 0, bool dead_channels = false) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Tensor w1 = Normal({4, 3, 3, 3}, 1, 0.3);
  if (outlier_weight != 0) w1.data<float>()[0] = outlier_weight;  // channel 0 only
  Tensor b1 = Normal({4}, 2, 0.1), w2 = Normal({4, 4, 3, 3}, 3, 0.3), w3 = Normal({5, 4}, 5, 0.5);
  if (outlier_bias != 0) {
    b1.data<float>()[0] = outlier_bias;
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t k = 0; k < 9; ++k) w2.data<float>()[(o * 4 + 0) * 9 + k] *= 1e-3f;
    for (int64_t o = 0; o < 5; ++o) w3.data<float>()[o * 4] *= 1e-3f;
  }
  if (dead_channels)
    for (int64_t k = 0; k < 36; ++k) w2.data<float>()[36 + k] *= 1e-38f, w2.data<float>()[72 + k] *= 1e-33f;
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", w1), g.AddConstant("b1", b1)}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* c2 = Add(g, OpKind::kConv, {r1, g.AddConstant("w2", w2), g.AddConstant("b2", Normal({4}, 4, 0.1))}, pad, "conv2");
  Value* s = Add(g, OpKind::kAdd, {c2, r1}, {}, "add");
  Value* p = Add(g, OpKind::kGlobalAveragePool, {s}, {}, "gap");
  Value* f = Add(g, OpKind::kFlatten, {p}, {}, "flatten");
  Attributes tb;
  tb.Set("transB", int64_t{1});
  Value* y = Add(g, OpKind::kGemm, {f, g.AddConstant("w3", w3), g.AddConstant("b3", Normal({5}, 6, 0.1))}, tb, "fc");
  g.MarkOutput(y);
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

std::vector<Sample> Samples(int n, uint32_t seed) {
  std::vector<Sample> s;
  for (int i = 0; i < n; ++i) s.push_back({{"x", Normal({1, 3, 8, 8}, seed + i)}});
  return s;
}

int Count(const Graph& g, OpKind op) {
  int c = 0;
  for (const Node* n : g.nodes()) c += n->op() == op;
  return c;
}

TEST(Qdq, QuantizationPoints) {
  Graph g = SmallCnn();
  const std::vector<std::string> p = QuantizationPoints(g, {});
  // conv1's input and output after its Relu; conv2's output feeds Add, not an activation;
  // then the Add of two quantized values, the pool and the Flatten, in graph order.
  EXPECT_EQ(p, (std::vector<std::string>{"x", "relu1:0", "conv2:0", "add:0", "gap:0", "flatten:0", "fc:0"}));
  // conv2 in float: the Add (an integer op beside conv1) still quantizes conv2's output on its
  // own account; with the Add in float too, the pool and Flatten follow fc alone.
  QuantizeOptions keep;
  keep.keep_float = {"conv2"};
  EXPECT_EQ(QuantizationPoints(g, keep),
            (std::vector<std::string>{"x", "relu1:0", "conv2:0", "add:0", "gap:0", "flatten:0", "fc:0"}));
  keep.keep_float = {"conv2", "add"};
  EXPECT_EQ(QuantizationPoints(g, keep), (std::vector<std::string>{"x", "relu1:0", "add:0", "gap:0", "flatten:0", "fc:0"}));
}

TEST(Qdq, RewriteStructureAndExportRoundTrip) {
  Graph g = SmallCnn();
  auto table = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(table.ok()) << table.status().message();
  EXPECT_EQ(table->activations.size(), 7u);
  auto s = RewriteToQdq(g, *table, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->quantized_nodes, 3);
  EXPECT_EQ(s->activation_pairs, 7);
  EXPECT_EQ(Count(g, OpKind::kQuantizeLinear), 7);
  EXPECT_EQ(Count(g, OpKind::kDequantizeLinear), 7 + 3 + 3);  // activations, weights, biases
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0]->name(), "fc:0");  // the output keeps its name
  EXPECT_EQ(g.outputs()[0]->producer()->op(), OpKind::kDequantizeLinear);
  const Node* conv1 = g.FindValue("conv1:0")->producer();
  const Node* wdq = conv1->input(1)->producer();
  ASSERT_EQ(wdq->op(), OpKind::kDequantizeLinear);
  EXPECT_EQ(wdq->input(0)->type.dtype, DType::kI8);
  EXPECT_EQ(wdq->input(1)->type.dims, (Dims{4}));  // per channel
  EXPECT_EQ(conv1->input(2)->producer()->input(0)->type.dtype, DType::kI32);
  // Export as ONNX and import again: same ops.
  auto proto = onnx_fe::ExportOnnxModel(g);
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  auto back = onnx_fe::ImportOnnxModel(*proto, ".", "roundtrip");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(Count(*back, OpKind::kQuantizeLinear), 7);
  EXPECT_EQ(Count(*back, OpKind::kConv), 2);
}

// Runs the QDQ graph in float (DQ -> Conv -> Q, the literal meaning) and the folded int8
// graph on the same inputs; the output is on the grid of fc:0's scale.
TEST(Qdq, FoldedInt8AgreesWithTheQdqGraphWithinOneStep) {
  Graph g = SmallCnn();
  auto table = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(table.ok());
  Graph fp = g.Clone();
  ASSERT_TRUE(RewriteToQdq(g, *table, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok()) << int8.status().message();
  EXPECT_EQ(Count(*int8, OpKind::kQLinearConv), 3);  // 2 convs + the Gemm as a 1x1 conv
  EXPECT_EQ(Count(*int8, OpKind::kConv), 0);
  EXPECT_EQ(Count(*int8, OpKind::kGemm), 0);
  const double step = table->activations.at("fc:0").scale;
  int64_t exact = 0, total = 0;
  for (const Sample& s : Samples(20, 500)) {
    auto a = ReferenceExecutor(g).Run(s);
    auto b = ReferenceExecutor(*int8).Run(s);
    ASSERT_TRUE(a.ok() && b.ok());
    const auto va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
    for (size_t i = 0; i < va.size(); ++i) {
      ASSERT_LE(std::abs(va[i] - vb[i]), step * 1.001) << "element " << i;
      exact += va[i] == vb[i];
      ++total;
    }
  }
  EXPECT_GT(exact, total * 9 / 10);
  // And the int8 result tracks FP32.
  auto agree = CompareOnSamples(fp, *int8, Samples(20, 500), false);
  ASSERT_TRUE(agree.ok());
  EXPECT_GT(agree->outputs[0].mean_cosine, 0.99);
}

TEST(Qdq, WeightQuantizationByHand) {
  Tensor w = Tensor::FromVector<float>(DType::kF32, {2, 2}, {1.0f, -3.0f, 0.2f, 0.5f});
  // Per row: scales 3/127 and 0.5/127; 1/(3/127) = 42.3 -> 42; 0.2/(0.5/127) = 50.8 -> 51.
  QuantizedWeight pc = QuantizeWeight(w, 0);
  ASSERT_EQ(pc.scales.size(), 2u);
  EXPECT_FLOAT_EQ(pc.scales[0], 3.0f / 127);
  EXPECT_FLOAT_EQ(pc.scales[1], 0.5f / 127);
  EXPECT_EQ(std::vector<int8_t>(pc.q.data<int8_t>(), pc.q.data<int8_t>() + 4),
            (std::vector<int8_t>{42, -127, 51, 127}));
  // Per tensor: one scale 3/127; 0.2 -> 8.47 -> 8, 0.5 -> 21.2 -> 21.
  QuantizedWeight pt = QuantizeWeight(w, -1);
  ASSERT_EQ(pt.scales.size(), 1u);
  EXPECT_EQ(std::vector<int8_t>(pt.q.data<int8_t>(), pt.q.data<int8_t>() + 4),
            (std::vector<int8_t>{42, -127, 8, 21}));
  // Reduced range (7 bits): scale 3/63; 1 -> 21, 0.2 -> 4.2 -> 4, 0.5 -> 10.5 -> 10 (even).
  QuantizedWeight rr = QuantizeWeight(w, -1, 63);
  EXPECT_FLOAT_EQ(rr.scales[0], 3.0f / 63);
  EXPECT_EQ(std::vector<int8_t>(rr.q.data<int8_t>(), rr.q.data<int8_t>() + 4),
            (std::vector<int8_t>{21, -63, 4, 10}));
}

TEST(Qdq, DeadChannelsAreZeroChannels) {
  // Trained-away filters (PP-OCRv4's recognizer): a channel of 1e-39 (its scale would be a
  // float subnormal), one of 1e-36 (2^-24 below the largest), one of 0: scale 1, weights 0.
  Tensor w = Tensor::FromVector<float>(DType::kF32, {4, 2}, {1.0f, -0.5f, 1e-39f, -2e-39f, 1e-36f, 0.0f, 0.0f, 0.0f});
  QuantizedWeight q = QuantizeWeight(w, 0);
  EXPECT_FLOAT_EQ(q.scales[0], 1.0f / 127);
  for (int c = 1; c < 4; ++c) EXPECT_EQ(q.scales[c], 1.0f) << c;
  EXPECT_EQ(std::vector<int8_t>(q.q.data<int8_t>(), q.q.data<int8_t>() + 8),
            (std::vector<int8_t>{127, -64, 0, 0, 0, 0, 0, 0}));
  // A conv with dead channels folds into a QLinearConv (the bias scale x_scale * w_scale is a
  // normal f32), and its int8 run tracks the float graph.
  Graph g = SmallCnn(0, 0, /*dead_channels=*/true);
  auto table = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(table.ok());
  Graph fp = g.Clone();
  ASSERT_TRUE(RewriteToQdq(g, *table, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok()) << int8.status().message();
  EXPECT_EQ(Count(*int8, OpKind::kQLinearConv), 3);
  EXPECT_EQ(Count(*int8, OpKind::kConv), 0);
  auto agree = CompareOnSamples(fp, *int8, Samples(20, 500), false);
  ASSERT_TRUE(agree.ok());
  EXPECT_GT(agree->outputs[0].mean_cosine, 0.99);
}

double Sqnr(const Graph& fp, const Graph& qdq, const std::vector<Sample>& eval) {
  auto int8 = Int8Executable(qdq);
  EXPECT_TRUE(int8.ok());
  auto a = CompareOnSamples(fp, *int8, eval, false);
  EXPECT_TRUE(a.ok());
  return a->outputs[0].sqnr_db;
}

TEST(Qdq, PerChannelWeightsFixAnOutlierChannel) {
  // One weight of conv1's channel 0 is 40x the others' spread: per tensor, the other
  // channels' weights collapse onto a few levels; per channel they keep their precision.
  Graph g = SmallCnn(/*outlier_weight=*/12.0f);
  const Tensor& w1 = g.FindValue("w1")->constant();
  auto weight_sqnr = [&](int axis) {  // over channels 1..3 only
    QuantizedWeight q = QuantizeWeight(w1, axis);
    double sig = 0, err = 0;
    const int64_t per = w1.numel() / 4;
    for (int64_t i = per; i < w1.numel(); ++i) {
      const double w = w1.data<float>()[i];
      const double back = q.q.data<int8_t>()[i] * q.scales[axis < 0 ? 0 : i / per];
      sig += w * w, err += (w - back) * (w - back);
    }
    return 10 * std::log10(sig / err);
  };
  EXPECT_GT(weight_sqnr(0), weight_sqnr(-1) + 20);
  // The add and the pool stay in float here: their own activation error would blur the
  // comparison of the two weight schemes on this tiny net.
  QuantizeOptions per_channel;
  per_channel.keep_float = {"add", "gap"};
  QuantizeOptions per_tensor = per_channel;
  per_tensor.per_channel = false;
  auto table = Calibrate(g, Samples(8, 100), {}, per_channel, false);
  ASSERT_TRUE(table.ok());
  Graph a = g.Clone(), b = g.Clone();
  ASSERT_TRUE(RewriteToQdq(a, *table, per_tensor).ok());
  ASSERT_TRUE(RewriteToQdq(b, *table, per_channel).ok());
  const auto eval = Samples(10, 900);
  const double sqnr_tensor = Sqnr(g, a, eval), sqnr_channel = Sqnr(g, b, eval);
  // End to end the activations' own error remains; per channel still wins clearly.
  EXPECT_GT(sqnr_channel, sqnr_tensor + 3) << "per tensor " << sqnr_tensor << " dB";
}

TEST(Qdq, SensitivityAndBudgetKeepTheOutlierLayerInFloat) {
  // A planted outlier activation channel (see SmallCnn): the layers whose quantized
  // tensors hold it add the most error; the budget keeps the worst one in float.
  Graph g = SmallCnn(0, /*outlier_bias=*/40.0f);
  auto table = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(table.ok());
  QuantizeOptions per_tensor;
  per_tensor.per_channel = false;
  const auto eval = Samples(6, 900);
  auto ranked = Sensitivity(g, *table, per_tensor, eval, false);
  ASSERT_TRUE(ranked.ok()) << ranked.status().message();
  ASSERT_EQ(ranked->size(), 3u);
  EXPECT_LE((*ranked)[0].sqnr_db, (*ranked)[1].sqnr_db);
  EXPECT_LE((*ranked)[1].sqnr_db, (*ranked)[2].sqnr_db);
  const std::string worst = (*ranked)[0].node;
  // A budget between "all int8" and "conv1 in float".
  Graph all = g.Clone();
  ASSERT_TRUE(RewriteToQdq(all, *table, per_tensor).ok());
  auto all_int8 = Int8Executable(all);
  ASSERT_TRUE(all_int8.ok());
  const double all_cos = CompareOnSamples(g, *all_int8, eval, false)->outputs[0].mean_cosine;
  QuantizeOptions keep1 = per_tensor;
  keep1.keep_float = {worst};
  Graph one = g.Clone();
  ASSERT_TRUE(RewriteToQdq(one, *table, keep1).ok());
  const double keep1_cos = CompareOnSamples(g, *Int8Executable(one), eval, false)->outputs[0].mean_cosine;
  ASSERT_GT(keep1_cos, all_cos) << worst;
  std::printf("outlier channel: all int8 cosine %.6f, %s in float %.6f\n", all_cos, worst.c_str(), keep1_cos);
  const double budget = (all_cos + keep1_cos) / 2;
  auto fit = FitAccuracyBudget(g, *table, per_tensor, *ranked, eval, budget);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_TRUE(fit->met);
  ASSERT_EQ(fit->kept_float.size(), 1u);
  EXPECT_EQ(fit->kept_float[0].node, worst);
  EXPECT_GE(fit->mean_cosine, budget);
  // An unreachable budget keeps everything in float and says it was not met.
  auto none = FitAccuracyBudget(g, *table, per_tensor, *ranked, eval, 1.0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->kept_float.size(), 3u);
}

TEST(Qdq, ClippingCalibratorsFixAnOutlierActivation) {
  // One calibration sample holds a huge input value (1 of 24576): minmax stretches the
  // input's range 50x; percentile (99.99) and entropy clip it.
  Graph g = SmallCnn();
  std::vector<Sample> calib = Samples(128, 100);
  calib[3]["x"].data<float>()[17] = 200.0f;
  const auto eval = Samples(10, 900);
  QuantizeOptions float_add;  // as in PerChannelWeightsFixAnOutlierChannel: the input's clip is measured
  float_add.keep_float = {"add", "gap"};
  auto sqnr = [&](CalibrationMethod m) {
    CalibrationOptions o;
    o.method = m;
    auto t = Calibrate(g, calib, o, float_add, false);
    EXPECT_TRUE(t.ok());

    Graph q = g.Clone();
    EXPECT_TRUE(RewriteToQdq(q, *t, float_add).ok());
    return Sqnr(g, q, eval);
  };
  double x_hi = 0;
  auto sqnr_and_range = [&](CalibrationMethod m) {
    const double s = sqnr(m);
    CalibrationOptions o;
    o.method = m;
    x_hi = Calibrate(g, calib, o, {}, false)->activations.at("x").hi;
    return s;
  };
  const double minmax = sqnr_and_range(CalibrationMethod::kMinMax);
  EXPECT_EQ(x_hi, 200.0);
  // The outlier also inflates every later tensor of its sample, which these calibrators
  // see as ordinary values; the input's clip is what they fix.
  const double percentile = sqnr_and_range(CalibrationMethod::kPercentile);
  EXPECT_LT(x_hi, 10.0);
  const double entropy = sqnr_and_range(CalibrationMethod::kEntropy);
  EXPECT_LT(x_hi, 25.0);
  EXPECT_GT(percentile, minmax + 3) << "minmax " << minmax << " dB";
  EXPECT_GT(entropy, minmax + 3) << "minmax " << minmax << " dB";
  // MSE charges the outlier its squared distance, which outweighs the rounding error of
  // 24575 ordinary values: it clips only a little (a property of the criterion).
  sqnr_and_range(CalibrationMethod::kMse);
  EXPECT_LT(x_hi, 200.0);
}

TEST(Qdq, FoldKeepsActivationsThatAreNotNoOps) {
  // With symmetric i8 activations, relu1's zero point is 0 (not -128): the Relu must stay,
  // as a clamp of the integer op's output at its zero point.
  Graph g = SmallCnn();
  CalibrationOptions o;
  o.symmetric = true;
  o.storage = DType::kI8;
  auto t = Calibrate(g, Samples(8, 100), o, {}, false);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok());
  EXPECT_EQ(Count(*int8, OpKind::kRelu), 0);
  int clamped = 0;
  for (const Node* n : int8->nodes()) {
    if (n->op() == OpKind::kQLinearConv && n->attrs.Has("edgec_qmin")) {
      ++clamped;
      EXPECT_EQ(n->attrs.GetInt("edgec_qmin"), 0);  // Relu: the zero point
      EXPECT_EQ(n->attrs.GetInt("edgec_qmax"), 127);
    }
  }
  EXPECT_EQ(clamped, 1);
  auto a = ReferenceExecutor(g).Run(Samples(1, 7)[0]);
  auto b = ReferenceExecutor(*int8).Run(Samples(1, 7)[0]);
  ASSERT_TRUE(a.ok() && b.ok());
  const double step = t->activations.at("fc:0").scale;
  const auto va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
  for (size_t i = 0; i < va.size(); ++i) EXPECT_LE(std::abs(va[i] - vb[i]), step * 1.001);
}

TEST(Qdq, FoldRunsMaxPoolAndReshapesOnInt8Values) {
  // conv1 -> relu -> MaxPool -> Reshape (identity shape) -> conv2: the pool and the reshape
  // move onto conv1's u8 output (no DQ/Q around them), with the same outputs bit for bit.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({4, 3, 3, 3}, 1, 0.3))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Attributes mp;
  mp.Set("kernel_shape", Ints{3, 3});
  mp.Set("strides", Ints{2, 2});
  mp.Set("pads", Ints{1, 1, 1, 1});
  Value* p = Add(g, OpKind::kMaxPool, {r1}, mp, "pool");
  Value* rs = Add(g, OpKind::kReshape, {p, g.AddConstant("shape", Tensor::VectorI64({1, 4, 4, 4}))}, {}, "reshape");
  Value* y = Add(g, OpKind::kConv, {rs, g.AddConstant("w2", Normal({2, 4, 3, 3}, 2, 0.3))}, pad, "conv2");
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = Calibrate(g, Samples(4, 30), {}, {}, false);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  Graph moved = g.Clone(), kept = g.Clone();
  auto s1 = FoldQdqToInteger(moved);
  FoldOptions no_move;
  no_move.int8_movement = false;
  auto s2 = FoldQdqToInteger(kept, no_move);
  ASSERT_TRUE(s1.ok() && s2.ok());
  EXPECT_EQ(s1->int8_movement, 2);
  for (const Node* n : moved.nodes()) {
    if (n->op() == OpKind::kMaxPool || n->op() == OpKind::kReshape) {
      EXPECT_EQ(n->input(0)->type.dtype, DType::kU8) << n->Label();
    }
  }
  EXPECT_LT(Count(moved, OpKind::kDequantizeLinear), Count(kept, OpKind::kDequantizeLinear));
  for (const auto& sample : Samples(3, 50)) {
    auto a = ReferenceExecutor(moved).Run(sample);
    auto b = ReferenceExecutor(kept).Run(sample);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector());
  }
}

TEST(Qdq, FoldTurnsTheResidualAddIntoQLinearAdd) {
  // conv1 -> relu1 -> conv2 -> add(relu1) -> relu -> conv3 (a ResNet block): the add is
  // DQ, DQ -> Add -> Relu -> Q after the rewrite and becomes one QLinearAdd (the Relu as its
  // clamp) whose float mode (the ratio form, quant/ratio_forms.h) gives the island's outputs
  // on these samples (it can differ next to a rounding tie, ~1 value in 10^5: see
  // tests/quant/ort_binary_ops.py); the fixed-point mode (the NPU's arithmetic) is within
  // one step of it.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({4, 3, 3, 3}, 1, 0.3))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* c2 = Add(g, OpKind::kConv, {r1, g.AddConstant("w2", Normal({4, 4, 3, 3}, 2, 0.3))}, pad, "conv2");
  Value* sum = Add(g, OpKind::kAdd, {c2, r1}, {}, "add");
  Value* r2 = Add(g, OpKind::kRelu, {sum}, {}, "relu2");
  g.MarkOutput(Add(g, OpKind::kConv, {r2, g.AddConstant("w3", Normal({2, 4, 3, 3}, 3, 0.3))}, pad, "conv3"));
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  Graph folded = g.Clone(), island = g.Clone();
  FoldOptions no_add;
  no_add.integer_add = false;
  ASSERT_TRUE(FoldQdqToInteger(folded).ok());
  ASSERT_TRUE(FoldQdqToInteger(island, no_add).ok());
  Graph fixed = folded.Clone();  // only the add in fixed point: same operands as `folded`
  for (Node* n : fixed.nodes())
    if (n->op() == OpKind::kQLinearAdd) n->attrs.Set("edgec_requant", std::string("fixed_point"));
  EXPECT_EQ(Count(folded, OpKind::kQLinearAdd), 1);
  EXPECT_EQ(Count(folded, OpKind::kAdd), 0);
  EXPECT_EQ(Count(folded, OpKind::kRelu), 0);
  EXPECT_EQ(Count(island, OpKind::kAdd), 1);
  EXPECT_LT(Count(folded, OpKind::kDequantizeLinear), Count(island, OpKind::kDequantizeLinear));
  for (const auto& sample : Samples(6, 80)) {
    auto a = ReferenceExecutor(folded).Run(sample);
    auto b = ReferenceExecutor(island).Run(sample);
    auto c = ReferenceExecutor(fixed).Run(sample);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector());
    auto add_output = [&](const Graph& graph) {
      std::vector<double> v;
      ReferenceExecutor r(graph);
      r.set_node_hook([&](const Node& n, const std::vector<Tensor>& out) {
        if (n.op() == OpKind::kQLinearAdd) v = out[0].ToDoubleVector();
      });
      EXPECT_TRUE(r.Run(sample).ok());
      return v;
    };
    const auto va = add_output(folded), vc = add_output(fixed);
    ASSERT_EQ(va.size(), vc.size());
    ASSERT_FALSE(va.empty());
    for (size_t i = 0; i < va.size(); ++i) EXPECT_LE(std::abs(va[i] - vc[i]), 1) << i;
  }
}

// x[1,3,8,8] -> conv1 -> SiLU (x·Sigmoid(x)) = h -> squeeze-excitation: gap -> fc1 1x1 ->
// relu -> fc2 1x1 -> Sigmoid = gate -> Mul(gate, h) -> conv3 (efficientnet's MBConv tail)
// -> HardSwish -> head_gap (a classifier head's pool).
Graph SqueezeExcitation() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({8, 3, 3, 3}, 1, 0.3))}, pad, "conv1");
  Value* h = Add(g, OpKind::kMul, {c1, Add(g, OpKind::kSigmoid, {c1}, {}, "silu_sigmoid")}, {}, "silu");
  Value* p = Add(g, OpKind::kGlobalAveragePool, {h}, {}, "gap");
  Value* f1 = Add(g, OpKind::kConv, {p, g.AddConstant("wf1", Normal({4, 8, 1, 1}, 2, 0.5))}, {}, "fc1");
  Value* r = Add(g, OpKind::kRelu, {f1}, {}, "fc1_relu");
  Value* f2 = Add(g, OpKind::kConv, {r, g.AddConstant("wf2", Normal({8, 4, 1, 1}, 3, 0.8))}, {}, "fc2");
  Value* gate = Add(g, OpKind::kSigmoid, {f2}, {}, "gate");
  Value* m = Add(g, OpKind::kMul, {gate, h}, {}, "scale");
  Value* c3 = Add(g, OpKind::kConv, {m, g.AddConstant("w3", Normal({2, 8, 3, 3}, 4, 0.3))}, pad, "conv3");
  g.MarkOutput(Add(g, OpKind::kGlobalAveragePool, {Add(g, OpKind::kHardSwish, {c3}, {}, "head_act")}, {}, "head_gap"));
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

TEST(Qdq, SqueezeExcitationMulFoldsIntoQLinearMul) {
  // The Mul of the gate and the SiLU output: both are elementwise functions of quantized
  // values (conv1's and fc2's outputs), so they become quantization points (each a table),
  // and so does the Mul's output; then h's pool folds too. DQ, DQ -> Mul -> Q becomes one
  // QLinearMul whose float mode (the ratio form) gives the island's outputs on these samples;
  // its fixed-point mode is within one step of it. The SiLU's own x·Sigmoid(x) stays a table, not a QLinearMul.
  // The head's pool of HardSwish(conv3) folds the same way (a table, then the integer pool).
  Graph g = SqueezeExcitation();
  const std::vector<std::string> p = QuantizationPoints(g, {});
  for (const char* v : {"silu:0", "gate:0", "scale:0", "gap:0", "head_act:0", "head_gap:0"})
    EXPECT_NE(std::find(p.begin(), p.end(), v), p.end()) << v;
  EXPECT_EQ(std::find(p.begin(), p.end(), "silu_sigmoid:0"), p.end());
  auto t = Calibrate(g, Samples(8, 200), {}, {}, false);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  Graph folded = g.Clone(), island = g.Clone();
  FoldOptions no_mul;
  no_mul.integer_mul = false;
  auto s = FoldQdqToInteger(folded);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE(FoldQdqToInteger(island, no_mul).ok());
  for (const std::string& why : s->skipped) EXPECT_EQ(why.find("'silu'"), std::string::npos) << why;
  EXPECT_EQ(Count(folded, OpKind::kQLinearMul), 1);
  EXPECT_EQ(Count(folded, OpKind::kMul), 0);
  EXPECT_EQ(Count(folded, OpKind::kQuantizedLookup), 3);  // SiLU, the gate's Sigmoid, HardSwish
  EXPECT_EQ(Count(folded, OpKind::kQLinearGlobalAveragePool), 2);
  EXPECT_EQ(Count(folded, OpKind::kHardSwish) + Count(folded, OpKind::kGlobalAveragePool), 0);
  EXPECT_EQ(Count(island, OpKind::kMul), 1);
  EXPECT_LT(Count(folded, OpKind::kDequantizeLinear), Count(island, OpKind::kDequantizeLinear));
  for (const Node* n : folded.nodes()) {
    if (n->op() != OpKind::kQLinearMul) continue;
    EXPECT_EQ(n->input(0)->type.dims, (Dims{1, 8, 1, 1})) << "the gate first, as in the model";
    EXPECT_EQ(n->input(3)->type.dims, (Dims{1, 8, 8, 8}));
  }
  Graph fixed = folded.Clone();  // only the mul in fixed point: same operands as `folded`
  for (Node* n : fixed.nodes())
    if (n->op() == OpKind::kQLinearMul) n->attrs.Set("edgec_requant", std::string("fixed_point"));
  auto mul_output = [&](const Graph& graph, const Sample& sample) {
    std::vector<double> v;
    ReferenceExecutor r(graph);
    r.set_node_hook([&](const Node& n, const std::vector<Tensor>& out) {
      if (n.op() == OpKind::kQLinearMul) v = out[0].ToDoubleVector();
    });
    EXPECT_TRUE(r.Run(sample).ok());
    return v;
  };
  for (const auto& sample : Samples(6, 300)) {
    auto a = ReferenceExecutor(folded).Run(sample);
    auto b = ReferenceExecutor(island).Run(sample);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector());
    const auto va = mul_output(folded, sample), vc = mul_output(fixed, sample);
    ASSERT_EQ(va.size(), vc.size());
    ASSERT_EQ(va.size(), 8u * 8 * 8);
    for (size_t i = 0; i < va.size(); ++i) EXPECT_LE(std::abs(va[i] - vc[i]), 1) << i;
  }
}

TEST(Qdq, AddAndGlobalAveragePoolBetweenQuantizedValuesFold) {
  // SmallCnn: add(conv2, relu1) -> gap -> flatten -> fc. Both add inputs are quantized, so the
  // add's output is too, and the pool's: the int8 graph has a QLinearAdd and a
  // QLinearGlobalAveragePool, the Flatten runs on int8 values, and no float Add or pool is left.
  Graph g = SmallCnn();
  auto t = Calibrate(g, Samples(8, 100), {}, {}, false);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->activations.count("add:0"));
  EXPECT_TRUE(t->activations.count("gap:0"));
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok());
  EXPECT_EQ(Count(*int8, OpKind::kQLinearAdd), 1);
  EXPECT_EQ(Count(*int8, OpKind::kQLinearGlobalAveragePool), 1);
  EXPECT_EQ(Count(*int8, OpKind::kAdd) + Count(*int8, OpKind::kGlobalAveragePool), 0);
  for (const Node* n : int8->nodes())
    if (n->op() == OpKind::kFlatten) EXPECT_NE(n->input(0)->type.dtype, DType::kF32) << n->Label();
}

TEST(Qdq, ConcatInputsShareOneRangeSoTheConcatRunsOnInt8) {
  // conv1 -> relu1 and conv2 -> relu2 (ranges differ by ~5x) -> concat -> conv3: calibration
  // gives both concat inputs and its output the union range, so the Concat moves onto the int8
  // values; outputs stay within one step of the QDQ graph run in float.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* r1 = Add(g, OpKind::kRelu, {Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({4, 3, 3, 3}, 1, 0.3))}, pad, "conv1")}, {}, "relu1");
  Value* r2 = Add(g, OpKind::kRelu, {Add(g, OpKind::kConv, {x, g.AddConstant("w2", Normal({4, 3, 3, 3}, 2, 1.5))}, pad, "conv2")}, {}, "relu2");
  Attributes axis;
  axis.Set("axis", int64_t{1});
  Value* cat = Add(g, OpKind::kConcat, {r1, r2}, axis, "concat");
  g.MarkOutput(Add(g, OpKind::kConv, {cat, g.AddConstant("w3", Normal({2, 8, 3, 3}, 3, 0.3))}, pad, "conv3"));
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = Calibrate(g, Samples(6, 40), {}, {}, false);
  ASSERT_TRUE(t.ok());
  const auto& a = t->activations;
  ASSERT_TRUE(a.count("relu1:0") && a.count("relu2:0") && a.count("concat:0"));
  EXPECT_EQ(a.at("relu1:0").scale, a.at("concat:0").scale);
  EXPECT_EQ(a.at("relu2:0").scale, a.at("concat:0").scale);
  EXPECT_EQ(a.at("relu1:0").zero_point, a.at("concat:0").zero_point);
  EXPECT_GT(a.at("relu2:0").max, 2 * a.at("relu1:0").max);  // the observed ranges did differ
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok());
  for (const Node* n : int8->nodes())
    if (n->op() == OpKind::kConcat) EXPECT_EQ(n->input(0)->type.dtype, DType::kU8) << n->Label();
  EXPECT_EQ(Count(*int8, OpKind::kConcat), 1);
  for (const auto& sample : Samples(3, 90)) {
    auto qdq = ReferenceExecutor(g).Run(sample);
    auto i8 = ReferenceExecutor(*int8).Run(sample);
    ASSERT_TRUE(qdq.ok() && i8.ok());
    const auto va = (*qdq)[0].ToDoubleVector(), vb = (*i8)[0].ToDoubleVector();
    const double step = t->activations.at("conv3:0").scale;
    for (size_t i = 0; i < va.size(); ++i) EXPECT_LE(std::abs(va[i] - vb[i]), step * 1.001) << i;
  }
}

TEST(Qdq, ConcatsLinkedThroughAChannelShuffleShareOneRange) {
  // A shufflenet unit: concat A(relu1, relu2) -> reshape -> transpose -> reshape (the channel
  // shuffle) -> slice halves; one half -> conv3 -> relu3, the other straight into concat
  // B(half, relu3) -> conv4. The shuffle's outputs keep concat A's values and concat B takes
  // one of them, so A, the shuffle, the halves and B are one group with one range: the int8
  // graph moves bytes from A to B with no requantize, and stays within one step of the QDQ
  // graph in float.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  auto conv_relu = [&](Value* in, int64_t cin, int seed, float w, const std::string& name) {
    Value* c = Add(g, OpKind::kConv, {in, g.AddConstant(name + "_w", Normal({8, cin, 3, 3}, seed, w))}, pad, name);
    return Add(g, OpKind::kRelu, {c}, {}, name + "_relu");
  };
  Attributes axis;
  axis.Set("axis", int64_t{1});
  auto shape = [&](const std::string& name, Ints dims) {
    return g.AddConstant(name, Tensor::FromVector<int64_t>(DType::kI64, {static_cast<int64_t>(dims.size())}, dims));
  };
  auto ints = [&](const std::string& name, int64_t v) { return g.AddConstant(name, Tensor::FromVector<int64_t>(DType::kI64, {1}, {v})); };
  Value* cat_a = Add(g, OpKind::kConcat, {conv_relu(x, 3, 1, 0.3f, "conv1"), conv_relu(x, 3, 2, 1.5f, "conv2")}, axis, "concat_a");
  Value* r5 = Add(g, OpKind::kReshape, {cat_a, shape("s5", {1, 2, 8, 8, 8})}, {}, "reshape");
  Attributes perm;
  perm.Set("perm", Ints{0, 2, 1, 3, 4});
  Value* tr = Add(g, OpKind::kTranspose, {r5}, perm, "transpose");
  Value* r4 = Add(g, OpKind::kReshape, {tr, shape("s4", {1, 16, 8, 8})}, {}, "reshape_1");
  Value* half0 = Add(g, OpKind::kSlice, {r4, ints("b0", 0), ints("e0", 8), ints("ax0", 1)}, {}, "slice");
  Value* half1 = Add(g, OpKind::kSlice, {r4, ints("b1", 8), ints("e1", 16), ints("ax1", 1)}, {}, "slice_1");
  Value* cat_b = Add(g, OpKind::kConcat, {half0, conv_relu(half1, 8, 3, 2.0f, "conv3")}, axis, "concat_b");
  g.MarkOutput(Add(g, OpKind::kConv, {cat_b, g.AddConstant("w4", Normal({2, 16, 3, 3}, 4, 0.3))}, pad, "conv4"));
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = Calibrate(g, Samples(6, 40), {}, {}, false);
  ASSERT_TRUE(t.ok());
  const auto& a = t->activations;
  const ActivationScale& ref = a.at("concat_b:0");
  for (const char* v : {"concat_a:0", "reshape:0", "transpose:0", "reshape_1:0", "slice:0", "slice_1:0",
                        "conv1_relu:0", "conv2_relu:0", "conv3_relu:0"}) {
    ASSERT_TRUE(a.count(v)) << v;
    EXPECT_EQ(a.at(v).scale, ref.scale) << v;
    EXPECT_EQ(a.at(v).zero_point, ref.zero_point) << v;
  }
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  auto int8 = Int8Executable(g);
  ASSERT_TRUE(int8.ok());
  // Only the graph input's Quantize and the output's Dequantize are left.
  EXPECT_EQ(Count(*int8, OpKind::kQuantizeLinear), 1);
  EXPECT_EQ(Count(*int8, OpKind::kDequantizeLinear), 1);
  for (const auto& sample : Samples(3, 90)) {
    auto qdq = ReferenceExecutor(g).Run(sample);
    auto i8 = ReferenceExecutor(*int8).Run(sample);
    ASSERT_TRUE(qdq.ok() && i8.ok());
    const auto va = (*qdq)[0].ToDoubleVector(), vb = (*i8)[0].ToDoubleVector();
    const double step = t->activations.at("conv4:0").scale;
    for (size_t i = 0; i < va.size(); ++i) EXPECT_LE(std::abs(va[i] - vb[i]), step * 1.001) << i;
  }
}

TEST(Qdq, FoldTabulatesSingleInputIslands) {
  // conv1 -> SiLU (x * Sigmoid(x)) -> conv2 -> HardSwish -> conv3: both islands become
  // 256-entry lookups with the same outputs, bit for bit, as the float islands.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({4, 3, 3, 3}, 1, 0.3))}, pad, "conv1");
  Value* sg = Add(g, OpKind::kSigmoid, {c1}, {}, "sigmoid");
  Value* silu = Add(g, OpKind::kMul, {c1, sg}, {}, "silu");
  Value* c2 = Add(g, OpKind::kConv, {silu, g.AddConstant("w2", Normal({4, 4, 3, 3}, 2, 0.3))}, pad, "conv2");
  Value* hs = Add(g, OpKind::kHardSwish, {c2}, {}, "hardswish");
  Value* y = Add(g, OpKind::kConv, {hs, g.AddConstant("w3", Normal({2, 4, 3, 3}, 3, 0.3))}, pad, "conv3");
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = Calibrate(g, Samples(4, 60), {}, {}, false);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(RewriteToQdq(g, *t, {}).ok());
  Graph lut = g.Clone(), island = g.Clone();
  auto s1 = FoldQdqToInteger(lut);
  FoldOptions no_lut;
  no_lut.tabulate = false;
  auto s2 = FoldQdqToInteger(island, no_lut);
  ASSERT_TRUE(s1.ok() && s2.ok());
  EXPECT_EQ(s1->tabulated, 2);
  EXPECT_EQ(Count(lut, OpKind::kQuantizedLookup), 2);
  EXPECT_EQ(Count(lut, OpKind::kSigmoid) + Count(lut, OpKind::kHardSwish), 0);
  for (const auto& sample : Samples(3, 70)) {
    auto a = ReferenceExecutor(lut).Run(sample);
    auto b = ReferenceExecutor(island).Run(sample);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector());
  }
}

// A detector's head: conv -> Sigmoid as the graph output. The Sigmoid's output is a point,
// so the model ends in a lookup and one Dequantize (the output keeps its name), within one
// output step of the float Sigmoid of the quantized conv.
TEST(Qdq, OutputSigmoidBecomesALookup) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 8, 8}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c = Add(g, OpKind::kConv, {x, g.AddConstant("w", Normal({2, 3, 3, 3}, 1, 0.3))}, pad, "conv");
  Value* y = Add(g, OpKind::kSigmoid, {c}, {}, "prob");
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = Calibrate(g, Samples(4, 80), {}, {}, false);
  ASSERT_TRUE(t.ok());
  const std::vector<std::string> points = QuantizationPoints(g, {});
  EXPECT_NE(std::find(points.begin(), points.end(), y->name()), points.end());
  Graph qdq = g.Clone();
  ASSERT_TRUE(RewriteToQdq(qdq, *t, {}).ok());
  Graph folded = qdq.Clone();
  auto s = FoldQdqToInteger(folded);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(Count(folded, OpKind::kQuantizedLookup), 1);
  EXPECT_EQ(Count(folded, OpKind::kSigmoid), 0);
  ASSERT_EQ(folded.outputs().size(), 1u);
  EXPECT_EQ(folded.outputs()[0]->name(), y->name());
  EXPECT_EQ(folded.outputs()[0]->producer()->op(), OpKind::kDequantizeLinear);
  for (const auto& sample : Samples(2, 90)) {
    auto a = ReferenceExecutor(folded).Run(sample);
    auto b = ReferenceExecutor(qdq).Run(sample);
    ASSERT_TRUE(a.ok() && b.ok());
    const std::vector<double> va = (*a)[0].ToDoubleVector(), vb = (*b)[0].ToDoubleVector();
    for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], 1.0 / 127) << i;
  }
}

TEST(ScaleTable, JsonRoundTripAndEdits) {
  const std::string path = (std::filesystem::temp_directory_path() / "edgec_scales_test.json").string();
  ScaleTable t;
  t.method = "entropy";
  t.samples = 3;
  t.activations["a/b:0"] = {0.25f, 7, -1.5, 60.0, -1.5, 56.0};
  ASSERT_TRUE(WriteScaleTable(t, path).ok());
  auto back = ReadScaleTable(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->method, "entropy");
  EXPECT_FLOAT_EQ(back->activations.at("a/b:0").scale, 0.25f);
  EXPECT_EQ(back->activations.at("a/b:0").zero_point, 7);
  // A hand edit that gives only a range: scale and zero point follow from it.
  {
    std::ofstream f(path);
    f << R"({"format": "edgec-quant-scales/1", "dtype": "u8",
             "activations": {"v": {"lo": 0, "hi": 2.55}}})";
  }
  back = ReadScaleTable(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->activations.at("v").scale, RoundScaleForExactDequantization(2.55 / 255));  // as chosen from a range
  EXPECT_EQ(back->activations.at("v").zero_point, 0);
  // A scale written by hand is taken as written, not rounded.
  {
    std::ofstream f(path);
    f << R"({"format": "edgec-quant-scales/1", "dtype": "u8",
             "activations": {"v": {"scale": 0.0123, "zero_point": 3}}})";
  }
  back = ReadScaleTable(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->activations.at("v").scale, 0.0123f);
  EXPECT_FALSE(DequantizesExactly(0.0123f));
  {
    std::ofstream f(path);
    f << R"({"format": "edgec-quant-scales/1", "dtype": "u8",
             "activations": {"v": {"scale": 0.1, "zero_point": 300}}})";
  }
  back = ReadScaleTable(path);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("activation 'v': zero_point 300"), std::string::npos)
      << back.status().message();
  std::filesystem::remove(path);
}

TEST(Qdq, MissingScaleIsAnError) {
  Graph g = SmallCnn();
  ScaleTable empty;
  auto s = RewriteToQdq(g, empty, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no activation scale for value"), std::string::npos);
}

}  // namespace
}  // namespace edgec::quant
