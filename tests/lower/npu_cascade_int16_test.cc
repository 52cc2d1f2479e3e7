// Cascades of 2-byte layers: an integer chain of the mixed precision's int16 points,
//   x i8 -> conv 3x3 (writes int16) -> add of a per-channel constant (int16 in, int16 out)
//        -> requantize int16 -> i8 -> conv 3x3 stride 2 -> y i8,
// on edge-mcu with its vector cores declaring i16 (the stock file takes no i16), whose int16
// inner tensors (32 x 96 x 96 x 2 B = 576 KiB each) cannot be held in its 256 KiB SRAM. Without
// cascades the plan spills them; with them the chain runs in row stripes whose bands hold
// 2-byte rows (a stripe's rows are counted in bytes: an int16 row is twice its i8 neighbour's),
// no inner byte reaches DRAM, and npu-sim equals the CPU's integer kernels bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include <unistd.h>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "npu/segment.h"
#include "runtime/artifact_run.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Zp(Graph& g, const std::string& name, DType t, int32_t z) {
  if (t == DType::kI16) return g.AddConstant(name, Tensor::FromVector<int16_t>(t, {}, {static_cast<int16_t>(z)}));
  return g.AddConstant(name, Tensor::FromVector<int8_t>(t, {}, {static_cast<int8_t>(z)}));
}
Value* Sc(Graph& g, const std::string& name, float s) { return g.AddConstant(name, Tensor::Scalar(s)); }

// A 3x3 QLinearConv, pads 1, of C -> N channels writing `yt` at scale ys.
Value* Conv(Graph& g, const std::string& name, Value* x, float sx, int64_t C, int64_t N, int64_t stride, float ys,
            DType yt, std::mt19937& rng) {
  std::vector<int32_t> bias(N);
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 4001) - 2000;
  Node* n = g.AddNode(OpKind::kQLinearConv, name,
                      {x, Sc(g, name + ".sx", sx), Zp(g, name + ".zx", DType::kI8, 3),
                       g.AddConstant(name + ".w", RandomQ(DType::kI8, {N, C, 3, 3}, rng)), Sc(g, name + ".sw", 0.005f),
                       Zp(g, name + ".zw", DType::kI8, 0), Sc(g, name + ".sy", ys), Zp(g, name + ".zy", yt, 0),
                       g.AddConstant(name + ".b", Tensor::FromVector<int32_t>(DType::kI32, {N}, bias))},
                      1, {name + ":0"});
  n->attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  n->attrs.Set("strides", std::vector<int64_t>{stride, stride});
  n->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  return n->output(0);
}

Graph Int16Chain() {
  std::mt19937 rng(2916);
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI8, {1, 16, 96, 96}));
  // Accumulators of 144 products of 128 x 128 spread over about sqrt(144) * 128 * 74: an int16
  // step a quarter of that range / 32767.
  const float sx = 0.02f, s1 = sx * 0.005f * 128.f * 74.f * 12.f * 4.f / 32767.f;
  Value* a = Conv(g, "conv1", x, sx, 16, 32, 1, s1, DType::kI16, rng);
  Node* add = g.AddNode(OpKind::kQLinearAdd, "add16",
                        {a, Sc(g, "add.sa", s1), Zp(g, "add.za", DType::kI16, 0),
                         g.AddConstant("add.b", RandomQ(DType::kI8, {1, 32, 1, 1}, rng)), Sc(g, "add.sb", s1 * 64.f),
                         Zp(g, "add.zb", DType::kI8, 0), Sc(g, "add.sy", s1 * 2.f), Zp(g, "add.zy", DType::kI16, 0)},
                        1, {"add16:0"});
  const float s8 = s1 * 2.f * 64.f;  // int16 values of about +-8000 become about +-128
  Node* rq = g.AddNode(OpKind::kQLinearRequantize, "narrow",
                       {add->output(0), Sc(g, "rq.sx", s1 * 2.f), Zp(g, "rq.zx", DType::kI16, 0), Sc(g, "rq.sy", s8),
                        Zp(g, "rq.zy", DType::kI8, 3)},
                       1, {"narrow:0"});
  Value* y = Conv(g, "conv2", rq->output(0), s8, 32, 8, 2, s8 * 0.005f * 128.f * 17.f * 4.f / 127.f, DType::kI8, rng);
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// edge-mcu whose vector cores take i16 and which runs the requantize between widths.
npu::Target McuWithInt16() {
  auto t = npu::LoadTarget("edge-mcu");
  EXPECT_TRUE(t.ok());
  t->vector_cores.dtype_rates["i16"] = 0.5;
  t->supported_ops.push_back("QuantizeLinear");
  return *t;
}

struct Result {
  int stripes = 0, npu_nodes = 0;
  int64_t spilled = 0, dram = 0;
  bool same = false;
  size_t distinct = 0;  // distinct output values (the chain is not saturated)
};

Result CompileAndRun(bool cascades, const std::string& tag) {
  Result res;
  const npu::Target t = McuWithInt16();
  Graph g = Int16Chain();
  partition::PartitionOptions o;
  o.cost_rule = false;
  o.tiler.cascades = cascades;
  auto r = CompileGraph(g, t, "chain16", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return res;
  for (const auto& p : r->placements) res.npu_nodes += p.unit == artifact_io::Unit::kNpu;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("npu_cascade16_" + tag + std::to_string(::getpid()) + ".edgec")).string();
  EXPECT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  EXPECT_TRUE(f.ok());
  auto l = LoadArtifact(**f);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  for (const auto& s : l->meta.segments) {
    if (s.unit != artifact_io::Unit::kNpu || s.npu.instructions.empty()) continue;
    auto p = npu::DecodeProgram(s.npu.instructions);
    EXPECT_TRUE(p.ok());
    for (const std::string& n : p->layer_names) res.stripes += n.find("[stripe") != std::string::npos;
    for (const auto& x : s.sram_plan)
      if (!x.in_sram && x.reason.rfind("spilled", 0) == 0) res.spilled += x.bytes;
  }
  std::mt19937 rng(2917);
  const std::map<std::string, Tensor> in = {{"x", RandomQ(DType::kI8, {1, 16, 96, 96}, rng)}};
  auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
  if (sim.ok() && cpu.ok() && sim->outputs.size() == 1 && cpu->outputs.size() == 1) {
    res.same = sim->outputs[0].nbytes() == cpu->outputs[0].nbytes() &&
               std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), sim->outputs[0].nbytes()) == 0;
    const std::vector<int64_t> v = cpu->outputs[0].ToInt64Vector();
    res.distinct = std::set<int64_t>(v.begin(), v.end()).size();
    res.dram = sim->npu_total.dram_read + sim->npu_total.dram_written;
    for (const LayerRun& lr : sim->layers)
      if (lr.simulated && lr.stats.cycles > 0) {
        EXPECT_GE(lr.stats.cycles + 1e-6, lr.stats.roofline_cycles(t)) << lr.node;
      }
  }
  std::filesystem::remove(path);
  return res;
}

TEST(NpuCascadeTest, Int16ChainStripesReproduceTheUnstripedOutput) {
  const Result flat = CompileAndRun(false, "flat");
  const Result casc = CompileAndRun(true, "casc");
  EXPECT_EQ(flat.npu_nodes, 4) << "the whole chain on the NPU";
  EXPECT_EQ(casc.npu_nodes, 4);
  EXPECT_EQ(flat.stripes, 0);
  EXPECT_GE(flat.spilled, int64_t{32} * 96 * 96 * 2) << "an int16 inner tensor fits edge-mcu: no test of a spill";
  EXPECT_TRUE(flat.same);
  EXPECT_GT(casc.stripes, 4) << "the int16 chain did not cascade";
  EXPECT_EQ(casc.spilled, 0) << "a tensor still spills with cascades";
  EXPECT_TRUE(casc.same) << "the stripes differ from the CPU's output";
  EXPECT_GT(casc.distinct, 20u) << "the output is saturated: a weak test";
  EXPECT_LT(casc.dram, flat.dram);
}

}  // namespace
}  // namespace edgec::lower
