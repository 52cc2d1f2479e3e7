// If, Loop and Scan with subgraphs that read values of the enclosing graph: import (captures
// as trailing inputs, ir/control_flow.h), reference execution, the CPU plan (Session), the
// export round trip through ONNX's checker, and the folding of a constant condition.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include "driver/session.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "ir/control_flow.h"
#include "runtime/reference_executor.h"

namespace edgec::onnx_fe {
namespace {

void SetType(onnx::ValueInfoProto* vi, const std::string& name, int type, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::NodeProto* Add(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                     std::vector<std::string> outs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

void FloatInit(onnx::GraphProto* g, const std::string& name, std::vector<float> v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (float f : v) t->add_float_data(f);
}

onnx::GraphProto* GraphAttr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  return a->mutable_g();
}

// y = cond ? x + c1 : y0 * c2, where x and y0 are inputs of the enclosing graph and c1, c2
// its initializers: both branches read outer values, each different ones.
onnx::ModelProto IfModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  SetType(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  SetType(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
  SetType(g->add_input(), "y0", onnx::TensorProto::FLOAT, {3});
  FloatInit(g, "c1", {1, 2, 3});
  FloatInit(g, "c2", {2, 2, 2});
  auto* n = Add(g, "If", {"cond"}, {"y"});
  auto* then_g = GraphAttr(n, "then_branch");
  Add(then_g, "Add", {"x", "c1"}, {"t"});
  SetType(then_g->add_output(), "t", onnx::TensorProto::FLOAT, {3});
  auto* else_g = GraphAttr(n, "else_branch");
  Add(else_g, "Mul", {"y0", "c2"}, {"e"});
  SetType(else_g->add_output(), "e", onnx::TensorProto::FLOAT, {3});
  SetType(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
  return m;
}

// Loop M times: acc = acc + x (x captured); scan output: acc after each iteration.
onnx::ModelProto LoopModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  SetType(g->add_input(), "M", onnx::TensorProto::INT64, {});
  SetType(g->add_input(), "x", onnx::TensorProto::FLOAT, {2});
  FloatInit(g, "acc0", {10, 20});
  auto* n = Add(g, "Loop", {"M", "", "acc0"}, {"acc", "steps"});
  auto* body = GraphAttr(n, "body");
  SetType(body->add_input(), "i", onnx::TensorProto::INT64, {});
  SetType(body->add_input(), "c", onnx::TensorProto::BOOL, {});
  SetType(body->add_input(), "a", onnx::TensorProto::FLOAT, {2});
  Add(body, "Add", {"a", "x"}, {"a2"});
  Add(body, "Identity", {"c"}, {"c2"});
  Add(body, "Identity", {"a2"}, {"s"});
  SetType(body->add_output(), "c2", onnx::TensorProto::BOOL, {});
  SetType(body->add_output(), "a2", onnx::TensorProto::FLOAT, {2});
  SetType(body->add_output(), "s", onnx::TensorProto::FLOAT, {2});
  SetType(g->add_output(), "acc", onnx::TensorProto::FLOAT, {2});
  auto* steps = g->add_output();
  steps->set_name("steps");
  steps->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

Tensor Floats(std::vector<float> v) { return Tensor::FromVector<float>(DType::kF32, {static_cast<int64_t>(v.size())}, v); }
Tensor Bool(bool b) {
  Tensor t(DType::kBool, {});
  t.data<bool>()[0] = b;
  return t;
}

std::vector<double> Values(const Tensor& t) { return t.ToDoubleVector(); }

TEST(ControlFlow, IfCapturesAreTrailingInputsOfBothBranches) {
  auto g = ImportOnnxModel(IfModel(), ".", "if");
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* n = g->nodes().back();
  ASSERT_EQ(n->op(), OpKind::kIf);
  EXPECT_EQ(NumCaptures(n->attrs), 4);  // x, c1 (then), y0, c2 (else)
  ASSERT_EQ(n->num_inputs(), 5);
  EXPECT_EQ(n->input(1)->name(), "x");
  EXPECT_EQ(n->input(3)->name(), "y0");
  for (const char* b : {"then_branch", "else_branch"}) {
    const Graph* sub = n->attrs.GetGraph(b);
    ASSERT_NE(sub, nullptr);
    ASSERT_EQ(sub->inputs().size(), 4u) << b;
    EXPECT_EQ(sub->inputs()[2]->name(), "y0") << b;
  }
}

TEST(ControlFlow, IfRunsTheTakenBranchOnReferenceAndPlan) {
  auto g = ImportOnnxModel(IfModel(), ".", "if");
  ASSERT_TRUE(g.ok()) << g.status().message();
  for (bool cond : {true, false}) {
    std::map<std::string, Tensor> in = {{"cond", Bool(cond)}, {"x", Floats({1, 1, 1})}, {"y0", Floats({5, 6, 7})}};
    std::vector<double> want = cond ? std::vector<double>{2, 3, 4} : std::vector<double>{10, 12, 14};
    auto ref = ReferenceExecutor(*g).Run(in);
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    EXPECT_EQ(Values((*ref)[0]), want);
    auto session = Session::FromGraph(g->Clone(), "if", SessionOptions());
    ASSERT_TRUE(session.ok()) << session.status().message();
    std::vector<Tensor> out;
    Status st = (*session)->Run(in, &out);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(Values(out[0]), want);
  }
}

TEST(ControlFlow, CapturesRoundTrip) {
  auto g = ImportOnnxModel(IfModel(), ".", "if");
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto exported = ExportOnnxModel(*g);
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_NO_THROW(onnx::checker::check_model(*exported));
  // The node has ONNX's one input again; the branches read the outer names.
  const auto& node = exported->graph().node(0);
  ASSERT_EQ(node.input_size(), 1);
  for (const auto& a : node.attribute()) {
    EXPECT_NE(a.name(), kCapturesAttr);
    if (a.type() == onnx::AttributeProto::GRAPH) {
      EXPECT_EQ(a.g().input_size(), 0);
    }
  }
  auto again = ImportOnnxModel(*exported, ".", "exported");
  ASSERT_TRUE(again.ok()) << again.status().message();
  auto out = ReferenceExecutor(*again).Run({{"cond", Bool(false)}, {"x", Floats({1, 1, 1})}, {"y0", Floats({5, 6, 7})}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{10, 12, 14}));
}

TEST(ControlFlow, ConstantConditionInlined) {
  auto m = IfModel();
  auto* g = m.mutable_graph();
  g->mutable_input()->DeleteSubrange(0, 1);  // cond becomes an initializer: true
  auto* c = g->add_initializer();
  c->set_name("cond");
  c->set_data_type(onnx::TensorProto::BOOL);
  c->add_int32_data(1);
  auto graph = ImportOnnxModel(m, ".", "if-const");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto session = Session::FromGraph(std::move(graph).value(), "if-const", SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status().message();
  std::vector<Tensor> out;
  Status st = (*session)->Run({{"x", Floats({1, 1, 1})}, {"y0", Floats({5, 6, 7})}}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Values(out[0]), (std::vector<double>{2, 3, 4}));
  ASSERT_NE((*session)->last_plan(), nullptr);
  for (const Node* n : (*session)->last_plan()->graph().nodes()) EXPECT_NE(n->op(), OpKind::kIf) << "the If was not folded";
  EXPECT_TRUE((*session)->last_plan()->dynamic_nodes().empty());
}

TEST(ControlFlow, LoopCarriesAndStacksOnBothPaths) {
  auto g = ImportOnnxModel(LoopModel(), ".", "loop");
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::map<std::string, Tensor> in = {{"M", Tensor::ScalarI64(3)}, {"x", Floats({1, 2})}};
  auto ref = ReferenceExecutor(*g).Run(in);
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  EXPECT_EQ(Values((*ref)[0]), (std::vector<double>{13, 26}));
  EXPECT_EQ((*ref)[1].dims(), (Dims{3, 2}));
  EXPECT_EQ(Values((*ref)[1]), (std::vector<double>{11, 22, 12, 24, 13, 26}));
  auto session = Session::FromGraph(g->Clone(), "loop", SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status().message();
  std::vector<Tensor> out;
  Status st = (*session)->Run(in, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Values(out[1]), Values((*ref)[1]));
  // Zero iterations: the initial value, and an empty stack of [2] rows.
  auto zero = ReferenceExecutor(*g).Run({{"M", Tensor::ScalarI64(0)}, {"x", Floats({1, 2})}});
  ASSERT_TRUE(zero.ok()) << zero.status().message();
  EXPECT_EQ(Values((*zero)[0]), (std::vector<double>{10, 20}));
  EXPECT_EQ((*zero)[1].dims(), (Dims{0, 2}));
}

TEST(ControlFlow, UndefinedOuterNameIsAClearError) {
  auto m = IfModel();
  auto* then_g = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  then_g->mutable_node(0)->set_input(0, "nowhere");
  auto g = ImportOnnxModel(m, ".", "bad.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("'nowhere' is not defined"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("then_branch"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace edgec::onnx_fe
