// The CPU nodes of a compiled model run on fast CPU plans (runtime/cpu_segment.h): the plans
// report fast kernels, not "reference"; the outputs equal a run on the reference kernels
// exactly in int8 and within the float kernels' tolerance (|diff| <= 1e-5 + 1e-4 |want|);
// and npu-sim equals cpu bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "quant/pipeline.h"
#include "runtime/artifact_run.h"
#include "runtime/cpu_segment.h"
#include "runtime/reference_executor.h"

#include "../kernels/cpu/cpu_test_util.h"
#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"
#include "compiled_artifact.h"

namespace edgec {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;
using testing_cpu::Close;

// x[1,8,12,12] -> conv1 3x3 -> relu -> conv2 1x1 -> add(relu) -> relu -> conv3 1x1 -> y (float)
Graph FloatBlock() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 12, 12}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({16, 8, 3, 3}, 1, 0.2)),
                                     g.AddConstant("b1", Normal({16}, 2, 0.1))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* c2 = Add(g, OpKind::kConv, {r1, g.AddConstant("w2", Normal({16, 16, 1, 1}, 3, 0.3)),
                                     g.AddConstant("b2", Normal({16}, 4, 0.1))}, {}, "conv2");
  Value* sum = Add(g, OpKind::kAdd, {c2, r1}, {}, "add");
  Value* r2 = Add(g, OpKind::kRelu, {sum}, {}, "relu2");
  Value* y = Add(g, OpKind::kConv, {r2, g.AddConstant("w3", Normal({24, 16, 1, 1}, 5, 0.3)),
                                    g.AddConstant("b3", Normal({24}, 6, 0.1))}, {}, "conv3");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// The same block quantized (i8) and folded to integer ops.
Graph Int8Block() {
  Graph g = FloatBlock();
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 12, 12}, 100, 4, DType::kI8);
}

std::unique_ptr<testing_compiled::CompiledArtifact> CompileAndLoad(const Graph& g, const std::string& tag) {
  auto t = npu::LoadTarget("edge-default");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  // Vector cores without f32: the model's float boundary stays on the CPU, whose fast
  // kernels this file tests.
  t->vector_cores.dtype_rates.erase("f32");
  partition::PartitionOptions o;
  o.cost_rule = false;  // every legal node on the NPU
  return testing_compiled::CompileAndLoad(g, *t, "cpu_segment_" + tag, o);
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// A float compile: no node fits the int8 NPU, so every node is a CPU node; the convs run on
// a fast kernel (oneDNN or edgec's own), and the result is the reference run's.
TEST(CpuSegmentTest, FloatCompileRunsOnFastKernels) {
  auto c = CompileAndLoad(FloatBlock(), "float");
  auto x = ArtifactExecutor::Create(c->loaded);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ((*x)->cpu_segments().size(), 1u);
  for (const char* conv : {"conv1", "conv2", "conv3"}) {
    const std::string k = (*x)->CpuKernelOf(conv);
    EXPECT_FALSE(k.empty()) << conv;
    EXPECT_FALSE(k.starts_with("reference")) << conv << ": " << k;
  }
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 7)}};
  auto fast = (*x)->Run(ArtifactDevice::kCpu, in);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_FALSE(fast->cpu_measured) << "the cost model unless measure_cpu";
  ArtifactRunOptions measured;
  measured.measure_cpu = true;
  auto timed = RunArtifact(c->loaded, ArtifactDevice::kCpu, in, measured);
  ASSERT_TRUE(timed.ok()) << timed.status().ToString();
  EXPECT_TRUE(timed->cpu_measured);
  EXPECT_GT(timed->cpu_s, 0);
  ArtifactRunOptions ro;
  ro.fast_kernels = false;
  auto ref = RunArtifact(c->loaded, ArtifactDevice::kCpu, in, ro);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_FALSE(ref->cpu_measured);
  ASSERT_EQ(fast->outputs.size(), 1u);
  EXPECT_FALSE(SameBytes(fast->outputs[0], ref->outputs[0])) << "no fast kernel ran: the float sums differ in order";
  EXPECT_TRUE(Close(fast->outputs[0], ref->outputs[0], 1e-4, 1e-5));
  for (const LayerRun& l : ref->layers) EXPECT_EQ(l.kernel, "reference") << l.node;
  auto sim = (*x)->Run(ArtifactDevice::kNpuSim, in);  // the same executor again
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_TRUE(SameBytes(sim->outputs[0], fast->outputs[0]));
}

// An int8 compile: the NPU takes the integer layers; the input quantize and output dequantize
// are CPU nodes on fast kernels. npu-sim == cpu == the reference kernels, bit for bit.
TEST(CpuSegmentTest, Int8CompileEqualsReferenceExactly) {
  auto c = CompileAndLoad(Int8Block(), "int8");
  auto x = ArtifactExecutor::Create(c->loaded);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  int fast_nodes = 0;
  for (const CpuSegment& s : (*x)->cpu_segments())
    for (const Node* n : s.nodes) fast_nodes += !CpuSegmentKernel(s, n->name()).starts_with("reference");
  EXPECT_GT(fast_nodes, 0);
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 9)}};
  auto cpu = (*x)->Run(ArtifactDevice::kCpu, in);
  auto sim = (*x)->Run(ArtifactDevice::kNpuSim, in);
  ArtifactRunOptions ro;
  ro.fast_kernels = false;
  auto ref = RunArtifact(c->loaded, ArtifactDevice::kCpu, in, ro);
  ASSERT_TRUE(cpu.ok() && sim.ok() && ref.ok());
  EXPECT_TRUE(SameBytes(cpu->outputs[0], ref->outputs[0]));
  EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
}

// A whole int8 graph as one segment: QLinearConv on a fast int8 kernel, the output the
// reference executor's bit for bit. Split at the add, the two segments name their boundary.
TEST(CpuSegmentTest, Int8SegmentsMatchTheReferenceExecutor) {
  Graph g = Int8Block();
  auto all = BuildCpuSegments(g, [](const Node&) { return true; }, {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 1u);
  CpuSegment& s = (*all)[0];
  int int8_convs = 0;
  for (const Node* n : s.nodes) {
    if (n->op() != OpKind::kQLinearConv) continue;
    ++int8_convs;
    EXPECT_FALSE(CpuSegmentKernel(s, n->name()).starts_with("reference")) << n->Label();
  }
  EXPECT_EQ(int8_convs, 3);
  const Tensor xin = Normal({1, 8, 12, 12}, 11);
  std::unordered_map<std::string, Tensor> env = {{"x", xin}};
  CpuSegmentTiming timing;
  ASSERT_TRUE(RunCpuSegment(s, env, &timing).ok());
  auto want = ReferenceExecutor(g).Run({{"x", xin}});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  const std::string y = g.outputs()[0]->name();
  ASSERT_TRUE(env.count(y));
  EXPECT_TRUE(SameBytes(env.at(y), (*want)[0]));

  // Every node but the add on the CPU: two segments, the add run here on the reference kernel.
  const Node* add = nullptr;
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQLinearAdd || n->op() == OpKind::kAdd) add = n;
  ASSERT_NE(add, nullptr);
  auto two = BuildCpuSegments(g, [&](const Node& n) { return &n != add; }, {});
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(two->size(), 2u);
  const auto& first = (*two)[0].outputs;
  for (const Value* v : add->inputs())
    if (v && !v->is_constant()) {
      EXPECT_NE(std::find(first.begin(), first.end(), v), first.end()) << v->name() << " leaves segment 1";
    }
  ASSERT_EQ((*two)[1].inputs.size(), 1u);  // the add's output (its relu reads nothing else)
  EXPECT_EQ((*two)[1].inputs[0], add->output(0));
  std::unordered_map<std::string, Tensor> env2 = {{"x", xin}};
  ASSERT_TRUE(RunCpuSegment((*two)[0], env2, &timing).ok());
  std::vector<const Tensor*> add_in;
  for (const Value* v : add->inputs()) add_in.push_back(!v ? nullptr : v->is_constant() ? &v->constant() : &env2.at(v->name()));
  auto sum = EvaluateNode(*add, add_in);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  env2[add->output(0)->name()] = (*sum)[0];
  ASSERT_TRUE(RunCpuSegment((*two)[1], env2, &timing).ok());
  EXPECT_TRUE(SameBytes(env2.at(y), (*want)[0]));
}

}  // namespace
}  // namespace edgec
