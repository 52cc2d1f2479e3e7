// QLinearRequantize between 8 and 16 bits (quant/rescale.h) as the NPU's VEC rescale
// (isa.h kRescale): one-node integer graphs i16 -> i8, i16 -> u8, i8 -> i16 and u8 -> i16 on
// seeded random shapes and scales, mapped by VectorLayerOf, lowered with the tiler's chunk and
// with a small one (many tiles over the cores), run by the functional simulator on every target
// whose vector cores take i16, single and double buffering, equal bit for bit to the reference
// kernel in its fixed-point mode; the fixed-point kernel is within one step of the float one;
// a target without i16 refuses the layer; the VEC's cycles follow the declared i16 rate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* ZeroPoint(Graph& g, const std::string& name, DType t, int32_t z) {
  if (t == DType::kI16) return g.AddConstant(name, Tensor::FromVector<int16_t>(t, {}, {static_cast<int16_t>(z)}));
  if (t == DType::kU8) return g.AddConstant(name, Tensor::FromVector<uint8_t>(t, {}, {static_cast<uint8_t>(z)}));
  return g.AddConstant(name, Tensor::FromVector<int8_t>(t, {}, {static_cast<int8_t>(z)}));
}

// x (xt) -> QLinearRequantize -> y (yt): scales as the quantizer makes them for one range
// (an int16 step ~ range / 32767, an 8-bit step ~ range / 127, both jittered).
Graph OneNode(const Dims& d, DType xt, DType yt, std::mt19937& rng, const std::string& mode) {
  std::uniform_real_distribution<float> u(0.5f, 2.f);
  const float range = 0.01f + static_cast<float>(rng() % 1000) * 0.02f;
  auto step = [&](DType t) { return range / (t == DType::kI16 ? 32767.f : 127.f) * u(rng); };
  auto zero = [&](DType t) { return t == DType::kI16 ? 0 : t == DType::kU8 ? 100 + static_cast<int32_t>(rng() % 50) : static_cast<int32_t>(rng() % 21) - 10; };
  Graph g;
  Value* x = g.AddInput("x", MakeType(xt, d));
  Node* n = g.AddNode(OpKind::kQLinearRequantize, "rq",
                      {x, g.AddConstant("sx", Tensor::Scalar(step(xt))), ZeroPoint(g, "zx", xt, zero(xt)),
                       g.AddConstant("sy", Tensor::Scalar(step(yt))), ZeroPoint(g, "zy", yt, zero(yt))},
                      1, {"y"});
  n->attrs.Set("edgec_requant", mode);
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// Simulates `n` on every target; returns the runs compared.
int Check(const Node& n, const Tensor& x) {
  auto want = EvaluateNode(n, {&x, &n.input(1)->constant(), &n.input(2)->constant(), &n.input(3)->constant(),
                               &n.input(4)->constant()});
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  auto vl = VectorLayerOf(n);
  EXPECT_TRUE(vl.ok()) << vl.status().ToString();
  if (!want.ok() || !vl.ok()) return 0;
  EXPECT_EQ(vl->kind, VectorLayer::Kind::kEltwise);
  auto targets = npu::ListTargets();
  EXPECT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0;
  for (const npu::Target& t : *targets) {
    int64_t a, b, y;
    if (t.vector_cores.VecRate("i16") <= 0) {
      auto refused = npu::LowerEltwise(vl->eltwise, t, 64, false, &a, &b, &y);
      EXPECT_FALSE(refused.ok()) << t.name;
      if (!refused.ok()) {
        EXPECT_NE(refused.status().message().find("take no i16"), std::string::npos);
      }
      continue;
    }
    for (bool db : {false, true}) {
      npu::TilerOptions opt;
      opt.allow_double = db;
      auto ch = npu::ChooseEltwiseTiling(vl->eltwise, t, opt);
      EXPECT_TRUE(ch.ok()) << ch.status().ToString();
      if (!ch.ok()) continue;
      for (int64_t chunk : {ch->chunk, int64_t{64}}) {
        auto p = npu::LowerEltwise(vl->eltwise, t, chunk, db, &a, &b, &y);
        EXPECT_TRUE(p.ok()) << p.status().ToString();
        if (!p.ok()) continue;
        std::vector<uint8_t> dram(p->dram_bytes, 0x5A);
        std::copy(p->dram_init.begin(), p->dram_init.end(), dram.begin());
        const std::vector<uint8_t> in = ToNpu(x);
        EXPECT_EQ(static_cast<int64_t>(in.size()), p->regions[0].bytes);
        std::copy(in.begin(), in.end(), dram.begin() + a);
        npu::SimOptions so;
        so.functional = true;
        so.dram = &dram;
        auto sim = npu::Simulate(*p, t, so);
        EXPECT_TRUE(sim.ok()) << sim.status().ToString();
        if (!sim.ok()) continue;
        auto got = FromNpu(dram.data() + y, n.output(0)->type);
        EXPECT_TRUE(got.ok());
        const Tensor& w = (*want)[0];
        EXPECT_EQ(std::memcmp(got->raw(), w.raw(), w.nbytes()), 0)
            << x.TypeString() << " -> " << DTypeName(w.dtype()) << " on " << t.name << (db ? " double" : " single")
            << " chunk " << chunk;
        EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
        ++runs;
      }
    }
  }
  return runs;
}

TEST(NpuRescale, EveryWidthPairMatchesReference) {
  std::mt19937 rng(307);
  const std::pair<DType, DType> pairs[] = {
      {DType::kI16, DType::kI8}, {DType::kI16, DType::kU8}, {DType::kI8, DType::kI16}, {DType::kU8, DType::kI16}};
  int runs = 0;
  for (int i = 0; i < 3; ++i) {
    for (auto [xt, yt] : pairs) {
      const Dims d = i == 2 ? Dims{1, static_cast<int64_t>(1 + rng() % 9), static_cast<int64_t>(1 + rng() % 7),
                                   static_cast<int64_t>(1 + rng() % 7)}
                            : Dims{1, static_cast<int64_t>(1 + rng() % 40), static_cast<int64_t>(1 + rng() % 300)};
      Graph g = OneNode(d, xt, yt, rng, "fixed_point");
      runs += Check(*g.nodes()[0], RandomQ(xt, d, rng));
    }
  }
  EXPECT_GE(runs, 3 * 4 * 2 * 2 * 2);  // two targets take i16
}

// The integer form is within one step of Q(DQ(x)) in f32, and the float mode is that formula.
TEST(NpuRescale, FixedPointIsWithinOneStepOfTheFloatForm) {
  std::mt19937 rng(311);
  int exact = 0, total = 0;
  for (int i = 0; i < 20; ++i) {
    const DType xt = i % 2 ? DType::kI16 : DType::kI8, yt = i % 2 ? DType::kI8 : DType::kI16;
    const Dims d = {1, 64, 33};
    const uint32_t seed = rng();
    std::mt19937 a(seed), b(seed);
    Graph gf = OneNode(d, xt, yt, a, "float");
    Graph gi = OneNode(d, xt, yt, b, "fixed_point");
    const Tensor x = RandomQ(xt, d, rng);
    auto f = ReferenceExecutor(gf).Run({{"x", x}});
    auto q = ReferenceExecutor(gi).Run({{"x", x}});
    ASSERT_TRUE(f.ok() && q.ok());
    const std::vector<int64_t> vf = (*f)[0].ToInt64Vector(), vq = (*q)[0].ToInt64Vector();
    const Node& n = *gf.nodes()[0];
    const double sx = n.input(1)->constant().ToDoubleVector()[0], sy = n.input(3)->constant().ToDoubleVector()[0];
    const int64_t zx = n.input(2)->constant().ToInt64Vector()[0], zy = n.input(4)->constant().ToInt64Vector()[0];
    const std::vector<int64_t> vx = x.ToInt64Vector();
    for (size_t k = 0; k < vf.size(); ++k) {
      const double ideal = std::clamp(std::nearbyint((vx[k] - zx) * sx / sy) + zy, yt == DType::kI16 ? -32768. : -128.,
                                      yt == DType::kI16 ? 32767. : 127.);
      ASSERT_LE(std::abs(vf[k] - ideal), 1) << "float mode, value " << k;
      ASSERT_LE(std::abs(vq[k] - vf[k]), 1) << "value " << k << " of " << DTypeName(xt) << " -> " << DTypeName(yt);
      exact += vq[k] == vf[k];
      ++total;
    }
  }
  EXPECT_GT(exact, total * 9 / 10);
}

// A rescale with an int16 side costs its int8 cycles divided by the declared i16 rate.
TEST(NpuRescale, CyclesFollowTheDeclaredRate) {
  const npu::Target& t = npu::DefaultTarget();
  npu::Instr v{.op = npu::Opcode::kVec, .vec = npu::VecOp::kRescale};
  v.rows = 8;
  v.cols = 4096;
  v.imm[6] = v.imm[7] = 1;
  const double narrow = npu::VecCycles(t, v) - t.vector_cores.pipeline_latency;
  v.imm[6] = 2;
  const double wide = npu::VecCycles(t, v) - t.vector_cores.pipeline_latency;
  EXPECT_DOUBLE_EQ(wide, narrow / t.vector_cores.VecRate("i16"));
}

}  // namespace
}  // namespace edgec::lower
