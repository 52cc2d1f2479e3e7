// The CPU-island rule (lower/npu_islands.h) and moves absorbed into their reader: a Transpose
// read only as the right operand of an activation x activation QLinearMatMul is absorbed into
// it (its NPU layer reads the transpose's input through strides), so the two run on one unit.
// When the partition sent both to the CPU, the island rule must not move the MatMul alone onto
// the NPU (a move is never an island candidate): the NPU layer would read the CPU's transposed
// tensor as if it were the untransposed one. Found on sd_unet --int16 all for an edge-mcu
// that declares i16, whose npu-sim output differed from the CPU's.
#include <gtest/gtest.h>

#include <random>

#include "ir/infer.h"
#include "lower/npu_islands.h"
#include "lower/npu_layers.h"
#include "partition/partition.h"
#include "random_q.h"

namespace edgec::lower {
namespace {

Value* Z8(Graph& g, const std::string& n) { return g.AddConstant(n, Tensor::FromVector<int8_t>(DType::kI8, {}, {0})); }
Value* S(Graph& g, const std::string& n, float v) { return g.AddConstant(n, Tensor::Scalar(v)); }

Node* MatMul(Graph& g, const std::string& name, Value* a, Value* b) {
  Node* n = g.AddNode(OpKind::kQLinearMatMul, name,
                      {a, S(g, name + ".sa", 0.02f), Z8(g, name + ".za"), b, S(g, name + ".sb", 0.02f),
                       Z8(g, name + ".zb"), S(g, name + ".sy", 0.05f), Z8(g, name + ".zy")},
                      1, {name + ":0"});
  n->attrs.Set("edgec_requant", std::string("fixed_point"));
  return n;
}

TEST(NpuIslandsTest, IslandsKeepAnAbsorbedMoveWithItsReader) {
  std::mt19937 rng(2950);
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kI8, {4, 16, 8}));
  Value* k = g.AddInput("k", MakeType(DType::kI8, {4, 16, 8}));
  Node* kt = g.AddNode(OpKind::kTranspose, "k_t", {k}, 1, {"k_t:0"});  // first in graph order
  kt->attrs.Set("perm", std::vector<int64_t>{0, 2, 1});
  Node* pre = MatMul(g, "pre", x, g.AddConstant("w1", RandomQ(DType::kI8, {8, 8}, rng)));
  Node* ctx = MatMul(g, "ctx", pre->output(0), kt->output(0));
  Node* post = MatMul(g, "post", ctx->output(0), g.AddConstant("w2", RandomQ(DType::kI8, {16, 8}, rng)));
  g.MarkOutput(post->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  ASSERT_EQ(AbsorbedInto(*kt), ctx) << "the transpose is not absorbed into its MatMul: no test";
  auto t = npu::LoadTarget("edge-default");
  ASSERT_TRUE(t.ok());
  partition::PartitionOptions o;
  o.cost_rule = false;
  auto ps = partition::Partition(g, *t, o);
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  // The partition's outcome when the pair is cheaper on the CPU: both there, by cost; the
  // MatMul's CPU time made large so that its segment would win were it a candidate.
  for (partition::NodePlacement& p : *ps) {
    ASSERT_TRUE(p.legal) << p.node->name() << ": " << p.reason;
    if (p.node != kt && p.node != ctx) continue;
    p.unit = artifact_io::Unit::kCpu;
    p.code = partition::ReasonCode::kCpuCheaper;
    p.cpu_s = p.node == ctx ? 1.0 : 0.0;
  }
  o.cost_rule = true;
  ASSERT_TRUE(PlaceIslandsBySegmentTime(*ps, *t, o).ok());
  for (const partition::NodePlacement& p : *ps) {
    if (p.node == kt || p.node == ctx) EXPECT_EQ(p.unit, artifact_io::Unit::kCpu) << p.node->name() << ": " << p.reason;
    if (p.node == pre || p.node == post) EXPECT_EQ(p.unit, artifact_io::Unit::kNpu) << p.node->name();
  }
}

}  // namespace
}  // namespace edgec::lower
