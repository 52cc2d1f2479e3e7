// Sequence and optional values (ir/types.h: ValueKind, TensorType::optional): import of
// sequence/optional graph inputs and outputs, the sequence family's kernels on the reference
// executor and on the CPU plan (whose dynamic part runs them), the export round trip through
// ONNX's checker, and the clear error of a tensor op given a sequence.
#include <gtest/gtest.h>
#include <onnx/checker.h>

#include "driver/session.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "runtime/reference_executor.h"

namespace edgec::onnx_fe {
namespace {

onnx::TypeProto TensorTypeProto(int elem, std::vector<int64_t> dims) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return t;
}

onnx::TypeProto SequenceOf(const onnx::TypeProto& element) {
  onnx::TypeProto t;
  *t.mutable_sequence_type()->mutable_elem_type() = element;
  return t;
}

onnx::TypeProto OptionalOf(const onnx::TypeProto& element) {
  onnx::TypeProto t;
  *t.mutable_optional_type()->mutable_elem_type() = element;
  return t;
}

void Declare(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             const onnx::TypeProto& type) {
  auto* vi = list->Add();
  vi->set_name(name);
  *vi->mutable_type() = type;
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

void IntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void Int64Init(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v, bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
}

onnx::ModelProto NewModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(16);
  return m;
}

Tensor Floats(Dims d, std::vector<float> v) { return Tensor::FromVector<float>(DType::kF32, std::move(d), v); }

std::vector<float> Values(const Tensor& t) {
  std::vector<float> v(t.data<float>(), t.data<float>() + t.numel());
  return v;
}

// x f32[2, 5] -> SplitToSequence(split=[2, 3], axis=1) -> s
//   whole = ConcatFromSequence(s, axis=1)       (x again)
//   n     = SequenceLength(s)                   (2)
//   last  = SequenceAt(s, -1)                   (x[:, 2:])
//   t     = SequenceInsert(s, x, 0); u = SequenceErase(t, 1); front = SequenceAt(u, 0)
//           (x inserted in front, then the first part erased: [x, second part], item 0 is x;
//           erasing the wrong item would leave the first part in front)
//   stack = ConcatFromSequence(SplitToSequence(x, axis=0, keepdims=0), axis=0, new_axis=1) (x)
onnx::ModelProto SplitConcatModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  Declare(g->mutable_input(), "x", TensorTypeProto(onnx::TensorProto::FLOAT, {2, 5}));
  Int64Init(g, "split", {2, 3});
  Int64Init(g, "minus1", {-1}, true);
  Int64Init(g, "zero", {0}, true);
  Int64Init(g, "one", {1}, true);
  IntAttr(Add(g, "SplitToSequence", {"x", "split"}, {"s"}), "axis", 1);
  IntAttr(Add(g, "ConcatFromSequence", {"s"}, {"whole"}), "axis", 1);
  Add(g, "SequenceLength", {"s"}, {"n"});
  Add(g, "SequenceAt", {"s", "minus1"}, {"last"});
  Add(g, "SequenceInsert", {"s", "x", "zero"}, {"t"});
  Add(g, "SequenceErase", {"t", "one"}, {"u"});
  Add(g, "SequenceAt", {"u", "zero"}, {"front"});
  auto* rows = Add(g, "SplitToSequence", {"x"}, {"rows"});
  IntAttr(rows, "axis", 0);
  IntAttr(rows, "keepdims", 0);
  auto* stack = Add(g, "ConcatFromSequence", {"rows"}, {"stack"});
  IntAttr(stack, "axis", 0);
  IntAttr(stack, "new_axis", 1);
  for (const char* o : {"whole", "n", "last", "front", "stack"}) {
    auto* vi = g->add_output();
    vi->set_name(o);
  }
  return m;
}

void ExpectSplitConcat(const std::vector<Tensor>& out, const Tensor& x) {
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].dims(), (Dims{2, 5}));
  EXPECT_EQ(Values(out[0]), Values(x));
  EXPECT_EQ(out[1].data<int64_t>()[0], 2);
  EXPECT_EQ(out[2].dims(), (Dims{2, 3}));
  EXPECT_EQ(Values(out[2]), (std::vector<float>{2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(out[3].dims(), (Dims{2, 5}));
  EXPECT_EQ(Values(out[3]), Values(x));
  EXPECT_EQ(out[4].dims(), (Dims{2, 5}));
  EXPECT_EQ(Values(out[4]), Values(x));
}

TEST(Sequence, SplitConcatInsertEraseOnBothPaths) {
  auto g = ImportOnnxModel(SplitConcatModel(), ".", "split-concat");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->FindValue("s")->type.ToString(), "seq(f32[2, ?])");
  const Tensor x = Floats({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto ref = ReferenceExecutor(*g).Run({{"x", x}});
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  ExpectSplitConcat(*ref, x);
  auto session = Session::FromGraph(g->Clone(), "split-concat", SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status().message();
  std::vector<Tensor> out;
  Status st = (*session)->Run({{"x", x}}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  ExpectSplitConcat(out, x);
}

// seq (a sequence input) and opt (an optional tensor input):
//   first = SequenceAt(seq, 0); has = OptionalHasElement(opt); y = Identity(seq)
onnx::ModelProto SequenceInputModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  Declare(g->mutable_input(), "seq", SequenceOf(TensorTypeProto(onnx::TensorProto::FLOAT, {})));
  Declare(g->mutable_input(), "opt", OptionalOf(TensorTypeProto(onnx::TensorProto::FLOAT, {2})));
  Int64Init(g, "zero", {0}, true);
  Add(g, "SequenceAt", {"seq", "zero"}, {"first"});
  Add(g, "OptionalHasElement", {"opt"}, {"has"});
  Add(g, "Identity", {"seq"}, {"y"});
  Declare(g->mutable_output(), "first", TensorTypeProto(onnx::TensorProto::FLOAT, {}));
  Declare(g->mutable_output(), "has", TensorTypeProto(onnx::TensorProto::BOOL, {}));
  Declare(g->mutable_output(), "y", SequenceOf(TensorTypeProto(onnx::TensorProto::FLOAT, {})));
  return m;
}

TEST(Sequence, SequenceInputRunsInTheDynamicPart) {
  auto g = ImportOnnxModel(SequenceInputModel(), ".", "seq-input");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->inputs()[0]->type.ToString(), "seq(f32[])");
  EXPECT_EQ(g->inputs()[1]->type.ToString(), "opt(f32[2])");
  const Tensor seq = Tensor::Sequence(DType::kF32, {Floats({2}, {7, 8}), Floats({1}, {9})});
  for (bool present : {true, false}) {
    const Tensor opt = present ? Floats({2}, {1, 2}) : Tensor::None(DType::kF32);
    std::map<std::string, Tensor> in = {{"seq", seq}, {"opt", opt}};
    auto ref = ReferenceExecutor(*g).Run(in);
    ASSERT_TRUE(ref.ok()) << ref.status().message();
    auto session = Session::FromGraph(g->Clone(), "seq-input", SessionOptions());
    ASSERT_TRUE(session.ok()) << session.status().message();
    std::vector<Tensor> out;
    Status st = (*session)->Run(in, &out);
    ASSERT_TRUE(st.ok()) << st.message();
    for (const auto* o : {&*ref, &out}) {
      ASSERT_EQ(o->size(), 3u);
      EXPECT_EQ(Values((*o)[0]), (std::vector<float>{7, 8}));
      EXPECT_EQ((*o)[1].data<bool>()[0], present);
      ASSERT_TRUE((*o)[2].is_sequence());
      ASSERT_EQ((*o)[2].items().size(), 2u);
      EXPECT_EQ(Values((*o)[2].items()[1]), (std::vector<float>{9}));
    }
    ASSERT_NE((*session)->last_plan(), nullptr);
    EXPECT_FALSE((*session)->last_plan()->dynamic_nodes().empty());
  }
  // A plain tensor where the sequence belongs: refused, naming the input.
  auto bad = ReferenceExecutor(*g).Run({{"seq", Floats({2}, {1, 2})}, {"opt", Tensor::None(DType::kF32)}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("input 'seq'"), std::string::npos) << bad.status().message();
}

TEST(Sequence, TensorOpRefusesASequence) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  Declare(g->mutable_input(), "seq", SequenceOf(TensorTypeProto(onnx::TensorProto::FLOAT, {2})));
  Add(g, "Relu", {"seq"}, {"y"});
  g->add_output()->set_name("y");
  auto imported = ImportOnnxModel(m, ".", "relu-of-seq");
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("input 0 is seq(f32[2]); Relu takes tensors only"), std::string::npos)
      << imported.status().message();
}

// Optional with a `type` attribute and no input (none), and of an input; the export writes the
// TypeProto attribute back and sequence/optional value types, which ONNX's checker accepts.
TEST(Sequence, OptionalsAndExportRoundTrip) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  Declare(g->mutable_input(), "x", TensorTypeProto(onnx::TensorProto::FLOAT, {3}));
  auto* none = Add(g, "Optional", {}, {"none"});
  auto* a = none->add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  *a->mutable_tp() = SequenceOf(TensorTypeProto(onnx::TensorProto::FLOAT, {3}));
  Add(g, "OptionalHasElement", {"none"}, {"has_none"});
  Add(g, "SequenceConstruct", {"x", "x"}, {"pair"});
  Add(g, "Optional", {"pair"}, {"some"});
  Add(g, "OptionalHasElement", {"some"}, {"has_some"});
  Add(g, "OptionalGetElement", {"some"}, {"got"});
  for (const char* o : {"has_none", "has_some", "got", "none"}) g->add_output()->set_name(o);
  auto imported = ImportOnnxModel(m, ".", "optionals");
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->FindValue("none")->type.ToString(), "opt(seq(f32[*]))");
  auto exported = ExportOnnxModel(*imported);
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_NO_THROW(onnx::checker::check_model(*exported));
  auto again = ImportOnnxModel(*exported, ".", "optionals again");
  ASSERT_TRUE(again.ok()) << again.status().message();
  const Tensor x = Floats({3}, {1, 2, 3});
  for (const Graph* graph : {&*imported, &*again}) {
    auto out = ReferenceExecutor(*graph).Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_FALSE((*out)[0].data<bool>()[0]);
    EXPECT_TRUE((*out)[1].data<bool>()[0]);
    ASSERT_TRUE((*out)[2].is_sequence());
    EXPECT_EQ((*out)[2].items().size(), 2u);
    EXPECT_TRUE((*out)[3].is_none());
  }
}

}  // namespace
}  // namespace edgec::onnx_fe
