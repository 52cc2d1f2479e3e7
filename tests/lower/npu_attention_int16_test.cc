// Attention as one NPU layer with an int16 softmax (the mixed precision's int16 point at the
// softmax): QLinearMatMul(Q, Kᵀ) writing int16 scores -> QLinearSoftmax int16 -> int16 ->
// QLinearRequantize int16 -> 8 bits -> QLinearMatMul(P, V). AttentionLayerOf maps the four
// nodes to one layer (npu/lower_attention.h: int16 S, the wide VEC softmax, a VEC rescale to
// the 8-bit P the context reads), lowered with the chosen tiling and hand-picked ones (row
// blocks of 1, 3 and all rows, single and double buffering, 1 and all cores) on every target
// whose vector cores take i16, and compared bit for bit with the reference kernels of the
// unfused chain on seeded shapes (K through a transpose or as it is, u8 and i8 operands); a
// target without i16 refuses it. Compiled as a segment, the four nodes become one layer and
// npu-sim equals the CPU run bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "ir/infer.h"
#include "lower/npu_attention.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "npu/segment.h"
#include "npu/sim.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Zp(Graph& g, const std::string& n, DType dt, int v) {
  if (dt == DType::kI16) return g.AddConstant(n, Tensor::FromVector<int16_t>(dt, {}, {static_cast<int16_t>(v)}));
  return dt == DType::kU8 ? g.AddConstant(n, Tensor::FromVector<uint8_t>(dt, {}, {static_cast<uint8_t>(v)}))
                          : g.AddConstant(n, Tensor::FromVector<int8_t>(dt, {}, {static_cast<int8_t>(v)}));
}

struct Case {
  Graph g;
  AttentionChain chain;
  Tensor q, k, v, want;
};

void Build(Case& c, std::mt19937& rng, int heads, int rows, int keys, int d, int dv, bool k_transposed,
           bool i8_only = false) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto dtype = [&] { return U(0, 1) && !i8_only ? DType::kU8 : DType::kI8; };
  auto zp = [&](Graph& g, const char* n, DType dt) { return Zp(g, n, dt, dt == DType::kU8 ? U(100, 156) : U(-28, 28)); };
  Graph& g = c.g;
  const DType qt = dtype(), kt = dtype(), pt = dtype(), vt = dtype(), ot = dtype();
  const Dims kd = k_transposed ? Dims{heads, keys, d} : Dims{heads, d, keys};
  Value* q = g.AddInput("q", MakeType(qt, {heads, rows, d}));
  Value* k = g.AddInput("k", MakeType(kt, kd));
  Value* v = g.AddInput("v", MakeType(vt, {heads, keys, dv}));
  Value* kr = k;
  if (k_transposed) {
    Node* t = g.AddNode(OpKind::kTranspose, "k_t", {k}, 1, {"kt"});
    t->attrs.Set("perm", std::vector<int64_t>{0, 2, 1});
    kr = t->output(0);
  }
  const float sq = 0.02f + 0.01f * U(0, 5), sk = 0.02f + 0.01f * U(0, 5);
  // int16 scores: a step of the products' range / 32767 (several units of exp's argument).
  const float ss = sq * sk * 128.f * 128.f * static_cast<float>(d) / 32767.f * 0.5f;
  Node* s = g.AddNode(OpKind::kQLinearMatMul, "scores",
                      {q, g.AddConstant("sq", Tensor::Scalar(sq)), zp(g, "zq", qt), kr,
                       g.AddConstant("sk", Tensor::Scalar(sk)), zp(g, "zk", kt), g.AddConstant("ss", Tensor::Scalar(ss)),
                       Zp(g, "zs", DType::kI16, 0)},
                      1, {"s"});
  s->attrs.Set("edgec_requant", std::string("fixed_point"));
  Node* sm = g.AddNode(OpKind::kQLinearSoftmax, "probs",
                       {s->output(0), g.AddConstant("ss2", Tensor::Scalar(ss)), Zp(g, "zs2", DType::kI16, 0),
                        g.AddConstant("sp16", Tensor::Scalar(1.f / 32767)), Zp(g, "zp16", DType::kI16, 0)},
                       1, {"p16"});
  const bool p_u8 = pt == DType::kU8;
  Node* rq = g.AddNode(OpKind::kQLinearRequantize, "probs8",
                       {sm->output(0), g.AddConstant("sp16b", Tensor::Scalar(1.f / 32767)),
                        Zp(g, "zp16b", DType::kI16, 0), g.AddConstant("sp", Tensor::Scalar(1.f / 256)),
                        Zp(g, "zp", pt, p_u8 ? 0 : -128)},
                       1, {"p"});
  rq->attrs.Set("edgec_requant", std::string("fixed_point"));
  Node* o = g.AddNode(OpKind::kQLinearMatMul, "context",
                      {rq->output(0), g.AddConstant("sp2", Tensor::Scalar(1.f / 256)), Zp(g, "zp2", pt, p_u8 ? 0 : -128),
                       v, g.AddConstant("sv", Tensor::Scalar(0.03f)), zp(g, "zv", vt),
                       g.AddConstant("so", Tensor::Scalar(0.05f + 0.01f * U(0, 4))), zp(g, "zo", ot)},
                      1, {"o"});
  o->attrs.Set("edgec_requant", std::string("fixed_point"));
  g.MarkOutput(o->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  c.chain = {s, sm, o, rq};
  c.q = RandomQ(qt, {heads, rows, d}, rng);
  c.k = RandomQ(kt, kd, rng);
  c.v = RandomQ(vt, {heads, keys, dv}, rng);
  std::map<const Value*, const Tensor*> data{{q, &c.q}, {k, &c.k}, {v, &c.v}};
  std::vector<std::vector<Tensor>> keep;
  keep.reserve(8);
  for (const Node* n : g.nodes()) {
    std::vector<const Tensor*> args;
    for (const Value* x : n->inputs()) args.push_back(!x ? nullptr : x->is_constant() ? &x->constant() : data.at(x));
    auto r = EvaluateNode(*n, args);
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
  ASSIGN_OR_RETURN(*sim_out, npu::Simulate(p, t, so));
  for (const auto& r : p.regions)
    if (r.name == name + ".output") return FromNpu(dram.data() + r.addr, c.chain.context->output(0)->type);
  return NotFound("no output region");
}

TEST(NpuAttentionTest, Int16SoftmaxMatchesReference) {
  std::mt19937 rng(2940);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0, refused = 0;
  for (int i = 0; i < 5; ++i) {
    Case c;
    const int heads = U(1, 4), rows = U(1, 40), keys = i == 4 ? 300 : U(2, 90), d = U(1, 40), dv = U(1, 40);
    Build(c, rng, heads, rows, keys, d, dv, i % 2 == 0);
    if (HasFatalFailure()) return;
    auto l = AttentionLayerOf(c.chain);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    ASSERT_TRUE(l->wide);
    for (const npu::Target& t : *targets) {
      if (t.vector_cores.VecRate("i16") <= 0) {
        refused += !npu::ChooseAttentionTiling(*l, t).ok();
        continue;
      }
      std::vector<npu::AttentionTiling> tilings;
      auto best = npu::ChooseAttentionTiling(*l, t);
      ASSERT_TRUE(best.ok()) << best.status().ToString() << " on " << t.name;
      tilings.push_back(best->tiling);
      for (int r : {1, 3, rows})
        for (int cores : {1, t.ai_cores.count})
          for (bool db : {false, true}) {
            npu::AttentionTiling tl{std::min(r, rows), db, cores};
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
        EXPECT_EQ(sim.total.macs, l->macs());
        ++runs;
      }
    }
    // The output is not one value (the probabilities carry information).
    const std::vector<int64_t> o = c.want.ToInt64Vector();
    EXPECT_NE(std::count(o.begin(), o.end(), o.front()), static_cast<std::ptrdiff_t>(o.size())) << "case " << i;
  }
  EXPECT_GE(runs, 5 * 2 * 4);
  EXPECT_EQ(refused, 5);  // edge-mcu
}

// The int16 probabilities read elsewhere, or no requantize to 8 bits before the context: no layer.
TEST(NpuAttentionTest, Int16ChainWhoseProbabilitiesEscapeIsRefused) {
  std::mt19937 rng(2941);
  Case c;
  Build(c, rng, 2, 8, 8, 4, 4, true);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(MatchAttention(c.chain).ok());
  AttentionChain without = c.chain;
  without.narrow = nullptr;
  EXPECT_FALSE(MatchAttention(without).ok());
  c.g.MarkOutput(c.chain.softmax->output(0));
  const Status st = MatchAttention(c.chain);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("probabilities"), std::string::npos) << st.ToString();
}

// Compiled for edge-default (every node on the NPU): the chain's four nodes run as one layer
// and npu-sim equals the CPU run bit for bit.
TEST(NpuAttentionTest, Int16SoftmaxChainIsOneLayerInASegment) {
  std::mt19937 rng(2942);
  Case c;
  Build(c, rng, 4, 64, 64, 32, 32, false, true);  // edge-default lists no u8
  if (HasFatalFailure()) return;
  auto t = npu::LoadTarget("edge-default");
  ASSERT_TRUE(t.ok());
  partition::PartitionOptions o;
  o.cost_rule = false;
  auto r = CompileGraph(c.g, *t, "attention16", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& p : r->placements)
    EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->name() << ": " << p.reason;
  EXPECT_EQ(r->listing.find("not fused"), std::string::npos) << r->listing.substr(0, 2000);
  int layers = 0;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("npu_attention16_" + std::to_string(::getpid()) + ".edgec")).string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(f.ok());
  auto l = LoadArtifact(**f);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  for (const auto& s : l->meta.segments) {
    if (s.unit != artifact_io::Unit::kNpu || s.npu.instructions.empty()) continue;
    auto p = npu::DecodeProgram(s.npu.instructions);
    ASSERT_TRUE(p.ok());
    layers += static_cast<int>(p->layer_names.size());
  }
  EXPECT_EQ(layers, 1) << "the scores, softmax, requantize and context as one layer";
  const std::map<std::string, Tensor> in = {{"q", c.q}, {"k", c.k}, {"v", c.v}};
  auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
  std::filesystem::remove(path);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ(sim->outputs.size(), 1u);
  ASSERT_EQ(sim->outputs[0].nbytes(), cpu->outputs[0].nbytes());
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), cpu->outputs[0].nbytes()), 0);
}

}  // namespace
}  // namespace edgec::lower
