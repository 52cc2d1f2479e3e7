// Partition, compile and run: placement reasons on a small CNN that has what the NPU takes
// (convs, a depthwise conv, a max pool, a residual add, a Gemm) and what it does not
// (Softmax, float islands), and the
// compiled file run on the simulated NPU vs on the CPU's int8 kernels: the outputs must be
// equal bit for bit, on every target in targets/, with single and double buffering.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <tuple>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "quant/pipeline.h"
#include "report/html_report.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
using partition::Partition;
using partition::PartitionOptions;
using partition::NodePlacement;
using partition::NpuSupport;
namespace {

using Ints = std::vector<int64_t>;

using testing_quant::Add;
using testing_quant::Normal;

// x[1,8,12,12] -> conv1 3x3 -> relu -> maxpool 3x3 -> dw 3x3 (group 16) -> relu -> convb 1x1
// -> add(maxpool) -> relu -> conv3 1x1 stride 2 -> gap -> flatten -> fc -> softmax
Graph SmallCnn() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 12, 12}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Attributes dw = pad;
  dw.Set("group", int64_t{16});
  Attributes s2;
  s2.Set("strides", Ints{2, 2});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({16, 8, 3, 3}, 1, 0.2)),
                                     g.AddConstant("b1", Normal({16}, 2, 0.1))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Attributes mp = pad;
  mp.Set("kernel_shape", Ints{3, 3});
  Value* m = Add(g, OpKind::kMaxPool, {r1}, mp, "maxpool");
  Value* c2 = Add(g, OpKind::kConv, {m, g.AddConstant("w2", Normal({16, 1, 3, 3}, 3, 0.3)),
                                     g.AddConstant("b2", Normal({16}, 4, 0.1))}, dw, "dw");
  Value* r2 = Add(g, OpKind::kRelu, {c2}, {}, "relu2");
  Value* cb = Add(g, OpKind::kConv, {r2, g.AddConstant("wb", Normal({16, 16, 1, 1}, 9, 0.3)),
                                     g.AddConstant("bb", Normal({16}, 10, 0.1))}, {}, "convb");
  Value* sum = Add(g, OpKind::kAdd, {cb, m}, {}, "add");
  Value* r3 = Add(g, OpKind::kRelu, {sum}, {}, "relu3");
  Value* c3 = Add(g, OpKind::kConv, {r3, g.AddConstant("w3", Normal({24, 16, 1, 1}, 5, 0.3)),
                                     g.AddConstant("b3", Normal({24}, 6, 0.1))}, s2, "conv3");
  Value* p = Add(g, OpKind::kGlobalAveragePool, {c3}, {}, "gap");
  Value* f = Add(g, OpKind::kFlatten, {p}, {}, "flatten");
  Attributes tb;
  tb.Set("transB", int64_t{1});
  Value* fc = Add(g, OpKind::kGemm, {f, g.AddConstant("wf", Normal({10, 24}, 7, 0.4)),
                                     g.AddConstant("bf", Normal({10}, 8, 0.1))}, tb, "fc");
  Value* y = Add(g, OpKind::kSoftmax, {fc}, {}, "softmax");
  g.MarkOutput(y);
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

// The quantized (QDQ) and folded integer graph.
Graph IntegerCnn(DType storage) {
  Graph g = SmallCnn();
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 12, 12}, 100, 6, storage);
}

const NodePlacement* Find(const std::vector<NodePlacement>& ps, const std::string& prefix, OpKind op) {
  for (const auto& p : ps)
    if (p.node->op() == op && p.node->name().rfind(prefix, 0) == 0) return &p;
  return nullptr;
}

TEST(PartitionTest, ReasonsForEveryNode) {
  Graph g = IntegerCnn(DType::kI8);
  PartitionOptions slow;  // a slow CPU, so that the cost rule sends these tiny layers to the NPU
  slow.cpu.int8_macs_per_s = 1e8;
  slow.cpu.copy_bytes_per_s = 1e7;
  auto ps = Partition(g, npu::DefaultTarget(), slow);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  ASSERT_EQ(ps->size(), static_cast<size_t>(g.num_nodes()));
  for (const auto& p : *ps) EXPECT_FALSE(p.reason.empty()) << p.node->Label();
  const NodePlacement* conv1 = Find(*ps, "conv1", OpKind::kQLinearConv);
  ASSERT_TRUE(conv1);
  EXPECT_EQ(conv1->unit, artifact_io::Unit::kNpu) << conv1->reason;
  // The residual add and the max pool run on the vector cores.
  const NodePlacement* add = Find(*ps, "", OpKind::kQLinearAdd);
  ASSERT_TRUE(add) << FormatPlacements(*ps);
  EXPECT_EQ(add->unit, artifact_io::Unit::kNpu) << add->reason;
  EXPECT_NE(add->reason.find("chunk"), std::string::npos) << add->reason;
  const NodePlacement* pool = Find(*ps, "maxpool", OpKind::kMaxPool);
  ASSERT_TRUE(pool) << FormatPlacements(*ps);
  EXPECT_EQ(pool->unit, artifact_io::Unit::kNpu) << pool->reason;
  EXPECT_NE(pool->reason.find("rows x"), std::string::npos) << pool->reason;
  // The softmax of the quantized logits folds to a QLinearSoftmax: legal on edge-default's
  // vector cores (ten values: placed by cost), an unsupported op on edge-mcu (its minimal list).
  const NodePlacement* soft = Find(*ps, "softmax", OpKind::kQLinearSoftmax);
  ASSERT_TRUE(soft) << FormatPlacements(*ps);
  EXPECT_TRUE(soft->legal) << soft->reason;
  EXPECT_NE(soft->reason.find("npu"), std::string::npos) << soft->reason;
  auto mcu = npu::LoadTarget("edge-mcu");
  ASSERT_TRUE(mcu.ok()) << mcu.status().ToString();
  auto on_mcu = Partition(g, *mcu, slow);
  ASSERT_TRUE(on_mcu.ok()) << on_mcu.status().ToString();
  const NodePlacement* mcu_soft = Find(*on_mcu, "softmax", OpKind::kQLinearSoftmax);
  ASSERT_TRUE(mcu_soft);
  EXPECT_EQ(mcu_soft->unit, artifact_io::Unit::kCpu);
  EXPECT_EQ(mcu_soft->reason, "unsupported op Softmax");
  const NodePlacement* dw = Find(*ps, "dw", OpKind::kQLinearConv);  // on the vector cores
  ASSERT_TRUE(dw) << FormatPlacements(*ps);
  EXPECT_EQ(dw->unit, artifact_io::Unit::kNpu) << dw->reason;
  EXPECT_NE(dw->reason.find("rows x"), std::string::npos) << dw->reason;
  // The model's float boundary (the input's Quantize, the output's Dequantize) is legal where
  // the vector cores declare f32 (edge-default), the target's reason where not (edge-mcu).
  const NodePlacement* q = Find(*ps, "", OpKind::kQuantizeLinear);
  ASSERT_TRUE(q) << FormatPlacements(*ps);
  EXPECT_TRUE(q->legal) << q->reason;
  const NodePlacement* mcu_q = Find(*on_mcu, "", OpKind::kQuantizeLinear);
  ASSERT_TRUE(mcu_q);
  EXPECT_EQ(mcu_q->unit, artifact_io::Unit::kCpu);
  EXPECT_EQ(mcu_q->reason, "unsupported op QuantizeLinear");
}

TEST(PartitionTest, U8NeedsTheDtypeAndCostRuleCanKeepTinyLayers) {
  Graph g = IntegerCnn(DType::kU8);
  auto ps = Partition(g, npu::DefaultTarget());  // default lists i8, not u8
  ASSERT_TRUE(ps.ok());
  const NodePlacement* conv1 = Find(*ps, "conv1", OpKind::kQLinearConv);
  ASSERT_TRUE(conv1);
  EXPECT_EQ(conv1->reason, "dtype u8 not supported");
  // A CPU a million times faster wins every layer on cost.
  Graph g8 = IntegerCnn(DType::kI8);
  PartitionOptions fast;
  fast.cpu.int8_macs_per_s = 1e18;
  auto ps8 = Partition(g8, npu::DefaultTarget(), fast);
  ASSERT_TRUE(ps8.ok());
  const NodePlacement* c = Find(*ps8, "conv1", OpKind::kQLinearConv);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->unit, artifact_io::Unit::kCpu);
  EXPECT_EQ(c->reason.rfind("cost: cpu", 0), 0u) << c->reason;
  // Its input comes from the input's Quantize, legal on the NPU: the CPU side pays the crossing.
  EXPECT_EQ(c->transfer_bytes, 0);
  EXPECT_GT(c->cpu_transfer_s, 0);
}

TEST(PartitionTest, DynamicShapeStaysOnCpu) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI8, {-1, 4, 5, 5}));
  auto scalar = [&](const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); };
  auto zp = [&](const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int8_t>(DType::kI8, {}, {0})); };
  Tensor w = Tensor::FromVector<int8_t>(DType::kI8, {2, 4, 1, 1}, std::vector<int8_t>(8, 1));
  Value* y = Add(g, OpKind::kQLinearConv,
                 {x, scalar("sx", 0.1f), zp("zx"), g.AddConstant("w", w), scalar("sw", 0.1f), zp("zw"),
                  scalar("sy", 0.2f), zp("zy")}, {}, "qc");
  g.MarkOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(NpuSupport(*g.nodes()[0], npu::DefaultTarget()), "dynamic shape");
}

TEST(PartitionTest, VectorCoreReasons) {
  // An add broadcasting along rows (not a channel row or a scalar) and a max pool on f32 stay
  // on the CPU, each with why; a max pool with ceil_mode is lowered (its last windows padded).
  Graph g;
  Value* a = g.AddInput("a", MakeType(DType::kI8, {1, 4, 5, 5}));
  Value* b = g.AddInput("b", MakeType(DType::kI8, {1, 1, 5, 5}));
  Value* f = g.AddInput("f", MakeType(DType::kF32, {1, 4, 5, 5}));
  auto scalar = [&](const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); };
  auto zp = [&](const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int8_t>(DType::kI8, {}, {0})); };
  Value* y = Add(g, OpKind::kQLinearAdd,
                 {a, scalar("sa", 0.1f), zp("za"), b, scalar("sb", 0.1f), zp("zb"), scalar("sy", 0.2f), zp("zy")}, {},
                 "badd");
  Attributes ceil;
  ceil.Set("kernel_shape", Ints{2, 2});
  ceil.Set("strides", Ints{2, 2});
  ceil.Set("ceil_mode", int64_t{1});
  Value* p = Add(g, OpKind::kMaxPool, {y}, ceil, "ceilpool");
  Attributes k2;
  k2.Set("kernel_shape", Ints{2, 2});
  Value* pf = Add(g, OpKind::kMaxPool, {f}, k2, "fpool");
  g.MarkOutput(p);
  g.MarkOutput(pf);
  ASSERT_TRUE(InferShapes(g).ok());
  npu::Target t = npu::DefaultTarget();
  t.supported_dtypes.push_back("f32");  // so that the lowering itself is asked
  EXPECT_NE(NpuSupport(*g.nodes()[0], t).find("broadcasting add"), std::string::npos) << NpuSupport(*g.nodes()[0], t);
  EXPECT_EQ(NpuSupport(*g.nodes()[1], t), "");
  EXPECT_NE(NpuSupport(*g.nodes()[2], t).find("int8 only"), std::string::npos) << NpuSupport(*g.nodes()[2], t);
}

TEST(PartitionTest, QuantizedMulNeedsMulInTheTarget) {
  // The squeeze-excitation QLinearMul: the targets that list Mul take it on the vector cores
  // (a per-channel gate), edge-mcu does not list it.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI8, {1, 16, 6, 6}));
  Value* gate = g.AddInput("gate", MakeType(DType::kI8, {1, 16, 1, 1}));
  auto scalar = [&](const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); };
  auto zp = [&](const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int8_t>(DType::kI8, {}, {0})); };
  g.MarkOutput(Add(g, OpKind::kQLinearMul,
                   {x, scalar("sx", 0.1f), zp("zx"), gate, scalar("sg", 0.004f), zp("zg"), scalar("sy", 0.05f), zp("zy")},
                   {}, "se_mul"));
  ASSERT_TRUE(InferShapes(g).ok());
  for (const char* target : {"edge-default", "edge-large", "edge-mcu"}) {
    auto t = npu::LoadTarget(target);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(NpuSupport(*g.nodes()[0], *t), std::string(target) == "edge-mcu" ? "unsupported op Mul" : "") << target;
  }
  auto v = VectorLayerOf(*g.nodes()[0]);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->eltwise.op, npu::VecOp::kMul);
  EXPECT_EQ(v->eltwise.broadcast, npu::EltwiseLayer::Broadcast::kRow);
  EXPECT_EQ(v->eltwise.cols, 16);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()) + ".edgec")).string();
}

// Compiles `g` for `t`, writes and maps the file, runs it on both devices.
void CheckBitExact(const Graph& g, const npu::Target& t, bool double_buffer, DType storage) {
  PartitionOptions o;
  o.cost_rule = false;
  o.tiler.allow_double = double_buffer;
  auto r = CompileGraph(g, t, "small_cnn", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  int npu = 0;
  for (const auto& p : r->placements) npu += p.unit == artifact_io::Unit::kNpu;
  EXPECT_GE(npu, 2) << t.name << "\n" << FormatPlacements(r->placements);
  const std::string path = TempPath("compile_run_");
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto file = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto loaded = LoadArtifact(**file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  // The activation memory plan came through the file: every non-constant value placed
  // inside the arena.
  const auto& meta = loaded->meta;
  EXPECT_GT(meta.arena_bytes, 0);
  int64_t values = 0;
  for (const Node* n : g.nodes()) values += n->num_outputs();
  EXPECT_EQ(static_cast<int64_t>(meta.values.size()), values + static_cast<int64_t>(g.inputs().size()));
  for (const auto& v : meta.values) {
    EXPECT_GE(v.offset, 0) << v.value;
    EXPECT_LE(v.offset + v.bytes, meta.arena_bytes) << v.value;
  }
  for (int seed = 0; seed < 3; ++seed) {
    std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 500 + seed)}};
    auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    ASSERT_EQ(sim->outputs.size(), 1u);
    const Tensor &a = sim->outputs[0], &b = cpu->outputs[0];
    ASSERT_EQ(a.nbytes(), b.nbytes());
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0)
        << t.name << (double_buffer ? " double" : " single") << " seed " << seed;
    // The simulated layers obey the roofline and count the layer's MACs.
    int simulated = 0;
    for (const LayerRun& l : sim->layers) {
      if (!l.simulated) continue;
      ++simulated;
      EXPECT_GE(l.stats.cycles + 1e-6, l.stats.roofline_cycles(t)) << l.node;
      EXPECT_EQ(l.stats.macs, l.macs) << l.node;
    }
    EXPECT_EQ(simulated, npu);
    // The float boundary on the NPU reads and writes the caller's buffers in place (no copy);
    // on the CPU (no f32 on the vector cores) its int8 side crosses as a copy.
    if (npu == static_cast<int>(r->placements.size())) EXPECT_EQ(sim->copies, 0) << t.name;
    else EXPECT_GT(sim->copies, 0) << t.name;
    EXPECT_GT(sim->latency_s(), 0);
  }
  std::filesystem::remove(path);
}

TEST(CompileRunTest, HtmlReportListsEveryLayerWithItsUnitAndReason) {
  PartitionOptions o;
  o.cost_rule = false;
  const npu::Target& t = npu::DefaultTarget();
  auto r = CompileGraph(IntegerCnn(DType::kI8), t, "small_cnn", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string path = TempPath("report_");
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto file = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(file.ok());
  auto loaded = LoadArtifact(**file);
  ASSERT_TRUE(loaded.ok());
  auto run = RunArtifact(*loaded, ArtifactDevice::kNpuSim, {{"x", Normal({1, 8, 12, 12}, 7)}});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const std::string html = report::ArtifactRunHtml("small.edgec", *loaded, *run);
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "the report is static";
  EXPECT_EQ(html.find("http"), html.find("http://www.w3.org/2000/svg")) << "no external resources";
  // One table row and one bar per layer; every CPU placement's reason is shown.
  size_t rows = 0;
  for (size_t at = html.find("<tr class="); at != std::string::npos; at = html.find("<tr class=", at + 1)) ++rows;
  EXPECT_EQ(rows, run->layers.size());
  size_t bars = 0;
  for (size_t at = html.find("<rect"); at != std::string::npos; at = html.find("<rect", at + 1)) ++bars;
  EXPECT_EQ(bars, run->layers.size());
  for (const auto& p : loaded->meta.placements) {
    if (p.unit == artifact_io::Unit::kCpu && !p.reason.empty()) {
      std::string escaped;
      for (char c : p.reason) escaped += c == '<' ? std::string("&lt;") : c == '>' ? std::string("&gt;") : c == '&' ? std::string("&amp;") : c == '"' ? std::string("&quot;") : std::string(1, c);
      EXPECT_NE(html.find(escaped), std::string::npos) << p.node << ": " << p.reason;
    }
  }
  EXPECT_NE(html.find(fmt::format("{:.3f} ms", run->latency_s() * 1e3)), std::string::npos);
  std::filesystem::remove(path);
}

TEST(CompileRunTest, NpuSimEqualsCpuOnEveryTarget) {
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  ASSERT_GE(targets->size(), 3u);
  const Graph g = IntegerCnn(DType::kI8);
  for (const npu::Target& t : *targets)
    for (bool db : {true, false}) CheckBitExact(g, t, db, DType::kI8);
}

TEST(CompileRunTest, U8ActivationsOnATargetThatHasThem) {
  auto t = npu::LoadTarget("edge-large");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(t->SupportsDType("u8"));
  CheckBitExact(IntegerCnn(DType::kU8), *t, true, DType::kU8);
}

// x -> conv1 -> sigmoid -> [gap -> fc -> sigmoid = gate] -> mul (squeeze-excitation) ->
// concat(conv1) -> transpose (H <-> W) -> conv2, quantized to int8 (lookups, QLinearMul, int8
// Concat and Transpose).
Graph SeBlockInt8() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 16, 24, 24}));
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({32, 16, 1, 1}, 11, 0.3)),
                                     g.AddConstant("b1", Normal({32}, 12, 0.1))}, {}, "conv1");
  Value* s = Add(g, OpKind::kSigmoid, {c1}, {}, "sigmoid");
  Value* p = Add(g, OpKind::kGlobalAveragePool, {s}, {}, "gap");
  Value* f = Add(g, OpKind::kConv, {p, g.AddConstant("wf", Normal({32, 32, 1, 1}, 13, 0.3)),
                                    g.AddConstant("bf", Normal({32}, 14, 0.1))}, {}, "fc");
  Value* gate = Add(g, OpKind::kSigmoid, {f}, {}, "gate");
  Value* m = Add(g, OpKind::kMul, {s, gate}, {}, "se_mul");
  Attributes cat;
  cat.Set("axis", int64_t{1});
  Value* cc = Add(g, OpKind::kConcat, {m, c1}, cat, "concat");
  Attributes tr;
  tr.Set("perm", Ints{0, 1, 3, 2});
  Value* t = Add(g, OpKind::kTranspose, {cc}, tr, "transpose");
  Value* c2 = Add(g, OpKind::kConv, {t, g.AddConstant("w2", Normal({8, 64, 1, 1}, 15, 0.3)),
                                     g.AddConstant("b2", Normal({8}, 16, 0.1))}, {}, "conv2");
  g.MarkOutput(c2);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 16, 24, 24}, 200, 4, DType::kI8);
}

TEST(CompileRunTest, SqueezeExcitationLookupConcatTransposeGoToTheNpu) {
  const Graph g = SeBlockInt8();
  std::map<OpKind, int> ops;
  for (const Node* n : g.nodes()) ++ops[n->op()];
  ASSERT_EQ(ops[OpKind::kQuantizedLookup], 2);
  ASSERT_EQ(ops[OpKind::kQLinearMul], 1);
  ASSERT_EQ(ops[OpKind::kConcat], 1);
  ASSERT_EQ(ops[OpKind::kTranspose], 1);
  const std::set<OpKind> new_ops = {OpKind::kQuantizedLookup, OpKind::kQLinearMul, OpKind::kConcat, OpKind::kTranspose};
  // edge-default, by the cost rule: every node on the NPU; the gate's path on the pooled 1 x 1
  // pixel (32 values) is cheaper on the CPU node by node, but as an island it joins the
  // segment, whose simulated program is faster whole (lower/npu_islands.h); with the cost rule
  // off (--all-npu) all of them as well.
  auto def = npu::LoadTarget("edge-default");
  ASSERT_TRUE(def.ok());
  auto r = CompileGraph(g, *def, "se_block");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string table = FormatPlacements(r->placements);
  for (const NodePlacement& p : r->placements) {
    const OpKind op = p.node->op();
    if (op == OpKind::kQuantizeLinear || op == OpKind::kDequantizeLinear) continue;
    if (p.node->name().rfind("fc/", 0) == 0) {
      EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->Label();
      EXPECT_EQ(p.reason.rfind("segment: npu", 0), 0u) << p.node->Label() << ": " << p.reason;
      continue;
    }
    EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->Label() << ": " << p.reason << "\n" << table;
  }
  PartitionOptions all;
  all.cost_rule = false;
  auto ra = CompileGraph(g, *def, "se_block", all);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  for (const NodePlacement& p : ra->placements)
    if (p.node->op() != OpKind::kQuantizeLinear && p.node->op() != OpKind::kDequantizeLinear) {
      EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->Label() << ": " << p.reason;
    }
  EXPECT_NE(table.find("2 strided DMA copies on the NPU"), std::string::npos) << table;
  EXPECT_NE(table.find("1 of them transposes that remain real data movement"), std::string::npos) << table;
  // edge-mcu lists none of the new ops: each falls back with its reason.
  auto mcu = npu::LoadTarget("edge-mcu");
  ASSERT_TRUE(mcu.ok());
  auto rm = CompileGraph(g, *mcu, "se_block");
  ASSERT_TRUE(rm.ok()) << rm.status().ToString();
  const std::map<OpKind, std::string> why = {{OpKind::kQuantizedLookup, "unsupported op QuantizedLookup"},
                                             {OpKind::kQLinearMul, "unsupported op Mul"},
                                             {OpKind::kConcat, "unsupported op Concat"},
                                             {OpKind::kTranspose, "unsupported op Transpose"}};
  for (const NodePlacement& p : rm->placements) {
    if (!new_ops.count(p.node->op())) continue;
    EXPECT_EQ(p.unit, artifact_io::Unit::kCpu) << p.node->Label();
    EXPECT_EQ(p.reason, why.at(p.node->op())) << p.node->Label();
  }
  // The compiled files: npu-sim == cpu bit for bit (single and double buffering on edge-default).
  // --all-npu on edge-default and edge-large, so that the gate's path runs on the NPU too.
  auto large = npu::LoadTarget("edge-large");
  ASSERT_TRUE(large.ok());
  const std::vector<std::tuple<npu::Target, bool, bool>> cases = {
      {*def, true, true}, {*def, false, true}, {*def, true, false}, {*mcu, true, true}, {*large, true, false}};
  for (const auto& [t, db, cost_rule] : cases) {
    PartitionOptions o;
    o.tiler.allow_double = db;
    o.cost_rule = cost_rule;
    auto c = CompileGraph(g, t, "se_block", o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const std::string path = TempPath("se_block_");
    ASSERT_TRUE(artifact_io::WriteArtifact(path, c->model).ok());
    auto file = artifact_io::MappedArtifact::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto loaded = LoadArtifact(**file);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::map<std::string, Tensor> in = {{"x", Normal({1, 16, 24, 24}, 300)}};
    auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    const Tensor &a = sim->outputs[0], &b = cpu->outputs[0];
    ASSERT_EQ(a.nbytes(), b.nbytes());
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << t.name << (db ? " double" : " single");
    for (const LayerRun& l : sim->layers)
      if (l.simulated) {
        EXPECT_GE(l.stats.cycles + 1e-6, l.stats.roofline_cycles(t)) << l.node;
      }
    std::filesystem::remove(path);
  }
}

TEST(CompileRunTest, ForeignFileIsRefusedByName) {
  const std::string path = TempPath("foreign_");
  {
    std::ofstream out(path, std::ios::binary);
    out << "this is not a compiled model, just some bytes long enough to look at";
  }
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find(path), std::string::npos) << f.status().message();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace edgec::lower
