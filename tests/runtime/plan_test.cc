#include <gtest/gtest.h>

#include <cstring>

#include "driver/session.h"
#include "ir/infer.h"
#include "runtime/plan.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"

namespace edgec {
namespace {

// x[N, 4] -> Relu -> Reshape([N, 2, 2] from Shape chain) -> Add(const) -> Sigmoid
Graph SmallGraph() {
  Graph g;
  TensorType t = MakeType(DType::kF32, {kUnknownDim, 4});
  Value* x = g.AddInput("x", t);
  Node* relu = g.AddNode(OpKind::kRelu, "relu", {x}, 1);
  Node* shape = g.AddNode(OpKind::kShape, "shape", {relu->output(0)}, 1);
  Node* gather = g.AddNode(OpKind::kGather, "gather", {shape->output(0), g.AddConstant("zero", Tensor::ScalarI64(0))}, 1);
  Node* unsq = g.AddNode(OpKind::kUnsqueeze, "unsq", {gather->output(0), g.AddConstant("axes", Tensor::VectorI64({0}))}, 1);
  Node* concat = g.AddNode(OpKind::kConcat, "concat", {unsq->output(0), g.AddConstant("tail", Tensor::VectorI64({2, 2}))}, 1);
  concat->attrs.Set("axis", int64_t{0});
  Node* reshape = g.AddNode(OpKind::kReshape, "reshape", {relu->output(0), concat->output(0)}, 1);
  Node* add = g.AddNode(OpKind::kAdd, "add", {reshape->output(0), g.AddConstant("b", Tensor::FromVector<float>(DType::kF32, {2}, {0.5f, -1.f}))}, 1);
  Node* sig = g.AddNode(OpKind::kSigmoid, "sig", {add->output(0)}, 1, {"y"});
  g.MarkOutput(sig->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(Plan, MatchesTheReferenceExecutorWithViewsAndInPlace) {
  for (int64_t n : {1, 3}) {
    Graph g = SmallGraph();
    auto inputs = RandomInputs(g, 7, n);
    auto want = ReferenceExecutor(g).Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().message();
    Graph bound = g.Clone();
    ASSERT_TRUE(BindInputShapes(bound, {{"x", {n, 4}}}, 1).ok());
    auto plan = Plan::Build(std::move(bound), {});
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    PlanExecutor exec(**plan);
    std::vector<Tensor> got;
    for (int rep = 0; rep < 2; ++rep) {  // a second run reuses the arena
      ASSERT_TRUE(exec.Run(inputs, &got).ok());
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(got[0].dims(), (*want)[0].dims());
      for (int64_t i = 0; i < got[0].numel(); ++i) {
        EXPECT_FLOAT_EQ(got[0].data<float>()[i], (*want)[0].data<float>()[i]);
      }
    }
    EXPECT_LE((*plan)->memory().arena_bytes, (*plan)->memory().naive_bytes);
  }
}

// Graph inputs are read in place (no copy into the arena) when aligned: a second Run with
// other tensors must see their values, an unaligned tensor is copied, the caller's tensors
// are never written, an output that is a view of an input is right, and a plan of reference
// kernels copies its inputs.
TEST(Plan, ReadsAlignedInputsInPlaceAndCopiesTheRest) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 8}));
  Value* w = g.AddInput("w", MakeType(DType::kF32, {2, 8}));
  Node* relu = g.AddNode(OpKind::kRelu, "relu", {x}, 1, {"r"});
  Node* add = g.AddNode(OpKind::kAdd, "add", {relu->output(0), w}, 1, {"sum"});
  Node* flat = g.AddNode(OpKind::kReshape, "flat", {x, g.AddConstant("shape", Tensor::VectorI64({16}))}, 1, {"xflat"});
  g.MarkOutput(add->output(0));
  g.MarkOutput(flat->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  for (bool fast : {true, false}) {
    PlanOptions po;
    po.fast_kernels = fast;
    auto plan = Plan::Build(g.Clone(), po);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    PlanExecutor exec(**plan);
    EXPECT_EQ(exec.inputs_read_in_place(), (std::vector<bool>{fast, fast})) << (fast ? "fast" : "reference");
    std::vector<Tensor> got;
    std::vector<float> unaligned_storage(2 * 8 + 1);
    for (int rep = 0; rep < 4; ++rep) {
      auto inputs = RandomInputs(g, 11 + rep, 1);
      if (rep == 2) {  // an unaligned caller tensor: copied into the arena
        Tensor view = Tensor::View(DType::kF32, {2, 8}, unaligned_storage.data() + 1);
        std::memcpy(view.raw(), inputs.at("x").raw(), view.nbytes());
        inputs["x"] = view;
      }
      std::map<std::string, Tensor> before;
      for (auto& [name, t] : inputs) before[name] = t.Clone();
      auto want = ReferenceExecutor(g).Run(inputs);
      ASSERT_TRUE(want.ok());
      ASSERT_TRUE(exec.Run(inputs, &got).ok());
      ASSERT_EQ(got.size(), 2u);
      for (size_t o = 0; o < 2; ++o) {
        for (int64_t i = 0; i < got[o].numel(); ++i) {
          ASSERT_EQ(got[o].data<float>()[i], (*want)[o].data<float>()[i]) << "rep " << rep << " output " << o << " element " << i;
        }
      }
      for (auto& [name, t] : inputs) {
        EXPECT_EQ(std::memcmp(t.raw(), before[name].raw(), t.nbytes()), 0) << name << " was written";
      }
    }
  }
}

TEST(Session, BuildsOnePlanPerInputShapeAndCachesIt) {
  SessionOptions so;
  so.opt_level = 1;
  auto s = Session::FromGraph(SmallGraph(), "small", so);
  ASSERT_TRUE(s.ok());
  std::vector<Tensor> out;
  for (int64_t n : {2, 5, 2, 5, 2}) {
    Graph ref = SmallGraph();
    auto inputs = RandomInputs(ref, 3, n);
    ASSERT_TRUE((*s)->Run(inputs, &out).ok());
    auto want = ReferenceExecutor(ref).Run(inputs);
    ASSERT_TRUE(want.ok());
    ASSERT_EQ(out[0].dims(), (Dims{n, 2, 2}));
    for (int64_t i = 0; i < out[0].numel(); ++i) EXPECT_FLOAT_EQ(out[0].data<float>()[i], (*want)[0].data<float>()[i]);
  }
  EXPECT_EQ((*s)->plans_built(), 2);
  auto bad = (*s)->Run({{"x", Tensor(DType::kF32, {2, 3})}}, &out);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("dim 1 is 3"), std::string::npos);
}

}  // namespace
}  // namespace edgec
