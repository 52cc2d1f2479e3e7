// The resource caps of support/limits.h: each refuses what is over it with a message naming
// the figure, the cap and its flag, and accepts what is at or under it.
#include "support/limits.h"

#include <gtest/gtest.h>

#include "ir/infer.h"
#include "lower/cpu_lower.h"

namespace edgec {
namespace {

// Restores the defaults when a test ends, whatever it set.
struct ScopedLimits {
  explicit ScopedLimits(const Limits& l) { SetLimits(l); }
  ~ScopedLimits() { SetLimits(Limits{}); }
};

TEST(Limits, TensorCapRefusesBeforeAllocating) {
  Limits l;
  l.tensor_bytes = 1024;
  ScopedLimits scope(l);
  EXPECT_TRUE(Tensor::Create(DType::kF32, {16, 16}).ok());  // exactly 1024 bytes
  auto over = Tensor::Create(DType::kF32, {16, 17});
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("f32[16, 17] would need 1088 bytes"), std::string::npos)
      << over.status().message();
  EXPECT_NE(over.status().message().find("--max-tensor-bytes"), std::string::npos);
  // The default cap refuses a tensor of terabytes without trying to allocate it.
  SetLimits(Limits{});
  EXPECT_FALSE(Tensor::Create(DType::kF32, {int64_t{1} << 20, int64_t{1} << 20}).ok());
}

TEST(Limits, NodeAndModelCapsNameTheFigures) {
  Limits l;
  l.nodes = 10;
  l.model_bytes = 100;
  ScopedLimits scope(l);
  EXPECT_TRUE(CheckNodeCount(10, "m.onnx").ok());
  Status s = CheckNodeCount(11, "m.onnx");
  EXPECT_EQ(s.message(), "m.onnx: graph has 11 nodes, over the limit of 10 (--max-nodes)");
  EXPECT_TRUE(CheckModelBytes(100, "m.onnx").ok());
  s = CheckModelBytes(101, "m.onnx");
  EXPECT_EQ(s.message(), "m.onnx: file is 101 bytes, over the model size limit of 100 bytes (--max-model-bytes)");
}

// Two 64x64 f32 values live at once: the arena holds at least 32 KiB.
Graph TwoStepGraph() {
  Graph g;
  TensorType t;
  t.dtype = DType::kF32;
  t.dims = {64, 64};
  Value* x = g.AddInput("x", t);
  Node* a = g.AddNode(OpKind::kRelu, "relu1", {x}, 1, {"a"});
  Node* b = g.AddNode(OpKind::kAdd, "add1", {a->output(0), x}, 1, {"b"});
  Node* c = g.AddNode(OpKind::kMul, "mul1", {b->output(0), a->output(0)}, 1, {"y"});
  g.MarkOutput(c->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(Limits, ArenaCapRefusesThePlan) {
  PlanOptions po;
  po.threads = 1;
  auto fits = lower::BuildCpuPlan(TwoStepGraph(), po);
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  const int64_t planned = (*fits)->memory().arena_bytes;
  ASSERT_GT(planned, 0);
  Limits l;
  l.arena_bytes = planned;
  ScopedLimits scope(l);
  EXPECT_TRUE(lower::BuildCpuPlan(TwoStepGraph(), po).ok());  // at the cap
  l.arena_bytes = planned - 1;
  SetLimits(l);
  auto over = lower::BuildCpuPlan(TwoStepGraph(), po);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find(fmt::format("needs an arena of {} bytes", planned)), std::string::npos)
      << over.status().message();
  EXPECT_NE(over.status().message().find("--max-arena-bytes"), std::string::npos);
}

}  // namespace
}  // namespace edgec
