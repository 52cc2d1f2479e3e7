// The int16 VEC norm and softmax (npu/lower_wide_norm.cc, npu/sim_wide_norm.cc): int16
// QLinearLayerNormalization / QLinearGroupNormalization / QLinearSoftmax nodes on seeded random
// shapes, mapped by VectorLayerOf, lowered with the tiler's choice and with one item per tile,
// run by the functional simulator on every target whose vector cores take i16, single and
// double buffering, equal bit for bit to the reference kernel (quant/int16_norm.h); a target
// without i16 refuses the layer; the VEC's cycles follow the declared i16 rate.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "runtime/reference_executor.h"

namespace edgec::lower {
namespace {

Value* Scale(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }
Value* Zp16(Graph& g, const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int16_t>(DType::kI16, {}, {0})); }
Value* FloatConst(Graph& g, const std::string& name, int64_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return g.AddConstant(name, Tensor::FromVector<float>(DType::kF32, {n}, v));
}
Node* AddNode(Graph& g, OpKind op, std::vector<Value*> in, Attributes a) {
  const std::string name = std::string(OpName(op)) + std::to_string(g.nodes().size());
  Node* n = g.AddNode(op, name, std::move(in), 1, {name + ":0"});
  n->attrs = std::move(a);
  return n;
}

Tensor RandomI16(const Dims& dims, int spread, std::mt19937& rng) {
  Tensor t = *Tensor::Create(DType::kI16, dims);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<int16_t>()[i] = static_cast<int16_t>(static_cast<int>(rng() % (2 * spread + 1)) - spread);
  return t;
}

// The NPU's DRAM form of an int16 tensor: NHWC when 4-d, else as it is (2 bytes per value).
std::vector<int16_t> ToNhwc(const Tensor& x, bool back) {
  const int16_t* s = x.data<int16_t>();
  std::vector<int16_t> out(s, s + x.numel());
  if (x.rank() != 4) return out;
  const int64_t N = x.dim(0), C = x.dim(1), HW = x.dim(2) * x.dim(3);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < HW; ++p) {
        const int64_t nchw = (b * C + c) * HW + p, nhwc = (b * HW + p) * C + c;
        out[back ? nchw : nhwc] = s[back ? nhwc : nchw];
      }
  return out;
}

int Check(const Node& n, const Tensor& x) {
  std::vector<const Tensor*> in;
  for (const Value* v : n.inputs()) in.push_back(!v ? nullptr : v->is_constant() ? &v->constant() : &x);
  auto want = EvaluateNode(n, in);
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  auto vl = VectorLayerOf(n);
  EXPECT_TRUE(vl.ok()) << n.Label() << ": " << vl.status().ToString();
  if (!want.ok() || !vl.ok()) return 0;
  EXPECT_TRUE(vl->norm.wide);
  int runs = 0;
  auto targets = npu::ListTargets();
  EXPECT_TRUE(targets.ok());
  for (const npu::Target& t : *targets) {
    if (t.vector_cores.VecRate("i16") <= 0) {
      auto refused = npu::LowerNorm(vl->norm, t, 1, false);
      EXPECT_FALSE(refused.ok()) << t.name;
      if (!refused.ok()) {
        EXPECT_NE(refused.status().message().find("take no i16"), std::string::npos);
      }
      continue;
    }
    for (bool db : {false, true}) {
      npu::TilerOptions opt;
      opt.allow_double = db;
      auto ch = npu::ChooseNormTiling(vl->norm, t, opt);
      EXPECT_TRUE(ch.ok()) << ch.status().ToString();
      if (!ch.ok()) continue;
      for (int64_t chunk : {ch->chunk, int64_t{1}}) {
        auto p = npu::LowerNorm(vl->norm, t, chunk, db);
        EXPECT_TRUE(p.ok()) << p.status().ToString();
        if (!p.ok()) continue;
        auto region = [&](const std::string& suffix) {
          for (const auto& r : p->regions)
            if (r.name == n.name() + suffix) return r;
          ADD_FAILURE() << "no region " << suffix;
          return npu::DramRegion{};
        };
        std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
        std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
        const std::vector<int16_t> xs = ToNhwc(x, false);
        const auto xr = region(".input"), yr = region(".output");
        EXPECT_EQ(xr.bytes, static_cast<int64_t>(2 * xs.size()));
        std::memcpy(dram.data() + xr.addr, xs.data(), 2 * xs.size());
        npu::SimOptions so;
        so.functional = true;
        so.dram = &dram;
        auto sim = npu::Simulate(*p, t, so);
        EXPECT_TRUE(sim.ok()) << sim.status().ToString();
        if (!sim.ok()) continue;
        Tensor got = *Tensor::Create(DType::kI16, x.dims());
        std::memcpy(got.raw(), dram.data() + yr.addr, got.nbytes());
        const std::vector<int16_t> back = ToNhwc(got, true);
        const Tensor& w = (*want)[0];
        EXPECT_EQ(std::memcmp(back.data(), w.raw(), w.nbytes()), 0)
            << n.Label() << " " << x.TypeString() << " on " << t.name << (db ? " double" : " single") << " chunk "
            << chunk;
        EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << n.Label() << " on " << t.name;
        ++runs;
      }
    }
  }
  return runs;
}

TEST(NpuInt16Norm, LayerNormAndSoftmaxMatchReference) {
  std::mt19937 rng(61);
  int runs = 0;
  for (int i = 0; i < 5; ++i) {
    const Dims d = {1, static_cast<int64_t>(1 + rng() % 29), static_cast<int64_t>(3 + rng() % 150)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(DType::kI16, d));
    Value* sx = Scale(g, "sx", 1e-4f + (rng() % 100) * 1e-5f);
    Attributes a;
    a.Set("epsilon", 1e-5f);
    Node* ln = AddNode(g, OpKind::kQLinearLayerNormalization,
                       {x, sx, Zp16(g, "zx"), FloatConst(g, "gamma", d[2], rng, -2.f, 2.f),
                        i == 3 ? nullptr : FloatConst(g, "beta", d[2], rng, -1.f, 1.f), Scale(g, "sy", 2e-4f), Zp16(g, "zy")},
                       a);
    Node* sm = AddNode(g, OpKind::kQLinearSoftmax, {x, sx, Zp16(g, "zx2"), Scale(g, "sp", 1.f / 32767), Zp16(g, "zp")}, {});
    ASSERT_TRUE(InferShapes(g).ok());
    const Tensor data = RandomI16(d, 1 + static_cast<int>(rng() % 32767), rng);
    runs += Check(*ln, data);
    runs += Check(*sm, data);
  }
  EXPECT_GE(runs, 2 * 5 * 2 * 2 * 2);  // two targets take i16
}

TEST(NpuInt16Norm, GroupNormMatchesReference) {
  std::mt19937 rng(67);
  int runs = 0;
  for (int i = 0; i < 5; ++i) {
    const int64_t groups = 1 + rng() % 4, per = 1 + rng() % 5;
    const Dims d = {1 + i % 2, groups * per, static_cast<int64_t>(1 + rng() % 9), static_cast<int64_t>(1 + rng() % 9)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(DType::kI16, d));
    Attributes a;
    a.Set("num_groups", i == 4 ? d[1] : groups);
    a.Set("epsilon", 1e-5f);
    Node* n = AddNode(g, OpKind::kQLinearGroupNormalization,
                      {x, Scale(g, "sx", 3e-4f), Zp16(g, "zx"), FloatConst(g, "gamma", d[1], rng, -2.f, 2.f),
                       FloatConst(g, "beta", d[1], rng, -1.f, 1.f), Scale(g, "sy", 3e-4f), Zp16(g, "zy")},
                      a);
    ASSERT_TRUE(InferShapes(g).ok());
    runs += Check(*n, RandomI16(d, 1 + static_cast<int>(rng() % 32767), rng));
  }
  EXPECT_GE(runs, 5 * 2 * 2 * 2);
}

// An int16 VEC norm costs its int8 cycles divided by the declared i16 rate (plus the latency).
TEST(NpuInt16Norm, CyclesFollowTheDeclaredRate) {
  const npu::Target& t = npu::DefaultTarget();
  npu::Instr v{.op = npu::Opcode::kVec, .vec = npu::VecOp::kNorm};
  v.rows = 64;
  v.cols = 768;
  const double narrow = npu::VecCycles(t, v) - t.vector_cores.pipeline_latency;
  v.imm[npu::kWideImm] = 1;
  const double wide = npu::VecCycles(t, v) - t.vector_cores.pipeline_latency;
  EXPECT_DOUBLE_EQ(wide, narrow / t.vector_cores.VecRate("i16"));
  EXPECT_DOUBLE_EQ(wide, 2 * narrow);
}

}  // namespace
}  // namespace edgec::lower
