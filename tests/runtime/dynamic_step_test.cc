// The dynamic part of a CPU plan on fast kernels (runtime/dynamic_step.h) and control-flow
// subgraphs on fast plans (runtime/subgraph_plans.h), each against the reference executor:
// a NonMaxSuppression tail (both box encodings, tied scores), a Loop whose carried value
// grows every iteration (a plan per shape), an If whose branches read constant weights, and
// a Scan. Each also checks what ran: no step on a reference kernel, unless fast kernels are
// off, and then the check names the step.
#include <gtest/gtest.h>

#include <random>

#include "driver/session.h"
#include "ir/control_flow.h"
#include "ir/infer.h"
#include "runtime/reference_executor.h"
#include "runtime/step_profile.h"

namespace edgec {
namespace {

void ExpectSame(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].dtype(), want[k].dtype()) << k;
    ASSERT_EQ(got[k].dims(), want[k].dims()) << k;
    auto a = got[k].ToDoubleVector(), b = want[k].ToDoubleVector();
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "output " << k << " element " << i;
  }
}

std::unique_ptr<Session> Open(const Graph& g, bool fast = true) {
  SessionOptions o;
  o.plan.threads = 1;
  o.plan.fast_kernels = fast;
  auto s = Session::FromGraph(g.Clone(), "test", o);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

Value* I64(Graph& g, std::vector<int64_t> v, Dims dims) {
  return g.AddConstant(g.FreshName("i64"), Tensor::FromVector<int64_t>(DType::kI64, std::move(dims), v));
}
Value* F32(Graph& g, std::vector<float> v, Dims dims) {
  return g.AddConstant(g.FreshName("f32"), Tensor::FromVector<float>(DType::kF32, std::move(dims), v));
}

// boxes [1, N, 4], scores [1, 1, N] -> NonMaxSuppression -> column 2 (the box index) ->
// Gather of the boxes: the shape of detector_nms's tail.
Graph NmsTail(int64_t n, bool center) {
  Graph g;
  Value* boxes = g.AddInput("boxes", MakeType(DType::kF32, {1, n, 4}));
  Value* scores = g.AddInput("scores", MakeType(DType::kF32, {1, 1, n}));
  Node* nms = g.AddNode(OpKind::kNonMaxSuppression, "nms",
                        {boxes, scores, I64(g, {6}, {1}), F32(g, {0.3f}, {1}), F32(g, {0.05f}, {1})}, 1);
  nms->attrs.Set("center_point_box", int64_t{center ? 1 : 0});
  Node* col = g.AddNode(OpKind::kGather, "column", {nms->output(0), I64(g, {2}, {})}, 1);
  col->attrs.Set("axis", int64_t{1});
  Node* flat = g.AddNode(OpKind::kReshape, "flat", {boxes, I64(g, {n, 4}, {2})}, 1);
  Node* keep = g.AddNode(OpKind::kGather, "keep", {flat->output(0), col->output(0)}, 1, {"kept"});
  keep->attrs.Set("axis", int64_t{0});
  g.MarkOutput(keep->output(0));
  g.MarkOutput(nms->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

std::map<std::string, Tensor> Detections(int64_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> pos(0.f, 10.f), size(0.5f, 4.f);
  Tensor boxes(DType::kF32, {1, n, 4}), scores(DType::kF32, {1, 1, n});
  for (int64_t i = 0; i < n; ++i) {
    float* b = boxes.data<float>() + i * 4;
    b[0] = pos(rng), b[1] = pos(rng), b[2] = b[0] + size(rng), b[3] = b[1] + size(rng);
    // Scores on a coarse grid: ties, and some below the threshold.
    scores.data<float>()[i] = static_cast<float>(rng() % 8) / 8.0f;
  }
  return {{"boxes", boxes}, {"scores", scores}};
}

TEST(DynamicStep, NmsTailRunsOnFastKernelsAndMatchesTheReference) {
  for (bool center : {false, true}) {
    Graph g = NmsTail(40, center);
    auto session = Open(g);
    for (uint64_t seed : {1, 2, 3, 4}) {
      auto inputs = Detections(40, seed);
      std::vector<Tensor> got;
      Status st = session->Run(inputs, &got);
      ASSERT_TRUE(st.ok()) << st.message();
      auto want = ReferenceExecutor(g).Run(inputs);
      ASSERT_TRUE(want.ok()) << want.status().message();
      ExpectSame(got, *want, 0);
      EXPECT_GT(got[1].dim(0), 0) << "seed " << seed;
    }
    const PlanExecutor& e = *session->last_executor();
    EXPECT_TRUE(e.ReferenceSteps().empty()) << e.ReferenceSteps().front();
    EXPECT_EQ(e.dynamic_kernels(), (std::vector<std::string>{center ? "own nms f32 (center boxes)" : "own nms f32",
                                                              "own gather", "own gather"}));
  }
}

TEST(DynamicStep, ProfileListsTheDynamicSteps) {
  Graph g = NmsTail(16, false);
  auto session = Open(g);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run(Detections(16, 9), &out).ok());
  session->last_executor()->set_profiling(true);
  ASSERT_TRUE(session->Run(Detections(16, 9), &out).ok());
  const PlanExecutor& e = *session->last_executor();
  StepProfile p(*session->last_plan());
  p.Add(e.step_nanos(), e.dynamic_nanos(), e.dynamic_kernels());
  bool nms = false;
  for (const auto& row : p.Rows()) {
    if (row.op != "NonMaxSuppression") continue;
    nms = true;
    EXPECT_EQ(row.kernel, "own nms f32");
    EXPECT_EQ(row.step, session->last_plan()->steps().size());  // after the static steps
  }
  EXPECT_TRUE(nms);
}

TEST(DynamicStep, ReferenceStepsNameTheNodeWhenFastKernelsAreOff) {
  Graph g = NmsTail(16, false);
  auto session = Open(g, /*fast=*/false);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run(Detections(16, 5), &out).ok());
  const auto ref = session->last_executor()->ReferenceSteps();
  ASSERT_FALSE(ref.empty());
  bool named = false;
  for (const auto& s : ref) named |= s.find("NonMaxSuppression 'nms'") != std::string::npos;
  EXPECT_TRUE(named);
}

std::shared_ptr<Graph> Body() { return std::make_shared<Graph>(); }

// Loop M times over a = Concat(a, Tanh(x)) (x captured): the carried value grows by 2 every
// iteration; scan output ReduceSum(a) [1] per iteration.
Graph GrowingLoop() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2}));
  Value* m = g.AddInput("M", MakeType(DType::kI64, {}));
  auto body = Body();
  {
    Graph& b = *body;
    b.AddInput("i", MakeType(DType::kI64, {}));
    Value* c = b.AddInput("c", MakeType(DType::kBool, {}));
    Value* a = b.AddInput("a", MakeType(DType::kF32, {kUnknownDim}));
    Value* xc = b.AddInput("xc", MakeType(DType::kF32, {2}));
    Node* t = b.AddNode(OpKind::kTanh, "tanh", {xc}, 1);
    Node* cat = b.AddNode(OpKind::kConcat, "cat", {a, t->output(0)}, 1, {"a2"});
    cat->attrs.Set("axis", int64_t{0});
    Node* sum = b.AddNode(OpKind::kReduceSum, "sum", {cat->output(0)}, 1, {"s"});
    Node* cid = b.AddNode(OpKind::kIdentity, "cond", {c}, 1, {"c2"});
    b.MarkOutput(cid->output(0));
    b.MarkOutput(cat->output(0));
    b.MarkOutput(sum->output(0));
    EXPECT_TRUE(InferShapes(b).ok());
  }
  Node* loop = g.AddNode(OpKind::kLoop, "loop", {m, nullptr, F32(g, {1.f}, {1}), x}, 2, {"a", "sums"});
  loop->attrs.Set("body", SubgraphPtr(body));
  loop->attrs.Set(kCapturesAttr, int64_t{1});
  g.MarkOutput(loop->output(0));
  g.MarkOutput(loop->output(1));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(DynamicStep, LoopWhoseShapesChangePerIterationGetsAPlanPerShape) {
  Graph g = GrowingLoop();
  auto session = Open(g);
  for (int64_t trips : {4, 2, 0}) {
    std::map<std::string, Tensor> in = {{"x", Tensor::FromVector<float>(DType::kF32, {2}, {0.5f, -1.5f})},
                                        {"M", Tensor::ScalarI64(trips)}};
    std::vector<Tensor> got;
    Status st = session->Run(in, &got);
    ASSERT_TRUE(st.ok()) << st.message();
    auto want = ReferenceExecutor(g).Run(in);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ExpectSame(got, *want, 1e-6);
    EXPECT_EQ(got[0].dim(0), 1 + 2 * trips);
    const PlanExecutor& e = *session->last_executor();
    EXPECT_TRUE(e.ReferenceSteps().empty()) << e.ReferenceSteps().front();
    if (trips == 4) {
      // a is [1], [3], [5], [7] in the four iterations: four plans.
      EXPECT_NE(e.dynamic_kernels().back().find("subgraph body: 4 run(s) on 4 fast plan(s)"), std::string::npos)
          << e.dynamic_kernels().back();
    }
  }
}

// y = cond ? Gemm(x, W1) : Gemm(x, W2) * 0.5, cond = flag > 0; W1, W2 constants captured.
Graph IfWithWeights() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 4}));
  Value* flag = g.AddInput("flag", MakeType(DType::kF32, {1}));
  std::vector<float> w1(12), w2(12);
  for (int i = 0; i < 12; ++i) w1[i] = 0.1f * static_cast<float>(i - 5), w2[i] = 0.05f * static_cast<float>(7 - i);
  Value* cw1 = F32(g, w1, {4, 3});
  Value* cw2 = F32(g, w2, {4, 3});
  Node* cond = g.AddNode(OpKind::kGreater, "cond", {flag, F32(g, {0.f}, {1})}, 1);
  auto then_g = Body(), else_g = Body();
  for (auto* b : {then_g.get(), else_g.get()}) {
    Value* bx = b->AddInput("bx", MakeType(DType::kF32, {2, 4}));
    Value* b1 = b->AddInput("w1", MakeType(DType::kF32, {4, 3}));
    Value* b2 = b->AddInput("w2", MakeType(DType::kF32, {4, 3}));
    if (b == then_g.get()) {
      b->MarkOutput(b->AddNode(OpKind::kGemm, "then_gemm", {bx, b1}, 1)->output(0));
    } else {
      Node* gm = b->AddNode(OpKind::kGemm, "else_gemm", {bx, b2}, 1);
      Value* half = b->AddConstant("half", Tensor::Scalar(0.5f));
      b->MarkOutput(b->AddNode(OpKind::kMul, "else_mul", {gm->output(0), half}, 1)->output(0));
    }
    EXPECT_TRUE(InferShapes(*b).ok());
  }
  Node* n = g.AddNode(OpKind::kIf, "if", {cond->output(0), x, cw1, cw2}, 1, {"y"});
  n->attrs.Set("then_branch", SubgraphPtr(then_g));
  n->attrs.Set("else_branch", SubgraphPtr(else_g));
  n->attrs.Set(kCapturesAttr, int64_t{3});
  g.MarkOutput(n->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(DynamicStep, IfBranchesRunOnFastPlans) {
  Graph g = IfWithWeights();
  auto session = Open(g);
  for (float flag : {1.f, -1.f, 2.f}) {
    auto in = RandomInputs(g, 17);
    in["flag"] = Tensor::FromVector<float>(DType::kF32, {1}, {flag});
    std::vector<Tensor> got;
    Status st = session->Run(in, &got);
    ASSERT_TRUE(st.ok()) << st.message();
    auto want = ReferenceExecutor(g).Run(in);
    ASSERT_TRUE(want.ok()) << want.status().message();
    ExpectSame(got, *want, 1e-5);
    const PlanExecutor& e = *session->last_executor();
    EXPECT_TRUE(e.ReferenceSteps().empty()) << e.ReferenceSteps().front();
    EXPECT_NE(e.dynamic_kernels().back().find(flag > 0 ? "subgraph then_branch: 1 run(s)" : "subgraph else_branch: 1 run(s)"),
              std::string::npos)
        << e.dynamic_kernels().back();
  }
}

// Scan over the rows of x [5, 3]: s = s + row; scan output Relu(s).
TEST(DynamicStep, ScanRunsItsBodyOnOneFastPlan) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {5, 3}));
  auto body = Body();
  Value* s = body->AddInput("s", MakeType(DType::kF32, {3}));
  Value* row = body->AddInput("row", MakeType(DType::kF32, {3}));
  Node* add = body->AddNode(OpKind::kAdd, "add", {s, row}, 1);
  Node* relu = body->AddNode(OpKind::kRelu, "relu", {add->output(0)}, 1);
  body->MarkOutput(add->output(0));
  body->MarkOutput(relu->output(0));
  ASSERT_TRUE(InferShapes(*body).ok());
  Node* scan = g.AddNode(OpKind::kScan, "scan", {F32(g, {0.f, 0.f, 0.f}, {3}), x}, 2, {"s_final", "relus"});
  scan->attrs.Set("body", SubgraphPtr(body));
  scan->attrs.Set("num_scan_inputs", int64_t{1});
  g.MarkOutput(scan->output(0));
  g.MarkOutput(scan->output(1));
  ASSERT_TRUE(InferShapes(g).ok());
  auto session = Open(g);
  auto in = RandomInputs(g, 23);
  std::vector<Tensor> got;
  Status st = session->Run(in, &got);
  ASSERT_TRUE(st.ok()) << st.message();
  auto want = ReferenceExecutor(g).Run(in);
  ASSERT_TRUE(want.ok()) << want.status().message();
  ExpectSame(got, *want, 1e-6);
  const PlanExecutor& e = *session->last_executor();
  EXPECT_TRUE(e.ReferenceSteps().empty()) << e.ReferenceSteps().front();
  EXPECT_NE(e.dynamic_kernels().back().find("subgraph body: 5 run(s) on 1 fast plan(s)"), std::string::npos)
      << e.dynamic_kernels().back();
}

}  // namespace
}  // namespace edgec
