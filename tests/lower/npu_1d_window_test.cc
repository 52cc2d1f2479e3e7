// 1-d convolutions and pools on the NPU (passes/lift_1d_windows.cc, run by Int8Executable): a
// chain conv1d -> relu -> conv1d k9 -> add(first conv) -> relu -> depthwise conv1d -> conv1d
// stride 2 -> max pool -> average pool, quantized to int8, is 2-d with H = 1 with one Unsqueeze
// at its entry and one Squeeze at its exit and nothing that moves data between them; every node
// of it runs on the NPU in one segment, and the compiled file run on the simulated NPU equals
// the CPU's int8 kernels bit for bit on every target, single and double buffered.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "runtime/artifact_run.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

Attributes Window(Ints k, Ints s, Ints p, int64_t group = 1) {
  Attributes a;
  a.Set("kernel_shape", k);
  a.Set("strides", s);
  a.Set("pads", p);
  if (group != 1) a.Set("group", group);
  return a;
}

Value* Conv1d(Graph& g, Value* x, int64_t c, int64_t m, int64_t k, Attributes a, uint32_t seed, const std::string& name) {
  const int64_t group = a.GetInt("group", 1);
  return Add(g, OpKind::kConv, {x, g.AddConstant(name + ".w", Normal({m, c / group, k}, seed, 0.3)),
                                g.AddConstant(name + ".b", Normal({m}, seed + 1, 0.1))}, a, name);
}

const Dims kInput = {1, 16, 64};

Graph Chain1d() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, kInput));
  Value* c0 = Add(g, OpKind::kRelu, {Conv1d(g, x, 16, 32, 3, Window({3}, {1}, {1, 1}), 1, "conv0")}, {}, "relu0");
  Value* c1 = Conv1d(g, c0, 32, 32, 9, Window({9}, {1}, {4, 4}), 3, "conv1");
  Value* r = Add(g, OpKind::kRelu, {Add(g, OpKind::kAdd, {c1, c0}, {}, "add")}, {}, "relu1");
  Value* dw = Conv1d(g, r, 32, 32, 5, Window({5}, {1}, {2, 2}, 32), 5, "dw");
  Value* c2 = Conv1d(g, dw, 32, 48, 5, Window({5}, {2}, {2, 2}), 7, "conv2");
  Value* mp = Add(g, OpKind::kMaxPool, {c2}, Window({2}, {2}, {0, 0}), "maxpool");
  Value* ap = Add(g, OpKind::kAveragePool, {mp}, Window({3}, {1}, {1, 1}), "avgpool");
  g.MarkOutput(ap);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", kInput, 500, 4, DType::kI8);
}

bool MovesData(OpKind op) {
  return op == OpKind::kReshape || op == OpKind::kTranspose || op == OpKind::kSqueeze || op == OpKind::kUnsqueeze ||
         op == OpKind::kFlatten;
}

TEST(Npu1dWindow, ChainIs2dWithoutMovesInside) {
  const Graph g = Chain1d();
  std::map<OpKind, int> ops;
  for (const Node* n : g.nodes()) ++ops[n->op()];
  EXPECT_EQ(ops[OpKind::kQLinearConv], 4);
  EXPECT_EQ(ops[OpKind::kUnsqueeze], 1);
  EXPECT_EQ(ops[OpKind::kSqueeze], 1);
  EXPECT_EQ(ops[OpKind::kReshape] + ops[OpKind::kTranspose] + ops[OpKind::kFlatten], 0);
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kUnsqueeze) {
      // The entry reads the graph input's quantized [1, 16, 64] (or the input itself).
      EXPECT_EQ(n->input(0)->type.dims, kInput);
    } else if (n->op() == OpKind::kSqueeze) {
      EXPECT_TRUE(n->output(0)->is_graph_output() || n->output(0)->uses().size() == 1);
    } else if (n->op() != OpKind::kQuantizeLinear && n->op() != OpKind::kDequantizeLinear) {
      EXPECT_EQ(n->output(0)->type.rank(), 4) << n->Label();
    }
  }
}

TEST(Npu1dWindow, EveryNodeOnTheNpuAndNpuSimEqualsCpu) {
  const Graph g = Chain1d();
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (const npu::Target& t : *targets) {
    for (bool db : {true, false}) {
      partition::PartitionOptions o;
      o.tiler.allow_double = db;
      o.cost_rule = false;
      auto c = CompileGraph(g, t, "chain_1d", o);
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      if (t.name == "edge-default") {
        // The convs, pools, add and lookups and the entry and exit moves: one NPU segment.
        int npu_segments = 0;
        for (const auto& s : c->model.segments) npu_segments += s.unit == artifact_io::Unit::kNpu;
        EXPECT_EQ(npu_segments, 1) << t.name << "\n" << FormatPlacements(c->placements);
        for (const partition::NodePlacement& p : c->placements) {
          const OpKind op = p.node->op();
          if (op == OpKind::kQuantizeLinear || op == OpKind::kDequantizeLinear) continue;
          EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->Label() << ": " << p.reason;
          if (MovesData(op)) {
            EXPECT_TRUE(op == OpKind::kUnsqueeze || op == OpKind::kSqueeze) << p.node->Label();
          }
        }
      }
      const std::string path = (std::filesystem::temp_directory_path() /
                                fmt::format("chain_1d_{}_{}_{}.edgec", ::getpid(), t.name, db)).string();
      ASSERT_TRUE(artifact_io::WriteArtifact(path, c->model).ok());
      auto file = artifact_io::MappedArtifact::Open(path);
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      auto loaded = LoadArtifact(**file);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      std::map<std::string, Tensor> in = {{"x", Normal(kInput, 600 + runs)}};
      auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
      ASSERT_TRUE(sim.ok()) << sim.status().ToString();
      auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
      ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
      const Tensor &a = sim->outputs[0], &b = cpu->outputs[0];
      ASSERT_EQ(a.nbytes(), b.nbytes());
      EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << t.name << (db ? " double" : " single");
      for (const LayerRun& l : sim->layers) {
        if (l.simulated) {
          EXPECT_GE(l.stats.cycles + 1e-6, l.stats.roofline_cycles(t)) << l.node;
        }
      }
      std::filesystem::remove(path);
      ++runs;
    }
  }
  EXPECT_GE(runs, 6);
}

}  // namespace
}  // namespace edgec::lower
