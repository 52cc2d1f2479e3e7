// Pad of 8-bit (and int16) tensors on the NPU as a move layer (lower/npu_move_layer.cc
// PadBoxes, npu/move.h kFillInput): the kept interior is one strided copy; reflect and edge
// borders are copies from the input (a reflected row a box of one, an edge a box of stride
// 0); the constant border is written by loads that pad every row with the pad value (no DRAM
// read). On seeded shapes (pads on each side, crops, channel pads, u8, i8 and int16) on every
// target in targets/, single and double buffering, the tiler's chunk and a small one, the
// functional simulator equals the reference Pad bit for bit; in a segment between two convs
// it is placed on the NPU by cost and npu-sim == cpu == the reference kernels.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "npu/move.h"
#include "npu/segment.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;

// A Pad of x (dtype dt, dims d) with ONNX pads (begins then ends) and a pad value.
Node* PadNode(Graph& g, Value* x, const Ints& pads, const std::string& mode, int64_t value, const std::string& name) {
  const int r = x->type.rank();
  std::vector<Value*> ins = {x, g.AddConstant(name + ".pads", Tensor::FromVector<int64_t>(DType::kI64, {2 * r}, pads))};
  if (mode == "constant") {
    Tensor v = *Tensor::Create(x->type.dtype, {});
    if (x->type.dtype == DType::kI16) {
      *v.data<int16_t>() = static_cast<int16_t>(value);
    } else {
      *static_cast<uint8_t*>(v.raw()) = static_cast<uint8_t>(value);
    }
    ins.push_back(g.AddConstant(name + ".value", v));
  }
  Node* n = g.AddNode(OpKind::kPad, name, ins, 1, {name + ".y"});
  n->attrs.Set("mode", mode);
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

struct Case {
  DType dt;
  Dims d;
  Ints pads;
  std::string mode;
  int64_t value = 0;
};

TEST(NpuPadTest, MatchesReferenceOnEveryTarget) {
  std::mt19937 rng(4410);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  std::vector<Case> cases;
  const char* modes[] = {"constant", "reflect", "edge"};
  for (int i = 0; i < 9; ++i) {
    const DType dt = i % 3 == 1 ? DType::kU8 : DType::kI8;
    const Dims d = {U(1, 2), U(1, 20), U(2, 11), U(2, 13)};
    Ints pads(8, 0);
    for (int a : {2, 3}) {  // each side of H and W, up to dim - 1 (reflect's limit)
      pads[a] = U(0, std::min<int64_t>(3, d[a] - 1));
      pads[a + 4] = U(0, std::min<int64_t>(3, d[a] - 1));
    }
    cases.push_back({dt, d, pads, modes[i % 3], U(0, 255)});
  }
  // A channel pad and a crop (negative pads) in constant mode, a crop with reflect, a 3-d
  // tensor, int16 edge and constant (a pad value of one byte twice), single-sided pads.
  cases.push_back({DType::kI8, {1, 5, 4, 6}, {0, 2, 1, 0, 0, 3, 0, 2}, "constant", 0x81});
  cases.push_back({DType::kU8, {1, 7, 9, 8}, {0, 0, -2, 3, 0, 0, 1, -3}, "constant", 17});
  cases.push_back({DType::kI8, {1, 7, 9, 8}, {0, 0, 2, -1, 0, 0, -3, 2}, "reflect", 0});
  cases.push_back({DType::kI8, {2, 9, 33}, {0, 1, 4, 0, 2, 5}, "reflect", 0});
  cases.push_back({DType::kI16, {1, 6, 5, 7}, {0, 0, 2, 1, 0, 0, 1, 3}, "edge", 0});
  cases.push_back({DType::kI16, {1, 6, 5, 7}, {0, 0, 1, 1, 0, 0, 1, 1}, "constant", -1});
  cases.push_back({DType::kI8, {1, 16, 12, 12}, {0, 0, 0, 0, 0, 0, 1, 1}, "constant", -5});
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (const Case& c : cases) {
    Graph graph;
    Node* n = PadNode(graph, graph.AddInput("x", MakeType(c.dt, c.d)), c.pads, c.mode, c.value, "pad");
    graph.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(graph).ok());
    const Tensor x = RandomQ(c.dt == DType::kI16 ? DType::kI8 : c.dt, c.d, rng);
    Tensor xv = x;
    if (c.dt == DType::kI16) {  // random int16 values
      xv = *Tensor::Create(DType::kI16, c.d);
      for (int64_t i = 0; i < xv.numel(); ++i) xv.data<int16_t>()[i] = static_cast<int16_t>(rng());
    }
    std::vector<const Tensor*> ins = {&xv};
    for (int i = 1; i < n->num_inputs(); ++i) ins.push_back(&n->input(i)->constant());
    auto want = EvaluateNode(*n, ins);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kMove);
    EXPECT_EQ(v->move.bytes(), (*want)[0].nbytes()) << "every output byte is in one box";
    const std::string what = fmt::format("{} {} pads {} {}", DTypeName(c.dt), DimsToString(c.d), DimsToString(c.pads), c.mode);
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
          auto got = RunMove(*p, t, *n, xv, &sim);
          ASSERT_TRUE(got.ok()) << got.status().ToString();
          ASSERT_EQ(got->nbytes(), (*want)[0].nbytes());
          ASSERT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
              << what << " on " << t.name << " chunk " << chunk << (db ? " double" : " single");
          EXPECT_EQ(sim.total.dram_written, v->move.bytes()) << what;
          if (c.mode == "constant") {  // the border is padded on load: only the interior is read
            EXPECT_LE(sim.total.dram_read, xv.nbytes()) << what;
          }
          EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(t)) << t.name;
          ++runs;
        }
      }
  }
  EXPECT_EQ(runs, static_cast<int>(cases.size()) * static_cast<int>(targets->size()) * 4);
}

TEST(NpuPadTest, RefusesWhatItCannotMove) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI16, {1, 4, 5, 5}));
  Node* odd = PadNode(g, x, {0, 0, 1, 1, 0, 0, 1, 1}, "constant", 0x0102, "odd");
  Value* f = g.AddInput("f", MakeType(DType::kF32, {1, 4, 5, 5}));
  Node* flt = g.AddNode(OpKind::kPad, "float", {f, g.AddConstant("fp", Tensor::FromVector<int64_t>(DType::kI64, {8}, {0, 0, 1, 1, 0, 0, 1, 1}))}, 1, {"fy"});
  ASSERT_TRUE(InferShapes(g).ok());
  auto a = VectorLayerOf(*odd);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("int16 pad value 258"), std::string::npos) << a.status().ToString();
  auto b = VectorLayerOf(*flt);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("dtype f32"), std::string::npos) << b.status().ToString();
}

// conv 3x3 -> relu -> Pad (int8, on the integer graph) -> conv 3x3 without padding: the Pad
// joins the NPU segment by cost (its transfers are the segment's), and npu-sim equals the CPU
// and the reference kernels bit for bit on every target, for each mode and pads on each side.
Graph PaddedChain(const std::string& mode, const Ints& pads, int h, int w) {
  using testing_quant::Add;
  using testing_quant::Normal;
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, h, w}));
  Attributes p1;
  p1.Set("pads", Ints{1, 1, 1, 1});
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({24, 8, 3, 3}, 91, 0.2)),
                                    g.AddConstant("b1", Normal({24}, 92, 0.1))}, p1, "conv1");
  Value* r = Add(g, OpKind::kRelu, {a}, {}, "relu");
  Value* y = Add(g, OpKind::kConv, {r, g.AddConstant("w2", Normal({16, 24, 3, 3}, 93, 0.1)),
                                    g.AddConstant("b2", Normal({16}, 94, 0.1))}, {}, "conv2");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  Graph q = testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, h, w}, 900, 4, DType::kI8);
  // The Pad on conv2's int8 input, with conv2's input zero point as the pad value (0.0).
  Node* conv2 = nullptr;
  for (Node* n : q.nodes())
    if (n->op() == OpKind::kQLinearConv && n->name().find("conv2") != std::string::npos) conv2 = n;
  EXPECT_NE(conv2, nullptr);
  if (!conv2) return q;
  Value* in = conv2->input(0);
  const int64_t zp = conv2->input(2)->constant().ToInt64Vector()[0];
  Node* pad = PadNode(q, in, pads, mode, zp, "pad");
  q.SetInput(conv2, 0, pad->output(0));
  EXPECT_TRUE(q.TopoSort().ok());
  EXPECT_TRUE(InferShapes(q).ok());
  return q;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(NpuPadTest, PlacedOnTheNpuBetweenConvsAndBitExact) {
  struct P { std::string mode; Ints pads; int h, w; };
  const std::vector<P> ps = {{"reflect", {0, 0, 1, 1, 0, 0, 1, 1}, 21, 17},
                             {"edge", {0, 0, 2, 0, 0, 0, 1, 3}, 19, 23},
                             {"constant", {0, 0, 0, 0, 0, 0, 1, 1}, 20, 20},
                             {"constant", {0, 0, 3, 1, 0, 0, 2, 2}, 13, 29}};
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int k = 0;
  for (const P& p : ps) {
    const Graph g = PaddedChain(p.mode, p.pads, p.h, p.w);
    const Tensor x = testing_quant::Normal({1, 8, p.h, p.w}, 95 + k);
    for (const npu::Target& t : *targets) {
      const std::string tag = fmt::format("{} {} on {}", p.mode, DimsToString(p.pads), t.name);
      Graph copy = g.Clone();
      auto r = CompileGraph(copy, t, "pad", {});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      bool pad_seen = false;
      for (const auto& pl : r->model.placements) {
        if (pl.node != "pad") continue;
        pad_seen = true;
        if (t.name == "edge-mcu") {  // edge-mcu keeps its minimal op list
          EXPECT_EQ(pl.unit, artifact_io::Unit::kCpu) << tag;
          EXPECT_NE(pl.reason.find("unsupported op"), std::string::npos) << tag << ": " << pl.reason;
        } else {
          EXPECT_EQ(pl.unit, artifact_io::Unit::kNpu) << tag << ": " << pl.reason;
        }
      }
      EXPECT_TRUE(pad_seen) << tag;
      const std::string path =
          (std::filesystem::temp_directory_path() / fmt::format("npu_pad_{}_{}.edgec", k, t.name)).string();
      ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
      auto f = artifact_io::MappedArtifact::Open(path);
      ASSERT_TRUE(f.ok());
      auto l = LoadArtifact(**f);
      ASSERT_TRUE(l.ok()) << l.status().ToString();
      int npu_segments = 0;
      for (const auto& s : l->meta.segments) npu_segments += s.unit == artifact_io::Unit::kNpu;
      if (t.name != "edge-mcu") {
        EXPECT_EQ(npu_segments, 1) << tag << ": the Pad splits the segment";
      }
      const std::map<std::string, Tensor> in = {{"x", x}};
      auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
      auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
      Graph fixed = g.Clone();
      for (Node* n : fixed.nodes())
        if (n->op() == OpKind::kQLinearConv) n->attrs.Set("edgec_requant", std::string("fixed_point"));
      auto ref = ReferenceExecutor(fixed).Run(in);
      ASSERT_TRUE(sim.ok()) << sim.status().ToString();
      ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
      ASSERT_TRUE(ref.ok()) << ref.status().ToString();
      ASSERT_EQ(sim->outputs.size(), 1u);
      EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0])) << tag << ": npu-sim != cpu";
      // The reference requantizes as the NPU does; on edge-mcu the CPU's part runs its own
      // requantization, so only npu-sim == cpu holds there.
      if (t.name != "edge-mcu") {
        EXPECT_TRUE(SameBytes(sim->outputs[0], (*ref)[0])) << tag << ": npu-sim != the reference kernels";
      }
      std::filesystem::remove(path);
    }
    ++k;
  }
}

}  // namespace
}  // namespace edgec::lower
