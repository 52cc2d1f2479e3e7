// Lead-in weight slots (lower/npu_lead_ins.h): a conv whose weights find no whole slot reads a
// prefix of them from a slot filled ahead of it, its weight loads that reach past the prefix
// cut into rows read on chip and rows read from DRAM, and npu-sim still equals the CPU bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "npu/sim.h"
#include "npu/target.h"
#include "runtime/artifact_run.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

// x[1,32,14,14] -> conv1 3x3 (64) -> relu -> conv2 1x1 (256) -> relu -> conv3 1x1 (256) -> y:
// conv3's 128 KiB of weights against 320 KiB of SRAM: no whole slot, a lead-in for a prefix.
Graph Chain() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 32, 14, 14}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({64, 32, 3, 3}, 61, 0.1)),
                                     g.AddConstant("b1", Normal({64}, 62, 0.1))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* c2 = Add(g, OpKind::kConv, {r1, g.AddConstant("w2", Normal({256, 64, 1, 1}, 63, 0.1)),
                                     g.AddConstant("b2", Normal({256}, 64, 0.1))}, {}, "conv2");
  Value* r2 = Add(g, OpKind::kRelu, {c2}, {}, "relu2");
  Value* y = Add(g, OpKind::kConv, {r2, g.AddConstant("w3", Normal({512, 256, 1, 1}, 65, 0.05)),
                                    g.AddConstant("b3", Normal({512}, 66, 0.1))}, {}, "conv3");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 32, 14, 14}, 400, 4, DType::kI8);
}

struct Built {
  CompileResult result;
  npu::Program program;
};

Built Compile(const Graph& g, const npu::Target& t, int lead_ins) {
  partition::PartitionOptions o;
  o.cost_rule = false;  // every legal node on the NPU: one segment
  o.tiler.lead_ins = lead_ins;
  auto r = CompileGraph(g, t, "lead_in", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Built b{std::move(*r), {}};
  for (const auto& s : b.result.model.segments)
    if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) {
      auto p = npu::DecodeProgram(s.npu.instructions);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      b.program = std::move(*p);
    }
  return b;
}

// Bytes conv3's loads read on chip (its slot, its resident input) and from DRAM.
std::pair<int64_t, int64_t> Conv3Loads(const npu::Program& p) {
  int layer = -1;
  for (size_t i = 0; i < p.layer_names.size(); ++i)
    if (p.layer_names[i].rfind("conv3/", 0) == 0) layer = static_cast<int>(i);
  EXPECT_GE(layer, 0);
  int64_t on_chip = 0, dram = 0;
  for (const npu::Instr& in : p.instrs)
    if (in.op == npu::Opcode::kDmaLoad && in.layer == layer) (in.on_chip ? on_chip : dram) += in.dma_bytes();
  return {on_chip, dram};
}

TEST(NpuLeadInTest, LeadInSlotsReadWeightsOnChipBitForBit) {
  auto t = npu::ApplyOverride(npu::DefaultTarget(), "shared_sram.bytes=320K");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Graph g = Chain();
  Built with = Compile(g, *t, 2), without = Compile(g, *t, 0);
  ASSERT_NE(with.result.listing.find("lead-in weight slots:"), std::string::npos) << "no lead-in planned";
  ASSERT_FALSE(with.program.instrs.empty());
  auto [chip_with, dram_with] = Conv3Loads(with.program);
  auto [chip_without, dram_without] = Conv3Loads(without.program);
  EXPECT_GT(chip_with, chip_without) << "conv3 reads none of its weights from the lead-in slot";
  // The slot's chunks are conv3's loads too: each weight byte comes from DRAM at most as often.
  EXPECT_LE(dram_with, dram_without);
  auto sw = npu::Simulate(with.program, *t);
  auto so = npu::Simulate(without.program, *t);
  ASSERT_TRUE(sw.ok() && so.ok());
  EXPECT_LE(sw->total.dram_read, so->total.dram_read);
  // npu-sim == cpu bit for bit with the slots.
  const std::string path = (std::filesystem::temp_directory_path() / "npu_lead_in.edgec").string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, with.result.model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto loaded = LoadArtifact(**f);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  for (int seed : {71, 72}) {
    const std::map<std::string, Tensor> in = {{"x", Normal({1, 32, 14, 14}, seed)}};
    auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
    auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    ASSERT_EQ(sim->outputs[0].nbytes(), cpu->outputs[0].nbytes());
    EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), sim->outputs[0].nbytes()), 0) << seed;
  }
  std::filesystem::remove(path);
}

// The ring's whole-image slots with their chunks spread over the steps before their layer
// (SramPlan::spread_chunks): the same DRAM bytes, and npu-sim still equals the CPU bit for bit.
TEST(NpuLeadInTest, SpreadSlotChunksKeepTheOutputBitForBit) {
  const npu::Target& t = npu::DefaultTarget();
  const Graph g = Chain();
  Built spread = Compile(g, t, 3), plain = Compile(g, t, 0);
  ASSERT_NE(spread.result.listing.find("depth 0 spread"), std::string::npos) << "the spread was not tried";
  ASSERT_FALSE(spread.program.instrs.empty());
  auto ss = npu::Simulate(spread.program, t);
  auto sp = npu::Simulate(plain.program, t);
  ASSERT_TRUE(ss.ok() && sp.ok());
  EXPECT_EQ(ss->total.dram_read, sp->total.dram_read);
  EXPECT_NE(spread.program.instrs, plain.program.instrs) << "no chunk moved";
  const std::string path = (std::filesystem::temp_directory_path() / "npu_spread.edgec").string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, spread.result.model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto loaded = LoadArtifact(**f);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 32, 14, 14}, 73)}};
  auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(sim.ok() && cpu.ok());
  ASSERT_EQ(sim->outputs[0].nbytes(), cpu->outputs[0].nbytes());
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), sim->outputs[0].nbytes()), 0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace edgec::lower
