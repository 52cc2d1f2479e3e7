// A Gather of a constant 8-bit table by int64 indices computed at run time (an embedding's
// token ids) as gather DMAs (npu::GatherLayer, isa.h Instr::gather). On seeded random shapes,
// i8 and u8 tables, negative indices among them, with the tiler's chunk and a chunk of one
// index, single and double buffering, on every target in targets/: the functional simulator's
// output equals the reference kernel's bit for bit, every run obeys its roofline, and an index
// outside the table is an error naming it. Compiled, an embedding + add runs whole on the NPU
// and npu-sim equals the CPU run.
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

Tensor Indices(const Dims& d, int64_t rows, std::mt19937& rng) {
  Tensor t = *Tensor::Create(DType::kI64, d);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = static_cast<int64_t>(rng() % (2 * rows)) - rows;
  return t;
}

struct Embedding {
  Graph g;
  Node* n = nullptr;
};

Embedding MakeEmbedding(DType dt, int64_t rows, int64_t width, const Dims& ids, std::mt19937& rng) {
  Embedding e;
  Value* idx = e.g.AddInput("ids", MakeType(DType::kI64, ids));
  Value* table = e.g.AddConstant("table", RandomQ(dt, {rows, width}, rng));
  e.n = e.g.AddNode(OpKind::kGather, "embed", {table, idx}, 1, {"y"});
  e.g.MarkOutput(e.n->output(0));
  EXPECT_TRUE(InferShapes(e.g).ok());
  return e;
}

// Runs the layer's program on `ids` (its DRAM image as the runtime stages it).
StatusOr<npu::SimResult> RunGather(const npu::GatherLayer& l, const npu::Target& t, int64_t chunk, bool db,
                             const Tensor& ids, std::vector<uint8_t>& dram, npu::Program& prog) {
  ASSIGN_OR_RETURN(prog, npu::LowerGather(l, t, chunk, db));
  dram.assign(prog.dram_bytes, 0x5A);
  std::copy(prog.dram_init.begin(), prog.dram_init.end(), dram.begin());
  const std::vector<uint8_t> ib = ToNpu(ids);
  std::copy(ib.begin(), ib.end(), dram.begin() + prog.regions[1].addr);
  npu::SimOptions so;
  so.functional = true;
  so.dram = &dram;
  return npu::Simulate(prog, t, so);
}

TEST(NpuGatherTest, GatherDmaMatchesReferenceOnEveryTarget) {
  std::mt19937 rng(29);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 6; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t rows = 1 + rng() % 50, width = 1 + rng() % 70;
    const Dims ids = i % 3 == 0 ? Dims{static_cast<int64_t>(1 + rng() % 9)}
                                : Dims{1, static_cast<int64_t>(1 + rng() % 40)};
    Embedding e = MakeEmbedding(dt, rows, width, ids, rng);
    const Tensor x = Indices(ids, rows, rng);
    const Tensor& table = e.n->input(0)->constant();
    auto want = EvaluateNode(*e.n, {&table, &x});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto v = VectorLayerOf(*e.n);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kGather);
    for (const npu::Target& t : *targets) {
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseGatherTiling(v->gather, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, int64_t{1}}) {
          std::vector<uint8_t> dram;
          npu::Program p;
          auto sim = RunGather(v->gather, t, chunk, db, x, dram, p);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          const Tensor got = *FromNpu(dram.data() + p.regions[2].addr, e.n->output(0)->type);
          const Tensor& w = (*want)[0];
          ASSERT_EQ(got.nbytes(), w.nbytes());
          EXPECT_EQ(std::memcmp(got.raw(), w.raw(), w.nbytes()), 0)
              << DTypeName(dt) << " table " << rows << "x" << width << " ids " << DimsToString(ids) << " on "
              << t.name << " chunk " << chunk << (db ? " double" : " single");
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          EXPECT_EQ(sim->total.dram_written, w.nbytes()) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, 6 * 3 * 2 * 2);
}

TEST(NpuGatherTest, IndexOutsideTheTableIsAnError) {
  std::mt19937 rng(3);
  Embedding e = MakeEmbedding(DType::kI8, 10, 4, {1, 3}, rng);
  auto v = VectorLayerOf(*e.n);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  Tensor x = Tensor::FromVector<int64_t>(DType::kI64, {1, 3}, {2, 10, -1});
  std::vector<uint8_t> dram;
  npu::Program p;
  auto sim = RunGather(v->gather, npu::DefaultTarget(), 3, false, x, dram, p);
  ASSERT_FALSE(sim.ok());
  EXPECT_NE(sim.status().message().find("gather index 10 outside the table's 10 rows"), std::string::npos)
      << sim.status().message();
}

TEST(NpuGatherTest, CompiledEmbeddingRunsOnTheNpuBitExact) {
  std::mt19937 rng(11);
  Graph g;
  Value* ids = g.AddInput("ids", MakeType(DType::kI64, {1, 24}));
  Value* table = g.AddConstant("table", RandomQ(DType::kI8, {40, 32}, rng));
  Node* gather = g.AddNode(OpKind::kGather, "embed", {table, ids}, 1, {"e"});
  Value* s = g.AddConstant("s", Tensor::Scalar(0.05f));
  Value* z = g.AddConstant("z", Tensor::FromVector<int8_t>(DType::kI8, {}, {0}));
  Node* dq = g.AddNode(OpKind::kDequantizeLinear, "dequantize", {gather->output(0), s, z}, 1, {"y"});
  g.MarkOutput(dq->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  partition::PartitionOptions o;
  o.cost_rule = false;  // so small a graph is the CPU's by cost
  auto r = CompileGraph(g, npu::DefaultTarget(), "embedding", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& p : r->placements) EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->Label() << ": " << p.reason;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("gather_" + std::to_string(::getpid()) + ".edgec")).string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto file = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto loaded = LoadArtifact(**file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::map<std::string, Tensor> in = {{"ids", Indices({1, 24}, 40, rng)}};
  auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  std::filesystem::remove(path);
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), cpu->outputs[0].nbytes()), 0);
  EXPECT_EQ(sim->copies, 0);  // the ids and the output are the caller's buffers
}

}  // namespace
}  // namespace edgec::lower
