// Value-dependent shapes on the CPU plan: shape inputs key the plan (driver/session.h),
// sizes known only after running go to the plan's dynamic part (runtime/plan.h).
#include <gtest/gtest.h>

#include "driver/session.h"
#include "ir/infer.h"
#include "runtime/reference_executor.h"

namespace edgec {
namespace {

void ExpectSame(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].dtype(), want[k].dtype()) << k;
    ASSERT_EQ(got[k].dims(), want[k].dims()) << k;
    auto a = got[k].ToDoubleVector(), b = want[k].ToDoubleVector();
    // The fast sigmoid may differ from the reference in the last bit.
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << "output " << k << " element " << i;
  }
}

// y = Sigmoid(Reshape(x, shape)); z = Gather(table, ids): `shape` decides a shape, `ids`
// (an integer input as small) does not.
Graph ReshapeAndGather() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 3, 4}));
  Value* shape = g.AddInput("shape", MakeType(DType::kI64, {3}));
  Value* ids = g.AddInput("ids", MakeType(DType::kI64, {3}));
  Node* r = g.AddNode(OpKind::kReshape, "reshape", {x, shape}, 1);
  Node* s = g.AddNode(OpKind::kSigmoid, "sigmoid", {r->output(0)}, 1, {"y"});
  Value* table = g.AddConstant("table", Tensor::FromVector<float>(DType::kF32, {4}, {1.f, 2.f, 3.f, 4.f}));
  Node* gather = g.AddNode(OpKind::kGather, "gather", {table, ids}, 1, {"z"});
  g.MarkOutput(s->output(0));
  g.MarkOutput(gather->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(DynamicShapes, ShapeInputValuesKeyThePlan) {
  Graph source = ReshapeAndGather();
  auto inputs = RandomInputs(source, 3);
  auto session = Session::FromGraph(source.Clone(), "test", {});
  ASSERT_TRUE(session.ok());
  int built = 0;
  for (auto target : {std::vector<int64_t>{4, 6, 1}, {24, 1, 1}, {4, 6, 1}, {1, 2, 12}}) {
    inputs["shape"] = Tensor::VectorI64(target);
    inputs["ids"] = Tensor::VectorI64({built % 4, 3, 1});  // changes every run, never rebuilds
    std::vector<Tensor> got;
    Status st = (*session)->Run(inputs, &got);
    ASSERT_TRUE(st.ok()) << st.message();
    auto want = ReferenceExecutor(source).Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ExpectSame(got, *want);
    ++built;
  }
  EXPECT_EQ((*session)->shape_inputs(), std::vector<std::string>{"shape"});
  EXPECT_EQ((*session)->plans_built(), 3);  // {4, 6, 1} twice: the cached plan
  // The plan is static: every step planned in the arena, none dynamic.
  EXPECT_TRUE((*session)->last_plan()->dynamic_nodes().empty());
}

// x -> Relu -> NonZero -> Transpose (data-dependent sizes), and Relu's output as a second
// graph output planned in the arena.
TEST(DynamicShapes, DynamicTailAfterNonZero) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {3, 4}));
  Node* relu = g.AddNode(OpKind::kRelu, "relu", {x}, 1, {"r"});
  Node* nz = g.AddNode(OpKind::kNonZero, "nonzero", {relu->output(0)}, 1);
  Node* t = g.AddNode(OpKind::kTranspose, "transpose", {nz->output(0)}, 1, {"indices"});
  t->attrs.Set("perm", std::vector<int64_t>{1, 0});
  g.MarkOutput(t->output(0));
  g.MarkOutput(relu->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto session = Session::FromGraph(g.Clone(), "test", {});
  ASSERT_TRUE(session.ok());
  for (uint64_t seed : {1, 2, 3}) {
    auto inputs = RandomInputs(g, seed);
    std::vector<Tensor> got;
    Status st = (*session)->Run(inputs, &got);
    ASSERT_TRUE(st.ok()) << st.message();
    auto want = ReferenceExecutor(g).Run(inputs);
    ASSERT_TRUE(want.ok());
    ExpectSame(got, *want);
  }
  EXPECT_EQ((*session)->plans_built(), 1);  // the data changes the sizes, not the plan
  const Plan* plan = (*session)->last_plan();
  ASSERT_EQ(plan->dynamic_nodes().size(), 2u);
  EXPECT_EQ(plan->dynamic_nodes()[0]->name(), "nonzero");
  EXPECT_NE(plan->Summary().find("2 dynamic"), std::string::npos) << plan->Summary();
  EXPECT_EQ(plan->outputs().size(), 2u);
}

}  // namespace
}  // namespace edgec
