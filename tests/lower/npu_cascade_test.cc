// Cascades on the NPU: a chain conv 3x3 -> depthwise 5x5 stride 2 -> conv 7x7 whose first
// inner tensor (32 x 96 x 96 = 288 KiB) cannot be held in edge-mcu's 256 KiB SRAM. Without
// cascades the plan spills it (written to DRAM and read back); with them the chain runs in
// row stripes whose bands stay on chip, no inner byte reaches DRAM, and npu-sim equals the
// CPU's int8 kernels bit for bit (the stripes reproduce the unstriped output).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "npu/segment.h"
#include "npu/sim.h"
#include "runtime/artifact_run.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

Graph Chain() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 96, 96}));
  Attributes p1, dw, p3;
  p1.Set("pads", Ints{1, 1, 1, 1});
  dw.Set("pads", Ints{2, 2, 2, 2});
  dw.Set("strides", Ints{2, 2});
  dw.Set("group", int64_t{32});
  p3.Set("pads", Ints{3, 3, 3, 3});
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({32, 8, 3, 3}, 41, 0.2)),
                                    g.AddConstant("b1", Normal({32}, 42, 0.1))}, p1, "conv3x3");
  Value* r = Add(g, OpKind::kRelu, {a}, {}, "relu");
  Value* b = Add(g, OpKind::kConv, {r, g.AddConstant("w2", Normal({32, 1, 5, 5}, 43, 0.2)),
                                    g.AddConstant("b2", Normal({32}, 44, 0.1))}, dw, "dw5x5s2");
  Value* y = Add(g, OpKind::kConv, {b, g.AddConstant("w3", Normal({16, 32, 7, 7}, 45, 0.05)),
                                    g.AddConstant("b3", Normal({16}, 46, 0.1))}, p3, "conv7x7");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 96, 96}, 300, 4, DType::kI8);
}

struct Result {
  int stripes = 0;
  int64_t spilled = 0;  // bytes of inner tensors the plan leaves in DRAM
  npu::Stats total;
  bool same = false;
  std::map<std::string, std::pair<npu::Stats, int64_t>> rows;  // NPU node row -> its statistics, the node's MACs
};

Result CompileAndRun(bool cascades, const std::string& tag) {
  Result res;
  auto t = npu::LoadTarget("edge-mcu");
  EXPECT_TRUE(t.ok());
  Graph g = Chain();
  partition::PartitionOptions o;
  o.cost_rule = false;
  o.tiler.cascades = cascades;
  auto r = CompileGraph(g, *t, "chain", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return res;
  const std::string path = (std::filesystem::temp_directory_path() / ("npu_cascade_" + tag + ".edgec")).string();
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
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 96, 96}, 47)}};
  auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
  EXPECT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
  if (sim.ok() && cpu.ok() && sim->outputs.size() == cpu->outputs.size()) {
    res.same = true;
    for (size_t i = 0; i < sim->outputs.size(); ++i)
      res.same &= sim->outputs[i].nbytes() == cpu->outputs[i].nbytes() &&
                  std::memcmp(sim->outputs[i].raw(), cpu->outputs[i].raw(), sim->outputs[i].nbytes()) == 0;
    res.total = sim->npu_total;
    for (const LayerRun& lr : sim->layers)
      if (lr.simulated) res.rows[lr.node] = {lr.stats, lr.macs};
    for (const LayerRun& lr : sim->layers)
      if (lr.simulated && lr.stats.cycles > 0) {
        EXPECT_GE(lr.stats.cycles + 1e-6, lr.stats.roofline_cycles(*t)) << lr.node;
      }
  }
  std::filesystem::remove(path);
  return res;
}

TEST(NpuCascadeTest, StripesReproduceTheUnstripedOutput) {
  const Result flat = CompileAndRun(false, "flat");
  const Result casc = CompileAndRun(true, "casc");
  EXPECT_EQ(flat.stripes, 0);
  EXPECT_GE(flat.spilled, int64_t{32} * 96 * 96) << "the 3x3 conv's output fits edge-mcu: no test of a spill";
  EXPECT_TRUE(flat.same);
  EXPECT_GT(casc.stripes, 3) << "the chain did not cascade";
  EXPECT_EQ(casc.spilled, 0) << "a tensor still spills with cascades";
  EXPECT_TRUE(casc.same) << "the stripes differ from the CPU's output";
  // The spill's write is gone: only the graph output (16 x 48 x 48) is written.
  EXPECT_EQ(casc.total.dram_written, int64_t{16} * 48 * 48);
  EXPECT_LT(casc.total.dram_written + casc.total.dram_read, flat.total.dram_written + flat.total.dram_read);
}

// `edgec run` and `profile` rows: a cascaded node's row carries its stripes' statistics (each
// stripe is a layer of its own in the program, named "node [stripe s/S]"), so no row of a
// node that computed shows 0 cycles, and its MACs are at least the node's (halo rows recomputed).
TEST(NpuCascadeTest, StripeCyclesFoldIntoTheirNodeRow) {
  const Result casc = CompileAndRun(true, "rows");
  ASSERT_GT(casc.stripes, 3) << "the chain did not cascade";
  int convs = 0;
  for (const auto& [node, row] : casc.rows) {
    const auto& [stats, macs] = row;
    if (macs == 0) continue;
    ++convs;
    EXPECT_GT(stats.cycles, 0) << node;
    EXPECT_GE(stats.macs, macs) << node;
  }
  EXPECT_EQ(convs, 3) << "the three convolutions' rows";
}

}  // namespace
}  // namespace edgec::lower
