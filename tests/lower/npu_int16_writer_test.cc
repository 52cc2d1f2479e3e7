// The int16 writers of the mixed precision on the NPU: a QLinearConv, a QLinearMatMul with
// constant weights and one of two activations whose output is int16 (the MAC array's
// requantize writes 2-byte values, isa.h kRequantBytesImm), and a QLinearAdd with int16
// operands and/or result (the VEC add lifts by 2^15, kAddBytesImm). One-node integer graphs
// of seeded random shapes and scales, mapped by QuantizedLayerOf / VectorLayerOf, lowered with
// the tiler's choice and hand-picked tilings (single and double buffering), run by the
// functional simulator on every target whose vector cores take i16, equal bit for bit to the
// reference kernel in its fixed-point mode; no layer beats its roofline; a target without i16
// refuses the layer. The fixed-point add on int16 operands is within one step of the float
// form (QuantizedAdd's wide lift).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/tiler.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Zp(Graph& g, const std::string& name, DType t, int32_t z) {
  if (t == DType::kI16) return g.AddConstant(name, Tensor::FromVector<int16_t>(t, {}, {static_cast<int16_t>(z)}));
  if (t == DType::kU8) return g.AddConstant(name, Tensor::FromVector<uint8_t>(t, {}, {static_cast<uint8_t>(z)}));
  return g.AddConstant(name, Tensor::FromVector<int8_t>(t, {}, {static_cast<int8_t>(z)}));
}

// The inputs of `n` as tensors: graph inputs from `data` in order, constants as they are.
std::vector<const Tensor*> Inputs(const Node& n, const std::vector<const Tensor*>& data) {
  std::vector<const Tensor*> in;
  size_t next = 0;
  for (const Value* v : n.inputs()) in.push_back(!v ? nullptr : v->is_constant() ? &v->constant() : data[next++]);
  return in;
}

// Runs `p` functionally with `data` in the regions `.input`, `.input1`, ...; returns the output.
StatusOr<Tensor> RunProgram(const npu::Program& p, const npu::Target& t, const Node& n,
                            const std::vector<const Tensor*>& data, npu::SimResult* sim_out) {
  std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
  std::copy(p.dram_init.begin(), p.dram_init.end(), dram.begin());
  for (size_t i = 0; i < data.size(); ++i) {
    const std::string suffix = i == 0 ? ".input" : ".input" + std::to_string(i);
    bool placed = false;
    for (const auto& r : p.regions) {
      if (r.name != n.name() + suffix) continue;
      const std::vector<uint8_t> bytes = ToNpu(*data[i]);
      if (static_cast<int64_t>(bytes.size()) != r.bytes) return Internal("{}: {} bytes for {}", suffix, bytes.size(), r.bytes);
      std::copy(bytes.begin(), bytes.end(), dram.begin() + r.addr);
      placed = true;
    }
    if (!placed) return NotFound("no region {}", suffix);
  }
  npu::SimOptions so;
  so.functional = true;
  so.dram = &dram;
  ASSIGN_OR_RETURN(*sim_out, npu::Simulate(p, t, so));
  for (const auto& r : p.regions)
    if (r.name == n.name() + ".output") {
      if (r.bytes != NumElements(n.output(0)->type.dims) * 2)
        return Internal("output region of {} bytes for an int16 output", r.bytes);
      return FromNpu(dram.data() + r.addr, n.output(0)->type);
    }
  return NotFound("no output region");
}

// Lowers the GEMM-class node `n` with the tiler's choice and a few legal hand-picked tilings
// on every target and compares the simulated output with `want`; returns the runs compared.
int CheckGemm(const Node& n, const std::vector<const Tensor*>& data, const Tensor& want, const std::string& what) {
  auto q = QuantizedLayerOf(n);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  if (!q.ok()) return 0;
  EXPECT_EQ(q->layer.out_elem_bytes(), 2);
  auto targets = npu::ListTargets();
  EXPECT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (const npu::Target& t : *targets) {
    if (t.vector_cores.VecRate("i16") <= 0) {
      npu::Tiling tl;
      tl.double_buffer = false;
      auto refused = npu::LowerConv(q->layer, t, tl, nullptr);
      EXPECT_FALSE(refused.ok()) << t.name;
      if (!refused.ok()) EXPECT_NE(refused.status().message().find("take no i16"), std::string::npos);
      continue;
    }
    std::vector<npu::Tiling> tilings;
    auto best = npu::ChooseTiling(q->layer, t);
    EXPECT_TRUE(best.ok()) << best.status().ToString();
    if (!best.ok()) continue;
    tilings.push_back(best->best.tiling);
    const int R = t.ai_cores.mac_rows, C = t.ai_cores.mac_cols;
    for (npu::Resident r : {npu::Resident::kWeights, npu::Resident::kInput, npu::Resident::kNone})
      for (bool db : {false, true}) {
        npu::Tiling tl{std::min(3, q->layer.out_h()), std::min(5, q->layer.out_w()),
                       std::min<int>(R / 2 + 1, q->layer.channels), 1,
                       std::min<int>(C / 2 + 1, q->layer.out_channels), r, db, std::min(3, t.ai_cores.count)};
        if (npu::CheckTiling(q->layer, t, tl).ok()) tilings.push_back(tl);
      }
    for (const npu::Tiling& tl : tilings) {
      auto p = npu::LowerConv(q->layer, t, tl, nullptr);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      if (!p.ok()) continue;
      npu::SimResult sim;
      auto got = RunProgram(*p, t, n, data, &sim);
      EXPECT_TRUE(got.ok()) << got.status().ToString();
      if (!got.ok()) continue;
      EXPECT_EQ(got->nbytes(), want.nbytes());
      EXPECT_EQ(std::memcmp(got->raw(), want.raw(), want.nbytes()), 0) << what << " on " << t.name << " " << tl.ToString();
      EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(t)) << t.name;
      ++runs;
    }
  }
  return runs;
}

// x (u8/i8) -> QLinearConv -> y (i16) on random shapes, kernels 1x1 and 3x3, strides 1 and 2,
// per-channel weight scales; the output step a 16-bit one (range / 32767).
TEST(Int16WriterTest, ConvWritesInt16LikeTheReference) {
  std::mt19937 rng(2801);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int runs = 0;
  for (int i = 0; i < 4; ++i) {
    const DType xt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t C = U(1, 40), H = U(3, 12), W = U(3, 12), N = U(1, 50), k = i < 2 ? 3 : 1, s = i == 1 ? 2 : 1;
    Graph g;
    Value* x = g.AddInput("x", MakeType(xt, {1, C, H, W}));
    std::vector<float> ws(N);
    for (auto& v : ws) v = 0.002f + 0.001f * U(0, 9);
    const Tensor w = RandomQ(DType::kI8, {N, C, k, k}, rng);
    std::vector<int32_t> bias(N);
    for (auto& v : bias) v = U(-3000, 3000);
    // y_scale: an int16 step of the accumulator's typical range (~ sqrt(K) * 128 * 128 * sx * sw).
    const float sx = 0.02f, ys = sx * 0.005f * 128.f * 128.f * std::sqrt(static_cast<float>(C * k * k)) * 4.f / 32767.f;
    Node* n = g.AddNode(OpKind::kQLinearConv, "conv",
                        {x, g.AddConstant("sx", Tensor::Scalar(sx)), Zp(g, "zx", xt, xt == DType::kU8 ? U(100, 150) : U(-10, 10)),
                         g.AddConstant("w", w), g.AddConstant("sw", Tensor::FromVector<float>(DType::kF32, {N}, ws)),
                         Zp(g, "zw", DType::kI8, 0), g.AddConstant("sy", Tensor::Scalar(ys)), Zp(g, "zy", DType::kI16, 0),
                         g.AddConstant("b", Tensor::FromVector<int32_t>(DType::kI32, {N}, bias))},
                        1, {"y"});
    n->attrs.Set("kernel_shape", std::vector<int64_t>{k, k});
    n->attrs.Set("strides", std::vector<int64_t>{s, s});
    if (k == 3) n->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    n->attrs.Set("edgec_requant", std::string("fixed_point"));
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok()) << PrintGraph(g);
    ASSERT_EQ(n->output(0)->type.dtype, DType::kI16);
    const Tensor xv = RandomQ(xt, {1, C, H, W}, rng);
    auto want = EvaluateNode(*n, Inputs(*n, {&xv}));
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    // The values use the 16-bit range, beyond an 8-bit one.
    int64_t wide = 0;
    for (int64_t v : (*want)[0].ToInt64Vector()) wide += std::abs(v) > 127;
    EXPECT_GT(wide, 0) << "case " << i;
    runs += CheckGemm(*n, {&xv}, (*want)[0], fmt::format("conv case {} {}x{}x{} k{} s{}", i, C, H, W, k, s));
  }
  EXPECT_GE(runs, 4 * 2 * 2);  // two targets take i16
}

// a -> QLinearMatMul (constant B, or B an activation: attention's QKᵀ batched over heads) -> y i16.
TEST(Int16WriterTest, MatMulWritesInt16LikeTheReference) {
  std::mt19937 rng(2802);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int runs = 0;
  for (int i = 0; i < 6; ++i) {
    const bool act = i % 2 == 1;
    const DType at = i % 3 ? DType::kU8 : DType::kI8, bt = act && i % 3 == 1 ? DType::kU8 : DType::kI8;
    const int64_t B = act ? U(1, 4) : 0, M = U(1, 60), K = U(1, 140), N = U(1, 80);
    const Dims ad = B ? Dims{B, M, K} : Dims{M, K}, bd = B ? Dims{B, K, N} : Dims{K, N};
    Graph g;
    Value* a = g.AddInput("a", MakeType(at, ad));
    const Tensor bv = RandomQ(bt, bd, rng);
    Value* b = act ? g.AddInput("b", MakeType(bt, bd)) : g.AddConstant("w", bv);
    const float sa = 0.03f, sb = 0.02f;
    const float ys = sa * sb * 128.f * 128.f * std::sqrt(static_cast<float>(K)) * 4.f / 32767.f;
    Node* n = g.AddNode(OpKind::kQLinearMatMul, "mm",
                        {a, g.AddConstant("sa", Tensor::Scalar(sa)), Zp(g, "za", at, at == DType::kU8 ? U(0, 255) : U(-128, 127)),
                         b, g.AddConstant("sb", Tensor::Scalar(sb)),
                         Zp(g, "zb", bt, act ? (bt == DType::kU8 ? U(0, 255) : U(-128, 127)) : 0),
                         g.AddConstant("sy", Tensor::Scalar(ys)), Zp(g, "zy", DType::kI16, i == 4 ? 100 : 0)},
                        1, {"y"});
    n->attrs.Set("edgec_requant", std::string("fixed_point"));
    if (i == 2) n->attrs.Set("edgec_qmin", int64_t{-50});  // a clamp in int16 terms
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok()) << PrintGraph(g);
    const Tensor av = RandomQ(at, ad, rng);
    std::vector<const Tensor*> data = {&av};
    if (act) data.push_back(&bv);
    auto want = EvaluateNode(*n, Inputs(*n, data));
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    runs += CheckGemm(*n, data, (*want)[0], fmt::format("matmul case {} {} x {}", i, DimsToString(ad), DimsToString(bd)));
  }
  EXPECT_GE(runs, 6 * 2 * 2);
}

// A QLinearAdd graph a (at) + b (bt) -> y (yt), b of a's shape, one channel row or one value.
Graph AddGraph(const Dims& ad, const Dims& bd, DType at, DType bt, DType yt, std::mt19937& rng, const std::string& mode) {
  std::uniform_real_distribution<float> u(0.5f, 2.f);
  const float range = 0.5f + static_cast<float>(rng() % 100) * 0.1f;
  auto step = [&](DType t) { return range / (t == DType::kI16 ? 32767.f : 127.f) * u(rng); };
  auto zero = [&](DType t) {
    return t == DType::kI16 ? 0 : t == DType::kU8 ? 100 + static_cast<int32_t>(rng() % 50) : static_cast<int32_t>(rng() % 21) - 10;
  };
  Graph g;
  Value* a = g.AddInput("a", MakeType(at, ad));
  Value* b = g.AddInput("b", MakeType(bt, bd));
  Node* n = g.AddNode(OpKind::kQLinearAdd, "add",
                      {a, g.AddConstant("sa", Tensor::Scalar(step(at))), Zp(g, "za", at, zero(at)), b,
                       g.AddConstant("sb", Tensor::Scalar(step(bt))), Zp(g, "zb", bt, zero(bt)),
                       g.AddConstant("sy", Tensor::Scalar(step(yt) * 2.f)), Zp(g, "zy", yt, zero(yt))},
                      1, {"y"});
  n->attrs.Set("edgec_requant", mode);
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok()) << PrintGraph(g);
  return g;
}

TEST(Int16WriterTest, AddWithInt16SidesMatchesReference) {
  std::mt19937 rng(2803);
  struct Case {
    DType a, b, y;
  };
  const Case cases[] = {{DType::kI8, DType::kI16, DType::kI16}, {DType::kI16, DType::kU8, DType::kI16},
                        {DType::kI16, DType::kI16, DType::kI16}, {DType::kI8, DType::kI8, DType::kI16},
                        {DType::kI16, DType::kI8, DType::kI8}, {DType::kU8, DType::kI16, DType::kU8}};
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 12; ++i) {
    const Case c = cases[i % 6];
    const int64_t C = 1 + rng() % 40, H = 1 + rng() % 9, W = 1 + rng() % 9;
    const int form = i / 6 == 0 ? 0 : static_cast<int>(rng() % 3);  // full, one channel row, one value
    const Dims ad = {1, C, H, W}, bd = form == 0 ? ad : form == 1 ? Dims{1, C, 1, 1} : Dims{1};
    Graph g = AddGraph(ad, bd, c.a, c.b, c.y, rng, "fixed_point");
    const Node& n = *g.nodes()[0];
    const Tensor av = RandomQ(c.a, ad, rng), bv = RandomQ(c.b, bd, rng);
    auto want = EvaluateNode(n, Inputs(n, {&av, &bv}));
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    ASSERT_EQ(vl->kind, VectorLayer::Kind::kEltwise);
    for (const npu::Target& t : *targets) {
      int64_t a_addr, b_addr, y_addr;
      if (t.vector_cores.VecRate("i16") <= 0) {
        auto refused = npu::LowerEltwise(vl->eltwise, t, 64, false, &a_addr, &b_addr, &y_addr);
        EXPECT_FALSE(refused.ok()) << t.name;
        continue;
      }
      for (bool db : {false, true}) {
        npu::TilerOptions opt;
        opt.allow_double = db;
        auto ch = npu::ChooseEltwiseTiling(vl->eltwise, t, opt);
        ASSERT_TRUE(ch.ok()) << ch.status().ToString();
        const int64_t small = vl->eltwise.broadcast == npu::EltwiseLayer::Broadcast::kRow ? C : 64;
        for (int64_t chunk : {ch->chunk, small}) {
          auto p = npu::LowerEltwise(vl->eltwise, t, chunk, db, &a_addr, &b_addr, &y_addr);
          ASSERT_TRUE(p.ok()) << p.status().ToString();
          std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
          std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
          const std::vector<uint8_t> ab = ToNpu(av), bb = ToNpu(bv);
          std::copy(ab.begin(), ab.end(), dram.begin() + a_addr);
          std::copy(bb.begin(), bb.end(), dram.begin() + b_addr);
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*p, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          auto got = FromNpu(dram.data() + y_addr, n.output(0)->type);
          ASSERT_TRUE(got.ok());
          const Tensor& w = (*want)[0];
          EXPECT_EQ(std::memcmp(got->raw(), w.raw(), w.nbytes()), 0)
              << "case " << i << " " << DTypeName(c.a) << " + " << DTypeName(c.b) << " -> " << DTypeName(c.y) << " "
              << DimsToString(ad) << " + " << DimsToString(bd) << " on " << t.name << (db ? " double" : " single")
              << " chunk " << chunk;
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_GE(runs, 12 * 2 * 2 * 2);
}

// The fixed-point add on int16 sides (lifted by 2^15) is within one step of the float form,
// and mostly exact.
TEST(Int16WriterTest, WideAddIsWithinOneStepOfTheFloatForm) {
  std::mt19937 rng(2804);
  int exact = 0, total = 0;
  for (int i = 0; i < 12; ++i) {
    const DType at = i % 3 == 0 ? DType::kI8 : DType::kI16, bt = i % 3 == 1 ? DType::kU8 : DType::kI16,
                yt = i % 2 ? DType::kI16 : DType::kI8;
    const Dims d = {1, 16, 8, 9};
    const uint32_t seed = rng();
    std::mt19937 r1(seed), r2(seed);
    Graph gf = AddGraph(d, d, at, bt, yt, r1, "float");
    Graph gi = AddGraph(d, d, at, bt, yt, r2, "fixed_point");
    const Tensor av = RandomQ(at, d, rng), bv = RandomQ(bt, d, rng);
    auto f = ReferenceExecutor(gf).Run({{"a", av}, {"b", bv}});
    auto q = ReferenceExecutor(gi).Run({{"a", av}, {"b", bv}});
    ASSERT_TRUE(f.ok() && q.ok()) << (f.ok() ? q.status().ToString() : f.status().ToString());
    const std::vector<int64_t> vf = (*f)[0].ToInt64Vector(), vq = (*q)[0].ToInt64Vector();
    for (size_t k = 0; k < vf.size(); ++k) {
      ASSERT_LE(std::abs(vq[k] - vf[k]), 1) << "value " << k << " of case " << i;
      exact += vq[k] == vf[k];
      ++total;
    }
  }
  EXPECT_GT(exact, total * 9 / 10);
}

}  // namespace
}  // namespace edgec::lower
