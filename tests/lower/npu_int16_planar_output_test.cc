// A planar (4-d) int16 model output: the mixed precision's last int16 point dequantized to the
// caller's f32 NCHW buffer by the NPU's float boundary. Each tile loads a run of NHWC pixels of
// int16 values (2 bytes each) and one VEC dequantize with a column pitch of 2·C bytes
// (isa.h kPitchImm, kDequantBytesImm) writes C f32 rows, one per channel, stored by one strided
// DMA. Layer level: seeded 4-d shapes (batch 1 and 2), the tiler's chunk and one of a few
// pixels, single and double buffering, on every target whose vector cores take i16 and f32,
// equal bit for bit to DequantizeLinear; edge-mcu refuses it. Graph level: a conv writing int16
// whose value is the model's f32 output through a DequantizeLinear compiles wholly onto the
// NPU and npu-sim equals the CPU run bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Z16(Graph& g, const std::string& name, int16_t z) {
  return g.AddConstant(name, Tensor::FromVector<int16_t>(DType::kI16, {}, {z}));
}

TEST(NpuInt16PlanarOutput, DequantizeToPlanarF32MatchesReference) {
  std::mt19937 rng(2908);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0, refused = 0;
  for (int i = 0; i < 5; ++i) {
    const Dims d = {1 + i % 2, static_cast<int64_t>(2 + rng() % 40), static_cast<int64_t>(1 + rng() % 17),
                    static_cast<int64_t>(2 + rng() % 23)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(DType::kI16, d));
    Node* n = g.AddNode(OpKind::kDequantizeLinear, "out",
                        {x, g.AddConstant("s", Tensor::Scalar(1e-4f * static_cast<float>(1 + i))),
                         Z16(g, "z", static_cast<int16_t>(i * 7 - 10))},
                        1, {"y"});
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(IsFloatBoundary(*n));
    const Tensor xv = RandomQ(DType::kI16, d, rng);
    auto want = EvaluateNode(*n, {&xv, &n->input(1)->constant(), &n->input(2)->constant()});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(*n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    ASSERT_EQ(vl->eltwise.planes, d[1]) << "a 4-d output is planar";
    ASSERT_EQ(vl->eltwise.a_bytes, 2);
    for (const npu::Target& t : *targets) {
      int64_t a = 0, b = 0, y = 0;
      if (t.vector_cores.VecRate("i16") <= 0 || t.vector_cores.VecRate("f32") <= 0) {
        refused += !npu::LowerEltwise(vl->eltwise, t, 4096, false, &a, &b, &y).ok();
        continue;
      }
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseEltwiseTiling(vl->eltwise, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, 3 * d[1]}) {  // the tiler's, and tiles of 3 pixels
          auto p = npu::LowerEltwise(vl->eltwise, t, chunk, db, &a, &b, &y);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
          const std::vector<uint8_t> in = ToNpu(xv);
          ASSERT_EQ(static_cast<int64_t>(in.size()), p->regions[0].bytes);
          std::copy(in.begin(), in.end(), dram.begin() + a);
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*p, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          const Tensor& w = (*want)[0];
          EXPECT_EQ(std::memcmp(dram.data() + y, w.raw(), w.nbytes()), 0)
              << DimsToString(d) << " on " << t.name << " chunk " << chunk << (db ? " double" : " single");
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          EXPECT_EQ(sim->total.dram_read, xv.nbytes()) << t.name;  // the int16 bytes once
          EXPECT_EQ(sim->total.dram_written, w.nbytes()) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 5 * 2 * 2 * 2);  // edge-default and edge-large
  EXPECT_EQ(refused, 5);           // edge-mcu
}

// x i8 -> conv 3x3 writing int16 -> DequantizeLinear -> y f32 [1, N, H, W] (a graph output).
TEST(NpuInt16PlanarOutput, Int16OutputOfAConvLeavesTheNpuAsF32) {
  std::mt19937 rng(2909);
  const int64_t C = 8, N = 12, H = 14, W = 18;
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI8, {1, C, H, W}));
  std::vector<int32_t> bias(N);
  for (auto& v : bias) v = static_cast<int32_t>(rng() % 4001) - 2000;
  const float sx = 0.02f, s16 = sx * 0.005f * 128.f * 74.f * 9.f * 4.f / 32767.f;
  Node* conv = g.AddNode(OpKind::kQLinearConv, "conv",
                         {x, g.AddConstant("sx", Tensor::Scalar(sx)),
                          g.AddConstant("zx", Tensor::FromVector<int8_t>(DType::kI8, {}, {1})),
                          g.AddConstant("w", RandomQ(DType::kI8, {N, C, 3, 3}, rng)),
                          g.AddConstant("sw", Tensor::Scalar(0.005f)),
                          g.AddConstant("zw", Tensor::FromVector<int8_t>(DType::kI8, {}, {0})),
                          g.AddConstant("s16", Tensor::Scalar(s16)), Z16(g, "z16", 0),
                          g.AddConstant("b", Tensor::FromVector<int32_t>(DType::kI32, {N}, bias))},
                         1, {"conv:0"});
  conv->attrs.Set("kernel_shape", std::vector<int64_t>{3, 3});
  conv->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  Node* dq = g.AddNode(OpKind::kDequantizeLinear, "out", {conv->output(0), g.AddConstant("s", Tensor::Scalar(s16)),
                                                          Z16(g, "z", 0)},
                       1, {"y"});
  g.MarkOutput(dq->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = npu::LoadTarget("edge-default");
  ASSERT_TRUE(t.ok());
  partition::PartitionOptions o;
  o.cost_rule = false;
  auto r = CompileGraph(g, *t, "planar16", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& p : r->placements)
    EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->name() << ": " << p.reason;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("npu_planar16_" + std::to_string(::getpid()) + ".edgec")).string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(f.ok());
  auto l = LoadArtifact(**f);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  const std::map<std::string, Tensor> in = {{"x", RandomQ(DType::kI8, {1, C, H, W}, rng)}};
  auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
  std::filesystem::remove(path);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ(sim->outputs.size(), 1u);
  EXPECT_EQ(sim->outputs[0].dtype(), DType::kF32);
  ASSERT_EQ(sim->outputs[0].nbytes(), cpu->outputs[0].nbytes());
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), cpu->outputs[0].nbytes()), 0);
}

}  // namespace
}  // namespace edgec::lower
