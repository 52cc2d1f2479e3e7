// The channel shuffle on the NPU (shufflenet's Reshape -> Transpose(0, 2, 1, ...) -> Reshape):
// PrepareNpuGraph (lower/npu_epilogue.h) fuses the three nodes into one ChannelShuffle, which
// MoveLayerOf maps to one move box; in NHWC each pixel's C bytes are a [g][C/g] block
// transposed to [C/g][g], moved by contiguous DMAs and one pitched COPY per pixel in SRAM
// (npu/move.cc). On seeded random shapes (4-d and 3-d, groups 2..4, u8 and i8) on every
// target in targets/, single and double buffering, the tiler's chunk and a small one, the
// functional simulator equals the reference ChannelShuffle bit for bit, every byte is read
// and written once, and no program beats its roofline.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_epilogue.h"
#include "lower/npu_layers.h"
#include "npu/move.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "partition/partition.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Node* Shuffle(Graph& g, DType dt, const Dims& d, int64_t group) {
  Node* n = g.AddNode(OpKind::kChannelShuffle, "shuffle", {g.AddInput("x", MakeType(dt, d))}, 1, {"y"});
  n->attrs.Set("group", group);
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return n;
}

// Runs the move program with x in "<node>.input"; the "<node>.output" bytes as a tensor.
StatusOr<Tensor> RunMove(const npu::Program& p, const npu::Target& t, const Node& n, const Tensor& x,
                         npu::SimResult* sim) {
  std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
  for (const auto& r : p.regions)
    if (r.name == n.name() + ".input") {
      const std::vector<uint8_t> b = ToNpu(x);
      std::copy(b.begin(), b.end(), dram.begin() + r.addr);
    }
  npu::SimOptions so;
  so.functional = true;
  so.dram = &dram;
  ASSIGN_OR_RETURN(*sim, npu::Simulate(p, t, so));
  for (const auto& r : p.regions)
    if (r.name == n.name() + ".output") return FromNpu(dram.data() + r.addr, n.output(0)->type);
  return NotFound("no output region");
}

TEST(NpuChannelShuffleTest, MatchesReferenceOnEveryTarget) {
  std::mt19937 rng(2832);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 8; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t g = U(2, 4), C = g * U(1, 40);
    const Dims d = i % 4 == 3 ? Dims{U(1, 2), C, U(1, 30)} : Dims{U(1, 2), C, U(1, 12), U(1, 12)};
    Graph graph;
    Node* n = Shuffle(graph, dt, d, g);
    const Tensor x = RandomQ(dt, d, rng);
    auto want = EvaluateNode(*n, {&x});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kMove);
    for (const npu::Target& t : *targets)
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseMoveTiling(v->move, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, int64_t{64}}) {
          auto p = npu::LowerMove(v->move, t, chunk, db);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          npu::SimResult sim;
          auto got = RunMove(*p, t, *n, x, &sim);
          ASSERT_TRUE(got.ok()) << got.status().ToString();
          ASSERT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
              << DimsToString(d) << " group " << g << " on " << t.name << " chunk " << chunk;
          EXPECT_EQ(sim.total.dram_read, v->move.bytes());
          EXPECT_EQ(sim.total.dram_written, v->move.bytes());
          EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(t)) << t.name;
          ++runs;
        }
      }
  }
  EXPECT_GE(runs, 8 * 3 * 2 * 2);
}

// One transposing COPY per pixel, not one per group of g bytes: a shuffle of P pixels of C
// channels issues at most P COPYs (a per-run permute would issue P·C/g).
TEST(NpuChannelShuffleTest, OneCopyPerPixel) {
  Graph graph;
  const Dims d = {1, 116, 28, 28};
  Node* n = Shuffle(graph, DType::kI8, d, 2);
  auto v = VectorLayerOf(*n);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const npu::Target t = npu::DefaultTarget();
  auto ch = npu::ChooseMoveTiling(v->move, t, {});
  ASSERT_TRUE(ch.ok()) << ch.status().ToString();
  auto p = npu::LowerMove(v->move, t, ch->chunk, ch->double_buffer);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  int copies = 0;
  for (const npu::Instr& in : p->instrs) copies += in.op == npu::Opcode::kCopy;
  EXPECT_GT(copies, 0);
  EXPECT_LE(copies, 28 * 28);
}

// The exporter's three nodes become one ChannelShuffle, legal on the NPU and faster there than
// on the CPU, meaning what the three nodes meant (reference kernels, bit for bit).
TEST(NpuChannelShuffleTest, PreparedChainIsOneNpuMove) {
  Graph g;
  const Dims d = {1, 116, 28, 28};
  Value* x = g.AddInput("x", MakeType(DType::kI8, d));
  Value* split_shape = g.AddConstant("split_shape", Tensor::FromVector<int64_t>(DType::kI64, {5}, {1, 2, 58, 28, 28}));
  Value* merge_shape = g.AddConstant("merge_shape", Tensor::FromVector<int64_t>(DType::kI64, {4}, {1, 116, 28, 28}));
  Node* split = g.AddNode(OpKind::kReshape, "split", {x, split_shape}, 1, {"s"});
  Node* tr = g.AddNode(OpKind::kTranspose, "transpose", {split->output(0)}, 1, {"t"});
  tr->attrs.Set("perm", std::vector<int64_t>{0, 2, 1, 3, 4});
  Node* merge = g.AddNode(OpKind::kReshape, "merge", {tr->output(0), merge_shape}, 1, {"y"});
  g.MarkOutput(merge->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  std::mt19937 rng(2833);
  const Tensor xv = RandomQ(DType::kI8, d, rng);
  auto want = ReferenceExecutor(g).Run({{"x", xv}});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto t = npu::LoadTarget("edge-default");
  ASSERT_TRUE(t.ok());
  Graph prepared = g.Clone();
  ASSERT_TRUE(PrepareNpuGraph(prepared, *t).ok());
  ASSERT_EQ(prepared.num_nodes(), 1);
  const Node* shuffle = prepared.nodes().front();
  ASSERT_EQ(shuffle->op(), OpKind::kChannelShuffle);
  auto got = ReferenceExecutor(prepared).Run({{"x", xv}});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(std::memcmp((*got)[0].raw(), (*want)[0].raw(), (*want)[0].nbytes()), 0);
  auto ps = partition::Partition(prepared, *t, {});
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  ASSERT_EQ(ps->size(), 1u);
  // Alone in its graph it pays the crossings from and to the CPU; its own NPU time is below the
  // CPU's (the transpose through a 5-d view moved one-byte rows: 0.39 ms against 0.045 ms).
  const partition::NodePlacement& p = (*ps)[0];
  EXPECT_TRUE(p.legal) << p.reason;
  EXPECT_LT(p.npu_s, p.cpu_s) << p.reason;
}

}  // namespace
}  // namespace edgec::lower
