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

#include "ir/infer.h"
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

}  // namespace
}  // namespace edgec::lower
