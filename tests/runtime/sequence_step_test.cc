// Sequence values on fast plans (runtime/sequence_step.h, runtime/subgraph_plans.h): generated
// graphs with the sequence ops, a SequenceMap and a Loop that carries a sequence, each run
// through a Session (-O3, the CPU plan) and compared with the reference executor, and each
// checked to have run no step on a reference kernel (the check names the step when fast
// kernels are off).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "driver/session.h"
#include "ir/control_flow.h"
#include "ir/infer.h"
#include "runtime/reference_executor.h"

namespace edgec {
namespace {

void ExpectSame(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.kind(), want.kind()) << what;
  if (want.is_sequence()) {
    ASSERT_EQ(got.items().size(), want.items().size()) << what;
    for (size_t i = 0; i < want.items().size(); ++i) ExpectSame(got.items()[i], want.items()[i], what + " item " + std::to_string(i));
    return;
  }
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.dims(), want.dims()) << what;
  // The sequence steps move values; the arithmetic in the bodies (Tanh, Mul) is the fast
  // kernels', within 1e-6 of the reference's.
  auto a = got.ToDoubleVector(), b = want.ToDoubleVector();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-6 * (1 + std::abs(b[i]))) << what << " element " << i;
}

std::unique_ptr<Session> Open(const Graph& g, bool fast = true) {
  SessionOptions o;
  o.plan.threads = 1;
  o.plan.fast_kernels = fast;
  auto s = Session::FromGraph(g.Clone(), "test", o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

// Runs `g` on the CPU plan and on the reference executor; the outputs must be equal and the
// plan must have run every step (sequence steps and subgraph plans included) on a fast
// kernel. Returns the dynamic part's kernels.
std::vector<std::string> RunBoth(const Graph& g, const std::map<std::string, Tensor>& in) {
  auto session = Open(g);
  std::vector<Tensor> got;
  Status st = session->Run(in, &got);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  auto want = ReferenceExecutor(g).Run(in);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!want.ok()) return {};
  EXPECT_EQ(got.size(), want->size());
  for (size_t k = 0; k < got.size() && k < want->size(); ++k) ExpectSame(got[k], (*want)[k], "output " + std::to_string(k));
  const PlanExecutor& e = *session->last_executor();
  EXPECT_TRUE(e.ReferenceSteps().empty()) << e.ReferenceSteps().front();
  return e.dynamic_kernels();
}

bool Has(const std::vector<std::string>& kernels, const std::string& what) {
  for (const auto& k : kernels) {
    if (k.find(what) != std::string::npos) return true;
  }
  return false;
}

Tensor Random(Dims dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  Tensor t(DType::kF32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

TensorType SequenceType(DType dtype) {
  TensorType t = MakeType(dtype, {});
  t.kind = ValueKind::kSequence;
  t.rank_known = false;
  return t;
}

// x -> SplitToSequence (axis, split) -> SequenceMap(Relu(item * k)) -> ConcatFromSequence
// along the same axis (a stack when the parts lost the axis), plus SequenceLength and
// SequenceAt(-1) of the parts.
struct SplitCase {
  Dims dims;
  int64_t axis;
  int split_kind;  // 0: none, 1: a scalar part size, 2: a list of sizes
  bool keepdims;
};

Graph SplitMapConcat(const SplitCase& c, std::mt19937& rng) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, c.dims));
  Value* k = g.AddInput("k", MakeType(DType::kF32, {1}));
  const int rank = static_cast<int>(c.dims.size());
  const int axis = static_cast<int>(c.axis < 0 ? c.axis + rank : c.axis);
  const int64_t len = c.dims[axis];
  std::vector<Value*> split_in = {x};
  if (c.split_kind == 1) {
    const int64_t part = 1 + static_cast<int64_t>(rng() % len);
    split_in.push_back(g.AddConstant(g.FreshName("part"), Tensor::ScalarI64(part)));
  } else if (c.split_kind == 2) {
    std::vector<int64_t> sizes;
    for (int64_t left = len; left > 0;) {
      const int64_t s = rng() % 3 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % left);
      sizes.push_back(s);
      left -= s;
    }
    split_in.push_back(g.AddConstant(g.FreshName("sizes"), Tensor::VectorI64(sizes)));
  }
  Node* split = g.AddNode(OpKind::kSplitToSequence, "split", split_in, 1, {"parts"});
  split->attrs.Set("axis", c.axis);
  if (!c.keepdims) split->attrs.Set("keepdims", int64_t{0});
  const bool dropped = c.split_kind == 0 && !c.keepdims;

  auto body = std::make_shared<Graph>();
  {
    Dims unknown(dropped ? rank - 1 : rank, kUnknownDim);
    Value* item = body->AddInput("item", MakeType(DType::kF32, unknown));
    Value* bk = body->AddInput("bk", MakeType(DType::kF32, {1}));
    Node* mul = body->AddNode(OpKind::kMul, "scale", {item, bk}, 1);
    Node* relu = body->AddNode(OpKind::kRelu, "relu", {mul->output(0)}, 1, {"y"});
    body->MarkOutput(relu->output(0));
    EXPECT_TRUE(InferShapes(*body).ok());
  }
  Node* map = g.AddNode(OpKind::kSequenceMap, "map", {split->output(0), k}, 1, {"mapped"});
  map->attrs.Set("body", SubgraphPtr(body));
  Node* cat = g.AddNode(OpKind::kConcatFromSequence, "cat", {map->output(0)}, 1, {"joined"});
  cat->attrs.Set("axis", c.axis);
  if (dropped) cat->attrs.Set("new_axis", int64_t{1});
  Node* count = g.AddNode(OpKind::kSequenceLength, "count", {split->output(0)}, 1, {"count"});
  Node* last = g.AddNode(OpKind::kSequenceAt, "last", {split->output(0), g.AddConstant("minus1", Tensor::ScalarI64(-1))}, 1,
                         {"last"});
  g.MarkOutput(cat->output(0));
  g.MarkOutput(count->output(0));
  g.MarkOutput(last->output(0));
  g.MarkOutput(map->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(SequenceStep, GeneratedSplitMapConcatMatchesTheReferenceOnFastSteps) {
  std::mt19937 rng(7);
  bool shared = false, copied = false;
  for (int t = 0; t < 24; ++t) {
    SplitCase c;
    const int rank = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < rank; ++i) c.dims.push_back(1 + static_cast<int64_t>(rng() % 5));
    c.axis = static_cast<int64_t>(rng() % rank) - (rng() % 2 ? rank : 0);
    c.split_kind = static_cast<int>(rng() % 3);
    c.keepdims = rng() % 2;
    SCOPED_TRACE(fmt::format("case {}: x {} axis {} split kind {} keepdims {}", t, DimsToString(c.dims), c.axis,
                             c.split_kind, c.keepdims));
    Graph g = SplitMapConcat(c, rng);
    const float scale = t % 2 ? 1.5f : -0.5f;
    auto kernels = RunBoth(g, {{"x", Random(c.dims, 100 + t)}, {"k", Tensor::FromVector<float>(DType::kF32, {1}, {scale})}});
    EXPECT_TRUE(Has(kernels, "own concat-from-sequence"));
    EXPECT_TRUE(Has(kernels, "subgraph body:")) << "the SequenceMap body runs on fast plans";
    shared |= Has(kernels, "parts share the input");
    copied |= Has(kernels, "parts copied");
  }
  EXPECT_TRUE(shared && copied) << "both split forms were generated";
}

// Loop M times carrying (acc, seq): acc' = acc + x, seq' = SequenceInsert(seq, Tanh(acc'),
// at the front when `front`); after it the length, the item at 1, the sequence without its
// first item, and all of them joined along axis 0.
Graph LoopCarryingASequence(bool front) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {2, 3}));
  Value* m = g.AddInput("M", MakeType(DType::kI64, {}));
  Node* start = g.AddNode(OpKind::kSequenceConstruct, "start", {x}, 1, {"start"});
  auto body = std::make_shared<Graph>();
  {
    Graph& b = *body;
    b.AddInput("i", MakeType(DType::kI64, {}));
    Value* c = b.AddInput("c", MakeType(DType::kBool, {}));
    Value* acc = b.AddInput("acc", MakeType(DType::kF32, {2, 3}));
    Value* seq = b.AddInput("seq", SequenceType(DType::kF32));
    Value* xc = b.AddInput("xc", MakeType(DType::kF32, {2, 3}));
    Node* add = b.AddNode(OpKind::kAdd, "acc_add", {acc, xc}, 1, {"acc2"});
    Node* tanh = b.AddNode(OpKind::kTanh, "tanh", {add->output(0)}, 1);
    std::vector<Value*> ins = {seq, tanh->output(0)};
    if (front) ins.push_back(b.AddConstant("zero", Tensor::ScalarI64(0)));
    Node* insert = b.AddNode(OpKind::kSequenceInsert, "insert", ins, 1, {"seq2"});
    Node* cid = b.AddNode(OpKind::kIdentity, "cond", {c}, 1, {"c2"});
    b.MarkOutput(cid->output(0));
    b.MarkOutput(add->output(0));
    b.MarkOutput(insert->output(0));
    EXPECT_TRUE(InferShapes(b).ok());
  }
  Node* loop = g.AddNode(OpKind::kLoop, "loop", {m, nullptr, x, start->output(0), x}, 2, {"acc", "seq"});
  loop->attrs.Set("body", SubgraphPtr(body));
  loop->attrs.Set(kCapturesAttr, int64_t{1});
  Node* count = g.AddNode(OpKind::kSequenceLength, "count", {loop->output(1)}, 1, {"count"});
  Node* at = g.AddNode(OpKind::kSequenceAt, "at1", {loop->output(1), g.AddConstant("one", Tensor::ScalarI64(1))}, 1, {"at1"});
  Node* erase = g.AddNode(OpKind::kSequenceErase, "erase", {loop->output(1), g.AddConstant("first", Tensor::ScalarI64(0))}, 1,
                          {"rest"});
  Node* cat = g.AddNode(OpKind::kConcatFromSequence, "cat", {loop->output(1)}, 1, {"all"});
  cat->attrs.Set("axis", int64_t{0});
  for (Node* n : {loop, count, at, erase, cat}) g.MarkOutput(n->output(n == loop ? 1 : 0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(SequenceStep, LoopCarryingASequenceRunsOnOneFastPlan) {
  for (bool front : {false, true}) {
    Graph g = LoopCarryingASequence(front);
    auto session = Open(g);
    for (int64_t trips : {5, 1, 3}) {
      SCOPED_TRACE(fmt::format("front {} trips {}", front, trips));
      std::map<std::string, Tensor> in = {{"x", Random({2, 3}, 11 + static_cast<uint32_t>(trips))},
                                          {"M", Tensor::ScalarI64(trips)}};
      std::vector<Tensor> got;
      Status st = session->Run(in, &got);
      ASSERT_TRUE(st.ok()) << st.message();
      auto want = ReferenceExecutor(g).Run(in);
      ASSERT_TRUE(want.ok()) << want.status().message();
      ASSERT_EQ(got.size(), want->size());
      for (size_t k = 0; k < got.size(); ++k) ExpectSame(got[k], (*want)[k], "output " + std::to_string(k));
      EXPECT_EQ(got[0].items().size(), static_cast<size_t>(trips + 1));
      const PlanExecutor& e = *session->last_executor();
      EXPECT_TRUE(e.ReferenceSteps().empty()) << e.ReferenceSteps().front();
      const auto kernels = e.dynamic_kernels();
      EXPECT_TRUE(Has(kernels, fmt::format("subgraph body: {} run(s) on 1 fast plan(s)", trips))) << kernels[1];
      EXPECT_TRUE(Has(kernels, "own sequence (items shared)"));
    }
  }
}

TEST(SequenceStep, ReferenceStepsNameTheSequenceStepsWhenFastKernelsAreOff) {
  Graph g = LoopCarryingASequence(false);
  auto session = Open(g, /*fast=*/false);
  std::vector<Tensor> out;
  ASSERT_TRUE(session->Run({{"x", Random({2, 3}, 3)}, {"M", Tensor::ScalarI64(2)}}, &out).ok());
  const auto ref = session->last_executor()->ReferenceSteps();
  bool insert = false, erase = false;
  for (const auto& s : ref) {
    insert |= s.find("SequenceInsert 'insert'") != std::string::npos && s.find("subgraph 'body'") != std::string::npos;
    erase |= s.find("SequenceErase 'erase'") != std::string::npos;
  }
  EXPECT_TRUE(insert && erase) << (ref.empty() ? std::string("no reference steps") : ref.front());
}

TEST(SequenceStep, ItemsThatDisagreeAreAnErrorNamingTheNode) {
  Graph g;
  Value* a = g.AddInput("a", MakeType(DType::kF32, {2, 3}));
  Value* b = g.AddInput("b", MakeType(DType::kF32, {2, 4}));
  Node* s = g.AddNode(OpKind::kSequenceConstruct, "both", {a, b}, 1);
  Node* cat = g.AddNode(OpKind::kConcatFromSequence, "join", {s->output(0)}, 1, {"y"});
  cat->attrs.Set("axis", int64_t{0});
  g.MarkOutput(cat->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto session = Open(g);
  std::vector<Tensor> out;
  Status st = session->Run({{"a", Random({2, 3}, 1)}, {"b", Random({2, 4}, 2)}}, &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ConcatFromSequence 'join': item 1 is f32[2, 4]"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace edgec
