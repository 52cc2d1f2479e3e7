// A chain of more than two moves as one copy (lower::AbsorbedInto): attention's qkv split as a
// channel Slice of an NHWC image, the head Reshape, the 3-d Reshape and the head Transpose
// (passes/gather_as_slice.cc leaves this), on seeded shapes, u8 and i8. Every node but the
// last is a view; the last one's layer copies from the Slice's input, rows of d bytes (no
// one-byte rows), is lowered with the tiler's chunk and a small one, run by the functional
// simulator on every target, single and double buffered, and must equal the reference
// kernels of the four nodes one after the other bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ir/infer.h"
#include "lower/npu_layers.h"
#include "npu/sim.h"
#include "npu/target.h"
#include "partition/partition.h"
#include "npu/vector_tiler.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;

struct Chain {
  Graph g;
  std::vector<Node*> nodes;
};

// x [1, parts·heads·d, h, w] -> Slice(channels of part k) -> [1, heads, d, h·w] -> [heads, d, h·w]
// -> Transpose(0, 2, 1) when `transpose` -> graph output.
Chain MakeChain(DType dt, int64_t parts, int64_t k, int64_t heads, int64_t d, int64_t h, int64_t w, bool transpose) {
  Chain c;
  Graph& g = c.g;
  Value* x = g.AddInput("x", MakeType(dt, {1, parts * heads * d, h, w}));
  auto ints = [&](Ints v) { return g.AddConstant(g.FreshName("i"), Tensor::VectorI64(v)); };
  c.nodes.push_back(g.AddNode(OpKind::kSlice, "slice", std::vector<Value*>{x, ints({k * heads * d}),
                                                                          ints({(k + 1) * heads * d}), ints({1})}, 1));
  c.nodes.push_back(g.AddNode(OpKind::kReshape, "heads", std::vector<Value*>{c.nodes.back()->output(0), ints({1, heads, d, h * w})}, 1));
  c.nodes.push_back(g.AddNode(OpKind::kReshape, "to_3d", std::vector<Value*>{c.nodes.back()->output(0), ints({heads, d, h * w})}, 1));
  if (transpose) {
    c.nodes.push_back(g.AddNode(OpKind::kTranspose, "t", std::vector<Value*>{c.nodes.back()->output(0)}, 1));
    c.nodes.back()->attrs.Set("perm", Ints{0, 2, 1});
  }
  g.MarkOutput(c.nodes.back()->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return c;
}

std::vector<npu::Target> Targets() {
  auto t = npu::ListTargets();
  EXPECT_TRUE(t.ok() && t->size() >= 3u) << "targets/*.json";
  return t.ok() ? *t : std::vector<npu::Target>{};
}

void CheckChain(const Chain& c, std::mt19937& rng) {
  const Value* x = c.g.inputs()[0];
  for (size_t i = 0; i + 1 < c.nodes.size(); ++i) ASSERT_EQ(AbsorbedInto(*c.nodes[i]), c.nodes[i + 1]) << PrintGraph(c.g);
  const Node& last = *c.nodes.back();
  EXPECT_EQ(AbsorbedInto(last), nullptr);
  auto m = MoveLayerOf(last);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->input_bytes[0], NumElements(x->type.dims));
  EXPECT_FALSE(m->element_rows()) << "the chain moves whole rows of d bytes\n" << PrintGraph(c.g);
  const Tensor data = RandomQ(x->type.dtype, x->type.dims, rng);
  Tensor want = data;
  for (const Node* n : c.nodes) {
    std::vector<const Tensor*> in = {&want};
    for (int i = 1; i < n->num_inputs(); ++i) in.push_back(&n->input(i)->constant());
    auto y = EvaluateNode(*n, in);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    want = (*y)[0];
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
          if (r.name == last.name() + ".input") in = &r;
          if (r.name == last.name() + ".output") out = &r;
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
        const Tensor got = *FromNpu(dram.data() + out->addr, last.output(0)->type);
        ASSERT_EQ(std::memcmp(got.raw(), want.raw(), got.nbytes()), 0)
            << PrintGraph(c.g) << " on " << t.name << (db ? " double" : " single") << " chunk " << chunk;
        EXPECT_EQ(sim->total.dram_written, m->bytes());
      }
    }
}

TEST(NpuSplitChainTest, QkvSliceReshapesAndTransposeAreOneCopy) {
  std::mt19937 rng(31);
  auto U = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  for (int i = 0; i < 12; ++i) {
    const DType dt = i % 2 ? DType::kU8 : DType::kI8;
    const int64_t parts = U(2, 3), k = U(0, static_cast<int>(parts) - 1), heads = U(1, 4), d = U(2, 9), h = U(2, 5),
                  w = U(2, 5);
    SCOPED_TRACE(fmt::format("case {}: part {} of {} heads {} d {} h {} w {}", i, k, parts, heads, d, h, w));
    CheckChain(MakeChain(dt, parts, k, heads, d, h, w, true), rng);
  }
}

TEST(NpuSplitChainTest, ChainWithAReaderInsideIsNotOneCopy) {
  Chain c = MakeChain(DType::kI8, 3, 1, 2, 4, 3, 3, true);
  EXPECT_EQ(AbsorbedInto(*c.nodes[0]), c.nodes[1]);
  c.g.MarkOutput(c.nodes[1]->output(0));  // the heads value is read outside the chain
  EXPECT_EQ(AbsorbedInto(*c.nodes[0]), nullptr) << "the slice must hold its own bytes";
}

// Two chains over one image, the second's Slice between the first's Slice and Reshape in graph
// order: the chains are views only inside one NPU segment, so pinning that Slice to the CPU
// (which splits the first chain's segment) sends the first chain to the CPU too; unpinned,
// both chains are on the NPU, every node but the last a view.
TEST(NpuSplitChainTest, ChainSplitBySegmentsRunsOnTheCpu) {
  Graph g;
  Node* pool = g.AddNode(OpKind::kMaxPool, "pool", std::vector<Value*>{g.AddInput("in", MakeType(DType::kI8, {1, 16, 8, 8}))}, 1);
  pool->attrs.Set("kernel_shape", Ints{2, 2});
  pool->attrs.Set("strides", Ints{2, 2});
  Value* x = pool->output(0);  // the image, computed on the NPU
  auto ints = [&](Ints v) { return g.AddConstant(g.FreshName("i"), Tensor::VectorI64(v)); };
  auto slice = [&](const std::string& name, int64_t k) {
    return g.AddNode(OpKind::kSlice, name, std::vector<Value*>{x, ints({8 * k}), ints({8 * k + 8}), ints({1})}, 1);
  };
  Node* a = slice("a_slice", 0);
  Node* b = slice("b_slice", 1);
  std::vector<Node*> last;
  for (Node* s : {a, b}) {
    const std::string p = s->name().substr(0, 1);
    Node* r = g.AddNode(OpKind::kReshape, p + "_heads", std::vector<Value*>{s->output(0), ints({1, 2, 4, 16})}, 1);
    Node* r3 = g.AddNode(OpKind::kReshape, p + "_to_3d", std::vector<Value*>{r->output(0), ints({2, 4, 16})}, 1);
    Node* t = g.AddNode(OpKind::kTranspose, p + "_t", std::vector<Value*>{r3->output(0)}, 1);
    t->attrs.Set("perm", Ints{0, 2, 1});
    g.MarkOutput(t->output(0));
    last.push_back(t);
  }
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_TRUE(g.TopoSort().ok());
  ASSERT_TRUE(InLongerChain(*a));
  auto unit_of = [](const std::vector<partition::NodePlacement>& ps, const std::string& name) {
    for (const auto& p : ps)
      if (p.node->name() == name) return p.unit;
    ADD_FAILURE() << name;
    return artifact_io::Unit::kCpu;
  };
  partition::PartitionOptions o;
  o.cost_rule = false;
  auto free = partition::Partition(g, npu::DefaultTarget(), o);
  ASSERT_TRUE(free.ok()) << free.status().ToString();
  for (const char* n : {"a_slice", "a_heads", "a_to_3d", "a_t", "b_slice", "b_t"})
    EXPECT_EQ(unit_of(*free, n), artifact_io::Unit::kNpu) << n;
  o.pins["b_slice"] = artifact_io::Unit::kCpu;
  auto pinned = partition::Partition(g, npu::DefaultTarget(), o);
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  // b_slice sits between a_slice and a_heads in graph order (a_slice, b_slice, a_heads, ...).
  for (const char* n : {"a_slice", "a_heads", "a_to_3d", "a_t"}) EXPECT_EQ(unit_of(*pinned, n), artifact_io::Unit::kCpu) << n;
}

}  // namespace
}  // namespace edgec::lower
