// Max / min reductions of int8 tensors in an NPU segment (lower/npu_reduce_layer.cc): conv 3x3
// -> relu -> GlobalMaxPool / ReduceMax / ReduceMin over H and W (inserted on the integer
// graph: they keep the values, so the scale is the relu's) -> conv 1x1; and conv -> relu ->
// conv -> ArgMax / ArgMin over the channels (int64 indices, a second graph output). The
// reduction joins the convs' segment by cost, and npu-sim equals the CPU and the reference
// kernels bit for bit, every output, on every target in targets/.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "npu/segment.h"
#include "npu/sim.h"
#include "runtime/artifact_run.h"
#include "runtime/reference_executor.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;

// With op ArgMax / ArgMin: the reduction reads conv2's int8 output instead (the class map of a
// segmentation net) and is a second graph output (int64 indices); conv2's input is the relu's.
Graph ReducedChain(OpKind op, int h, int w) {
  using testing_quant::Add;
  using testing_quant::Normal;
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, h, w}));
  Attributes p1;
  p1.Set("pads", Ints{1, 1, 1, 1});
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({24, 8, 3, 3}, 61, 0.2)),
                                    g.AddConstant("b1", Normal({24}, 62, 0.1))}, p1, "conv1");
  Value* r = Add(g, OpKind::kRelu, {a}, {}, "relu");
  Value* y = Add(g, OpKind::kConv, {r, g.AddConstant("w2", Normal({16, 24, 1, 1}, 63, 0.1)),
                                    g.AddConstant("b2", Normal({16}, 64, 0.1))}, {}, "conv2");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  Graph q = testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, h, w}, 700, 4, DType::kI8);
  Node* conv2 = nullptr;
  for (Node* n : q.nodes())
    if (n->op() == OpKind::kQLinearConv && n->name().find("conv2") != std::string::npos) conv2 = n;
  EXPECT_NE(conv2, nullptr);
  if (!conv2) return q;
  if (op == OpKind::kArgMax || op == OpKind::kArgMin) {
    Node* am = q.AddNode(op, "reduce", {conv2->output(0)}, 1, {"reduce.y"});
    am->attrs.Set("axis", int64_t{1});
    am->attrs.Set("select_last_index", int64_t{op == OpKind::kArgMin});
    q.MarkOutput(am->output(0));
    EXPECT_TRUE(q.TopoSort().ok());
    EXPECT_TRUE(InferShapes(q).ok());
    return q;
  }
  Node* red = q.AddNode(op, "reduce", {conv2->input(0)}, 1, {"reduce.y"});
  if (op != OpKind::kGlobalMaxPool) red->attrs.Set("axes", Ints{2, 3});
  q.SetInput(conv2, 0, red->output(0));
  EXPECT_TRUE(q.TopoSort().ok());
  EXPECT_TRUE(InferShapes(q).ok());
  return q;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(NpuReduceSegmentTest, PlacedOnTheNpuBetweenConvsAndBitExact) {
  auto targets = npu::ListTargets();
  ASSERT_TRUE(targets.ok() && targets->size() >= 3u);
  int k = 0;
  for (OpKind op : {OpKind::kGlobalMaxPool, OpKind::kReduceMax, OpKind::kReduceMin, OpKind::kArgMax, OpKind::kArgMin}) {
    const int h = 17 + 2 * k, w = 23 - 3 * k;
    const Graph g = ReducedChain(op, h, w);
    const Tensor x = testing_quant::Normal({1, 8, h, w}, 65 + k);
    for (const npu::Target& t : *targets) {
      const std::string tag = fmt::format("{} on {}", OpName(op), t.name);
      Graph copy = g.Clone();
      auto r = CompileGraph(copy, t, "reduce", {});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      bool seen = false;
      for (const auto& pl : r->model.placements) {
        if (pl.node != "reduce") continue;
        seen = true;
        if (t.name == "edge-mcu") {  // edge-mcu keeps its minimal op list
          EXPECT_EQ(pl.unit, artifact_io::Unit::kCpu) << tag;
          EXPECT_NE(pl.reason.find("unsupported op"), std::string::npos) << tag << ": " << pl.reason;
        } else {
          EXPECT_EQ(pl.unit, artifact_io::Unit::kNpu) << tag << ": " << pl.reason;
        }
      }
      EXPECT_TRUE(seen) << tag;
      const std::string path =
          (std::filesystem::temp_directory_path() / fmt::format("npu_reduce_{}_{}.edgec", k, t.name)).string();
      ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
      auto f = artifact_io::MappedArtifact::Open(path);
      ASSERT_TRUE(f.ok());
      auto l = LoadArtifact(**f);
      ASSERT_TRUE(l.ok()) << l.status().ToString();
      int npu_segments = 0;
      for (const auto& s : l->meta.segments) npu_segments += s.unit == artifact_io::Unit::kNpu;
      if (t.name != "edge-mcu") {
        EXPECT_EQ(npu_segments, 1) << tag << ": the reduction splits the segment";
      }
      const std::map<std::string, Tensor> in = {{"x", x}};
      auto sim = RunArtifact(*l, ArtifactDevice::kNpuSim, in);
      auto cpu = RunArtifact(*l, ArtifactDevice::kCpu, in);
      Graph fixed = g.Clone();
      for (Node* n : fixed.nodes())
        if (n->op() == OpKind::kQLinearConv) n->attrs.Set("edgec_requant", std::string("fixed_point"));
      auto ref = ReferenceExecutor(fixed).Run(in);
      ASSERT_TRUE(sim.ok()) << sim.status().ToString();
      ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
      ASSERT_TRUE(ref.ok()) << ref.status().ToString();
      ASSERT_EQ(sim->outputs.size(), ref->size());
      ASSERT_EQ(cpu->outputs.size(), ref->size());
      for (size_t o = 0; o < ref->size(); ++o) {
        EXPECT_TRUE(SameBytes(sim->outputs[o], cpu->outputs[o])) << tag << ": npu-sim != cpu, output " << o;
        // The reference requantizes as the NPU does; on edge-mcu the CPU's part runs its own
        // requantization, so only npu-sim == cpu holds there.
        if (t.name != "edge-mcu") {
          EXPECT_TRUE(SameBytes(sim->outputs[o], (*ref)[o])) << tag << ": npu-sim != the reference kernels, output " << o;
        }
      }
      std::filesystem::remove(path);
    }
    ++k;
  }
}

}  // namespace
}  // namespace edgec::lower
