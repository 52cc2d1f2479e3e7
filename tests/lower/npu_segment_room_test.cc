// Room for late weights (lower/npu_segment_room.h): the critical cut of a segment, and a segment
// whose early high-resolution convs are tiled again for less SRAM: faster than as tiled, and
// npu-sim still equals the CPU bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_segment_room.h"
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

// Three compute-bound layers without weights to speak of, then two layers of 3 MB of weights
// each that take 100k cycles to stream at 30 B/cycle: with 2 MiB of SRAM and 0.5 MB live at the
// cut, the cut after layer 2 leaves 4.4 MB to stream after 300k cycles of compute (447k); a cut
// after layer 3 adds only its 10k cycles of compute but takes its 3 MB off the tail (357k).
TEST(NpuSegmentRoomTest, CriticalCutIsWhereTheComputeEnds) {
  const std::vector<double> cycles = {100000, 100000, 100000, 110000, 100000};
  const std::vector<int64_t> weights = {0, 1000, 1000, 3000000, 3000000};
  const std::vector<int64_t> live = {500000, 500000, 500000, 500000, 0};
  const RoomCut cut = CriticalCut(cycles, weights, live, 2 << 20, 30.0);
  EXPECT_EQ(cut.layer, 2);
  // compute of layers 0..2 (their cycles less their own weights' DRAM time) + the 6 MB after
  // the cut less the SRAM left beside the live tensors, at 30 B/cycle.
  const double expect = 300000 - 2000 / 30.0 + (6000000.0 - ((2 << 20) - 500000)) / 30.0;
  EXPECT_NEAR(cut.cycles, expect, 1.0);
  // An SRAM that holds every later weight: the cut is where the compute ends (layer 4 adds none).
  EXPECT_EQ(CriticalCut(cycles, weights, {0, 0, 0, 0, 0}, 1 << 30, 30.0).layer, 3);
  // Layers that are all weights: nothing before the first layer is worth the room.
  EXPECT_EQ(CriticalCut({1, 1, 1, 1, 1}, weights, live, 2 << 20, 30.0).layer, 0);
}

// Work at peak up to each cut, bytes to stream after it, bytes live across it.
TEST(NpuSegmentRoomTest, SramAwareBoundCountsWhatTheSramCannotHold) {
  const std::vector<double> work = {10, 20, 30};
  const std::vector<int64_t> after = {3000, 1000, 0}, live = {500, 500, 0};
  int cut = -1;
  // After layer 0: 2500 B the SRAM cannot hold at 10 B/cycle, after 10 cycles of work.
  EXPECT_DOUBLE_EQ(SramAwareBound(work, after, live, 1000, 10.0, &cut), 260.0);
  EXPECT_EQ(cut, 0);
  // An SRAM that holds all of it: only the work remains, the most of it at the last cut.
  EXPECT_DOUBLE_EQ(SramAwareBound(work, after, live, 4000, 10.0, &cut), 30.0);
  EXPECT_EQ(cut, 2);
}

// x[1,32,56,56] -> six 3x3 convs (64 channels, 56x56) -> global average pool -> 1x1 convs
// 64 -> 1024 -> 1024: early layers with large tiles, late layers with 1.1 MB of weights.
Graph Model() {
  Graph g;
  Value* v = g.AddInput("x", MakeType(DType::kF32, {1, 32, 56, 56}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  int64_t c = 32;
  for (int i = 0; i < 6; ++i) {
    v = Add(g, OpKind::kConv, {v, g.AddConstant("w" + std::to_string(i), Normal({64, c, 3, 3}, 81 + i, 0.1)),
                               g.AddConstant("b" + std::to_string(i), Normal({64}, 91 + i, 0.1))}, pad,
            "conv" + std::to_string(i));
    v = Add(g, OpKind::kRelu, {v}, {}, "relu" + std::to_string(i));
    c = 64;
  }
  v = Add(g, OpKind::kGlobalAveragePool, {v}, {}, "pool");
  v = Add(g, OpKind::kConv, {v, g.AddConstant("w3", Normal({1024, 64, 1, 1}, 85, 0.1)),
                             g.AddConstant("b3", Normal({1024}, 95, 0.1))}, {}, "fc1");
  v = Add(g, OpKind::kRelu, {v}, {}, "relu3");
  v = Add(g, OpKind::kConv, {v, g.AddConstant("w4", Normal({1024, 1024, 1, 1}, 86, 0.03)),
                             g.AddConstant("b4", Normal({1024}, 96, 0.1))}, {}, "fc2");
  g.MarkOutput(v);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 32, 56, 56}, 400, 4, DType::kI8);
}

struct Built {
  CompileResult result;
  npu::Program program;
};

Built Compile(const Graph& g, const npu::Target& t, int room) {
  partition::PartitionOptions o;
  o.cost_rule = false;  // every legal node on the NPU: one segment
  o.tiler.room_for_weights = room;
  auto r = CompileGraph(g, t, "room", o);
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

TEST(NpuSegmentRoomTest, EarlyLayersTiledForLessSramMakeRoomBitForBit) {
  // 768 KiB of SRAM: the early convs' tiles leave fc2's 1 MB of weights no room to stream
  // into before it runs; tiled for 192 KiB (a quarter) they leave room for it from the convs on.
  auto tt = npu::ApplyOverride(npu::DefaultTarget(), "shared_sram.bytes=768K");
  ASSERT_TRUE(tt.ok()) << tt.status().ToString();
  const npu::Target& t = *tt;
  const Graph g = Model();
  Built with = Compile(g, t, 4), without = Compile(g, t, 0);  // early layers at SRAM/4, or as tiled
  const size_t line = with.result.listing.find("room for late weights");
  ASSERT_NE(line, std::string::npos) << with.result.listing;
  EXPECT_NE(with.result.listing.find("kept: layers 0..", line), std::string::npos)
      << with.result.listing.substr(line, 300);
  EXPECT_EQ(without.result.listing.find("room for late weights"), std::string::npos);
  ASSERT_FALSE(with.program.instrs.empty());
  auto sw = npu::Simulate(with.program, t);
  auto so = npu::Simulate(without.program, t);
  ASSERT_TRUE(sw.ok() && so.ok());
  EXPECT_LT(sw->total.cycles, so->total.cycles);
  const std::string path = (std::filesystem::temp_directory_path() / "npu_room.edgec").string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, with.result.model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto loaded = LoadArtifact(**f);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 32, 56, 56}, 87)}};
  auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(sim.ok() && cpu.ok());
  ASSERT_EQ(sim->outputs[0].nbytes(), cpu->outputs[0].nbytes());
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), sim->outputs[0].nbytes()), 0);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace edgec::lower
