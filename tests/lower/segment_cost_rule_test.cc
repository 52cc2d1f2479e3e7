// The partitioner's cost rule costs a node as part of the segment it would join
// (partition/partition.h): no second dispatch for a node next to legal ones, and the CPU side
// pays the crossings to its NPU neighbours and the split segment's extra dispatch. MacsOf
// counts the MACs of the MatMuls the NPU layer does not take, so the CPU side is not free.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "partition/partition.h"
#include "runtime/artifact_run.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using partition::NodePlacement;
using testing_quant::Add;
using testing_quant::Normal;

// x[1,8,12,12] -> conv1 3x3 -> sigmoid (a lookup on the vector cores) -> conv2 1x1.
Graph ConvLookupConv() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 12, 12}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({16, 8, 3, 3}, 1, 0.2)),
                                     g.AddConstant("b1", Normal({16}, 2, 0.1))}, pad, "conv1");
  Value* s = Add(g, OpKind::kSigmoid, {c1}, {}, "sigmoid");
  Value* c2 = Add(g, OpKind::kConv, {s, g.AddConstant("w2", Normal({16, 16, 1, 1}, 3, 0.3)),
                                     g.AddConstant("b2", Normal({16}, 4, 0.1))}, {}, "conv2");
  g.MarkOutput(c2);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 12, 12}, 50);
}

const NodePlacement* FindOp(const std::vector<NodePlacement>& ps, OpKind op, const std::string& prefix = "") {
  for (const auto& p : ps)
    if (p.node->op() == op && p.node->name().rfind(prefix, 0) == 0) return &p;
  return nullptr;
}

TEST(SegmentCostRuleTest, ASmallNodeBetweenNpuNodesSharesTheirDispatch) {
  Graph g = ConvLookupConv();
  const npu::Target t = npu::DefaultTarget();
  auto ps = partition::Partition(g, t);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  const NodePlacement* lut = FindOp(*ps, OpKind::kQuantizedLookup);
  ASSERT_TRUE(lut) << partition::FormatPlacements(*ps);
  ASSERT_TRUE(lut->legal) << lut->reason;
  const double dispatch_s = t.dispatch_overhead_cycles / t.clock_hz;
  // Alone it would be one task, dispatch included; inside the convs' segment it is not.
  EXPECT_DOUBLE_EQ(lut->npu_s, lut->npu_cycles / t.clock_hz - dispatch_s) << lut->reason;
  // On the CPU it would cross twice (its input and output live on the NPU) and split the
  // segment of the two convs into two dispatches.
  EXPECT_EQ(lut->transfer_bytes, 0);
  EXPECT_GT(lut->cpu_transfer_s, dispatch_s) << lut->reason;
  EXPECT_EQ(lut->unit, artifact_io::Unit::kNpu) << partition::FormatPlacements(*ps);
  EXPECT_NE(lut->reason.find("cpu"), std::string::npos);
}

TEST(SegmentCostRuleTest, ANodeAloneOnTheNpuPaysItsDispatch) {
  Graph g = ConvLookupConv();
  const npu::Target t = npu::DefaultTarget();
  partition::PartitionOptions o;
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQLinearConv) o.pins[n->name()] = artifact_io::Unit::kCpu;
  auto ps = partition::Partition(g, t, o);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  const NodePlacement* lut = FindOp(*ps, OpKind::kQuantizedLookup);
  ASSERT_TRUE(lut && lut->legal);
  EXPECT_DOUBLE_EQ(lut->npu_s, lut->npu_cycles / t.clock_hz) << lut->reason;
  EXPECT_DOUBLE_EQ(lut->cpu_transfer_s, 0.0) << lut->reason;  // its neighbours are on the CPU
  EXPECT_GT(lut->transfer_bytes, 0);
  // Placed by the comparison the reason prints.
  const bool npu = lut->npu_s + lut->transfer_s <= lut->cpu_s + lut->cpu_transfer_s;
  EXPECT_EQ(lut->unit, npu ? artifact_io::Unit::kNpu : artifact_io::Unit::kCpu) << lut->reason;
}

TEST(SegmentCostRuleTest, CpuCostCountsAttentionMacs) {
  // Q·Kᵀ of 4-d heads ([1, 2, 6, 8] x [1, 2, 8, 5]) is not an NPU layer (3-d only), but its
  // 2·6·5·8 MACs still cost the CPU; so does a float Attention's two products.
  Graph g;
  Value* q = g.AddInput("q", MakeType(DType::kF32, {1, 2, 6, 8}));
  Value* k = g.AddInput("k", MakeType(DType::kF32, {1, 2, 8, 5}));
  Value* v = g.AddInput("v", MakeType(DType::kF32, {1, 2, 5, 4}));
  Value* kt = g.AddInput("kt", MakeType(DType::kF32, {1, 2, 5, 8}));
  Value* s = Add(g, OpKind::kMatMul, {q, k}, {}, "scores");
  Value* a = Add(g, OpKind::kAttention, {q, kt, v}, {}, "attention");
  g.MarkOutput(s);
  g.MarkOutput(a);
  ASSERT_TRUE(InferShapes(g).ok());
  const Node* scores = s->producer();
  const Node* attention = a->producer();
  EXPECT_FALSE(GemmLayerShape(*scores).ok());
  EXPECT_EQ(MacsOf(*scores), 2 * 6 * 5 * 8);
  EXPECT_EQ(MacsOf(*attention), 2 * 6 * 5 * (8 + 4));
  partition::CpuCost cpu;
  EXPECT_DOUBLE_EQ(partition::CpuSeconds(*attention, cpu), 2 * 6 * 5 * (8 + 4) / cpu.int8_macs_per_s);
}

TEST(SegmentCostRuleTest, IndependentNeighboursOverlap) {
  // x -> conv_a, x -> conv_b (neither reads the other), then their sum: in one segment they are
  // a parallel group, so conv_b costs only what it takes beyond conv_a.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 10, 10}));
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("wa", Normal({16, 8, 1, 1}, 5, 0.3)),
                                    g.AddConstant("ba", Normal({16}, 6, 0.1))}, {}, "conv_a");
  Value* b = Add(g, OpKind::kConv, {x, g.AddConstant("wb", Normal({16, 8, 1, 1}, 7, 0.3)),
                                    g.AddConstant("bb", Normal({16}, 8, 0.1))}, {}, "conv_b");
  Value* y = Add(g, OpKind::kAdd, {a, b}, {}, "sum");
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  Graph q = testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 10, 10}, 60);
  const npu::Target t = npu::DefaultTarget();
  auto ps = partition::Partition(q, t);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  const NodePlacement* ca = FindOp(*ps, OpKind::kQLinearConv, "conv_a");
  const NodePlacement* cb = FindOp(*ps, OpKind::kQLinearConv, "conv_b");
  ASSERT_TRUE(ca && cb) << partition::FormatPlacements(*ps);
  ASSERT_TRUE(ca->legal && cb->legal);
  const NodePlacement* first = std::min(ca, cb);
  const NodePlacement* second = std::max(ca, cb);
  ASSERT_EQ(second - first, 1) << "the two convs are next to each other in graph order";
  EXPECT_DOUBLE_EQ(first->npu_s, (first->npu_cycles - t.dispatch_overhead_cycles) / t.clock_hz) << first->reason;
  EXPECT_DOUBLE_EQ(second->npu_s, std::max(0.0, second->npu_cycles - first->npu_cycles) / t.clock_hz)
      << second->reason;
}

TEST(SegmentCostRuleTest, GatherOfComputedIndicesSaysWhy) {
  // An embedding: token ids (i64, a graph input) pick rows of a constant table. An 8-bit table
  // is a gather DMA (legal whatever the ids' dtype); an f32 one is not, and the reason says so.
  for (DType dt : {DType::kI8, DType::kF32}) {
    Graph g;
    Value* ids = g.AddInput("ids", MakeType(DType::kI64, {1, 5}));
    Value* table = g.AddConstant("table", Tensor(dt, {16, 8}));
    Value* y = Add(g, OpKind::kGather, {table, ids}, {}, "embed");
    g.MarkOutput(y);
    ASSERT_TRUE(InferShapes(g).ok());
    auto ps = partition::Partition(g, npu::DefaultTarget());
    ASSERT_TRUE(ps.ok()) << ps.status().ToString();
    const NodePlacement& p = (*ps)[0];
    if (dt == DType::kI8) {
      EXPECT_TRUE(p.legal) << p.reason;
      continue;
    }
    EXPECT_EQ(p.unit, artifact_io::Unit::kCpu);
    EXPECT_EQ(p.code, partition::ReasonCode::kNotLowered);
    EXPECT_EQ(p.reason, "gather of computed indices: table 'table' is not a constant 8-bit tensor");
  }
}


// A squeeze-excite block between convs: the cost rule alone keeps some of its small layers on
// the CPU (each is cheaper there by itself); compiled, the island joins the NPU segment since
// the segment's simulated program with it is no slower than the split one plus the CPU's part,
// and the whole model's simulated latency is no worse than with the island on the CPU
// (lower/npu_islands.h). npu-sim still equals the CPU run bit for bit.
TEST(SegmentCostRuleTest, SqueezeExciteIslandJoinsItsSegment) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 32, 16, 16}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({64, 32, 3, 3}, 1, 0.1)),
                                     g.AddConstant("b1", Normal({64}, 2, 0.1))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* gp = Add(g, OpKind::kGlobalAveragePool, {r1}, {}, "se_pool");
  Value* f1 = Add(g, OpKind::kConv, {gp, g.AddConstant("wf1", Normal({16, 64, 1, 1}, 3, 0.2)),
                                     g.AddConstant("bf1", Normal({16}, 4, 0.1))}, {}, "se_fc1");
  Value* fr = Add(g, OpKind::kRelu, {f1}, {}, "se_relu");
  Value* f2 = Add(g, OpKind::kConv, {fr, g.AddConstant("wf2", Normal({64, 16, 1, 1}, 5, 0.2)),
                                     g.AddConstant("bf2", Normal({64}, 6, 0.1))}, {}, "se_fc2");
  Value* gate = Add(g, OpKind::kHardSigmoid, {f2}, {}, "se_gate");
  Value* m = Add(g, OpKind::kMul, {r1, gate}, {}, "se_mul");
  Value* c2 = Add(g, OpKind::kConv, {m, g.AddConstant("w2", Normal({32, 64, 1, 1}, 7, 0.2)),
                                     g.AddConstant("b2", Normal({32}, 8, 0.1))}, {}, "conv2");
  g.MarkOutput(c2);
  ASSERT_TRUE(InferShapes(g).ok());
  Graph q = testing_quant::QuantizeAndFold(std::move(g), "x", {1, 32, 16, 16}, 70);
  const npu::Target t = npu::DefaultTarget();
  auto ps = partition::Partition(q, t);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  partition::PartitionOptions split;  // the cost rule's own placement, its CPU nodes pinned there
  for (const NodePlacement& p : *ps)
    if (p.unit == artifact_io::Unit::kCpu && p.legal) split.pins[p.node->name()] = artifact_io::Unit::kCpu;
  ASSERT_FALSE(split.pins.empty()) << "the rule alone keeps part of the block on the CPU\n" << partition::FormatPlacements(*ps);
  auto run = [&](const partition::PartitionOptions& o, const std::string& tag, int* cpu_nodes) -> double {
    auto r = CompileGraph(q, t, "se", o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return 0;
    *cpu_nodes = 0;
    for (const auto& p : r->placements) *cpu_nodes += p.unit == artifact_io::Unit::kCpu;
    const std::string path = (std::filesystem::temp_directory_path() / (tag + std::to_string(::getpid()) + ".edgec")).string();
    EXPECT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
    auto file = artifact_io::MappedArtifact::Open(path);
    EXPECT_TRUE(file.ok());
    auto loaded = LoadArtifact(**file);
    EXPECT_TRUE(loaded.ok());
    const std::map<std::string, Tensor> in = {{"x", Normal({1, 32, 16, 16}, 71)}};
    auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
    auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
    std::filesystem::remove(path);
    EXPECT_TRUE(sim.ok() && cpu.ok());
    if (!sim.ok() || !cpu.ok()) return 0;
    EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), cpu->outputs[0].nbytes()), 0) << tag;
    return sim->latency_s();
  };
  int joined_cpu = 0, split_cpu = 0;
  const double joined = run({}, "se_joined_", &joined_cpu);
  const double apart = run(split, "se_split_", &split_cpu);
  EXPECT_LT(joined_cpu, split_cpu);
  EXPECT_LE(joined, apart);
  EXPECT_GT(joined, 0);
}

}  // namespace
}  // namespace edgec::lower
