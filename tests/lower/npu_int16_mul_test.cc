// The VEC mul on int16 operands: a QLinearMul with one int16 side and/or an int16 result (a
// gate or elementwise product beside an int16 point of the mixed precision) runs on the
// vector cores with 2-byte elements (isa.h kMul, the element bytes at kAddBytesImm) in
// quant::QuantizedMul's arithmetic: (a − za)·(b − zb) in int32 (|int16 difference| · |8-bit
// difference| < 2^24), requantized to 8 or 16 bits. One-node graphs of seeded random shapes
// (b full, one channel row, or one value) lowered with the tiler's chunk and a small one,
// single and double buffering, on every target whose vector cores take i16, equal bit for bit
// to the reference kernel in its fixed-point mode; a target without i16 refuses the layer, and
// two int16 operands are refused. In a compiled graph (conv writing int16 -> mul by a
// per-channel gate) the Mul is placed on the NPU and npu-sim equals the CPU run bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
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

int32_t ZeroOf(DType t, std::mt19937& rng) {
  return t == DType::kI16 ? 0 : t == DType::kU8 ? 100 + static_cast<int32_t>(rng() % 50)
                                                : static_cast<int32_t>(rng() % 21) - 10;
}

// a (at) * b (bt) -> y (yt): y's step spreads the products of the two ranges over its type.
Node* AddMul(Graph& g, Value* a, DType at, Value* b, DType bt, DType yt, std::mt19937& rng) {
  const float sa = 0.01f, sb = 0.02f;
  const float range = sa * (at == DType::kI16 ? 32767.f : 127.f) * sb * (bt == DType::kI16 ? 32767.f : 127.f);
  const float sy = range / (yt == DType::kI16 ? 32767.f : 127.f) * (0.05f + 0.01f * static_cast<float>(rng() % 10));
  Node* n = g.AddNode(OpKind::kQLinearMul, "mul",
                      {a, g.AddConstant("sa", Tensor::Scalar(sa)), Zp(g, "za", at, ZeroOf(at, rng)), b,
                       g.AddConstant("sb", Tensor::Scalar(sb)), Zp(g, "zb", bt, ZeroOf(bt, rng)),
                       g.AddConstant("sy", Tensor::Scalar(sy)), Zp(g, "zy", yt, ZeroOf(yt, rng))},
                      1, {"y"});
  n->attrs.Set("edgec_requant", std::string("fixed_point"));
  return n;
}

TEST(Int16MulTest, MulWithAnInt16SideMatchesReference) {
  std::mt19937 rng(2905);
  struct Case {
    DType a, b, y;
  };
  const Case cases[] = {{DType::kI16, DType::kI8, DType::kI16}, {DType::kI8, DType::kI16, DType::kI16},
                        {DType::kI16, DType::kU8, DType::kI8},  {DType::kU8, DType::kI16, DType::kU8},
                        {DType::kI8, DType::kI8, DType::kI16},  {DType::kI16, DType::kI8, DType::kI8}};
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int runs = 0, refused = 0;
  for (int i = 0; i < 18; ++i) {
    const Case c = cases[i % 6];
    const int64_t C = 1 + rng() % 40, H = 1 + rng() % 9, W = 1 + rng() % 9;
    const int form = i / 6;  // full, one channel row (a gate), one value
    const Dims ad = {1, C, H, W}, bd = form == 0 ? ad : form == 1 ? Dims{1, C, 1, 1} : Dims{1};
    Graph g;
    Value* a = g.AddInput("a", MakeType(c.a, ad));
    Value* b = g.AddInput("b", MakeType(c.b, bd));
    Node& n = *AddMul(g, a, c.a, b, c.b, c.y, rng);
    g.MarkOutput(n.output(0));
    ASSERT_TRUE(InferShapes(g).ok());
    const Tensor av = RandomQ(c.a, ad, rng), bv = RandomQ(c.b, bd, rng);
    std::vector<const Tensor*> ins;
    for (const Value* v : n.inputs()) ins.push_back(v == a ? &av : v == b ? &bv : &v->constant());
    auto want = EvaluateNode(n, ins);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto vl = VectorLayerOf(n);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    ASSERT_EQ(vl->kind, VectorLayer::Kind::kEltwise);
    for (const npu::Target& t : *targets) {
      int64_t a_addr, b_addr, y_addr;
      if (t.vector_cores.VecRate("i16") <= 0) {
        auto no = npu::LowerEltwise(vl->eltwise, t, 64, false, &a_addr, &b_addr, &y_addr);
        EXPECT_FALSE(no.ok()) << t.name;
        refused += !no.ok();
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
          // The full operand is the VEC's a (a broadcast one its b): regions follow the inputs.
          for (const auto& r : p->regions) {
            const std::vector<uint8_t> bytes = r.name == "mul.input" ? ToNpu(av) : r.name == "mul.input1" ? ToNpu(bv)
                                                                                                             : std::vector<uint8_t>{};
            if (bytes.empty()) continue;
            ASSERT_EQ(static_cast<int64_t>(bytes.size()), r.bytes) << r.name;
            std::copy(bytes.begin(), bytes.end(), dram.begin() + r.addr);
          }
          npu::SimOptions so;
          so.functional = true;
          so.dram = &dram;
          auto sim = npu::Simulate(*p, t, so);
          ASSERT_TRUE(sim.ok()) << sim.status().ToString();
          auto got = FromNpu(dram.data() + y_addr, n.output(0)->type);
          ASSERT_TRUE(got.ok());
          const Tensor& w = (*want)[0];
          ASSERT_EQ(got->nbytes(), w.nbytes());
          EXPECT_EQ(std::memcmp(got->raw(), w.raw(), w.nbytes()), 0)
              << "case " << i << " " << DTypeName(c.a) << " * " << DTypeName(c.b) << " -> " << DTypeName(c.y) << " "
              << DimsToString(ad) << " * " << DimsToString(bd) << " on " << t.name << (db ? " double" : " single")
              << " chunk " << chunk;
          EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << t.name;
          ++runs;
        }
      }
    }
  }
  EXPECT_GE(runs, 18 * 2 * 2 * 2);  // two targets take i16
  EXPECT_GE(refused, 18);           // edge-mcu takes none
}

TEST(Int16MulTest, TwoInt16OperandsAreRefused) {
  std::mt19937 rng(2906);
  Graph g;
  Value* a = g.AddInput("a", MakeType(DType::kI16, {1, 4, 3, 3}));
  Value* b = g.AddInput("b", MakeType(DType::kI16, {1, 4, 3, 3}));
  Node& n = *AddMul(g, a, DType::kI16, b, DType::kI16, DType::kI16, rng);
  g.MarkOutput(n.output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto vl = VectorLayerOf(n);
  ASSERT_FALSE(vl.ok());
  EXPECT_NE(vl.status().message().find("two int16 operands"), std::string::npos) << vl.status().ToString();
}

// x i8 -> conv 1x1 writing int16 -> mul by a per-channel gate (i8, a graph input: the squeeze-
// excite shape) -> y int16, compiled for edge-default with the cost rule: every node on the NPU
// in one segment, and npu-sim equals the CPU run bit for bit.
TEST(Int16MulTest, GateOnAnInt16FeatureStaysOnTheNpu) {
  std::mt19937 rng(2907);
  const int64_t C = 24, N = 32, H = 20, W = 20;
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI8, {1, C, H, W}));
  Value* gate = g.AddInput("gate", MakeType(DType::kI8, {1, N, 1, 1}));
  std::vector<int32_t> bias(N);
  for (auto& v : bias) v = static_cast<int32_t>(rng() % 4001) - 2000;
  const float sx = 0.02f, s16 = sx * 0.005f * 128.f * 74.f * 5.f * 4.f / 32767.f;
  Node* conv = g.AddNode(OpKind::kQLinearConv, "conv",
                         {x, g.AddConstant("sx", Tensor::Scalar(sx)), Zp(g, "zx", DType::kI8, 2),
                          g.AddConstant("w", RandomQ(DType::kI8, {N, C, 1, 1}, rng)),
                          g.AddConstant("sw", Tensor::Scalar(0.005f)), Zp(g, "zw", DType::kI8, 0),
                          g.AddConstant("s16", Tensor::Scalar(s16)), Zp(g, "z16", DType::kI16, 0),
                          g.AddConstant("b", Tensor::FromVector<int32_t>(DType::kI32, {N}, bias))},
                         1, {"conv:0"});
  conv->attrs.Set("kernel_shape", std::vector<int64_t>{1, 1});
  Node* mul = g.AddNode(OpKind::kQLinearMul, "gate_mul",
                        {conv->output(0), g.AddConstant("ma", Tensor::Scalar(s16)), Zp(g, "mza", DType::kI16, 0), gate,
                         g.AddConstant("mb", Tensor::Scalar(1.f / 255)), Zp(g, "mzb", DType::kI8, -128),
                         g.AddConstant("my", Tensor::Scalar(s16 * 0.5f)), Zp(g, "mzy", DType::kI16, 0)},
                        1, {"y"});
  g.MarkOutput(mul->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto t = npu::LoadTarget("edge-default");
  ASSERT_TRUE(t.ok());
  auto r = CompileGraph(g, *t, "gate16");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& p : r->placements)
    EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->name() << ": " << p.reason;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("npu_int16_mul_" + std::to_string(::getpid()) + ".edgec")).string();
  ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
  auto f = artifact_io::MappedArtifact::Open(path);
  ASSERT_TRUE(f.ok());
  auto l = LoadArtifact(**f);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  const std::map<std::string, Tensor> in = {{"x", RandomQ(DType::kI8, {1, C, H, W}, rng)},
                                            {"gate", RandomQ(DType::kI8, {1, N, 1, 1}, rng)}};
  auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
  std::filesystem::remove(path);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_EQ(sim->outputs.size(), 1u);
  ASSERT_EQ(sim->outputs[0].nbytes(), cpu->outputs[0].nbytes());
  EXPECT_EQ(sim->outputs[0].dtype(), DType::kI16);
  EXPECT_EQ(std::memcmp(sim->outputs[0].raw(), cpu->outputs[0].raw(), cpu->outputs[0].nbytes()), 0);
  int64_t wide = 0;
  for (int64_t v : cpu->outputs[0].ToInt64Vector()) wide += std::abs(v) > 127;
  EXPECT_GT(wide, 0) << "the product uses the 16-bit range";
}

}  // namespace
}  // namespace edgec::lower
