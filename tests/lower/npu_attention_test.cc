// Attention as one NPU layer (npu/lower_attention.h): the chain QLinearMatMul(Q, Kᵀ) ->
// QLinearSoftmax -> QLinearMatMul(P, V) mapped by AttentionLayerOf, lowered with the chosen
// tiling and with hand-picked ones (row blocks of 1, 3, all rows; single and double
// buffering; 1, 3 and all cores), run by the functional simulator on every target in
// targets/ and compared bit for bit with the reference kernels of the unfused chain, on
// seeded random shapes (heads, query rows, keys, depths; K as [H, keys, d] through a
// transpose or as [H, d, keys]; V as it is or through a transpose), zero points, u8 and i8.
// One case has more keys than a row block of all rows fits in the accumulators: row tiling.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_attention.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Zp(Graph& g, const std::string& n, DType dt, int v) {
  return dt == DType::kU8 ? g.AddConstant(n, Tensor::FromVector<uint8_t>(dt, {}, {static_cast<uint8_t>(v)}))
                          : g.AddConstant(n, Tensor::FromVector<int8_t>(dt, {}, {static_cast<int8_t>(v)}));
}

std::vector<const Tensor*> Args(const Node& n, const std::map<const Value*, const Tensor*>& data) {
  std::vector<const Tensor*> a;
  for (const Value* v : n.inputs())
    a.push_back(!v ? nullptr : v->is_constant() ? &v->constant() : data.at(v));
  return a;
}

struct Case {
  Graph g;
  AttentionChain chain;
  Tensor q, k, v;  // the graph's inputs (K and V as their sources, before any transpose)
  Tensor want;     // the reference chain's output
};

// A chain of `heads` x `rows` queries over `keys` keys; `k_transposed`: K comes as
// [H, keys, d] through a Transpose (a view the scores read with strides), else as
// [H, d, keys]; `v_transposed`: V comes as [H, dv, keys] through a Transpose.
void Build(Case& c, std::mt19937& rng, int heads, int rows, int keys, int d, int dv, bool k_transposed,
           bool v_transposed) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto dtype = [&] { return U(0, 1) ? DType::kU8 : DType::kI8; };
  auto zp = [&](Graph& g, const char* n, DType dt) {
    return Zp(g, n, dt, dt == DType::kU8 ? U(100, 156) : U(-28, 28));
  };
  Graph& g = c.g;
  const DType qt = dtype(), kt = dtype(), st = dtype(), pt = dtype(), vt = dtype(), ot = dtype();
  const Dims kd = k_transposed ? Dims{heads, keys, d} : Dims{heads, d, keys};
  const Dims vd = v_transposed ? Dims{heads, dv, keys} : Dims{heads, keys, dv};
  Value* q = g.AddInput("q", MakeType(qt, {heads, rows, d}));
  Value* k = g.AddInput("k", MakeType(kt, kd));
  Value* v = g.AddInput("v", MakeType(vt, vd));
  Value* kr = k;
  if (k_transposed) {
    Node* t = g.AddNode(OpKind::kTranspose, "k_t", {k}, 1, {"kt"});
    t->attrs.Set("perm", std::vector<int64_t>{0, 2, 1});
    kr = t->output(0);
  }
  Value* vr = v;
  if (v_transposed) {
    Node* t = g.AddNode(OpKind::kTranspose, "v_t", {v}, 1, {"vt"});
    t->attrs.Set("perm", std::vector<int64_t>{0, 2, 1});
    vr = t->output(0);
  }
  const float sq = 0.02f + 0.01f * U(0, 5), sk = 0.02f + 0.01f * U(0, 5);
  Node* s = g.AddNode(OpKind::kQLinearMatMul, "scores",
                      {q, g.AddConstant("sq", Tensor::Scalar(sq)), zp(g, "zq", qt), kr,
                       g.AddConstant("sk", Tensor::Scalar(sk)), zp(g, "zk", kt),
                       g.AddConstant("ss", Tensor::Scalar(sq * sk * static_cast<float>(d) * 3.f)), zp(g, "zs", st)},
                      1, {"s"});
  s->attrs.Set("edgec_requant", std::string("fixed_point"));
  const bool p_u8 = pt == DType::kU8;
  Node* sm = g.AddNode(OpKind::kQLinearSoftmax, "probs",
                       {s->output(0), g.AddConstant("ss2", Tensor::Scalar(sq * sk * static_cast<float>(d) * 3.f)),
                        zp(g, "zs2", st), g.AddConstant("sp", Tensor::Scalar(1.f / 256)),
                        Zp(g, "zp", pt, p_u8 ? 0 : -128)},
                       1, {"p"});
  Node* o = g.AddNode(OpKind::kQLinearMatMul, "context",
                      {sm->output(0), g.AddConstant("sp2", Tensor::Scalar(1.f / 256)), Zp(g, "zp2", pt, p_u8 ? 0 : -128),
                       vr, g.AddConstant("sv", Tensor::Scalar(0.03f)), zp(g, "zv", vt),
                       g.AddConstant("so", Tensor::Scalar(0.05f + 0.01f * U(0, 4))), zp(g, "zo", ot)},
                      1, {"o"});
  o->attrs.Set("edgec_requant", std::string("fixed_point"));
  g.MarkOutput(o->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  c.chain = {s, sm, o};
  c.q = RandomQ(qt, {heads, rows, d}, rng);
  c.k = RandomQ(kt, kd, rng);
  c.v = RandomQ(vt, vd, rng);
  std::map<const Value*, const Tensor*> data{{q, &c.q}, {k, &c.k}, {v, &c.v}};
  std::vector<std::vector<Tensor>> keep;
  keep.reserve(8);
  for (const Node* n : g.nodes()) {
    auto r = EvaluateNode(*n, Args(*n, data));
    ASSERT_TRUE(r.ok()) << n->name() << ": " << r.status().ToString();
    keep.push_back(std::move(*r));
    data[n->output(0)] = &keep.back()[0];
  }
  c.want = *data.at(o->output(0));
}

StatusOr<Tensor> RunFused(const npu::Program& p, const npu::Target& t, const Case& c, npu::SimResult* sim_out) {
  std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
  std::copy(p.dram_init.begin(), p.dram_init.end(), dram.begin());
  const std::string& name = c.chain.context->name();
  auto place = [&](const std::string& suffix, const Tensor& v) -> Status {
    for (const auto& r : p.regions)
      if (r.name == name + suffix) {
        const std::vector<uint8_t> bytes = ToNpu(v);
        if (static_cast<int64_t>(bytes.size()) != r.bytes) return Internal("{}: {} bytes for {}", suffix, bytes.size(), r.bytes);
        std::copy(bytes.begin(), bytes.end(), dram.begin() + r.addr);
        return Status::Ok();
      }
    return NotFound("no region {}", suffix);
  };
  RETURN_IF_ERROR(place(".input", c.q));
  RETURN_IF_ERROR(place(".input1", c.k));
  RETURN_IF_ERROR(place(".input2", c.v));
  npu::SimOptions so;
  so.functional = true;
  so.dram = &dram;
  ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(p, t, so));
  *sim_out = sim;
  for (const auto& r : p.regions)
    if (r.name == name + ".output") return FromNpu(dram.data() + r.addr, c.chain.context->output(0)->type);
  return NotFound("no output region");
}

TEST(NpuAttentionTest, FusedLayerMatchesTheReferenceChainOnEveryTarget) {
  std::mt19937 rng(2030);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0, row_tiled = 0;
  for (int i = 0; i < 7; ++i) {
    Case c;
    const bool long_keys = i == 6;  // all rows' scores exceed edge-default's accumulators
    const int heads = long_keys ? 2 : U(1, 4), rows = long_keys ? 300 : U(1, 40), keys = long_keys ? 300 : U(1, 90);
    const int d = U(1, 40), dv = U(1, 40);
    Build(c, rng, heads, rows, keys, d, dv, i % 2 == 0, i % 3 == 1);
    if (HasFatalFailure()) return;
    auto l = AttentionLayerOf(c.chain);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    ASSERT_EQ(l->macs(), int64_t{heads} * rows * keys * (d + dv));
    for (const npu::Target& t : *targets) {
      std::vector<npu::AttentionTiling> tilings;
      auto best = npu::ChooseAttentionTiling(*l, t);
      ASSERT_TRUE(best.ok()) << best.status().ToString() << " on " << t.name;
      tilings.push_back(best->tiling);
      // The long case: a block of all rows does not fit edge-default's or edge-mcu's accumulators.
      if (long_keys && !npu::CheckAttentionTiling(*l, t, {rows, false, 1}).ok()) row_tiled += best->tiling.block_rows < rows;
      for (int r : {1, 3, rows})
        for (int cores : {1, 3, t.ai_cores.count})
          for (bool db : {false, true}) {
            npu::AttentionTiling tl{std::min(r, rows), db, std::min(cores, t.ai_cores.count)};
            if (npu::CheckAttentionTiling(*l, t, tl).ok()) tilings.push_back(tl);
          }
      for (const npu::AttentionTiling& tl : tilings) {
        auto p = npu::LowerAttention(*l, t, tl);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        npu::SimResult sim;
        auto got = RunFused(*p, t, c, &sim);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_EQ(got->nbytes(), c.want.nbytes());
        ASSERT_EQ(std::memcmp(got->raw(), c.want.raw(), c.want.nbytes()), 0)
            << "case " << i << ": " << heads << " heads x " << rows << " rows, " << keys << " keys, d " << d << ", dv "
            << dv << " on " << t.name << " " << tl.ToString();
        EXPECT_GE(sim.total.cycles + 1e-6, sim.total.roofline_cycles(t)) << t.name;
        EXPECT_EQ(sim.total.macs, l->macs()) << t.name << " " << tl.ToString();
        ++runs;
      }
    }
  }
  EXPECT_GE(runs, 7 * 3 * 4);
  EXPECT_GE(row_tiled, 2);
}

// A chain whose intermediate values are read elsewhere is no attention layer: the scores or
// the probabilities would have to exist outside it.
TEST(NpuAttentionTest, RefusesChainsWhoseIntermediatesEscape) {
  std::mt19937 rng(2031);
  Case c;
  Build(c, rng, 2, 8, 8, 4, 4, true, false);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(MatchAttention(c.chain).ok());
  c.g.MarkOutput(c.chain.softmax->output(0));
  const Status st = MatchAttention(c.chain);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("probabilities"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace edgec::lower
