// A MatMul of two activations on the MAC array (attention's QKᵀ and AV, batched over heads):
// a one-node QLinearMatMul graph whose right operand is an input, mapped by QuantizedLayerOf
// (the right operand becomes the region `.input1`, the MATMULs subtract both zero points),
// lowered with the tiler's choice and with hand-picked legal tilings (every residency, single
// and double buffering, 1, 3 and all cores, teams of 1 x n) on every target in targets/, run
// by the functional simulator and compared bit for bit with the reference QLinearMatMul in
// fixed-point mode, on seeded random shapes, zero points, u8 and i8, with and without a bias.
#include <gtest/gtest.h>

#include <random>

#include "ir/infer.h"
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

// Runs `p` functionally with a and b in their regions and returns the output tensor.
StatusOr<Tensor> RunProgram(const npu::Program& p, const npu::Target& t, const Node& n, const Tensor& a,
                            const Tensor& b, npu::SimResult* sim_out) {
  std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
  std::copy(p.dram_init.begin(), p.dram_init.end(), dram.begin());
  auto place = [&](const std::string& suffix, const Tensor& v) -> Status {
    for (const auto& r : p.regions)
      if (r.name == n.name() + suffix) {
        const std::vector<uint8_t> bytes = ToNpu(v);
        if (static_cast<int64_t>(bytes.size()) != r.bytes) return Internal("{}: {} bytes for {}", suffix, bytes.size(), r.bytes);
        std::copy(bytes.begin(), bytes.end(), dram.begin() + r.addr);
        return Status::Ok();
      }
    return NotFound("no region {}", suffix);
  };
  RETURN_IF_ERROR(place(".input", a));
  RETURN_IF_ERROR(place(".input1", b));
  npu::SimOptions so;
  so.functional = true;
  so.dram = &dram;
  ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(p, t, so));
  *sim_out = sim;
  for (const auto& r : p.regions)
    if (r.name == n.name() + ".output") return FromNpu(dram.data() + r.addr, n.output(0)->type);
  return NotFound("no output region");
}

TEST(NpuActivationMatMulTest, MatchesReferenceOnEveryTarget) {
  std::mt19937 rng(2028);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (int i = 0; i < 8; ++i) {
    const DType at = U(0, 1) ? DType::kU8 : DType::kI8, bt = U(0, 1) ? DType::kU8 : DType::kI8,
                yt = U(0, 1) ? DType::kU8 : DType::kI8;
    const int64_t B = i % 4 == 3 ? 0 : U(1, 5), M = U(1, 70), K = U(1, 150), N = U(1, 90);
    const Dims ad = B ? Dims{B, M, K} : Dims{M, K}, bd = B ? Dims{B, K, N} : Dims{K, N};
    const bool bias = i % 3 == 1;
    Graph g;
    Value* a = g.AddInput("a", MakeType(at, ad));
    Value* b = g.AddInput("b", MakeType(bt, bd));
    std::vector<Value*> in = {a, g.AddConstant("sa", Tensor::Scalar(0.02f + 0.01f * U(0, 9))),
                              Zp(g, "za", at, U(at == DType::kU8 ? 0 : -128, at == DType::kU8 ? 255 : 127)), b,
                              g.AddConstant("sb", Tensor::Scalar(0.01f + 0.01f * U(0, 9))),
                              Zp(g, "zb", bt, U(bt == DType::kU8 ? 0 : -128, bt == DType::kU8 ? 255 : 127)),
                              g.AddConstant("sy", Tensor::Scalar(static_cast<float>(K) * 0.05f)),
                              Zp(g, "zy", yt, U(-20, 20) + (yt == DType::kU8 ? 128 : 0))};
    if (bias) {
      std::vector<int32_t> bv(N);
      for (auto& v : bv) v = U(-5000, 5000);
      in.push_back(g.AddConstant("bias", Tensor::FromVector<int32_t>(DType::kI32, {N}, bv)));
    }
    Node* n = g.AddNode(OpKind::kQLinearMatMul, "attn_mm", in, 1, {"y"});
    n->attrs.Set("edgec_requant", std::string("fixed_point"));
    if (i % 4 == 2) n->attrs.Set("edgec_qmin", int64_t{yt == DType::kU8 ? 140 : 5});  // a ReLU clamp
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    const Tensor av = RandomQ(at, ad, rng), bvv = RandomQ(bt, bd, rng);
    auto want = EvaluateNode(*n, {&av, in[1]->is_constant() ? &in[1]->constant() : nullptr, &in[2]->constant(), &bvv,
                                  &in[4]->constant(), &in[5]->constant(), &in[6]->constant(), &in[7]->constant(),
                                  bias ? &in[8]->constant() : nullptr});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto q = QuantizedLayerOf(*n);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    ASSERT_TRUE(q->layer.weights_from_input);
    ASSERT_EQ(q->layer.macs(), std::max<int64_t>(B, 1) * M * K * N);
    for (const npu::Target& t : *targets) {
      std::vector<npu::Tiling> tilings;
      auto best = npu::ChooseTiling(q->layer, t);
      ASSERT_TRUE(best.ok()) << best.status().ToString();
      tilings.push_back(best->best.tiling);
      const int R = t.ai_cores.mac_rows, C = t.ai_cores.mac_cols;
      for (npu::Resident r : {npu::Resident::kWeights, npu::Resident::kInput, npu::Resident::kNone})
        for (int cores : {1, 3, t.ai_cores.count})
          for (bool db : {false, true}) {
            npu::Tiling tl{std::min<int>(16, M), 1, std::min<int>(R / 2 + 1, K), 1, std::min<int>(C, N), r, db,
                           std::min(cores, t.ai_cores.count)};
            if (cores == 3 && t.ai_cores.count >= 4 && N > tl.tile_n) tl.team_n = 2, tl.cores = 4;
            if (npu::CheckTiling(q->layer, t, tl).ok()) tilings.push_back(tl);
          }
      for (const npu::Tiling& tl : tilings) {
        auto p = npu::LowerConv(q->layer, t, tl, nullptr);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        npu::SimResult sim;
        auto got = RunProgram(*p, t, *n, av, bvv, &sim);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        const Tensor& w = (*want)[0];
        ASSERT_EQ(got->nbytes(), w.nbytes());
        ASSERT_EQ(std::memcmp(got->raw(), w.raw(), w.nbytes()), 0)
            << "case " << i << " " << DimsToString(ad) << " x " << DimsToString(bd) << " on " << t.name << " "
            << tl.ToString();
        EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(t)) << t.name;
        EXPECT_EQ(sim.total.macs, q->layer.macs()) << t.name << " " << tl.ToString();
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 8 * 3 * 4);
}

// The right operand read through a Transpose (lower::RightOperandStrides: the transpose is a
// view, the MatMul reads its input with strides): Kᵀ from K ([B, N, K] and [N, B, K] sources,
// K contiguous: MATMULs with b transposed) and a head split ([K, B, N], N contiguous at a row
// stride), every residency and buffering, three targets, bit for bit with the reference
// Transpose then QLinearMatMul.
TEST(NpuActivationMatMulTest, TransposedRightOperand) {
  std::mt19937 rng(2029);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0, transposed = 0;
  for (int i = 0; i < 6; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t B = U(1, 4), M = U(1, 40), K = U(1, 140), N = U(1, 70);
    const std::vector<int64_t> perm = i % 3 == 0 ? std::vector<int64_t>{0, 2, 1}
                                      : i % 3 == 1 ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{1, 0, 2};
    const Dims src = i % 3 == 0 ? Dims{B, N, K} : i % 3 == 1 ? Dims{N, B, K} : Dims{K, B, N};
    Graph g;
    Value* a = g.AddInput("a", MakeType(dt, {B, M, K}));
    Value* bs = g.AddInput("b", MakeType(dt, src));
    Node* t = g.AddNode(OpKind::kTranspose, "kt", {bs}, 1, {"bt"});
    t->attrs.Set("perm", perm);
    const int zmin = dt == DType::kU8 ? 0 : -128, zmax = dt == DType::kU8 ? 255 : 127;
    std::vector<Value*> in = {a, g.AddConstant("sa", Tensor::Scalar(0.03f)), Zp(g, "za", dt, U(zmin, zmax)),
                              t->output(0), g.AddConstant("sb", Tensor::Scalar(0.02f)), Zp(g, "zb", dt, U(zmin, zmax)),
                              g.AddConstant("sy", Tensor::Scalar(static_cast<float>(K) * 0.05f)),
                              Zp(g, "zy", dt, U(-20, 20) + (dt == DType::kU8 ? 128 : 0))};
    Node* n = g.AddNode(OpKind::kQLinearMatMul, "scores", in, 1, {"y"});
    n->attrs.Set("edgec_requant", std::string("fixed_point"));
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_EQ(AbsorbedInto(*t), n) << PrintGraph(g);
    const Tensor av = RandomQ(dt, {B, M, K}, rng), bv = RandomQ(dt, src, rng);
    auto mid = EvaluateNode(*t, {&bv});
    ASSERT_TRUE(mid.ok());
    auto want = EvaluateNode(*n, {&av, &in[1]->constant(), &in[2]->constant(), &(*mid)[0], &in[4]->constant(),
                                  &in[5]->constant(), &in[6]->constant(), &in[7]->constant()});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto q = QuantizedLayerOf(*n);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    transposed += q->layer.b_transposed();
    for (const npu::Target& tg : *targets) {
      std::vector<npu::Tiling> tilings;
      auto best = npu::ChooseTiling(q->layer, tg);
      ASSERT_TRUE(best.ok()) << best.status().ToString();
      tilings.push_back(best->best.tiling);
      const int R = tg.ai_cores.mac_rows, C = tg.ai_cores.mac_cols;
      for (npu::Resident r : {npu::Resident::kWeights, npu::Resident::kInput, npu::Resident::kNone})
        for (bool db : {false, true}) {
          npu::Tiling tl{std::min<int>(16, M), 1, std::min<int>(R / 2 + 1, K), 1, std::min<int>(C / 2 + 1, N), r, db,
                         std::min(3, tg.ai_cores.count)};
          if (tg.ai_cores.count >= 4 && N > tl.tile_n) tl.team_n = 2, tl.cores = 4;
          if (npu::CheckTiling(q->layer, tg, tl).ok()) tilings.push_back(tl);
        }
      for (const npu::Tiling& tl : tilings) {
        auto p = npu::LowerConv(q->layer, tg, tl, nullptr);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        npu::SimResult sim;
        auto got = RunProgram(*p, tg, *n, av, bv, &sim);  // `.input1` holds the transpose's input
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_EQ(std::memcmp(got->raw(), (*want)[0].raw(), got->nbytes()), 0)
            << "case " << i << " source " << DimsToString(src) << " perm " << fmt::format("{}", fmt::join(perm, ","))
            << " on " << tg.name << " " << tl.ToString();
        EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(tg)) << tg.name;
        ++runs;
      }
    }
  }
  EXPECT_GE(transposed, 4);
  EXPECT_GE(runs, 6 * 3 * 3);
}

// Refusals name the reason: 4-d operands are NHWC on the NPU, broadcasting is not lowered.
TEST(NpuActivationMatMulTest, RefusesWhatItDoesNotLower) {
  for (auto [ad, bd, why] : {std::tuple{Dims{1, 2, 8, 4}, Dims{1, 2, 4, 8}, "4-d MatMul of two activations"},
                             std::tuple{Dims{2, 8, 4}, Dims{1, 4, 8}, "broadcasting MatMul"}}) {
    Graph g;
    Value* a = g.AddInput("a", MakeType(DType::kI8, ad));
    Value* b = g.AddInput("b", MakeType(DType::kI8, bd));
    Node* n = g.AddNode(OpKind::kQLinearMatMul, "mm",
                        {a, g.AddConstant("sa", Tensor::Scalar(0.1f)), Zp(g, "za", DType::kI8, 0), b,
                         g.AddConstant("sb", Tensor::Scalar(0.1f)), Zp(g, "zb", DType::kI8, 0),
                         g.AddConstant("sy", Tensor::Scalar(0.1f)), Zp(g, "zy", DType::kI8, 0)},
                        1, {"y"});
    g.MarkOutput(n->output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    auto q = QuantizedLayerOf(*n);
    ASSERT_FALSE(q.ok());
    EXPECT_NE(q.status().message().find(why), std::string::npos) << q.status().ToString();
  }
}

}  // namespace
}  // namespace edgec::lower
