// Two data movement nodes as one copy (lower::AbsorbedInto): the head and token reshapes of
// attention next to a transpose, on seeded shapes, u8 and i8. The composed layer (from the
// first node's input) is lowered with the tiler's chunk and a small one, run by the functional
// simulator on every target, single and double buffered, and must equal the reference kernels
// of both nodes one after the other bit for bit; the token reshapes are views (no copy), the
// head transposes move rows of d bytes (no one-byte rows), every byte read and written once.
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

struct Pair {
  Graph g;
  Node* p = nullptr;
  Node* n = nullptr;
};

Node* Move(Graph& g, Value* x, const Dims& shape_or_perm, bool transpose) {
  Node* n;
  if (transpose) {
    n = g.AddNode(OpKind::kTranspose, g.FreshName("t"), std::vector<Value*>{x}, 1);
    n->attrs.Set("perm", Ints(shape_or_perm));
  } else {
    Value* s = g.AddConstant(g.FreshName("shape"), Tensor::VectorI64(shape_or_perm));
    n = g.AddNode(OpKind::kReshape, g.FreshName("r"), std::vector<Value*>{x, s}, 1);
  }
  return n;
}

// x -> first -> second -> graph output.
Pair MakePair(DType dt, const Dims& x, const Dims& a, bool a_transpose, const Dims& b, bool b_transpose) {
  Pair r;
  Value* in = r.g.AddInput("x", MakeType(dt, x));
  r.p = Move(r.g, in, a, a_transpose);
  r.n = Move(r.g, r.p->output(0), b, b_transpose);
  r.g.MarkOutput(r.n->output(0));
  EXPECT_TRUE(InferShapes(r.g).ok());
  return r;
}

std::vector<npu::Target> Targets() {
  auto t = npu::ListTargets();
  EXPECT_TRUE(t.ok() && t->size() >= 3u) << "targets/*.json";
  return t.ok() ? *t : std::vector<npu::Target>{};
}

// Runs the composed layer on every target and buffering; returns whether it was a view.
void CheckPair(const Pair& pr, std::mt19937& rng, bool want_view) {
  const Value* x = pr.g.inputs()[0];
  ASSERT_EQ(AbsorbedInto(*pr.p), pr.n) << PrintGraph(pr.g);
  auto m = MoveLayerOf(*pr.n);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->identity(), want_view) << PrintGraph(pr.g);
  EXPECT_FALSE(m->element_rows()) << "the pair moves whole rows of d bytes\n" << PrintGraph(pr.g);
  const Tensor data = RandomQ(x->type.dtype, x->type.dims, rng);
  auto mid = EvaluateNode(*pr.p, {&data, pr.p->input(1) ? &pr.p->input(1)->constant() : nullptr});
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  auto want = EvaluateNode(*pr.n, {&(*mid)[0], pr.n->input(1) ? &pr.n->input(1)->constant() : nullptr});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  if (want_view) {  // the DRAM bytes of x are those of the output
    EXPECT_EQ(ToNpu(data), ToNpu((*want)[0]));
    return;
  }
  for (const npu::Target& t : Targets())
    for (bool db : {false, true}) {
      npu::TilerOptions opt;
      opt.allow_double = db;
      auto ch = npu::ChooseMoveTiling(*m, t, opt);
      ASSERT_TRUE(ch.ok()) << ch.status().ToString();
      for (int64_t chunk : {ch->chunk, int64_t{64}}) {
        auto prog = npu::LowerMove(*m, t, chunk, db);
        ASSERT_TRUE(prog.ok()) << prog.status().ToString();
        const npu::DramRegion *in = nullptr, *out = nullptr;
        for (const auto& r : prog->regions) {
          if (r.name == pr.n->name() + ".input") in = &r;
          if (r.name == pr.n->name() + ".output") out = &r;
        }
        ASSERT_TRUE(in && out);
        std::vector<uint8_t> dram(prog->dram_bytes, 0x5A);
        std::copy(prog->dram_init.begin(), prog->dram_init.end(), dram.begin());
        const std::vector<uint8_t> b = ToNpu(data);
        ASSERT_EQ(static_cast<int64_t>(b.size()), in->bytes);
        std::copy(b.begin(), b.end(), dram.begin() + in->addr);
        npu::SimOptions so;
        so.functional = true;
        so.dram = &dram;
        auto sim = npu::Simulate(*prog, t, so);
        ASSERT_TRUE(sim.ok()) << sim.status().ToString();
        const Tensor got = *FromNpu(dram.data() + out->addr, pr.n->output(0)->type);
        ASSERT_EQ(std::memcmp(got.raw(), (*want)[0].raw(), got.nbytes()), 0)
            << PrintGraph(pr.g) << " on " << t.name << (db ? " double" : " single") << " chunk " << chunk;
        EXPECT_GE(sim->total.cycles + 1e-6, sim->total.roofline_cycles(t));
        EXPECT_EQ(sim->total.dram_read, m->bytes());
        EXPECT_EQ(sim->total.dram_written, m->bytes());
      }
    }
}

TEST(NpuMoveChainTest, HeadAndTokenReshapesAroundATransposeAreOneCopy) {
  std::mt19937 rng(29);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  for (int i = 0; i < 12; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t heads = U(2, 4), d = U(3, 9), h = U(2, 5), w = U(2, 5), c = heads * d, s = h * w;
    SCOPED_TRACE(fmt::format("case {}: heads {} d {} h {} w {}", i, heads, d, h, w));
    switch (i % 4) {
      case 0:  // NHWC image -> tokens [1, HW, C]: the same bytes
        CheckPair(MakePair(dt, {1, c, h, w}, {1, c, s}, false, {0, 2, 1}, true), rng, true);
        break;
      case 1:  // tokens -> NHWC image
        CheckPair(MakePair(dt, {1, s, c}, {0, 2, 1}, true, {1, c, h, w}, false), rng, true);
        break;
      case 2:  // NHWC image -> heads [heads, HW, d]: rows of d bytes
        CheckPair(MakePair(dt, {1, c, h, w}, {heads, d, s}, false, {0, 2, 1}, true), rng, false);
        break;
      case 3:  // heads [heads, HW, d] -> NHWC image
        CheckPair(MakePair(dt, {heads, s, d}, {0, 2, 1}, true, {1, c, h, w}, false), rng, false);
        break;
    }
  }
}

TEST(NpuMoveChainTest, OnlyPairsWhoseMiddleValueHasOneReader) {
  Pair pr = MakePair(DType::kI8, {1, 6, 2, 3}, {1, 6, 6}, false, {0, 2, 1}, true);
  EXPECT_EQ(AbsorbedInto(*pr.p), pr.n);
  EXPECT_EQ(AbsorbedInto(*pr.n), nullptr);
  pr.g.MarkOutput(pr.p->output(0));  // the middle value is read outside the pair
  EXPECT_EQ(AbsorbedInto(*pr.p), nullptr);
  auto own = MoveLayerOf(*pr.n);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->input_bytes[0], 36);
  EXPECT_FALSE(own->identity()) << "alone the transpose reorders the bytes";
}

}  // namespace
}  // namespace edgec::lower
