// int16 values through NPU segments: chains of int16 QLinearLayerNormalization /
// QLinearSoftmax (3-d) and QLinearGroupNormalization (4-d, NHWC in DRAM) nodes compiled whole
// onto the NPU — 2-byte tensors in the segment's regions and SRAM plan, handed over from and
// to the CPU — and, with the middle node pinned to the CPU, as two segments with int16 values
// crossing between units. The compiled file run on the simulated NPU equals its CPU run bit
// for bit on every target whose vector cores take i16 (single and double buffering, seeded
// random int16 inputs); a target without i16 keeps the layers on the CPU and says why
// (edge-mcu: not its ops; edge-default without its i16 rate: the dtype).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "runtime/artifact_run.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Scale(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }
Value* Zp16(Graph& g, const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int16_t>(DType::kI16, {}, {0})); }
Value* FloatConst(Graph& g, const std::string& name, int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.5f, 1.5f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return g.AddConstant(name, Tensor::FromVector<float>(DType::kF32, {n}, v));
}
Value* AddNode(Graph& g, OpKind op, const std::string& name, std::vector<Value*> in, Attributes a) {
  Node* n = g.AddNode(op, name, std::move(in), 1, {name + ":0"});
  n->attrs = std::move(a);
  return n->output(0);
}

// x [1, rows, cols] int16 -> layer norm -> softmax -> layer norm -> y (int16).
Graph Rows(const Dims& d, std::mt19937& rng) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI16, d));
  Attributes eps;
  eps.Set("epsilon", 1e-5f);
  Value* a = AddNode(g, OpKind::kQLinearLayerNormalization, "ln1",
                     {x, Scale(g, "sx", 4e-4f), Zp16(g, "zx"), FloatConst(g, "g1", d[2], rng),
                      FloatConst(g, "b1", d[2], rng), Scale(g, "s1", 1.5e-4f), Zp16(g, "z1")},
                     eps);
  Value* p = AddNode(g, OpKind::kQLinearSoftmax, "middle",
                     {a, Scale(g, "s1b", 1.5e-4f), Zp16(g, "z1b"), Scale(g, "sp", 1.f / 32767), Zp16(g, "zp")}, {});
  Value* y = AddNode(g, OpKind::kQLinearLayerNormalization, "ln2",
                     {p, Scale(g, "sp2", 1.f / 32767), Zp16(g, "zp2"), FloatConst(g, "g2", d[2], rng), nullptr,
                      Scale(g, "sy", 2e-4f), Zp16(g, "zy")},
                     eps);
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// x [N, C, H, W] int16 -> group norm -> group norm (instance) -> group norm -> y (int16).
Graph Planes(const Dims& d, int64_t groups, std::mt19937& rng) {
  Graph g;
  Value* v = g.AddInput("x", MakeType(DType::kI16, d));
  const char* names[] = {"gn0", "middle", "gn2"};
  for (int i = 0; i < 3; ++i) {
    Attributes a;
    a.Set("epsilon", 1e-5f);
    a.Set("num_groups", i == 1 ? d[1] : groups);
    const std::string s = std::to_string(i);
    v = AddNode(g, OpKind::kQLinearGroupNormalization, names[i],
                {v, Scale(g, "sx" + s, 3e-4f), Zp16(g, "zx" + s), FloatConst(g, "g" + s, d[1], rng),
                 FloatConst(g, "b" + s, d[1], rng), Scale(g, "sy" + s, 3e-4f), Zp16(g, "zy" + s)},
                a);
  }
  g.MarkOutput(v);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// Compiles `g` for `t` (every legal node on the NPU, `pin_middle` keeps the middle one on the
// CPU), runs it on both devices on seeded random int16 inputs; returns the NPU nodes.
int CheckBitExact(const Graph& g, const npu::Target& t, bool double_buffer, bool pin_middle, std::mt19937& rng) {
  partition::PartitionOptions o;
  o.cost_rule = false;
  o.tiler.allow_double = double_buffer;
  if (pin_middle) o.pins["middle"] = artifact_io::Unit::kCpu;
  auto r = CompileGraph(g, t, "int16_chain", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0;
  int npu = 0;
  for (const auto& p : r->placements) npu += p.unit == artifact_io::Unit::kNpu;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("int16_segment_" + std::to_string(::getpid()) + ".edgec")).string();
  EXPECT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto file = artifact_io::MappedArtifact::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return 0;
  auto loaded = LoadArtifact(**file);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  if (!loaded.ok()) return 0;
  const Dims& d = g.inputs()[0]->type.dims;
  for (int seed = 0; seed < 2; ++seed) {
    const std::map<std::string, Tensor> in = {{"x", RandomQ(DType::kI16, d, rng)}};
    auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
    EXPECT_TRUE(sim.ok()) << sim.status().ToString();
    auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
    EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
    if (!sim.ok() || !cpu.ok()) break;
    const Tensor &a = sim->outputs.at(0), &b = cpu->outputs.at(0);
    EXPECT_EQ(a.dtype(), DType::kI16);
    EXPECT_EQ(a.nbytes(), b.nbytes());
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0)
        << t.name << (double_buffer ? " double" : " single") << (pin_middle ? " two segments" : "") << " "
        << a.TypeString();
    if (npu > 0) {
      EXPECT_GT(sim->npu_io_bytes, 0);
      EXPECT_EQ(sim->npu_io_bytes % 2, 0) << "2-byte values at every segment boundary";
    }
  }
  std::filesystem::remove(path);
  return npu;
}

void CheckOnEveryTarget(const Graph& g, std::mt19937& rng) {
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok()) << targets.status().ToString();
  int wide_targets = 0;
  for (const npu::Target& t : *targets) {
    const bool i16 = t.vector_cores.VecRate("i16") > 0;
    wide_targets += i16;
    for (bool db : {false, true}) {
      EXPECT_EQ(CheckBitExact(g, t, db, false, rng), i16 ? 3 : 0) << t.name;
      EXPECT_EQ(CheckBitExact(g, t, db, true, rng), i16 ? 2 : 0) << t.name;
    }
    for (const Node* n : g.nodes()) EXPECT_EQ(partition::NpuSupport(*n, t).empty(), i16) << t.name;
  }
  EXPECT_GE(wide_targets, 2);
  // The same ops and shapes without the i16 rate: the dtype is the reason.
  npu::Target no16 = npu::DefaultTarget();
  no16.vector_cores.dtype_rates.erase("i16");
  for (const Node* n : g.nodes())
    EXPECT_NE(partition::NpuSupport(*n, no16).find("vector cores take no i16"), std::string::npos) << n->name();
}

TEST(NpuInt16Segment, NormSoftmaxChainOnRandomShapes) {
  std::mt19937 rng(283);
  for (int i = 0; i < 3; ++i) {
    const Dims d = {1, static_cast<int64_t>(1 + rng() % 24), static_cast<int64_t>(2 + rng() % 120)};
    CheckOnEveryTarget(Rows(d, rng), rng);
  }
}

TEST(NpuInt16Segment, GroupNormChainInNhwcOnRandomShapes) {
  std::mt19937 rng(293);
  for (int i = 0; i < 3; ++i) {
    const int64_t groups = 1 + rng() % 3, per = 1 + rng() % 4;
    const Dims d = {1, groups * per, static_cast<int64_t>(1 + rng() % 7), static_cast<int64_t>(2 + rng() % 7)};
    CheckOnEveryTarget(Planes(d, groups, rng), rng);
  }
}

}  // namespace
}  // namespace edgec::lower
