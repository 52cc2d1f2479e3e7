// Dilated depthwise QLinearConvs, and depthwise ones with a channel multiplier, compiled into
// NPU segments (lower/npu_layers.cc DepthwiseLayerOf, lower.h DepthwiseLayer): placed on the NPU's vector cores
// with no fallback, and npu-sim equals the reference kernels and the CPU's int8 kernels bit for
// bit, on every target; in a cascade (a chain whose first inner tensor does not fit edge-mcu's
// SRAM) the stripes carry the dilated halo ((k - 1) * d + 1 rows) and still reproduce the
// unstriped output.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "npu/segment.h"
#include "npu/sim.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

// A depthwise conv of `c` channels (m filters each), kernel k, dilation d, stride s, pads
// [top, left, bottom, right].
Value* Depthwise(Graph& g, Value* x, int c, int k, int d, int s, Ints pads, uint32_t seed, const std::string& name,
                 int m = 1) {
  Attributes a;
  a.Set("group", int64_t{c});
  a.Set("dilations", Ints{d, d});
  a.Set("strides", Ints{s, s});
  a.Set("pads", pads);
  return Add(g, OpKind::kConv, {x, g.AddConstant(name + ".w", Normal({c * m, 1, k, k}, seed, 0.3)),
                                g.AddConstant(name + ".b", Normal({c * m}, seed + 1, 0.1))}, a, name);
}

// x[1,cin,h,w] -> conv 3x3 (32) -> relu -> the depthwise convs of `dws` -> conv kxk (16) -> y.
struct Dw { int k, d, s; Ints pads; int m = 1; };
Graph Chain(int cin, int h, int w, const std::vector<Dw>& dws, int last_k = 3) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, cin, h, w}));
  Attributes p1;
  p1.Set("pads", Ints{1, 1, 1, 1});
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({32, cin, 3, 3}, 71, 0.2)),
                                    g.AddConstant("b1", Normal({32}, 72, 0.1))}, p1, "conv1");
  Value* v = Add(g, OpKind::kRelu, {a}, {}, "relu");
  int c = 32;
  for (size_t i = 0; i < dws.size(); ++i) {
    v = Depthwise(g, v, c, dws[i].k, dws[i].d, dws[i].s, dws[i].pads, 80 + 2 * static_cast<uint32_t>(i),
                  "dw" + std::to_string(i), dws[i].m);
    c *= dws[i].m;
  }
  Attributes p3;
  const int64_t half = last_k / 2;
  p3.Set("pads", Ints{half, half, half, half});
  Value* y = Add(g, OpKind::kConv, {v, g.AddConstant("w3", Normal({16, c, last_k, last_k}, 75, 0.05)),
                                    g.AddConstant("b3", Normal({16}, 76, 0.1))}, p3, "conv3");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, cin, h, w}, 500, 4, DType::kI8);
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

struct Result {
  std::set<std::string> dw_on_npu;  // the depthwise nodes placed on the NPU
  int stripes = 0;
  int64_t spilled = 0;
  bool same_as_cpu = false, same_as_reference = false;
};

Result CompileAndRun(const Graph& g, const npu::Target& t, const Tensor& x, bool cascades, const std::string& tag) {
  Result res;
  partition::PartitionOptions o;
  o.cost_rule = false;  // every legal node on the NPU: the depthwise layers must be legal
  o.tiler.cascades = cascades;
  Graph copy = g.Clone();
  auto r = CompileGraph(copy, t, "dilated", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return res;
  for (const auto& p : r->model.placements) {
    if (p.node.find("dw") == std::string::npos) continue;
    EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << t.name << " " << p.node << ": " << p.reason;
    if (p.unit == artifact_io::Unit::kNpu) res.dw_on_npu.insert(p.node);
  }
  const std::string path = (std::filesystem::temp_directory_path() / ("npu_dilated_dw_" + tag + ".edgec")).string();
  EXPECT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  EXPECT_TRUE(f.ok());
  auto l = LoadArtifact(**f);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  if (!l.ok()) return res;
  for (const auto& s : l->meta.segments) {
    if (s.unit != artifact_io::Unit::kNpu || s.npu.instructions.empty()) continue;
    auto p = npu::DecodeProgram(s.npu.instructions);
    EXPECT_TRUE(p.ok());
    for (const std::string& n : p->layer_names) res.stripes += n.find("[stripe") != std::string::npos;
    for (const auto& v : s.sram_plan)
      if (!v.in_sram && v.reason.rfind("spilled", 0) == 0) res.spilled += v.bytes;
  }
  const std::map<std::string, Tensor> in = {{"x", x}};
  auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
  // The reference kernels with the NPU's integer requantization (multiplier and shift), as
  // the CPU runs the nodes a compiled model places on the NPU (runtime/artifact_run.cc).
  Graph fixed = g.Clone();
  for (Node* n : fixed.nodes())
    if (n->op() == OpKind::kQLinearConv) n->attrs.Set("edgec_requant", std::string("fixed_point"));
  auto ref = ReferenceExecutor(fixed).Run(in);
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_TRUE(ref.ok()) << ref.status().ToString();
  if (sim.ok() && cpu.ok() && ref.ok() && sim->outputs.size() == 1 && cpu->outputs.size() == 1 && ref->size() == 1) {
    res.same_as_cpu = SameBytes(sim->outputs[0], cpu->outputs[0]);
    res.same_as_reference = SameBytes(sim->outputs[0], (*ref)[0]);
    for (const LayerRun& lr : sim->layers) {
      if (lr.simulated && lr.stats.cycles > 0) {
        EXPECT_GE(lr.stats.cycles + 1e-6, lr.stats.roofline_cycles(t)) << lr.node;
      }
    }
  }
  std::filesystem::remove(path);
  return res;
}

TEST(NpuDilatedDepthwiseTest, PlacedOnTheNpuAndBitExactOnEveryTarget) {
  // Dilation 2 with "same" padding (the segmentation nets' last stage), dilation 3 at stride 2
  // with unequal padding, and a dilation 2 kernel 5 on odd sizes.
  const Graph g = Chain(16, 23, 19, {{3, 2, 1, {2, 2, 2, 2}}, {3, 3, 2, {3, 2, 2, 3}}, {5, 2, 1, {4, 4, 4, 4}}});
  const Tensor x = Normal({1, 16, 23, 19}, 77);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  for (const npu::Target& t : *targets) {
    const Result r = CompileAndRun(g, t, x, true, t.name);
    EXPECT_EQ(r.dw_on_npu.size(), 3u) << t.name;
    EXPECT_TRUE(r.same_as_cpu) << t.name << ": npu-sim != cpu";
    EXPECT_TRUE(r.same_as_reference) << t.name << ": npu-sim != the reference kernels";
  }
}

TEST(NpuDilatedDepthwiseTest, ChannelMultiplierPlacedOnTheNpuAndBitExact) {
  // group = 32 with 64 and then 192 outputs: multipliers 2 and 3 (the second dilated, stride 2).
  const Graph g = Chain(8, 15, 17, {{3, 1, 1, {1, 1, 1, 1}, 2}, {3, 2, 2, {2, 2, 2, 2}, 3}});
  const Tensor x = Normal({1, 8, 15, 17}, 79);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  for (const npu::Target& t : *targets) {
    const Result r = CompileAndRun(g, t, x, true, t.name + "_mult");
    EXPECT_EQ(r.dw_on_npu.size(), 2u) << t.name;
    EXPECT_TRUE(r.same_as_cpu) << t.name << ": npu-sim != cpu";
    EXPECT_TRUE(r.same_as_reference) << t.name << ": npu-sim != the reference kernels";
  }
}

TEST(NpuDilatedDepthwiseTest, CascadeStripesCarryTheDilatedHalo) {
  // conv1's output (32 x 96 x 96 = 288 KiB) does not fit edge-mcu's 256 KiB SRAM: without
  // cascades it spills, with them conv1 and the depthwise 3x3 (dilation 2, stride 2) run in
  // stripes, each depthwise stripe reading (rows - 1) * 2 + (3 - 1) * 2 + 1 rows of conv1's
  // band (a cascade of a dilation 3 stride 1 depthwise simulates slower than the spill here,
  // and the cost rule keeps the spill).
  auto t = npu::LoadTarget("edge-mcu");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Graph g = Chain(8, 96, 96, {{3, 2, 2, {2, 2, 2, 2}}}, 7);
  const Tensor x = Normal({1, 8, 96, 96}, 78);
  const Result flat = CompileAndRun(g, *t, x, false, "flat");
  EXPECT_EQ(flat.stripes, 0);
  EXPECT_GE(flat.spilled, int64_t{32} * 96 * 96) << "conv1's output fits edge-mcu: no test of a spill";
  EXPECT_TRUE(flat.same_as_reference);
  const Result casc = CompileAndRun(g, *t, x, true, "casc");
  EXPECT_EQ(casc.dw_on_npu.size(), 1u);
  EXPECT_GT(casc.stripes, 3) << "the chain did not cascade";
  EXPECT_EQ(casc.spilled, 0) << "a tensor still spills with cascades";
  EXPECT_TRUE(casc.same_as_cpu) << "the stripes differ from the CPU's output";
  EXPECT_TRUE(casc.same_as_reference) << "the stripes differ from the reference kernels";
}

}  // namespace
}  // namespace edgec::lower
