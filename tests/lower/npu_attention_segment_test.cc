// Attention inside a compiled NPU segment (lower/npu_attention.h): a quantized self-attention
// x -> K = x·Wk, V = x·Wv -> softmax(x·Kᵀ)·V compiled for edge-default with every node on the
// NPU. The segment is built with the chain fused and unfused and keeps the faster; either way
// npu-sim equals the CPU's int8 kernels bit for bit. With 1024 keys the scores (2 MiB per
// copy) cannot stay in SRAM unfused, and the fused layer, whose scores live in row blocks, is
// the one kept: the scores never reach DRAM.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "runtime/artifact_run.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using testing_quant::Add;
using testing_quant::Normal;

Graph SelfAttention(int64_t heads, int64_t seq, int64_t d) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {heads, seq, d}));
  Value* k = Add(g, OpKind::kMatMul, {x, g.AddConstant("wk", Normal({d, d}, 31, 0.3))}, {}, "key");
  Value* v = Add(g, OpKind::kMatMul, {x, g.AddConstant("wv", Normal({d, d}, 32, 0.3))}, {}, "value");
  Attributes perm;
  perm.Set("perm", std::vector<int64_t>{0, 2, 1});
  Value* kt = Add(g, OpKind::kTranspose, {k}, perm, "k_transposed");
  Value* s = Add(g, OpKind::kMatMul, {x, kt}, {}, "scores");
  Attributes axis;
  axis.Set("axis", int64_t{-1});
  Value* p = Add(g, OpKind::kSoftmax, {s}, axis, "probs");
  Value* o = Add(g, OpKind::kMatMul, {p, v}, {}, "context");
  g.MarkOutput(o);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {heads, seq, d}, 300, 3, DType::kI8);
}

TEST(NpuAttentionSegmentTest, FusedOrNotTheSegmentIsBitExact) {
  const npu::Target& t = npu::DefaultTarget();
  for (int64_t seq : {48, 1024}) {
    Graph g = SelfAttention(2, seq, 16);
    partition::PartitionOptions o;
    o.cost_rule = false;
    auto r = CompileGraph(g, t, "attention", o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const artifact_io::Segment* seg = nullptr;
    for (const auto& s : r->model.segments)
      if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s;
    ASSERT_NE(seg, nullptr);
    auto prog = npu::DecodeProgram(seg->npu.instructions);
    ASSERT_TRUE(prog.ok());
    const Node* softmax = nullptr;
    for (const Node* n : g.nodes())
      if (n->op() == OpKind::kQLinearSoftmax) softmax = n;
    ASSERT_NE(softmax, nullptr) << "the softmax was not quantized";
    const bool fused = std::find(prog->layer_names.begin(), prog->layer_names.end(), softmax->name()) ==
                       prog->layer_names.end();
    if (seq == 1024) {
      EXPECT_TRUE(fused) << "1024 keys: the unfused scores spill, the fused layer is faster";
    }

    const std::string path = (std::filesystem::temp_directory_path() / "npu_attention_segment.edgec").string();
    ASSERT_TRUE(artifact_io::WriteArtifact(path, r->model).ok());
    auto f = artifact_io::MappedArtifact::Open(path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto loaded = LoadArtifact(**f);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const std::map<std::string, Tensor> in = {{"x", Normal({2, seq, 16}, 77)}};
    auto sim = RunArtifact(*loaded, ArtifactDevice::kNpuSim, in);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    auto cpu = RunArtifact(*loaded, ArtifactDevice::kCpu, in);
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    ASSERT_EQ(sim->outputs.size(), cpu->outputs.size());
    for (size_t i = 0; i < sim->outputs.size(); ++i) {
      const Tensor &a = sim->outputs[i], &b = cpu->outputs[i];
      EXPECT_TRUE(a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0)
          << seq << " keys, " << (fused ? "fused" : "unfused");
    }
    // Fused, the scores (2 MiB: heads x seq x seq bytes) never go through DRAM; what does is x
    // and the context (128 KiB each as f32: the float boundary runs on the NPU too) and the
    // weights, under a quarter of the scores.
    if (seq == 1024) {
      EXPECT_LT(sim->npu_total.dram_written + sim->npu_total.dram_read, 2 * seq * seq / 4);
    }
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace edgec::lower
