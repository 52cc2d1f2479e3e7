#include "runtime/step_profile.h"

#include <gtest/gtest.h>

#include "ir/infer.h"

namespace edgec {
namespace {

// x[2, 4] -> Relu -> Sigmoid -> y
Graph TwoSteps() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 4}));
  Node* relu = g.AddNode(OpKind::kRelu, "relu", {x}, 1);
  Node* sig = g.AddNode(OpKind::kSigmoid, "sig", {relu->output(0)}, 1, {"y"});
  g.MarkOutput(sig->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(StepProfile, RanksStepsByMeanTimeAndSharesAddUp) {
  auto plan = Plan::Build(TwoSteps(), {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ((*plan)->steps().size(), 2u);
  StepProfile p(**plan);
  p.Add({1'000'000, 3'000'000});  // relu 1 ms, sigmoid 3 ms
  p.Add({3'000'000, 5'000'000});  // relu 3 ms, sigmoid 5 ms
  EXPECT_EQ(p.runs(), 2);
  EXPECT_DOUBLE_EQ(p.TotalMs(), 6.0);
  auto rows = p.Rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].op, "Sigmoid");
  EXPECT_EQ(rows[0].node, "sig");
  EXPECT_EQ(rows[0].step, 1u);
  EXPECT_DOUBLE_EQ(rows[0].ms, 4.0);
  EXPECT_DOUBLE_EQ(rows[1].ms, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].share + rows[1].share, 1.0);
  EXPECT_FALSE(rows[0].kernel.empty());
  EXPECT_EQ(rows[0].kernel.rfind("reference", 0), std::string::npos) << rows[0].kernel;
  auto by_op = p.ByOp();
  ASSERT_EQ(by_op.size(), 2u);
  EXPECT_EQ(by_op[0].op, "Sigmoid");
  const std::string table = p.Table(1);
  EXPECT_NE(table.find("Sigmoid"), std::string::npos) << table;
  EXPECT_NE(table.find("1 more steps"), std::string::npos) << table;
  EXPECT_EQ(p.ToJson()["steps"].size(), 2u);
}

TEST(StepProfile, NamesTheReasonOfAReferenceStep) {
  PlanOptions o;
  o.fast_kernels = false;
  auto plan = Plan::Build(TwoSteps(), o);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  StepProfile p(**plan);
  p.Add({1, 2});
  for (const auto& r : p.Rows()) EXPECT_EQ(r.kernel, "reference: fast kernels disabled");
}

}  // namespace
}  // namespace edgec
