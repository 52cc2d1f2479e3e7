// A lookup indexed by an int16 value (the SiLU after an int16 GroupNorm, tabulated over all
// 65536 inputs by the fold): a one-node QuantizedLookup graph i16 -> i8/u8 of seeded random
// shapes and tables, mapped by VectorLayerOf, lowered with the tiler's chunk and a small one
// (many tiles, every core reading the one shared table), run by the functional simulator on
// every target whose vector cores take i16, single and double buffering, equal bit for bit to
// the reference kernel; no layer beats its roofline; a target without i16 refuses it. The fold
// makes DQ16 -> x·Sigmoid(x) -> Q8 one such lookup, equal to the float island. Int16 values
// also move (transpose, reshape) as DMA patterns of 2-byte elements.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_layers.h"
#include "npu/move.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "quant/pipeline.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

TEST(NpuInt16Lookup, MatchesReferenceOnEveryTarget) {
  std::mt19937 rng(2805);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 4; ++i) {
    const DType yt = i % 2 ? DType::kU8 : DType::kI8;
    const Dims d = i < 2 ? Dims{1, static_cast<int64_t>(1 + rng() % 30), static_cast<int64_t>(1 + rng() % 9),
                                static_cast<int64_t>(1 + rng() % 9)}
                         : Dims{1, static_cast<int64_t>(1 + rng() % 20), static_cast<int64_t>(1 + rng() % 200)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(DType::kI16, d));
    Node* n = g.AddNode(OpKind::kQuantizedLookup, "silu", {x, g.AddConstant("table", RandomQ(yt, {65536}, rng))}, 1, {"y"});
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    const Tensor xv = RandomQ(DType::kI16, d, rng);
    auto want = EvaluateNode(*n, {&xv, &n->input(1)->constant()});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(*n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    for (const npu::Target& t : *targets) {
      int64_t a, b, y;
      if (t.vector_cores.VecRate("i16") <= 0) {
        EXPECT_FALSE(npu::LowerEltwise(vl->eltwise, t, 64, false, &a, &b, &y).ok()) << t.name;
        continue;
      }
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseEltwiseTiling(vl->eltwise, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, int64_t{48}}) {
          auto p = npu::LowerEltwise(vl->eltwise, t, chunk, db, &a, &b, &y);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
          std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
          const std::vector<uint8_t> in = ToNpu(xv);
          std::copy(in.begin(), in.end(), dram.begin() + a);
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*p, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          auto got = FromNpu(dram.data() + y, n->output(0)->type);
          ASSERT_TRUE(got.ok());
          EXPECT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
              << DimsToString(d) << " -> " << DTypeName(yt) << " on " << t.name << (db ? " double" : " single")
              << " chunk " << chunk;
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_GE(runs, 4 * 2 * 2 * 2);
}

// Transposes, reshapes and slices of int16 values (2 bytes each; the 4-d ones NHWC) as DMA
// moves: every target, single and double buffering, the tiler's chunk and a small one, equal
// byte for byte to the reference op.
TEST(NpuInt16Lookup, Int16MovesMatchReference) {
  std::mt19937 rng(2806);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 6; ++i) {
    const int64_t a = 1 + rng() % 6, b = 1 + rng() % 9, c = 1 + rng() % 12;
    Graph g;
    Node* n = nullptr;
    if (i % 3 == 0) {
      Value* x = g.AddInput("x", MakeType(DType::kI16, {a, b, c}));
      n = g.AddNode(OpKind::kTranspose, "t", {x}, 1, {"y"});
      n->attrs.Set("perm", std::vector<int64_t>{1, 0, 2});
    } else if (i % 3 == 1) {  // 3-d row-major -> 4-d NHWC: the bytes change order
      Value* x = g.AddInput("x", MakeType(DType::kI16, {a, b, c}));
      n = g.AddNode(OpKind::kReshape, "r", {x, g.AddConstant("shape", Tensor::VectorI64({1, a, b, c}))}, 1, {"y"});
    } else {
      Value* x = g.AddInput("x", MakeType(DType::kI16, {1, a, b, c}));
      n = g.AddNode(OpKind::kTranspose, "t4", {x}, 1, {"y"});
      n->attrs.Set("perm", std::vector<int64_t>{0, 2, 3, 1});
    }
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    const Value* x = g.inputs()[0];
    const Tensor xv = RandomQ(DType::kI16, x->type.dims, rng);
    std::vector<const Tensor*> in = {&xv};
    if (n->num_inputs() > 1) in.push_back(&n->input(1)->constant());
    auto want = EvaluateNode(*n, in);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto m = MoveLayerOf(*n);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    if (m->identity()) {  // a view: the DRAM bytes already are the output's
      EXPECT_EQ(ToNpu(xv), ToNpu((*want)[0]));
      continue;
    }
    for (const npu::Target& t : *targets)
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseMoveTiling(*m, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        for (int64_t chunk : {ch->chunk, int64_t{64}}) {
          auto prog = npu::LowerMove(*m, t, chunk, db);
          ASSERT_TRUE(prog.ok()) << prog.status().ToString();
          const npu::DramRegion *ir = nullptr, *orr = nullptr;
          for (const auto& r : prog->regions) {
            if (r.name == n->name() + ".input") ir = &r;
            if (r.name == n->name() + ".output") orr = &r;
          }
          ASSERT_TRUE(ir && orr);
          std::vector<uint8_t> dram(prog->dram_bytes, 0x5A);
          const std::vector<uint8_t> bytes = ToNpu(xv);
          ASSERT_EQ(static_cast<int64_t>(bytes.size()), ir->bytes);
          std::copy(bytes.begin(), bytes.end(), dram.begin() + ir->addr);
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*prog, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          auto got = FromNpu(dram.data() + orr->addr, n->output(0)->type);
          ASSERT_TRUE(got.ok());
          EXPECT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
              << PrintGraph(g) << " on " << t.name << (db ? " double" : " single") << " chunk " << chunk;
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t));
          ++runs;
        }
      }
  }
  EXPECT_GE(runs, 4 * 3 * 2 * 2);
}

// An int16 model output (the last LayerNorm of a mixed-precision transformer) dequantized on the
// NPU (the float boundary, 2-byte source rows) equals DequantizeLinear bit for bit; a target
// without i16 refuses it (a 4-d one, planar f32: npu_int16_planar_output_test.cc).
TEST(NpuInt16Lookup, Int16ModelOutputDequantizes) {
  std::mt19937 rng(2807);
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 3; ++i) {
    const Dims d = {1, static_cast<int64_t>(1 + rng() % 40), static_cast<int64_t>(1 + rng() % 130)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(DType::kI16, d));
    Node* n = g.AddNode(OpKind::kDequantizeLinear, "out",
                        {x, g.AddConstant("s", Tensor::Scalar(1e-4f * static_cast<float>(1 + i))),
                         g.AddConstant("z", Tensor::FromVector<int16_t>(DType::kI16, {}, {static_cast<int16_t>(i * 7)}))},
                        1, {"y"});
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_TRUE(IsFloatBoundary(*n));
    const Tensor xv = RandomQ(DType::kI16, d, rng);
    auto want = EvaluateNode(*n, {&xv, &n->input(1)->constant(), &n->input(2)->constant()});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(*n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    for (const npu::Target& t : *targets) {
      int64_t a, b, y;
      if (t.vector_cores.VecRate("i16") <= 0 || t.vector_cores.VecRate("f32") <= 0) {
        EXPECT_FALSE(npu::LowerEltwise(vl->eltwise, t, 64, false, &a, &b, &y).ok()) << t.name;
        continue;
      }
      for (int64_t chunk : {int64_t{4096}, int64_t{40}}) {
        auto p = npu::LowerEltwise(vl->eltwise, t, chunk, true, &a, &b, &y);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
        const std::vector<uint8_t> in = ToNpu(xv);
        std::copy(in.begin(), in.end(), dram.begin() + a);
        npu::SimOptions so;
        so.functional = true;
        so.dram = &dram;
        auto sim = npu::Simulate(*p, t, so);
        ASSERT_TRUE(sim.ok()) << sim.status().ToString();
        EXPECT_EQ(std::memcmp(dram.data() + y, (*want)[0].raw(), (*want)[0].nbytes()), 0) << t.name << " chunk " << chunk;
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 3 * 2 * 2);
}

// DQ16 -> x·Sigmoid(x) -> Q8 folds into one QuantizedLookup of 65536 entries, exact with
// respect to the island.
TEST(NpuInt16Lookup, SiluAfterAnInt16PointBecomesOneTable) {
  Graph g;
  const Dims d = {1, 4, 6, 7};
  Value* x = g.AddInput("x", MakeType(DType::kF32, d));
  Value* s16 = g.AddConstant("s16", Tensor::Scalar(3e-4f));
  Value* z16 = g.AddConstant("z16", Tensor::FromVector<int16_t>(DType::kI16, {}, {0}));
  Node* q16 = g.AddNode(OpKind::kQuantizeLinear, "q16", {x, s16, z16}, 1, {"x16"});
  Node* dq16 = g.AddNode(OpKind::kDequantizeLinear, "dq16", {q16->output(0), s16, z16}, 1, {"xf"});
  Node* sig = g.AddNode(OpKind::kSigmoid, "sigmoid", {dq16->output(0)}, 1, {"sg"});
  Node* mul = g.AddNode(OpKind::kMul, "silu", {dq16->output(0), sig->output(0)}, 1, {"silu_out"});
  Value* s8 = g.AddConstant("s8", Tensor::Scalar(0.05f));
  Value* z8 = g.AddConstant("z8", Tensor::FromVector<int8_t>(DType::kI8, {}, {-100}));
  Node* q8 = g.AddNode(OpKind::kQuantizeLinear, "q8", {mul->output(0), s8, z8}, 1, {"y8"});
  Node* dq8 = g.AddNode(OpKind::kDequantizeLinear, "dq8", {q8->output(0), s8, z8}, 1, {"y"});
  g.MarkOutput(dq8->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto folded = quant::Int8Executable(g);
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  const Node* lookup = nullptr;
  for (const Node* n : folded->nodes()) {
    EXPECT_NE(n->op(), OpKind::kSigmoid) << n->Label();
    if (n->op() == OpKind::kQuantizedLookup) lookup = n;
  }
  ASSERT_NE(lookup, nullptr) << PrintGraph(*folded);
  EXPECT_EQ(lookup->input(0)->type.dtype, DType::kI16);
  EXPECT_EQ(lookup->input(1)->constant().numel(), 65536);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 3.f);
  Tensor xv(DType::kF32, d);
  for (int64_t i = 0; i < xv.numel(); ++i) xv.data<float>()[i] = nd(rng);
  auto a = ReferenceExecutor(g).Run({{"x", xv}});
  auto b = ReferenceExecutor(*folded).Run({{"x", xv}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)[0].ToDoubleVector(), (*b)[0].ToDoubleVector());
}

}  // namespace
}  // namespace edgec::lower
