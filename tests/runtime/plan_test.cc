#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "lower/cpu_lower.h"
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

// x u8 [1, 8, 6, 6] -> QLinearConv 3x3 (16) -> QuantizedLookup -> QLinearConv 1x1 (8) -> y;
// `extra_reader`: the first conv's output is also read by a MaxPool (a second output);
// `lookup_out`: the lookup's output is a graph output too.
Graph ConvLookupGraph(bool extra_reader, bool lookup_out) {
  std::mt19937 rng(17);
  auto bytes = [&](DType t, Dims d, int lo, int hi) {
    Tensor v(t, d);
    std::uniform_int_distribution<int> u(lo, hi);
    for (int64_t i = 0; i < v.numel(); ++i) {
      if (t == DType::kI8) v.data<int8_t>()[i] = static_cast<int8_t>(u(rng));
      else v.data<uint8_t>()[i] = static_cast<uint8_t>(u(rng));
    }
    return v;
  };
  auto scalar_u8 = [](uint8_t z) {
    Tensor t(DType::kU8, {});
    t.data<uint8_t>()[0] = z;
    return t;
  };
  auto scalar_i8 = [] { return Tensor(DType::kI8, {}); };
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kU8, {1, 8, 6, 6}));
  auto conv = [&](const std::string& name, Value* in, int64_t cin, int64_t cout, int64_t k) {
    std::vector<Value*> ins = {in,
                               g.AddConstant(name + "_xs", Tensor::Scalar(0.02f)),
                               g.AddConstant(name + "_xz", scalar_u8(120)),
                               g.AddConstant(name + "_w", bytes(DType::kI8, {cout, cin, k, k}, -127, 127)),
                               g.AddConstant(name + "_ws", Tensor::Scalar(0.01f)),
                               g.AddConstant(name + "_wz", scalar_i8()),
                               g.AddConstant(name + "_ys", Tensor::Scalar(0.05f)),
                               g.AddConstant(name + "_yz", scalar_u8(100))};
    Node* n = g.AddNode(OpKind::kQLinearConv, name, ins, 1);
    n->attrs.Set("pads", std::vector<int64_t>(4, k / 2));
    return n;
  };
  Node* c1 = conv("c1", x, 8, 16, 3);
  Node* lookup = g.AddNode(OpKind::kQuantizedLookup, "lookup",
                           {c1->output(0), g.AddConstant("table", bytes(DType::kU8, {256}, 0, 255))}, 1);
  Node* c2 = conv("c2", lookup->output(0), 16, 8, 1);
  g.MarkOutput(c2->output(0));
  if (extra_reader) {
    Node* pool = g.AddNode(OpKind::kMaxPool, "pool", {c1->output(0)}, 1);
    pool->attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
    g.MarkOutput(pool->output(0));
  }
  if (lookup_out) g.MarkOutput(lookup->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// The plan's outputs on `inputs` equal `want` byte for byte.
void ExpectRunsBitForBit(const Plan& plan, const std::map<std::string, Tensor>& inputs, const std::vector<Tensor>& want,
                         const std::string& what) {
  PlanExecutor exec(plan);
  std::vector<Tensor> got;
  ASSERT_TRUE(exec.Run(inputs, &got).ok()) << what;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].nbytes(), want[o].nbytes()) << what;
    EXPECT_EQ(std::memcmp(got[o].raw(), want[o].raw(), got[o].nbytes()), 0) << what << " output " << o;
  }
}

// The CPU lowering (lower/cpu_lower.h) fuses the output table: a lookup that alone reads an int8 conv is
// gone from the steps (into the conv's requantization), and the plan's outputs equal the
// reference executor's on the graph as given, fast kernels or reference ones; a conv output
// with another reader, or a lookup whose output is a graph output, stays a step.
TEST(Plan, FusesALookupIntoTheIntegerOpBeforeIt) {
  for (int variant = 0; variant < 3; ++variant) {
    const bool extra = variant == 1, lookup_out = variant == 2;
    Graph g = ConvLookupGraph(extra, lookup_out);
    std::map<std::string, Tensor> inputs;
    Tensor x(DType::kU8, {1, 8, 6, 6});
    std::mt19937 rng(5);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
    inputs["x"] = x;
    auto want = ReferenceExecutor(g).Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().message();
    for (bool fast : {true, false}) {
      PlanOptions po;
      po.fast_kernels = fast;
      auto plan = lower::BuildCpuPlan(g.Clone(), po);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      int lookups = 0, tabled = 0;
      for (const PlanStepInfo& s : (*plan)->steps()) {
        lookups += s.node->op() == OpKind::kQuantizedLookup;
        tabled += s.node->attrs.Has("edgec_output_table");
        if (s.node->attrs.Has("edgec_output_table") && s.kernel != "reference") {
          EXPECT_NE(s.kernel.find("fused 256-entry lookup"), std::string::npos) << s.kernel;
        }
      }
      EXPECT_EQ(lookups, variant == 0 ? 0 : 1) << "variant " << variant;
      EXPECT_EQ(tabled, variant == 0 ? 1 : 0) << "variant " << variant;
      ExpectRunsBitForBit(**plan, inputs, *want, fmt::format("variant {}{}", variant, fast ? " fast" : " reference"));
    }
  }
}

// x (f32) -> QuantizeLinear -> QLinearConv (3 -> 16, 3x3 stride 2) -> output. Variant 1: the
// quantized input is also read by a max pool (an output); 2: the conv's x_scale differs from
// the quantize's; 3: the quantized input is itself a graph output.
Graph QuantizeConvGraph(int variant) {
  std::mt19937 rng(18);
  Tensor w(DType::kI8, {16, 3, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  auto u8 = [](uint8_t z) {
    Tensor t(DType::kU8, {});
    t.data<uint8_t>()[0] = z;
    return t;
  };
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 3, 20, 20}));
  Node* q = g.AddNode(OpKind::kQuantizeLinear, "q",
                      {x, g.AddConstant("q_s", Tensor::Scalar(0.03f)), g.AddConstant("q_z", u8(110))}, 1);
  Node* c = g.AddNode(OpKind::kQLinearConv, "c1",
                      {q->output(0), g.AddConstant("c1_xs", Tensor::Scalar(variant == 2 ? 0.031f : 0.03f)),
                       g.AddConstant("c1_xz", u8(110)), g.AddConstant("c1_w", w),
                       g.AddConstant("c1_ws", Tensor::Scalar(0.01f)), g.AddConstant("c1_wz", Tensor(DType::kI8, {})),
                       g.AddConstant("c1_ys", Tensor::Scalar(0.2f)), g.AddConstant("c1_yz", u8(100))},
                      1);
  c->attrs.Set("pads", std::vector<int64_t>(4, 1));
  c->attrs.Set("strides", std::vector<int64_t>{2, 2});
  g.MarkOutput(c->output(0));
  if (variant == 1) {
    Node* pool = g.AddNode(OpKind::kMaxPool, "pool", {q->output(0)}, 1);
    pool->attrs.Set("kernel_shape", std::vector<int64_t>{2, 2});
    g.MarkOutput(pool->output(0));
  }
  if (variant == 3) g.MarkOutput(q->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

// The CPU lowering (lower/cpu_lower.h) fuses the input quantize: a quantize that alone feeds an int8 conv,
// with the conv's own input parameters, is gone from the steps (the conv quantizes the f32
// image as it interleaves it), and the outputs equal the reference executor's on the graph
// as given, fast kernels or reference ones; another reader, other parameters or a graph
// output keep the quantize a step.
TEST(Plan, FusesTheInputQuantizeIntoTheConvAfterIt) {
  for (int variant = 0; variant < 4; ++variant) {
    Graph g = QuantizeConvGraph(variant);
    Tensor x(DType::kF32, {1, 3, 20, 20});
    std::mt19937 rng(6);
    std::uniform_real_distribution<float> u(-5.f, 5.f);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = u(rng);
    const std::map<std::string, Tensor> inputs = {{"x", x}};
    auto want = ReferenceExecutor(g).Run(inputs);
    ASSERT_TRUE(want.ok()) << want.status().message();
    for (bool fast : {true, false}) {
      PlanOptions po;
      po.fast_kernels = fast;
      auto plan = lower::BuildCpuPlan(g.Clone(), po);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      int quantizes = 0, fused = 0;
      for (const PlanStepInfo& s : (*plan)->steps()) {
        quantizes += s.node->op() == OpKind::kQuantizeLinear;
        fused += s.node->attrs.GetInt("edgec_quantize_input", 0) != 0;
        if (s.node->attrs.Has("edgec_quantize_input") && s.kernel != "reference") {
          EXPECT_NE(s.kernel.find("quantize"), std::string::npos) << s.kernel;
        }
      }
      EXPECT_EQ(quantizes, variant == 0 ? 0 : 1) << "variant " << variant;
      EXPECT_EQ(fused, variant == 0 ? 1 : 0) << "variant " << variant;
      ExpectRunsBitForBit(**plan, inputs, *want, fmt::format("variant {}{}", variant, fast ? " fast" : " reference"));
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

namespace edgec {
namespace {

// Kernel choices travel with each plan (PlanOptions::tuning), not in a process global: two
// plans of one graph built one after the other keep their own choice, and both compute the
// reference's numbers.
TEST(Plan, KernelTuningIsPerPlan) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 64}));
  std::vector<float> w(64 * 48);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 8.f;
  Node* mm = g.AddNode(OpKind::kMatMul, "mm", {x, g.AddConstant("w", Tensor::FromVector<float>(DType::kF32, {64, 48}, w))},
                       1, {"y"});
  g.MarkOutput(mm->output(0));
  ASSERT_TRUE(InferShapes(g).ok());
  auto inputs = RandomInputs(g, 9, 1);
  auto want = ReferenceExecutor(g).Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().message();
  PlanOptions with, without;
  without.tuning.gemv = false;
  auto a = Plan::Build(g.Clone(), with);
  auto b = Plan::Build(g.Clone(), without);
  ASSERT_TRUE(a.ok() && b.ok());
  const std::string ka = (*a)->steps().at(0).kernel, kb = (*b)->steps().at(0).kernel;
  EXPECT_NE(ka.find("gemv"), std::string::npos) << ka;
  EXPECT_EQ(kb.find("gemv"), std::string::npos) << kb;
  // The first plan still runs its own kernel after the second was built.
  EXPECT_EQ((*a)->steps().at(0).kernel, ka);
  for (Plan* p : {a->get(), b->get()}) {
    PlanExecutor ex(*p);
    std::vector<Tensor> got;
    ASSERT_TRUE(ex.Run(inputs, &got).ok());
    ASSERT_EQ(got.size(), 1u);
    const std::vector<double> gv = got[0].ToDoubleVector(), wv = (*want)[0].ToDoubleVector();
    for (size_t i = 0; i < gv.size(); ++i) EXPECT_NEAR(gv[i], wv[i], 1e-4) << i;
  }
}

}  // namespace
}  // namespace edgec
