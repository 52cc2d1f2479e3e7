// Fused epilogues (lower/npu_epilogue.h): a QLinearConv (dense or depthwise), a QLinearMatMul
// with constant weights or an integer group / layer norm followed by a QuantizedLookup becomes one node with
// `edgec_output_table`, lowered as one NPU layer (requantize, then the VEC lut on the output
// tile in SRAM, then the store; for a norm, the VEC norm then the lut). On seeded random
// shapes, u8 and i8, random tables, on every
// target in targets/ with the tiler's choice and hand-picked tilings, the functional
// simulator's output equals the reference run of the unfused pair bit for bit, and no layer
// beats its roofline. A compiled graph has one NPU layer per pair where the target runs
// lookups, and the pair stays two nodes where it does not (edge-mcu).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_epilogue.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Zp(Graph& g, const std::string& n, DType dt, int v) {
  return dt == DType::kU8 ? g.AddConstant(n, Tensor::FromVector<uint8_t>(dt, {}, {static_cast<uint8_t>(v)}))
                          : g.AddConstant(n, Tensor::FromVector<int8_t>(dt, {}, {static_cast<int8_t>(v)}));
}

struct Case {
  enum Kind { kConv, kDepthwise, kMatMul, kGroupNorm, kLayerNorm } kind = kConv;
  DType xt = DType::kI8, yt = DType::kI8;
  Dims x;
};

// n -> QuantizedLookup -> QuantizedLookup -> y (one random table of the output type).
Graph Lookups(Graph& g, Node* n, const Case& c, std::mt19937& rng) {
  std::vector<uint8_t> table(256);
  for (auto& v : table) v = static_cast<uint8_t>(rng());
  Value* t = g.AddConstant("table", c.yt == DType::kU8 ? Tensor::FromVector<uint8_t>(c.yt, {256}, table)
                                                       : Tensor::FromVector<int8_t>(c.yt, {256}, std::vector<int8_t>(table.begin(), table.end())));
  Node* lut = g.AddNode(OpKind::kQuantizedLookup, "act/lookup", {n->output(0), t}, 1, {"a"});
  // A second lookup reads the first (a fused lookup's output may not be a graph output: its
  // name would change); it has no MAC layer to ride on and stays a node.
  Node* tail = g.AddNode(OpKind::kQuantizedLookup, "tail/lookup", {lut->output(0), t}, 1, {"y"});
  g.MarkOutput(tail->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return std::move(g);
}

// Or a QLinearGroupNormalization / QLinearLayerNormalization (random gamma and beta) first.
Node* Norm(Graph& g, Value* x, const Case& c, std::mt19937& rng) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const bool group = c.kind == Case::kGroupNorm;
  const int64_t C = group ? c.x[1] : c.x.back();
  std::vector<float> gamma(C), beta(C);
  for (auto& v : gamma) v = 0.5f + 0.1f * U(0, 10);
  for (auto& v : beta) v = -0.5f + 0.1f * U(0, 10);
  std::vector<Value*> in = {x, g.AddConstant("sx", Tensor::Scalar(0.05f)),
                            Zp(g, "zx", c.xt, U(-10, 10) + (c.xt == DType::kU8 ? 128 : 0)),
                            g.AddConstant("gamma", Tensor::FromVector<float>(DType::kF32, {C}, gamma)),
                            g.AddConstant("beta", Tensor::FromVector<float>(DType::kF32, {C}, beta)),
                            g.AddConstant("sy", Tensor::Scalar(0.03f)),
                            Zp(g, "zy", c.yt, U(-20, 20) + (c.yt == DType::kU8 ? 128 : 0))};
  Node* n = g.AddNode(group ? OpKind::kQLinearGroupNormalization : OpKind::kQLinearLayerNormalization, "layer", in, 1, {"c"});
  if (group) {
    int64_t groups = C;
    for (int64_t d : {4, 2, 3, 1})
      if (C % d == 0 && d <= C) { groups = C / d; break; }
    n->attrs.Set("num_groups", groups);
  }
  return n;
}

// x -> QLinearConv / QLinearMatMul (random int8 weights, bias, fixed-point requantization) or
// a norm -> the two lookups.
Graph ConvThenLookup(const Case& c, std::mt19937& rng) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Graph g;
  Value* x = g.AddInput("x", MakeType(c.xt, c.x));
  if (c.kind == Case::kGroupNorm || c.kind == Case::kLayerNorm) return Lookups(g, Norm(g, x, c, rng), c, rng);
  const bool mm = c.kind == Case::kMatMul;
  const int64_t C = mm ? c.x.back() : c.x[1];
  const int64_t N = c.kind == Case::kDepthwise ? C : U(1, 70);
  const int64_t kh = mm ? 0 : U(0, 1) * 2 + 1, kw = mm ? 0 : U(0, 1) * 2 + 1;
  const Dims wd = mm ? Dims{C, N} : Dims{N, c.kind == Case::kDepthwise ? 1 : C, kh, kw};
  std::vector<int8_t> w(NumElements(wd));
  for (auto& v : w) v = static_cast<int8_t>(U(-127, 127));
  std::vector<float> sw(N);
  for (auto& s : sw) s = 0.002f + 0.001f * U(0, 9);
  std::vector<int32_t> bias(N);
  for (auto& b : bias) b = U(-3000, 3000);
  const int64_t k = mm ? C : (c.kind == Case::kDepthwise ? 1 : C) * kh * kw;
  std::vector<Value*> in = {
      x, g.AddConstant("sx", Tensor::Scalar(0.05f)),
      Zp(g, "zx", c.xt, U(-10, 10) + (c.xt == DType::kU8 ? 128 : 0)),
      g.AddConstant("w", Tensor::FromVector<int8_t>(DType::kI8, wd, w)),
      g.AddConstant("sw", mm ? Tensor::Scalar(sw[0]) : Tensor::FromVector<float>(DType::kF32, {N}, sw)),
      Zp(g, "zw", DType::kI8, 0),
      g.AddConstant("sy", Tensor::Scalar(0.05f * 0.006f * std::sqrt(static_cast<float>(k)) * 6)),
      Zp(g, "zy", c.yt, U(-20, 20) + (c.yt == DType::kU8 ? 128 : 0)),
      g.AddConstant("bias", Tensor::FromVector<int32_t>(DType::kI32, {N}, bias))};
  Node* n = g.AddNode(mm ? OpKind::kQLinearMatMul : OpKind::kQLinearConv, "layer", in, 1, {"c"});
  n->attrs.Set("edgec_requant", std::string("fixed_point"));
  if (!mm) {
    n->attrs.Set("pads", std::vector<int64_t>{kh / 2, kw / 2, kh / 2, kw / 2});
    const int64_t s = U(1, 2);
    n->attrs.Set("strides", std::vector<int64_t>{s, s});
    if (c.kind == Case::kDepthwise) n->attrs.Set("group", C);
  }
  return Lookups(g, n, c, rng);
}

const Node* Only(const Graph& g, OpKind op) {
  const Node* found = nullptr;
  for (const Node* n : g.nodes())
    if (n->op() == op) found = n;
  return found;
}

// Runs a one-layer program functionally with `x` in "<layer>.input" and returns "<layer>.output"
// passed through the graph's tail lookup on the reference kernels.
StatusOr<Tensor> RunLayer(const npu::Program& p, const npu::Target& t, const Node& n, const Tensor& x,
                          npu::SimResult* sim) {
  std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
  std::copy(p.dram_init.begin(), p.dram_init.end(), dram.begin());
  bool placed = false;
  for (const auto& r : p.regions)
    if (r.name == n.name() + ".input") {
      const std::vector<uint8_t> bytes = ToNpu(x);
      if (static_cast<int64_t>(bytes.size()) != r.bytes) return Internal("{} input bytes for {}", bytes.size(), r.bytes);
      std::copy(bytes.begin(), bytes.end(), dram.begin() + r.addr);
      placed = true;
    }
  if (!placed) return NotFound("no input region");
  npu::SimOptions so;
  so.functional = true;
  so.dram = &dram;
  ASSIGN_OR_RETURN(*sim, npu::Simulate(p, t, so));
  for (const auto& r : p.regions)
    if (r.name == n.name() + ".output") {
      ASSIGN_OR_RETURN(Tensor a, FromNpu(dram.data() + r.addr, n.output(0)->type));
      const Node* tail = n.output(0)->uses().at(0).node;
      ASSIGN_OR_RETURN(std::vector<Tensor> y, EvaluateNode(*tail, {&a, &tail->input(1)->constant()}));
      return y[0];
    }
  return NotFound("no output region");
}

// The fused node's programs: the tiler's choice and a few legal hand-picked tilings.
std::vector<npu::Program> Programs(const Node& n, const npu::Target& t) {
  std::vector<npu::Program> out;
  if (IsVectorNode(n)) {
    auto v = VectorLayerOf(n);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    if (!v.ok()) return out;
    auto vt = ChooseVectorTiling(*v, t, {});
    EXPECT_TRUE(vt.ok()) << vt.status().ToString();
    if (!vt.ok()) return out;
    if (v->kind == VectorLayer::Kind::kNorm) {
      EXPECT_EQ(v->norm.output_table.size(), 256u);
      for (int64_t chunk : {vt->chunk, int64_t{1}})
        for (bool db : {false, true}) {
          auto p = npu::LowerNorm(v->norm, t, chunk, db);
          EXPECT_TRUE(p.ok()) << p.status().ToString();
          if (p.ok()) out.push_back(std::move(*p));
        }
      return out;
    }
    EXPECT_EQ(v->depthwise.output_table.size(), 256u);
    std::vector<std::tuple<int, int, bool>> tiles = {{vt->tile_rows, vt->tile_c, vt->double_buffer}, {1, 16, false}, {2, 1000, true}};
    for (const auto& [rows, c, db] : tiles) {
      auto p = npu::LowerDepthwise(v->depthwise, t, rows, c, db);
      if (p.ok()) out.push_back(std::move(*p));
    }
    return out;
  }
  auto q = QuantizedLayerOf(n);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  if (!q.ok()) return out;
  EXPECT_EQ(q->layer.output_table.size(), 256u);
  auto best = npu::ChooseTiling(q->layer, t);
  EXPECT_TRUE(best.ok()) << best.status().ToString();
  if (!best.ok()) return out;
  std::vector<npu::Tiling> tilings = {best->best.tiling};
  const int R = t.ai_cores.mac_rows, C = t.ai_cores.mac_cols;
  for (npu::Resident r : {npu::Resident::kWeights, npu::Resident::kInput, npu::Resident::kNone})
    for (bool db : {false, true}) {
      npu::Tiling tl{std::min<int>(4, q->layer.out_h()), 1, std::min<int>(R / 2 + 1, q->layer.channels), 1,
                     std::min<int>(C / 2, q->layer.out_channels), r, db, std::min(3, t.ai_cores.count)};
      if (q->layer.kernel_w > 1 && tl.tile_c != q->layer.channels) tl.kw_group = 1;
      if (npu::CheckTiling(q->layer, t, tl).ok()) tilings.push_back(tl);
    }
  for (const npu::Tiling& tl : tilings) {
    auto p = npu::LowerConv(q->layer, t, tl, nullptr);
    EXPECT_TRUE(p.ok()) << p.status().ToString() << " " << tl.ToString();
    if (p.ok()) out.push_back(std::move(*p));
  }
  return out;
}

TEST(NpuEpilogueTest, LookupEpilogueMatchesReference) {
  std::mt19937 rng(2830);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 15; ++i) {
    Case c;
    c.kind = static_cast<Case::Kind>(i % 5);
    c.xt = U(0, 1) ? DType::kU8 : DType::kI8;
    c.yt = U(0, 1) ? DType::kU8 : DType::kI8;
    // A norm carries a lookup with at least one item per vector core (4 on edge-default).
    c.x = c.kind == Case::kMatMul ? Dims{U(1, 60), U(2, 150)}
          : c.kind == Case::kLayerNorm ? Dims{U(4, 60), U(2, 150)}
          : Dims{c.kind == Case::kGroupNorm ? U(4, 5) : 1, U(1, 40), U(3, 19), U(3, 19)};
    const Graph g = ConvThenLookup(c, rng);
    const Tensor x = RandomQ(c.xt, c.x, rng);
    auto want = ReferenceExecutor(g).Run({{"x", x}});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    // The graph fused as for edge-default, its layer lowered for every target (edge-mcu's
    // compile keeps the pair: it runs no lookups).
    Graph fused = g.Clone();
    ASSERT_EQ(FuseNpuEpilogues(fused, npu::DefaultTarget()), 1);
    ASSERT_EQ(Only(fused, OpKind::kQuantizedLookup)->name(), "tail/lookup");
    const Node* n = fused.nodes().front();
    ASSERT_TRUE(n->attrs.Has("edgec_output_table")) << n->Label();
    // The fused node on the reference kernels is the pair.
    auto ref = ReferenceExecutor(fused).Run({{"x", x}});
    ASSERT_TRUE(ref.ok()) << ref.status().ToString();
    ASSERT_EQ(std::memcmp((*ref)[0].raw(), (*want)[0].raw(), (*want)[0].nbytes()), 0);
    for (const npu::Target& t : *targets) {
      Graph kept = g.Clone();
      const bool norm = c.kind == Case::kGroupNorm || c.kind == Case::kLayerNorm;
      const bool spreads = !norm || c.x[0] >= t.vector_cores.count;  // items: rows or batch
      EXPECT_EQ(FuseNpuEpilogues(kept, t), t.SupportsOp("QuantizedLookup") && spreads ? 1 : 0) << t.name;
      for (const npu::Program& p : Programs(*n, t)) {
        npu::SimResult sim;
        auto got = RunLayer(p, t, *n, x, &sim);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_EQ(got->nbytes(), (*want)[0].nbytes());
        ASSERT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
            << "case " << i << " " << DimsToString(c.x) << " on " << t.name;
        EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(t)) << t.name;
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 15 * 3 * 2);
}

// The compiled graph: one NPU layer for the pair (the first lookup no longer a node of its own) on
// edge-default, and its segment is faster than the unfused pair's; on edge-mcu the pair stays.
TEST(NpuEpilogueTest, CompiledPairIsOneLayer) {
  std::mt19937 rng(2831);
  Case c;
  c.x = {1, 32, 48, 48};
  const Graph g = ConvThenLookup(c, rng);
  auto def = npu::LoadTarget("edge-default");
  ASSERT_TRUE(def.ok());
  partition::PartitionOptions all;
  all.cost_rule = false;
  auto unfused = CompileGraph(g, *def, "pair", all);
  ASSERT_TRUE(unfused.ok()) << unfused.status().ToString();
  Graph fused = g.Clone();
  ASSERT_EQ(FuseNpuEpilogues(fused, *def), 1);
  auto one = CompileGraph(fused, *def, "pair", all);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->placements.size(), 2u);
  for (const auto& p : one->placements) EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.reason;
  ASSERT_EQ(unfused->placements.size(), 3u);
  auto e1 = EstimateSegments(*one, *def);
  auto e2 = EstimateSegments(*unfused, *def);
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_EQ(e1->layers, 2);
  EXPECT_EQ(e2->layers, 3);
  EXPECT_LT(e1->cycles, e2->cycles);
  auto mcu = npu::LoadTarget("edge-mcu");
  ASSERT_TRUE(mcu.ok());
  Graph kept = g.Clone();
  EXPECT_EQ(FuseNpuEpilogues(kept, *mcu), 0);
  EXPECT_NE(Only(kept, OpKind::kQuantizedLookup), nullptr);
}

// A GroupNorm of one batch item is one tile on one core: its lookup stays a layer of its own
// (spread over every vector core); with an item per vector core it rides on the norm.
TEST(NpuEpilogueTest, NormCarriesTheLookupOnlyWhenItSpreads) {
  std::mt19937 rng(2834);
  Case c;
  c.kind = Case::kGroupNorm;
  c.x = {1, 32, 16, 16};
  const Graph one = ConvThenLookup(c, rng);
  c.x = {4, 32, 16, 16};
  const Graph four = ConvThenLookup(c, rng);
  const npu::Target& t = npu::DefaultTarget();
  ASSERT_EQ(t.vector_cores.count, 4);
  Graph g1 = one.Clone(), g4 = four.Clone();
  EXPECT_EQ(FuseNpuEpilogues(g1, t), 0);
  EXPECT_EQ(FuseNpuEpilogues(g4, t), 1);
}

// An output larger than half the SRAM keeps its lookup: the segment's cascades run such
// tensors in row stripes with the lookup as a layer of their own.
TEST(NpuEpilogueTest, OutputOverHalfTheSramKeepsThePair) {
  std::mt19937 rng(2835);
  Case c;
  c.x = {1, 16, 20, 20};
  const Graph g = ConvThenLookup(c, rng);
  const int64_t out = NumElements(g.nodes().front()->output(0)->type.dims);
  npu::Target t = npu::DefaultTarget();
  t.shared_sram.bytes = 2 * out;
  Graph fits = g.Clone();
  EXPECT_EQ(FuseNpuEpilogues(fits, t), 1);
  t.shared_sram.bytes = 2 * out - 1;
  Graph over = g.Clone();
  EXPECT_EQ(FuseNpuEpilogues(over, t), 0);
}

}  // namespace
}  // namespace edgec::lower
