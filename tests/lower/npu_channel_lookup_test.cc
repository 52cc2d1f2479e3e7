// The per-channel lookup on the NPU (lower/npu_layers.cc ChannelLookupLayerOf, isa.h
// kLutPerColumnImm): a one-node QuantizedLookup with a table [C, 256] on the NPU's innermost
// dim (C of a 4-d NHWC tensor, the last dim otherwise), C = 1, odd and wide, u8/i8 in and out,
// lowered with the tiler's chunk and a small one on every target, single and double
// buffering, run by the functional simulator: equal bit for bit to the reference kernel; no
// layer beats its roofline; a lookup along another axis is refused with the reason. Then
// whole models: conv ─► PRelu ─► conv and pool ─► Concat ─► BatchNormalization ─► Relu ─► conv,
// quantized and folded, compiled with every legal node on the NPU: the lookups are placed on
// the NPU (where the target runs lookups) and npu-sim equals the CPU bit for bit on every target.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

TEST(NpuChannelLookup, MatchesReferenceOnEveryTarget) {
  std::mt19937 rng(5301);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 6; ++i) {
    const DType xt = i % 2 ? DType::kU8 : DType::kI8, yt = i % 3 ? DType::kI8 : DType::kU8;
    const int64_t c = i == 0 ? 1 : i == 1 ? 2 * static_cast<int64_t>(rng() % 10) + 3 : 16 + static_cast<int64_t>(rng() % 60);
    Dims d;
    int64_t axis = 1;
    if (i % 3 == 0) {
      d = {1, c, static_cast<int64_t>(1 + rng() % 9), static_cast<int64_t>(1 + rng() % 9)};
    } else if (i % 3 == 1) {
      d = {1, static_cast<int64_t>(1 + rng() % 40), c};
      axis = -1;
    } else {
      d = {static_cast<int64_t>(1 + rng() % 30), c};
    }
    Graph g;
    Value* x = g.AddInput("x", MakeType(xt, d));
    Node* n = g.AddNode(OpKind::kQuantizedLookup, "prelu", {x, g.AddConstant("table", RandomQ(yt, {c, 256}, rng))}, 1, {"y"});
    n->attrs.Set("axis", axis);
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    const Tensor xv = RandomQ(xt, d, rng);
    auto want = EvaluateNode(*n, {&xv, &n->input(1)->constant()});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(*n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    ASSERT_TRUE(vl->eltwise.channel_lookup());
    for (const npu::Target& t : *targets) {
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseEltwiseTiling(vl->eltwise, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, 3 * c}) {
          int64_t a, b, y;
          auto p = npu::LowerEltwise(vl->eltwise, t, chunk, db, &a, &b, &y);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
          std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
          const std::vector<uint8_t> in = ToNpu(xv);
          std::copy(in.begin(), in.end(), dram.begin() + a);
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*p, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          auto got = FromNpu(dram.data() + y, n->output(0)->type);
          ASSERT_TRUE(got.ok());
          EXPECT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
              << DimsToString(d) << " " << DTypeName(xt) << " -> " << DTypeName(yt) << " on " << t.name
              << (db ? " double" : " single") << " chunk " << chunk;
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_GE(runs, 6 * 3 * 2 * 2);
}

// The NPU's rows hold the innermost dim: a per-channel lookup along another axis (axis 1 of a
// 3-d tensor) is refused with the reason, and so is a chunk that splits a row of channels.
TEST(NpuChannelLookup, RefusesAnotherAxisAndPartialRows) {
  std::mt19937 rng(5302);
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kU8, {1, 5, 7}));
  Node* n = g.AddNode(OpKind::kQuantizedLookup, "bn", {x, g.AddConstant("table", RandomQ(DType::kU8, {5, 256}, rng))}, 1, {"y"});
  n->attrs.Set("axis", int64_t{1});
  g.MarkOutput(n->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto vl = VectorLayerOf(*n);
  ASSERT_FALSE(vl.ok());
  EXPECT_NE(vl.status().message().find("along axis 1 of a 3-d tensor"), std::string::npos) << vl.status().message();
  auto t = npu::LoadTarget("edge-default");
  ASSERT_TRUE(t.ok());
  const npu::EltwiseLayer l = npu::EltwiseLayer::ChannelLookup("bn", 35, 5, std::vector<int8_t>(5 * 256, 0));
  int64_t a, b, y;
  EXPECT_FALSE(npu::LowerEltwise(l, *t, 12, false, &a, &b, &y).ok());
  EXPECT_TRUE(npu::LowerEltwise(l, *t, 15, false, &a, &b, &y).ok());
}

// x ─► conv ─► PRelu[C,1,1] ─► conv ─► y, and x ─► conv ─► AveragePool ─► Concat(·, conv) ─►
// BatchNormalization ─► Relu ─► conv ─► y: quantized, folded (one per-channel lookup each),
// compiled with every legal node on the NPU.
Graph PReluModel() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 10, 12}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({13, 3, 3, 3}, 61, 0.4)),
                                     g.AddConstant("b1", Normal({13}, 62, 0.1))}, pad, "conv1");
  Value* pr = Add(g, OpKind::kPRelu, {c1, g.AddConstant("slope", Normal({13, 1, 1}, 63, 0.3))}, {}, "prelu");
  Value* y = Add(g, OpKind::kConv, {pr, g.AddConstant("w2", Normal({8, 13, 3, 3}, 64, 0.2))}, pad, "conv2");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 3, 10, 12}, 600);
}

Graph BatchNormModel() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 12, 12}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({16, 3, 3, 3}, 71, 0.4))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Attributes ap;
  ap.Set("kernel_shape", Ints{3, 3});
  ap.Set("pads", Ints{1, 1, 1, 1});
  ap.Set("strides", Ints{1, 1});
  Value* pool = Add(g, OpKind::kAveragePool, {r1}, ap, "pool");
  Attributes ax;
  ax.Set("axis", int64_t{1});
  Value* cat = Add(g, OpKind::kConcat, {pool, r1}, ax, "concat");
  Tensor var = Normal({32}, 72, 0.5);
  for (int64_t i = 0; i < 32; ++i) var.data<float>()[i] = 0.2f + std::fabs(var.data<float>()[i]);
  Value* bn = Add(g, OpKind::kBatchNormalization,
                  {cat, g.AddConstant("gamma", Normal({32}, 73, 1.0)), g.AddConstant("beta", Normal({32}, 74, 0.5)),
                   g.AddConstant("mean", Normal({32}, 75, 0.5)), g.AddConstant("var", var)},
                  {}, "bn");
  Value* r2 = Add(g, OpKind::kRelu, {bn}, {}, "relu2");
  Value* y = Add(g, OpKind::kConv, {r2, g.AddConstant("w2", Normal({8, 32, 1, 1}, 76, 0.2))}, {}, "conv2");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 3, 12, 12}, 700);
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

void ExpectOnNpuAndBitExact(const Graph& g, const Dims& dims, const std::string& tag) {
  int lookups = 0;
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizedLookup && n->input(1)->constant().rank() == 2) ++lookups;
  ASSERT_EQ(lookups, 1) << PrintGraph(g);
  for (const Node* n : g.nodes()) EXPECT_NE(n->op(), OpKind::kPRelu);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok());
  const std::map<std::string, Tensor> in = {{"x", Normal(dims, 99)}};
  for (const npu::Target& t : *targets) {
    for (bool db : {false, true}) {
      SCOPED_TRACE(t.name + (db ? " double" : " single"));
      partition::PartitionOptions o;
      o.cost_rule = false;
      o.tiler.allow_double = db;
      auto r = CompileGraph(g.Clone(), t, tag, o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      int on_npu = 0;
      for (const auto& p : r->model.placements)
        if (p.node.find("/lookup") != std::string::npos) {
          if (t.SupportsOp("QuantizedLookup")) {
            EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node << ": " << p.reason;
          }
          on_npu += p.unit == artifact_io::Unit::kNpu;
        }
      EXPECT_EQ(on_npu, t.SupportsOp("QuantizedLookup") ? 1 : 0);  // edge-mcu runs no lookup
      const std::string path =
          (std::filesystem::temp_directory_path() / ("npu_channel_lookup_" + tag + t.name + ".edgec")).string();
      ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
      auto f = artifact_io::MappedArtifact::Open(path);
      ASSERT_TRUE(f.ok());
      auto l = LoadArtifact(**f);
      ASSERT_TRUE(l.ok()) << l.status().ToString();
      auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
      auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
      ASSERT_TRUE(sim.ok()) << sim.status().ToString();
      ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
      ASSERT_EQ(sim->outputs.size(), 1u);
      EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
      for (const LayerRun& lr : sim->layers)
        if (lr.simulated && lr.stats.cycles > 0) {
          EXPECT_GE(lr.stats.cycles + 1e-6, lr.stats.roofline_cycles(t)) << lr.node;
        }
      std::filesystem::remove(path);
    }
  }
}

TEST(NpuChannelLookup, PReluAfterAConvRunsOnTheNpuBitExact) {
  ExpectOnNpuAndBitExact(PReluModel(), {1, 3, 10, 12}, "prelu");
}

TEST(NpuChannelLookup, StandaloneBatchNormRunsOnTheNpuBitExact) {
  ExpectOnNpuAndBitExact(BatchNormModel(), {1, 3, 12, 12}, "bn");
}

}  // namespace
}  // namespace edgec::lower
