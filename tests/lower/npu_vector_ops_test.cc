// The elementwise and data-movement ops the NPU takes (QuantizedLookup, QLinearMul and
// QLinearAdd with full, per-channel and scalar operands, QLinearGlobalAveragePool, Concat,
// Transpose, Slice, Split, reshapes that reorder bytes, the integer layer / group norms and
// softmax, Resize nearest and linear), each from a one-node integer graph:
// mapped by VectorLayerOf, lowered with the tiler's choice and with a small chunk (many tiles
// over the cores), run by the functional simulator on every target in targets/ with single and
// double buffering, and compared bit for bit with the reference kernel (fixed-point mode) on
// seeded random shapes, odd channel counts, u8 and i8. Every run also obeys its roofline.
#include <gtest/gtest.h>

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

using Ints = std::vector<int64_t>;

std::vector<npu::Target> Targets() {
  auto t = npu::ListTargets();
  EXPECT_TRUE(t.ok() && t->size() >= 3u) << "targets/*.json";
  return t.ok() ? *t : std::vector<npu::Target>{};
}

struct Counts {
  int runs = 0;
};

// Lowers node `n` (its data inputs given in order) for every target, buffering and chunk,
// simulates it and compares every output with the reference kernel's.
void CheckNode(const Node& n, const std::vector<Tensor>& data, Counts& counts) {
  std::vector<const Tensor*> in;
  size_t k = 0;
  for (const Value* v : n.inputs()) {
    if (!v) in.push_back(nullptr);
    else if (v->is_constant()) in.push_back(&v->constant());
    else in.push_back(&data.at(k++));
  }
  auto want = EvaluateNode(n, in);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto vl = VectorLayerOf(n);
  ASSERT_TRUE(vl.ok()) << n.Label() << ": " << vl.status().ToString();
  for (const npu::Target& t : Targets()) {
    for (bool db : {false, true}) {
      npu::TilerOptions opt;
      opt.allow_double = db;
      std::vector<StatusOr<npu::Program>> progs;
      std::string how;
      switch (vl->kind) {
        case VectorLayer::Kind::kEltwise: {
          const npu::EltwiseLayer& e = vl->eltwise;
          auto ch = npu::ChooseEltwiseTiling(e, t, opt);
          ASSERT_TRUE(ch.ok()) << ch.status().ToString();
          const int64_t small = e.broadcast == npu::EltwiseLayer::Broadcast::kRow && e.binary() ? e.cols : 64;
          for (int64_t chunk : {ch->chunk, small}) {
            int64_t a, b, y;
            progs.push_back(npu::LowerEltwise(e, t, chunk, db, &a, &b, &y));
          }
          how = ch->ToString();
          break;
        }
        case VectorLayer::Kind::kMove: {
          auto ch = npu::ChooseMoveTiling(vl->move, t, opt);
          ASSERT_TRUE(ch.ok()) << ch.status().ToString();
          for (int64_t chunk : {ch->chunk, int64_t{64}}) progs.push_back(npu::LowerMove(vl->move, t, chunk, db));
          how = ch->ToString();
          break;
        }
        case VectorLayer::Kind::kPool: {
          auto ch = npu::ChoosePoolTiling(vl->pool, t, opt);
          ASSERT_TRUE(ch.ok()) << ch.status().ToString();
          progs.push_back(npu::LowerPool(vl->pool, t, ch->tile_rows, ch->tile_c, db, nullptr));
          progs.push_back(npu::LowerPool(vl->pool, t, 1, 16, db, nullptr));  // many tiles: row and channel tiles
          how = ch->ToString();
          break;
        }
        case VectorLayer::Kind::kNorm: {
          auto ch = npu::ChooseNormTiling(vl->norm, t, opt);
          ASSERT_TRUE(ch.ok()) << ch.status().ToString();
          for (int64_t chunk : {ch->chunk, int64_t{1}}) progs.push_back(npu::LowerNorm(vl->norm, t, chunk, db));
          how = ch->ToString();
          break;
        }
        case VectorLayer::Kind::kResize: {
          auto ch = npu::ChooseResizeTiling(vl->resize, t, opt);
          ASSERT_TRUE(ch.ok()) << ch.status().ToString();
          progs.push_back(npu::LowerResize(vl->resize, t, ch->tile_rows, ch->tile_c, db));
          progs.push_back(npu::LowerResize(vl->resize, t, 1, 16, db));  // many tiles, channel tiles
          how = ch->ToString();
          break;
        }
        case VectorLayer::Kind::kArgMax: {
          auto ch = npu::ChooseArgMaxTiling(vl->argmax, t, opt);
          ASSERT_TRUE(ch.ok()) << ch.status().ToString();
          for (int64_t chunk : {ch->chunk, int64_t{3}}) progs.push_back(npu::LowerArgMax(vl->argmax, t, chunk, db));
          how = ch->ToString();
          break;
        }
        default:
          FAIL() << "unexpected layer kind";
      }
      for (size_t pi = 0; pi < progs.size(); ++pi) {
        ASSERT_TRUE(progs[pi].ok()) << progs[pi].status().ToString();
        const npu::Program& p = *progs[pi];
        auto region = [&](const std::string& suffix) -> const npu::DramRegion* {
          for (const auto& r : p.regions)
            if (r.name == n.name() + suffix) return &r;
          return nullptr;
        };
        std::vector<uint8_t> dram(p.dram_bytes, 0x5A);
        std::copy(p.dram_init.begin(), p.dram_init.end(), dram.begin());
        for (size_t i = 0; i < data.size(); ++i) {
          const npu::DramRegion* r = region(i ? fmt::format(".input{}", i) : ".input");
          ASSERT_TRUE(r) << n.Label() << " input " << i;
          const std::vector<uint8_t> b = ToNpu(data[i]);
          ASSERT_EQ(static_cast<int64_t>(b.size()), r->bytes);
          std::copy(b.begin(), b.end(), dram.begin() + r->addr);
        }
        npu::SimOptions so;
        so.functional = true;
        so.dram = &dram;
        auto sim = npu::Simulate(p, t, so);
        ASSERT_TRUE(sim.ok()) << sim.status().ToString();
        for (int o = 0; o < n.num_outputs(); ++o) {
          const npu::DramRegion* r = region(o ? fmt::format(".output{}", o) : ".output");
          ASSERT_TRUE(r);
          const Tensor got = *FromNpu(dram.data() + r->addr, n.output(o)->type);
          const Tensor& w = (*want)[o];
          ASSERT_EQ(got.nbytes(), w.nbytes());
          ASSERT_EQ(std::memcmp(got.raw(), w.raw(), w.nbytes()), 0)
              << n.Label() << " output " << o << " " << n.output(o)->type.ToString() << " on " << t.name
              << (db ? " double" : " single") << (pi ? " small chunk" : " tiler's choice " + how);
        }
        // Timing: no layer beats its roofline bound; a move reads and writes every byte once.
        EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t)) << n.Label() << " on " << t.name;
        EXPECT_LE(sim->total.sram_peak, t.shared_sram.bytes);
        if (vl->kind == VectorLayer::Kind::kMove) {
          EXPECT_EQ(sim->total.dram_read, vl->move.bytes()) << n.Label();
          EXPECT_EQ(sim->total.dram_written, vl->move.bytes()) << n.Label();
        }
        ++counts.runs;
      }
    }
  }
}

Value* Scale(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }
Value* Zp(Graph& g, const std::string& n, DType dt, int v) {
  return dt == DType::kU8 ? g.AddConstant(n, Tensor::FromVector<uint8_t>(dt, {}, {static_cast<uint8_t>(v)}))
                          : g.AddConstant(n, Tensor::FromVector<int8_t>(dt, {}, {static_cast<int8_t>(v)}));
}
Attributes FixedPoint() {
  Attributes a;
  a.Set("edgec_requant", std::string("fixed_point"));
  return a;
}
Node* AddNode(Graph& g, OpKind op, std::vector<Value*> in, Attributes a, int outs = 1) {
  std::vector<std::string> names;
  const std::string name = g.FreshName(std::string(OpName(op)));
  for (int i = 0; i < outs; ++i) names.push_back(fmt::format("{}:{}", name, i));
  Node* n = g.AddNode(op, name, std::move(in), outs, names);
  n->attrs = std::move(a);
  for (int i = 0; i < outs; ++i) g.MarkOutput(n->output(i));
  return n;
}

TEST(NpuVectorOpsTest, LookupMatchesReference) {
  std::mt19937 rng(41);
  Counts c;
  for (int i = 0; i < 6; ++i) {
    const DType xt = i % 2 ? DType::kU8 : DType::kI8, yt = i % 3 ? DType::kI8 : DType::kU8;
    const Dims d = {1, static_cast<int64_t>(1 + 2 * (rng() % 20)), static_cast<int64_t>(1 + rng() % 9),
                    static_cast<int64_t>(1 + rng() % 9)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(xt, d));
    Value* table = g.AddConstant("table", RandomQ(yt, {256}, rng));
    Node* n = AddNode(g, OpKind::kQuantizedLookup, {x, table}, {});
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_EQ(n->output(0)->type.dtype, yt);
    CheckNode(*n, {RandomQ(xt, d, rng)}, c);
  }
  EXPECT_GE(c.runs, 6 * 3 * 2 * 2);
}

// QLinearMul / QLinearAdd: a full, b full / per channel / scalar, or a the broadcast one
// (swapped), b data or constant, u8 and i8, with and without a ReLU clamp.
TEST(NpuVectorOpsTest, BinaryOpsWithBroadcastingMatchReference) {
  std::mt19937 rng(43);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Counts c;
  int kinds[3] = {0, 0, 0};
  for (int i = 0; i < 24; ++i) {
    const bool mul = i % 2 == 0;
    const int kind = (i / 2) % 3;  // 0 full, 1 per channel, 2 scalar
    const bool four_d = i % 5 != 4;
    const bool swap = kind != 0 && i % 7 == 3;
    const bool const_b = kind != 0 && i % 4 == 1;
    const DType at = U(0, 1) ? DType::kU8 : DType::kI8, bt = U(0, 1) ? DType::kU8 : DType::kI8,
                yt = U(0, 1) ? DType::kU8 : DType::kI8;
    const int64_t C = 1 + 2 * U(0, 30);
    const Dims full = four_d ? Dims{1, C, U(1, 9), U(1, 9)} : Dims{1, U(1, 7), C};
    const Dims row = four_d ? Dims{1, C, 1, 1} : Dims{C};
    const Dims bd = kind == 0 ? full : kind == 1 ? row : (U(0, 1) ? Dims{1} : Dims{});
    Graph g;
    auto zp = [&](DType dt) { return dt == DType::kU8 ? U(0, 255) : U(-128, 127); };
    Value* full_v = g.AddInput("a", MakeType(at, full));
    Value* bcast_v = const_b ? g.AddConstant("b", RandomQ(bt, bd, rng)) : g.AddInput("b", MakeType(bt, bd));
    Value* sa = Scale(g, "sa", 0.01f * U(1, 40));
    Value* za = Zp(g, "za", at, zp(at));
    Value* sb = Scale(g, "sb", (mul ? 0.004f : 0.01f) * U(1, 40));
    Value* zb = Zp(g, "zb", bt, zp(bt));
    Attributes a = FixedPoint();
    if (i % 3 == 2) a.Set("edgec_qmin", int64_t{yt == DType::kU8 ? U(0, 128) : U(-128, 0)});  // a fused ReLU
    std::vector<Value*> ins = swap ? std::vector<Value*>{bcast_v, sb, zb, full_v, sa, za}
                                   : std::vector<Value*>{full_v, sa, za, bcast_v, sb, zb};
    ins.push_back(Scale(g, "sy", (mul ? 0.02f : 0.03f) * U(1, 20)));
    ins.push_back(Zp(g, "zy", yt, zp(yt)));
    Node* n = AddNode(g, mul ? OpKind::kQLinearMul : OpKind::kQLinearAdd, ins, a);
    ASSERT_TRUE(InferShapes(g).ok());
    ASSERT_EQ(n->output(0)->type.dims, full);
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    ASSERT_EQ(static_cast<int>(v->eltwise.broadcast), kind) << n->Label();
    ++kinds[kind];
    std::vector<Tensor> data;
    const Tensor fa = RandomQ(at, full, rng), fb = RandomQ(bt, bd, rng);
    if (swap && !const_b) data = {fb, fa};
    else if (const_b) data = {fa};
    else data = {fa, fb};
    CheckNode(*n, data, c);
  }
  EXPECT_GT(kinds[0] * kinds[1] * kinds[2], 0);
  EXPECT_GE(c.runs, 24 * 3 * 2 * 2);
}

TEST(NpuVectorOpsTest, GlobalAveragePoolMatchesReference) {
  std::mt19937 rng(47);
  Counts c;
  for (int i = 0; i < 4; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const Dims d = {1, static_cast<int64_t>(1 + 2 * (rng() % 40)), static_cast<int64_t>(1 + rng() % 8),
                    static_cast<int64_t>(1 + rng() % 8)};
    Graph g;
    Node* n = AddNode(g, OpKind::kQLinearGlobalAveragePool,
                      {g.AddInput("x", MakeType(dt, d)), Scale(g, "sx", 0.05f), Zp(g, "zx", dt, 3), Scale(g, "sy", 0.02f),
                       Zp(g, "zy", dt, dt == DType::kU8 ? 120 : -4)},
                      FixedPoint());
    ASSERT_TRUE(InferShapes(g).ok());
    CheckNode(*n, {RandomQ(dt, d, rng)}, c);
  }
}

// Concat, Transpose, Slice, Split, Gather with constant indices and byte-reordering reshapes:
// strided DMA copies.
TEST(NpuVectorOpsTest, DataMovementMatchesReference) {
  std::mt19937 rng(53);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  Counts c;
  int transposes = 0, with_element_rows = 0;
  int gathers = 0;
  for (int i = 0; i < 36; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const bool four_d = i % 3 != 2;
    Dims d = four_d ? Dims{1, 1 + 2 * U(0, 12), U(1, 7), U(1, 7)} : Dims{U(1, 3), U(1, 9), 1 + 2 * U(0, 10)};
    const int rank = static_cast<int>(d.size());
    Graph g;
    Node* n = nullptr;
    std::vector<Tensor> data;
    auto ints = [&](const std::string& name, Ints v) {
      return g.AddConstant(name, Tensor::FromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v));
    };
    switch (i % 6) {
      case 0: {  // concat of 2-3 inputs on a random axis
        const int64_t axis = U(0, rank - 1);
        std::vector<Value*> ins;
        for (int k = 0, parts = static_cast<int>(U(2, 3)); k < parts; ++k) {
          Dims p = d;
          p[axis] = 1 + 2 * U(0, 4);
          ins.push_back(g.AddInput(fmt::format("x{}", k), MakeType(dt, p)));
          data.push_back(RandomQ(dt, p, rng));
        }
        Attributes a;
        a.Set("axis", axis);
        n = AddNode(g, OpKind::kConcat, ins, a);
        break;
      }
      case 1: {  // a random permutation
        Ints perm(rank);
        for (int k = 0; k < rank; ++k) perm[k] = k;
        std::shuffle(perm.begin(), perm.end(), rng);
        Attributes a;
        a.Set("perm", perm);
        n = AddNode(g, OpKind::kTranspose, {g.AddInput("x", MakeType(dt, d))}, a);
        data.push_back(RandomQ(dt, d, rng));
        break;
      }
      case 2: {  // constant starts / ends / steps on one or two axes
        Ints starts, ends, axes, steps;
        for (int64_t axis = 0; axis < rank; ++axis) {
          if (d[axis] < 2 || U(0, 2) == 0) continue;
          starts.push_back(U(0, static_cast<int>(d[axis]) - 1));
          ends.push_back(U(0, 1) ? INT64_MAX : U(static_cast<int>(starts.back()) + 1, static_cast<int>(d[axis])));
          axes.push_back(U(0, 1) ? axis : axis - rank);
          steps.push_back(U(1, 2));
        }
        if (starts.empty()) {
          starts = {0};
          ends = {d[0]};
          axes = {0};
          steps = {1};
        }
        n = AddNode(g, OpKind::kSlice,
                    {g.AddInput("x", MakeType(dt, d)), ints("starts", starts), ints("ends", ends), ints("axes", axes),
                     ints("steps", steps)},
                    {});
        data.push_back(RandomQ(dt, d, rng));
        break;
      }
      case 3: {  // split into 2-3 parts
        int64_t axis = U(0, rank - 1);
        d[axis] = 3 + 2 * U(0, 5);
        const int64_t first = U(1, static_cast<int>(d[axis]) - 2), second = U(1, static_cast<int>(d[axis] - first) - 1);
        Ints split = {first, second, d[axis] - first - second};
        Attributes a;
        a.Set("axis", axis);
        n = AddNode(g, OpKind::kSplit, {g.AddInput("x", MakeType(dt, d)), ints("split", split)}, a, 3);
        data.push_back(RandomQ(dt, d, rng));
        break;
      }
      case 5: {  // constant indices (a scalar, or 1-d with repeats and negatives) on a random axis
        const int64_t axis = U(0, rank - 1);
        Value* indices = nullptr;
        if (U(0, 1)) {
          indices = g.AddConstant("idx", Tensor::FromVector<int64_t>(DType::kI64, {}, {U(0, static_cast<int>(d[axis]) - 1)}));
        } else {
          Ints idx;
          for (int k = 0, count = static_cast<int>(U(1, 4)); k < count; ++k)
            idx.push_back(U(-static_cast<int>(d[axis]), static_cast<int>(d[axis]) - 1));
          indices = ints("idx", idx);
        }
        Attributes a;
        a.Set("axis", axis);
        n = AddNode(g, OpKind::kGather, {g.AddInput("x", MakeType(dt, d)), indices}, a);
        data.push_back(RandomQ(dt, d, rng));
        break;
      }
      case 4: {  // a channel shuffle's reshape [N, C, H, W] -> [N, 2, C/2, H, W], or flatten
        if (four_d) {
          d[1] = 2 * (1 + U(0, 8));
          if (d[2] * d[3] == 1) d[3] = 3;  // else a view
          n = AddNode(g, OpKind::kReshape,
                      {g.AddInput("x", MakeType(dt, d)), ints("shape", {d[0], 2, d[1] / 2, d[2], d[3]})}, {});
        } else {
          Attributes a;
          a.Set("axis", int64_t{1});
          d = Dims{1, 1 + 2 * U(0, 6), U(2, 5), U(2, 5)};
          n = AddNode(g, OpKind::kFlatten, {g.AddInput("x", MakeType(dt, d))}, a);
        }
        data.push_back(RandomQ(dt, d, rng));
        break;
      }
    }
    ASSERT_TRUE(InferShapes(g).ok()) << n->Label();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << n->Label() << ": " << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kMove);
    transposes += n->op() == OpKind::kTranspose;
    gathers += n->op() == OpKind::kGather;
    with_element_rows += v->move.element_rows();
    CheckNode(*n, data, c);
  }
  EXPECT_GT(transposes, 3);
  EXPECT_GT(gathers, 3);
  EXPECT_GT(with_element_rows, 0);  // some copies change the innermost dim: one-byte rows
}

TEST(NpuVectorOpsTest, TransposeThatKeepsTheBytesIsAView) {
  // A transpose that moves only a unit dim keeps every byte in place (a view); one that swaps
  // two non-unit dims of the NHWC order does not.
  Graph g;
  Attributes a;
  a.Set("perm", Ints{0, 2, 1, 3});
  Node* n = AddNode(g, OpKind::kTranspose, {g.AddInput("x", MakeType(DType::kI8, {1, 1, 5, 7}))}, a);
  ASSERT_TRUE(InferShapes(g).ok());
  auto m = MoveLayerOf(*n);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->identity()) << "[1,1,5,7] -> [1,5,1,7]: NHWC orders (h, w), then (w, h)";
  Graph g2;
  Attributes a2;
  a2.Set("perm", Ints{0, 1, 3, 2});
  Node* n2 = AddNode(g2, OpKind::kTranspose, {g2.AddInput("x", MakeType(DType::kI8, {1, 6, 1, 4}))}, a2);
  ASSERT_TRUE(InferShapes(g2).ok());
  auto m2 = MoveLayerOf(*n2);
  ASSERT_TRUE(m2.ok());
  EXPECT_TRUE(m2->identity()) << "a unit dim moving: the same bytes";
}

}  // namespace
}  // namespace edgec::lower

namespace edgec::lower {
namespace {

Value* FloatConst(Graph& g, const std::string& name, int64_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return g.AddConstant(name, Tensor::FromVector<float>(DType::kF32, {n}, v));
}

TEST(NpuVectorOpsTest, LayerNormAndSoftmaxMatchReference) {
  std::mt19937 rng(43);
  Counts c;
  for (int i = 0; i < 6; ++i) {
    const DType xt = i % 2 ? DType::kU8 : DType::kI8, yt = i % 3 ? DType::kI8 : DType::kU8;
    const Dims d = {1, static_cast<int64_t>(1 + rng() % 37), static_cast<int64_t>(3 + rng() % 90)};
    std::uniform_real_distribution<float> scale(0.01f, 0.2f);
    Graph g;
    Value* x = g.AddInput("x", MakeType(xt, d));
    Value* sx = Scale(g, "sx", scale(rng));
    Value* zx = Zp(g, "zx", xt, static_cast<int>(rng() % 41) + (xt == DType::kU8 ? 108 : -20));
    Value* zy = Zp(g, "zy", yt, yt == DType::kU8 ? 128 : 0);
    Attributes a;
    a.Set("epsilon", 1e-5f);
    Node* ln = AddNode(g, OpKind::kQLinearLayerNormalization,
                       {x, sx, zx, FloatConst(g, "gamma", d[2], rng, -2.f, 2.f), i == 4 ? nullptr : FloatConst(g, "beta", d[2], rng, -1.f, 1.f),
                        Scale(g, "sy", 0.03f), zy},
                       a);
    Node* sm = AddNode(g, OpKind::kQLinearSoftmax, {x, sx, zx, Scale(g, "sp", 1.f / 256), zy}, {});
    const Status st = InferShapes(g);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const Tensor data = RandomQ(xt, d, rng);
    CheckNode(*ln, {data}, c);
    CheckNode(*sm, {data}, c);
  }
  EXPECT_GE(c.runs, 2 * 6 * 3 * 2 * 2);
}

TEST(NpuVectorOpsTest, GroupNormMatchesReference) {
  std::mt19937 rng(47);
  Counts c;
  for (int i = 0; i < 6; ++i) {
    const DType xt = i % 2 ? DType::kU8 : DType::kI8, yt = i % 3 ? DType::kI8 : DType::kU8;
    const int64_t groups = 1 + rng() % 4, per = 1 + rng() % 5;
    const Dims d = {1 + i % 2, groups * per, static_cast<int64_t>(1 + rng() % 9), static_cast<int64_t>(1 + rng() % 9)};
    Graph g;
    Value* x = g.AddInput("x", MakeType(xt, d));
    Attributes a;
    a.Set("num_groups", i == 5 ? d[1] : groups);  // i == 5: InstanceNormalization (a group per channel)
    a.Set("epsilon", 1e-5f);
    Node* n = AddNode(g, OpKind::kQLinearGroupNormalization,
                      {x, Scale(g, "sx", 0.05f), Zp(g, "zx", xt, xt == DType::kU8 ? 120 : -7),
                       FloatConst(g, "gamma", d[1], rng, -2.f, 2.f), FloatConst(g, "beta", d[1], rng, -1.f, 1.f),
                       Scale(g, "sy", 0.04f), Zp(g, "zy", yt, yt == DType::kU8 ? 130 : 3)},
                      a);
    ASSERT_TRUE(InferShapes(g).ok());
    CheckNode(*n, {RandomQ(xt, d, rng)}, c);
  }
  EXPECT_GE(c.runs, 6 * 3 * 2 * 2);
}


// Resize of 8-bit tensors (quant/int_resize.h): nearest by integer factors (DMA replication,
// no VEC), nearest and linear with other scales and coordinate modes (VEC resize), sizes or
// scales given, u8 and i8, batch 1 and 2, odd channel counts.
TEST(NpuVectorOpsTest, ResizeMatchesReference) {
  struct Case {
    const char* mode;
    const char* coord;
    const char* nearest;
    bool replicates;  // integer factors, nearest, taps o / factor
  };
  const Case cases[] = {{"nearest", "asymmetric", "floor", true},
                        {"nearest", "half_pixel", "round_prefer_floor", false},
                        {"linear", "half_pixel", "floor", false},
                        {"linear", "align_corners", "floor", false},
                        {"linear", "pytorch_half_pixel", "floor", false},
                        {"linear", "asymmetric", "floor", false}};
  std::mt19937 rng(61);
  Counts c;
  int replicated = 0, vec_resizes = 0;
  for (int i = 0; i < 12; ++i) {
    const Case& k = cases[i % 6];
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t n = 1 + i % 4 / 3, ch = 1 + 2 * (rng() % 20), h = 1 + rng() % 7, w = 1 + rng() % 7;
    // Integer factors for the replicating case, else sizes that are not multiples.
    const int64_t oh = k.replicates ? h * (1 + rng() % 3) : 1 + rng() % 15;
    const int64_t ow = k.replicates ? w * (1 + rng() % 3) : 1 + rng() % 15;
    Graph g;
    Value* x = g.AddInput("x", MakeType(dt, {n, ch, h, w}));
    Attributes a;
    a.Set("mode", std::string(k.mode));
    a.Set("coordinate_transformation_mode", std::string(k.coord));
    a.Set("nearest_mode", std::string(k.nearest));
    Value* roi = g.AddConstant("roi", Tensor::FromVector<float>(DType::kF32, {0}, {}));
    std::vector<Value*> in = {x, roi};
    if (i % 3 == 0 && k.replicates) {  // scales
      in.push_back(g.AddConstant("scales", Tensor::FromVector<float>(DType::kF32, {4}, {1.f, 1.f, static_cast<float>(oh / h),
                                                                                       static_cast<float>(ow / w)})));
    } else {
      in.push_back(nullptr);
      in.push_back(g.AddConstant("sizes", Tensor::FromVector<int64_t>(DType::kI64, {4}, {n, ch, oh, ow})));
    }
    Node* node = AddNode(g, OpKind::kResize, in, a);
    ASSERT_TRUE(InferShapes(g).ok());
    auto vl = VectorLayerOf(*node);
    ASSERT_TRUE(vl.ok()) << vl.status().ToString();
    if (k.replicates) {
      EXPECT_TRUE(vl->resize.replicates()) << k.mode << " " << k.coord << " " << h << "x" << w << " -> " << oh
                                                       << "x" << ow;
    }
    replicated += vl->resize.replicates();
    vec_resizes += !vl->resize.replicates();
    CheckNode(*node, {RandomQ(dt, {n, ch, h, w}, rng)}, c);
  }
  EXPECT_GE(replicated, 2);
  EXPECT_GE(vec_resizes, 6);
  EXPECT_EQ(c.runs, 12 * 2 * 2 * static_cast<int>(Targets().size()));
}

// Resize by replication computes nothing: no VEC, every input byte read once, every output byte
// written once.
TEST(NpuVectorOpsTest, NearestResizeByIntegerFactorsIsDmaOnly) {
  npu::ResizeLayer l;
  l.name = "up";
  l.channels = 24, l.in_h = 5, l.in_w = 6, l.out_h = 10, l.out_w = 18;
  for (int o = 0; o < l.out_h; ++o) l.row_lo.push_back(o / 2), l.row_hi.push_back(o / 2), l.row_w.push_back(0);
  for (int o = 0; o < l.out_w; ++o) l.col_lo.push_back(o / 3), l.col_hi.push_back(o / 3), l.col_w.push_back(0);
  l.DetectReplication();
  ASSERT_TRUE(l.replicates());
  EXPECT_EQ(l.replicate_h, 2);
  EXPECT_EQ(l.replicate_w, 3);
  for (const npu::Target& t : Targets()) {
    auto p = npu::LowerResize(l, t, 2, 16, true);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto sim = npu::Simulate(*p, t);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    EXPECT_EQ(sim->total.vecs, 0);
    EXPECT_EQ(sim->total.dram_read, int64_t{5} * 6 * 24);
    EXPECT_EQ(sim->total.dram_written, int64_t{10} * 18 * 24);
  }
  l.col_w[1] = 1;  // one weight off: no longer a replication
  l.DetectReplication();
  EXPECT_FALSE(l.replicates());
}

// DepthToSpace (DCR and CRD, blocksize 1-3, batch 1-2): one strided box. A DCR shuffle moves
// rows of b·C' bytes in NHWC (no one-byte rows), the sub-pixel ConvTranspose's pixel shuffle.
TEST(NpuVectorOpsTest, DepthToSpaceMatchesReference) {
  std::mt19937 rng(61);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  Counts c;
  int dcr = 0, crd = 0;
  for (int i = 0; i < 12; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t b = U(1, 3), cp = 1 + 2 * U(0, 4);
    const Dims d = {U(1, 2), b * b * cp, U(1, 6), U(1, 6)};
    const bool is_crd = i % 3 == 2;
    Graph g;
    Attributes a;
    a.Set("blocksize", b);
    if (is_crd) a.Set("mode", std::string("CRD"));
    Node* n = AddNode(g, OpKind::kDepthToSpace, {g.AddInput("x", MakeType(dt, d))}, a);
    ASSERT_TRUE(InferShapes(g).ok()) << n->Label();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << n->Label() << ": " << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kMove);
    if (!is_crd && b > 1) {
      EXPECT_FALSE(v->move.element_rows()) << DimsToString(d) << " by " << b;
    }
    CheckNode(*n, {RandomQ(dt, d, rng)}, c);
    (is_crd ? crd : dcr) += 1;
  }
  EXPECT_GE(dcr, 6);
  EXPECT_GE(crd, 3);
}

// torch's PixelShuffle exports DepthToSpace in CRD mode: per pixel the source holds [c][i][j]
// and output row i takes [j][c], one-byte rows. The permute moves them with pitched COPYs
// (columns j, rows along w) instead of one COPY per run of 3 bytes (16384 COPYs of 17 cycles
// for ESPCN's [1, 12, 64, 64] -> [1, 3, 128, 128]); bit for bit on every target.
TEST(NpuVectorOpsTest, CrdDepthToSpaceCopiesFewRuns) {
  std::mt19937 rng(62);
  Graph g;
  Attributes a;
  a.Set("blocksize", int64_t{2});
  a.Set("mode", std::string("CRD"));
  const Dims d = {1, 12, 64, 64};
  Node* n = AddNode(g, OpKind::kDepthToSpace, {g.AddInput("x", MakeType(DType::kI8, d))}, a);
  ASSERT_TRUE(InferShapes(g).ok());
  auto v = VectorLayerOf(*n);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const npu::Target t = npu::DefaultTarget();
  auto ch = npu::ChooseMoveTiling(v->move, t, {});
  ASSERT_TRUE(ch.ok()) << ch.status().ToString();
  auto p = npu::LowerMove(v->move, t, ch->chunk, ch->double_buffer);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  int copies = 0;
  for (const npu::Instr& in : p->instrs) copies += in.op == npu::Opcode::kCopy;
  EXPECT_GT(copies, 0);
  EXPECT_LE(copies, 64 * 2 * 3) << "one COPY per input row, i and c";
  Counts c;
  CheckNode(*n, {RandomQ(DType::kI8, d, rng)}, c);
}

// GlobalMaxPool, ReduceMax and ReduceMin of 8-bit tensors as VEC max / min pools
// (lower/npu_reduce_layer.cc): over the spatial axes (I = C channels per window pixel), the
// channel axis of a 4-d tensor and the last axis of a 3-d one (I = 1), one spatial axis,
// keepdims 0 and 1, axes as an attribute or an input, u8 and i8, odd sizes; bit for bit with
// the reference on every target, single and double buffering, the tiler's tiles and one-row tiles.
TEST(NpuVectorOpsTest, MaxMinReductionsMatchReference) {
  std::mt19937 rng(63);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  Counts c;
  struct R { OpKind op; Ints axes; int64_t keep; int rank; bool axes_input; };
  const std::vector<R> rs = {
      {OpKind::kGlobalMaxPool, {}, 1, 4, false},      {OpKind::kReduceMax, {2, 3}, 1, 4, false},
      {OpKind::kReduceMin, {2, 3}, 0, 4, true},       {OpKind::kReduceMax, {1}, 1, 4, false},
      {OpKind::kReduceMin, {1}, 0, 4, false},         {OpKind::kReduceMin, {-1}, 1, 3, true},
      {OpKind::kReduceMax, {2}, 0, 3, false},         {OpKind::kReduceMax, {3}, 1, 4, false},
      {OpKind::kReduceMin, {-1, -2}, 1, 4, false},    {OpKind::kReduceMax, {1, 2, 3}, 0, 4, false},
      {OpKind::kGlobalMaxPool, {}, 1, 4, false},      {OpKind::kReduceMin, {1}, 1, 4, true}};
  int k = 0;
  for (const R& r : rs) {
    const DType dt = k % 2 ? DType::kU8 : DType::kI8;
    const Dims d = r.rank == 4 ? Dims{U(1, 2), U(1, 40), U(1, 13), U(1, 17)} : Dims{U(1, 2), U(1, 30), U(2, 70)};
    Graph g;
    Attributes a;
    std::vector<Value*> in = {g.AddInput("x", MakeType(dt, d))};
    if (r.op != OpKind::kGlobalMaxPool) {
      a.Set("keepdims", r.keep);
      if (r.axes_input) {
        in.push_back(g.AddConstant("axes", Tensor::FromVector<int64_t>(DType::kI64, {static_cast<int64_t>(r.axes.size())}, r.axes)));
      } else {
        a.Set("axes", r.axes);
      }
    }
    Node* n = AddNode(g, r.op, in, a);
    ASSERT_TRUE(InferShapes(g).ok()) << n->Label();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << n->Label() << " " << DimsToString(d) << ": " << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kPool);
    EXPECT_EQ(v->pool.min, r.op == OpKind::kReduceMin);
    CheckNode(*n, {RandomQ(dt, d, rng)}, c);
    ++k;
  }
}

// ArgMax / ArgMin over the channels of a 4-d tensor (a segmentation net's class map) and the
// last axis of a 3-d one, keepdims 0 and 1, select_last_index 0 and 1, u8 and i8; the inputs
// are drawn from a few values so that ties are common (the first or the last index wins); bit
// for bit (int64 indices) with the reference on every target and buffering.
TEST(NpuVectorOpsTest, ArgMaxArgMinMatchReferenceWithTies) {
  std::mt19937 rng(64);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  Counts c;
  int ties = 0;
  for (int i = 0; i < 16; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const bool four = i % 4 != 3;
    const Dims d = four ? Dims{U(1, 2), U(1, 21), U(1, 9), U(1, 11)} : Dims{U(1, 2), U(1, 7), U(1, 40)};
    Graph g;
    Attributes a;
    a.Set("axis", four ? int64_t{1} : int64_t{-1});
    a.Set("keepdims", int64_t{i % 3 != 0});
    a.Set("select_last_index", int64_t{(i / 2) % 2});
    Node* n = AddNode(g, i % 5 == 4 ? OpKind::kArgMin : OpKind::kArgMax, {g.AddInput("x", MakeType(dt, d))}, a);
    ASSERT_TRUE(InferShapes(g).ok()) << n->Label();
    Tensor x = RandomQ(dt, d, rng);
    auto* b = static_cast<uint8_t*>(x.raw());
    const uint8_t few[] = {0x00, 0x7f, 0x80, 0xff};  // the extremes of both dtypes, often equal
    for (int64_t k = 0; k < x.numel(); ++k) b[k] = few[rng() % 4];
    ties += x.numel() > 8;
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << n->Label() << " " << DimsToString(d) << ": " << v.status().ToString();
    ASSERT_EQ(v->kind, VectorLayer::Kind::kArgMax);
    CheckNode(*n, {x}, c);
  }
  EXPECT_GE(ties, 8);
}

// ArgMax over an axis that is not innermost in the NPU layout is refused with the reason.
TEST(NpuVectorOpsTest, ArgMaxOverOtherAxisIsRefused) {
  Graph g;
  Attributes a;
  a.Set("axis", int64_t{2});
  Node* n = AddNode(g, OpKind::kArgMax, {g.AddInput("x", MakeType(DType::kI8, {1, 8, 5, 6}))}, a);
  ASSERT_TRUE(InferShapes(g).ok());
  auto v = VectorLayerOf(*n);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("over axis 2"), std::string::npos) << v.status().ToString();
}

// A reduction whose kept dims change their byte order (keepdims 0 over H of a 4-d tensor:
// NHWC [N, W, C] bytes against a row-major [N, C, W] output) is refused with the reason.
TEST(NpuVectorOpsTest, ReductionThatReordersIsRefused) {
  Graph g;
  Attributes a;
  a.Set("keepdims", int64_t{0});
  a.Set("axes", Ints{2});
  Node* n = AddNode(g, OpKind::kReduceMax, {g.AddInput("x", MakeType(DType::kI8, {1, 8, 5, 6}))}, a);
  ASSERT_TRUE(InferShapes(g).ok());
  auto v = VectorLayerOf(*n);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("reorders the kept dims"), std::string::npos) << v.status().ToString();
}

// MaxPool with ceil_mode (ISNet's RSU blocks: 2×2 stride 2 on odd sizes): the last window
// reaches past the input and the NPU pads it with −128; bit for bit with the reference.
TEST(NpuVectorOpsTest, CeilModeMaxPoolMatchesReference) {
  std::mt19937 rng(67);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  Counts c;
  int past_the_end = 0;
  for (int i = 0; i < 10; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t k = U(2, 3), s = U(2, 3), p = i % 3 == 2 ? 1 : 0;
    const Dims d = {U(1, 2), 1 + 2 * U(0, 10), k + U(0, 8), k + U(0, 8)};
    Graph g;
    Attributes a;
    a.Set("kernel_shape", Ints{k, k});
    a.Set("strides", Ints{s, s});
    a.Set("pads", Ints{p, p, p, p});
    a.Set("ceil_mode", int64_t{1});
    Node* n = AddNode(g, OpKind::kMaxPool, {g.AddInput("x", MakeType(dt, d))}, a);
    ASSERT_TRUE(InferShapes(g).ok()) << n->Label();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << n->Label() << ": " << v.status().ToString();
    const Dims& y = n->output(0)->type.dims;
    ASSERT_EQ(v->pool.out_h(), y[2]);
    ASSERT_EQ(v->pool.out_w(), y[3]);
    past_the_end += (y[2] - 1) * s + k > d[2] + 2 * p || (y[3] - 1) * s + k > d[3] + 2 * p;
    CheckNode(*n, {RandomQ(dt, d, rng)}, c);
  }
  EXPECT_GE(past_the_end, 5);
}

// QLinearAveragePool: padding (count_include_pad 0 and 1), ceil_mode, strides larger than the
// kernel, one-row and one-column images, u8 and i8, a fused clamp. One multiplier when every
// window has the same divisor, else one per output pixel (each row tile loads its rows'); bit
// for bit with the reference's fixed-point mode on every target and buffering, with the
// tiler's tiles and one-row tiles.
TEST(NpuVectorOpsTest, AveragePoolMatchesReference) {
  std::mt19937 rng(71);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  Counts c;
  int per_pixel = 0, one = 0, past_the_end = 0;
  for (int i = 0; i < 16; ++i) {
    const DType xt = i % 2 ? DType::kU8 : DType::kI8, yt = i % 3 ? DType::kU8 : DType::kI8;
    const bool ceil = i % 4 >= 2, include = i % 3 == 1;
    const int64_t kh = U(1, 3), kw = U(1, 3), sh = U(ceil ? 2 : 1, kh + 1), sw = U(ceil ? 2 : 1, kw + 1);
    const int64_t pt = U(0, kh - 1), pl = U(0, kw - 1), pb = U(0, kh - 1), pr = U(0, kw - 1);
    Dims d = {U(1, 2), 1 + 2 * U(0, 12), kh + U(0, 8), kw + U(0, 8)};
    if (i % 5 == 3 && kh == 1) d[2] = 1;  // one row
    if (i % 5 == 4 && kw == 1) d[3] = 1;  // one column
    // ceil_mode: the padded rows one past a whole number of strides, so a last window starts
    // inside the input and reaches past the end pads.
    if (ceil) d[2] += (1 - (d[2] + pt + pb - kh) % sh + sh) % sh;
    Graph g;
    Attributes a = FixedPoint();
    a.Set("kernel_shape", Ints{kh, kw});
    a.Set("strides", Ints{sh, sw});
    a.Set("pads", Ints{pt, pl, pb, pr});
    a.Set("ceil_mode", int64_t{ceil});
    a.Set("count_include_pad", int64_t{include});
    if (i % 4 == 1) a.Set("edgec_qmin", int64_t{yt == DType::kU8 ? 100 : -20});  // a fused ReLU
    Node* n = AddNode(g, OpKind::kQLinearAveragePool,
                      {g.AddInput("x", MakeType(xt, d)), Scale(g, "sx", 0.01f * U(1, 9)), Zp(g, "zx", xt, xt == DType::kU8 ? U(0, 255) : U(-128, 127)),
                       Scale(g, "sy", 0.007f * U(1, 9)), Zp(g, "zy", yt, yt == DType::kU8 ? U(0, 255) : U(-128, 127))},
                      a);
    ASSERT_TRUE(InferShapes(g).ok()) << n->Label();
    auto v = VectorLayerOf(*n);
    ASSERT_TRUE(v.ok()) << n->Label() << ": " << v.status().ToString();
    (v->pool.pixel_mult.empty() ? one : per_pixel) += 1;
    const Dims& y = n->output(0)->type.dims;
    past_the_end += ceil && ((y[2] - 1) * sh + kh > d[2] + pt + pb || (y[3] - 1) * sw + kw > d[3] + pl + pr);
    CheckNode(*n, {RandomQ(xt, d, rng)}, c);
  }
  EXPECT_GE(per_pixel, 6);
  EXPECT_GE(one, 2);
  EXPECT_GE(past_the_end, 2);
}

// The inception branch's 3x3 s1 p1 pool without the padding in the divisor: the corners
// divide by 4, the edges by 6, the interior by 9 (three multipliers over the plane).
TEST(NpuVectorOpsTest, AveragePoolExcludingPaddingHasTheBordersDivisors) {
  Graph g;
  Attributes a = FixedPoint();
  a.Set("kernel_shape", Ints{3, 3});
  a.Set("pads", Ints{1, 1, 1, 1});
  Node* n = AddNode(g, OpKind::kQLinearAveragePool,
                    {g.AddInput("x", MakeType(DType::kU8, {1, 24, 6, 5})), Scale(g, "sx", 0.02f), Zp(g, "zx", DType::kU8, 128),
                     Scale(g, "sy", 0.02f), Zp(g, "zy", DType::kU8, 128)},
                    a);
  ASSERT_TRUE(InferShapes(g).ok());
  auto v = VectorLayerOf(*n);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const auto& m = v->pool.pixel_mult;
  ASSERT_EQ(m.size(), 30u);
  // x_scale / y_scale = 1: the multipliers are 1/4, 1/6, 1/9.
  EXPECT_NEAR(m[0].Real(), 1.0 / 4, 1e-9);
  EXPECT_NEAR(m[1].Real(), 1.0 / 6, 1e-9);
  EXPECT_NEAR(m[6].Real(), 1.0 / 9, 1e-9);
  EXPECT_NEAR(m[29].Real(), 1.0 / 4, 1e-9);
  std::mt19937 rng(73);
  Counts c;
  CheckNode(*n, {RandomQ(DType::kU8, {1, 24, 6, 5}, rng)}, c);
}

TEST(NpuVectorOpsTest, AveragePoolWithDilationsIsRefusedByName) {
  Graph g;
  Attributes a = FixedPoint();
  a.Set("kernel_shape", Ints{2, 2});
  a.Set("dilations", Ints{2, 2});
  Node* n = AddNode(g, OpKind::kQLinearAveragePool,
                    {g.AddInput("x", MakeType(DType::kI8, {1, 4, 7, 7})), Scale(g, "sx", 0.02f), Zp(g, "zx", DType::kI8, 0),
                     Scale(g, "sy", 0.02f), Zp(g, "zy", DType::kI8, 0)},
                    a);
  ASSERT_TRUE(InferShapes(g).ok());
  auto v = VectorLayerOf(*n);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("dilations [2, 2]"), std::string::npos) << v.status().message();
}

}  // namespace
}  // namespace edgec::lower
