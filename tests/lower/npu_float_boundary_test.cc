// The model's float boundary on the NPU: a QuantizeLinear of an f32 graph input and a
// DequantizeLinear to an f32 graph output (lower::IsFloatBoundary) as VEC quantize /
// dequantize layers, the DMA moving the float bytes. On seeded random shapes (4-d NCHW and
// 3-d), u8 and i8, with the tiler's chunk and a small one, single and double buffering, on
// every target in targets/: the functional simulator's output equals the reference kernel's
// bit for bit where the vector cores declare f32, and the lowering refuses by name where they
// do not (edge-mcu). Every run obeys its roofline.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include <filesystem>
#include <unistd.h>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "partition/partition.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Tensor RandomFloat(const Dims& dims, std::mt19937& rng, float sd) {
  Tensor t = *Tensor::Create(DType::kF32, dims);
  std::normal_distribution<float> nd(0.0f, sd);
  float* d = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = nd(rng);
  // Ties and the far tails: round half to even and saturation must agree too.
  if (t.numel() > 2) d[0] = 2.5f * 0.05f, d[1] = 1e6f, d[2] = -1e6f;
  return t;
}

// q: x (f32 input) -> QuantizeLinear -> y; else x (8-bit input) -> DequantizeLinear -> y (output).
Graph Boundary(bool q, DType qt, const Dims& d, float scale, int zp) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(q ? DType::kF32 : qt, d));
  Value* s = g.AddConstant("scale", Tensor::Scalar(scale));
  Value* z = qt == DType::kU8 ? g.AddConstant("zp", Tensor::FromVector<uint8_t>(qt, {}, {static_cast<uint8_t>(zp)}))
                              : g.AddConstant("zp", Tensor::FromVector<int8_t>(qt, {}, {static_cast<int8_t>(zp)}));
  Node* n = g.AddNode(q ? OpKind::kQuantizeLinear : OpKind::kDequantizeLinear, q ? "quantize" : "dequantize",
                      {x, s, z}, 1, {"y"});
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(NpuFloatBoundaryTest, QuantizeAndDequantizeMatchReferenceOnEveryTarget) {
  std::mt19937 rng(71);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0, refused = 0;
  for (int i = 0; i < 8; ++i) {
    const bool q = i % 2 == 0;
    const DType qt = i % 4 < 2 ? DType::kI8 : DType::kU8;
    const Dims d = i % 3 == 2 ? Dims{1, static_cast<int64_t>(1 + rng() % 40), static_cast<int64_t>(1 + rng() % 33)}
                              : Dims{1, static_cast<int64_t>(1 + rng() % 7), static_cast<int64_t>(1 + rng() % 19),
                                     static_cast<int64_t>(1 + rng() % 23)};
    const float scale = 0.05f * (1 + i);
    const int zp = qt == DType::kU8 ? 100 + i : -3 + i;
    Graph g = Boundary(q, qt, d, scale, zp);
    const Node& n = *g.nodes()[0];
    ASSERT_TRUE(IsFloatBoundary(n));
    const Tensor x = q ? RandomFloat(d, rng, 4.0f) : RandomQ(qt, d, rng);
    auto want = EvaluateNode(n, {&x, &n.input(1)->constant(), &n.input(2)->constant()});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    ASSERT_EQ(vl->kind, VectorLayer::Kind::kEltwise);
    for (const npu::Target& t : *targets) {
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseEltwiseTiling(vl->eltwise, t, opt);
        if (t.vector_cores.VecRate("f32") <= 0) {
          ASSERT_FALSE(ch.ok()) << t.name;
          EXPECT_NE(ch.status().message().find("f32"), std::string::npos) << ch.status().message();
          ++refused;
          continue;
        }
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, int64_t{64}}) {
          int64_t a = 0, b = 0, y = 0;
          auto p = npu::LowerEltwise(vl->eltwise, t, chunk, db, &a, &b, &y);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
          std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
          const std::vector<uint8_t> xb = ToNpu(x);
          ASSERT_EQ(static_cast<int64_t>(xb.size()), p->regions[0].bytes);
          std::copy(xb.begin(), xb.end(), dram.begin() + a);
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*p, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          const Tensor got = *FromNpu(dram.data() + y, n.output(0)->type);
          const Tensor& w = (*want)[0];
          ASSERT_EQ(got.nbytes(), w.nbytes());
          EXPECT_EQ(std::memcmp(got.raw(), w.raw(), w.nbytes()), 0)
              << n.Label() << " " << n.output(0)->type.ToString() << " on " << t.name << " chunk " << chunk
              << (db ? " double" : " single");
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          EXPECT_EQ(sim->total.dram_read, x.nbytes()) << t.name;  // the DMA moves the f32 (or 8-bit) bytes once
          EXPECT_EQ(sim->total.dram_written, w.nbytes()) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 8 * 2 * 2 * 2);  // edge-default and edge-large
  EXPECT_EQ(refused, 8 * 2);       // edge-mcu
}

TEST(NpuFloatBoundaryTest, PartitionPlacesTheBoundaryWhereTheVectorCoresTakeF32) {
  Graph g = Boundary(true, DType::kI8, {1, 4, 8, 8}, 0.1f, 0);
  auto on_default = partition::Partition(g, npu::DefaultTarget(), {});
  ASSERT_TRUE(on_default.ok());
  EXPECT_TRUE((*on_default)[0].legal) << (*on_default)[0].reason;
  // Kept on the CPU by cost (a CPU a million times faster), it is still the model's boundary,
  // not a fallback (--strict ignores it).
  partition::PartitionOptions fast;
  fast.cpu.copy_bytes_per_s = 4e15;
  auto by_cost = partition::Partition(g, npu::DefaultTarget(), fast);
  ASSERT_TRUE(by_cost.ok());
  EXPECT_EQ((*by_cost)[0].unit, artifact_io::Unit::kCpu) << (*by_cost)[0].reason;
  EXPECT_EQ((*by_cost)[0].code, partition::ReasonCode::kBoundary) << (*by_cost)[0].reason;
  auto mcu = npu::LoadTarget("edge-mcu");
  ASSERT_TRUE(mcu.ok());
  auto on_mcu = partition::Partition(g, *mcu, {});
  ASSERT_TRUE(on_mcu.ok());
  const partition::NodePlacement& p = (*on_mcu)[0];
  EXPECT_EQ(p.unit, artifact_io::Unit::kCpu);
  // edge-mcu does not list QuantizeLinear at all: the first rule says so.
  EXPECT_FALSE(p.reason.empty());
}

// The caller's f32 buffers are the NPU's regions: a compiled QuantizeLinear -> DequantizeLinear
// of a 4-d NCHW input reads it planar and writes the output planar, so npu-sim makes no CPU
// copy at either end; it pays the NPU's DMA of the f32 bytes and the flush / invalidate of
// every line of them (4 bytes an element), and equals the CPU run bit for bit.
TEST(NpuFloatBoundaryTest, CallerBufferIsTheRegion) {
  const Dims d = {1, 3, 20, 17};
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, d));
  Value* s = g.AddConstant("scale", Tensor::Scalar(0.07f));
  Value* z = g.AddConstant("zp", Tensor::FromVector<int8_t>(DType::kI8, {}, {3}));
  Node* q = g.AddNode(OpKind::kQuantizeLinear, "quantize", {x, s, z}, 1, {"q"});
  Node* dq = g.AddNode(OpKind::kDequantizeLinear, "dequantize", {q->output(0), s, z}, 1, {"y"});
  g.MarkOutput(dq->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  const npu::Target& t = npu::DefaultTarget();
  auto r = CompileGraph(g, t, "boundary", {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& p : r->placements) ASSERT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->Label() << ": " << p.reason;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("boundary_" + std::to_string(::getpid()) + ".edgec")).string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto file = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto loaded = LoadArtifact(**file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::mt19937 rng(5);
  const std::map<std::string, Tensor> in = {{"x", RandomFloat(d, rng, 1.0f)}};
  auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  std::filesystem::remove(path);
  ASSERT_EQ(sim->outputs.size(), 1u);
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), cpu->outputs[0].nbytes()), 0);
  EXPECT_EQ(sim->copies, 0);
  EXPECT_EQ(sim->copy_s, 0.0);
  const int64_t f32_bytes = 4 * 3 * 20 * 17;
  EXPECT_GE(sim->npu_total.dram_read, f32_bytes);  // the NPU's DMA reads x and writes y
  EXPECT_GE(sim->npu_total.dram_written, f32_bytes);
  const int64_t lines = (f32_bytes + t.cpu_cache.line_bytes - 1) / t.cpu_cache.line_bytes;
  if (!t.cpu_cache.coherent)
    EXPECT_NEAR(sim->cache_s * t.clock_hz, 2 * lines * t.cpu_cache.cycles_per_line + 2 * t.cpu_cache.barrier_cycles, 1e-6);
}

}  // namespace
}  // namespace edgec::lower
