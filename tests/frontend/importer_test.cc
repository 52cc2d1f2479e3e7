// Importer tests on models built in the test with the ONNX protobuf types.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "runtime/reference_executor.h"

namespace edgec::onnx_fe {
namespace {

namespace fs = std::filesystem;

onnx::ModelProto NewModel(int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  return m;
}

void AddInput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
              int type = onnx::TensorProto::FLOAT) {
  auto* vi = g->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) shape->add_dim()->set_dim_param("N");
    else shape->add_dim()->set_dim_value(d);
  }
}

void AddOutput(onnx::GraphProto* g, const std::string& name) {
  auto* vi = g->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                         std::vector<std::string> outs, const std::string& name) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

void AddFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

std::vector<float> RunOne(const Graph& g, const std::string& input, Tensor x) {
  ReferenceExecutor exec(g);
  auto out = exec.Run({{input, std::move(x)}});
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok()) return {};
  auto v = (*out)[0].ToDoubleVector();
  return std::vector<float>(v.begin(), v.end());
}

TEST(Importer, InitializerTypedFieldsAndRawDataAgree) {
  for (bool raw : {false, true}) {
    auto m = NewModel(13);
    auto* g = m.mutable_graph();
    AddInput(g, "x", {3});
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(3);
    std::vector<float> vals = {1.5f, -2.f, 4.f};
    if (raw) w->set_raw_data(std::string(reinterpret_cast<char*>(vals.data()), 12));
    else for (float v : vals) w->add_float_data(v);
    AddNode(g, "Add", {"x", "w"}, {"y"}, "add");
    AddOutput(g, "y");
    auto graph = ImportOnnxModel(m, ".", "test.onnx");
    ASSERT_TRUE(graph.ok()) << graph.status().message();
    auto y = RunOne(*graph, "x", Tensor::FromVector<float>(DType::kF32, {3}, {1, 1, 1}));
    EXPECT_EQ(y, (std::vector<float>{2.5f, -1.f, 5.f})) << "raw=" << raw;
  }
}

TEST(Importer, TypedFieldCountMismatchIsAnError) {
  auto m = NewModel(13);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {3});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_float_data(1.f);  // 1 value for 3 elements
  AddNode(g, "Add", {"x", "w"}, {"y"}, "add");
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "test.onnx");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("initializer 'w'"), std::string::npos);
  EXPECT_NE(graph.status().message().find("float_data has 1 elements"), std::string::npos);
}

TEST(Importer, ExternalDataInsideModelFolderLoadsAndEscapesAreRefused) {
  fs::path dir = fs::temp_directory_path() / "edgec_external_test";
  fs::create_directories(dir / "weights");
  std::vector<float> vals = {0.f, 10.f, 20.f, 30.f, 7.f, 8.f};  // offset 16 -> {7, 8}
  {
    std::ofstream f(dir / "weights" / "w.bin", std::ios::binary);
    f.write(reinterpret_cast<char*>(vals.data()), 24);
  }
  auto make = [&](const std::string& location) {
    auto m = NewModel(13);
    auto* g = m.mutable_graph();
    AddInput(g, "x", {2});
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(2);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (auto [k, v] : {std::pair{"location", location}, {"offset", std::string("16")}, {"length", std::string("8")}}) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    AddNode(g, "Add", {"x", "w"}, {"y"}, "add");
    AddOutput(g, "y");
    return m;
  };
  auto ok = ImportOnnxModel(make("weights/w.bin"), dir, "m.onnx");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(RunOne(*ok, "x", Tensor::FromVector<float>(DType::kF32, {2}, {1, 1})),
            (std::vector<float>{8.f, 9.f}));
  for (const std::string& bad : std::vector<std::string>{"../w.bin", "weights/../../w.bin", (dir / "weights" / "w.bin").string()}) {
    auto r = ImportOnnxModel(make(bad), dir, "m.onnx");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  fs::remove_all(dir);
}

TEST(Importer, Clip6AttributesBecomeInputs) {
  auto m = NewModel(6);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {4});
  auto* n = AddNode(g, "Clip", {"x"}, {"y"}, "clip");
  AddFloatAttr(n, "min", -1.f);
  AddFloatAttr(n, "max", 2.f);
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "clip6.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const Node* clip = graph->nodes()[0];
  EXPECT_EQ(clip->op(), OpKind::kClip);
  ASSERT_EQ(clip->num_inputs(), 3);
  EXPECT_TRUE(clip->input(1)->is_constant());
  EXPECT_FALSE(clip->attrs.Has("min"));
  EXPECT_EQ(RunOne(*graph, "x", Tensor::FromVector<float>(DType::kF32, {4}, {-5, 0.5, 1, 9})),
            (std::vector<float>{-1, 0.5, 1, 2}));
}

// Pad-2 (pads, value), Clip-6 with max only (input 1 stays empty) and TopK-1 (k): each
// attribute becomes its input (converters.cc AttrInputTable).
TEST(Importer, OlderOpsetAttributesBecomeInputs) {
  auto m = NewModel(6);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {4});
  auto* pad = AddNode(g, "Pad", {"x"}, {"p"}, "pad");
  auto* pads = pad->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  pads->add_ints(1);
  pads->add_ints(1);
  AddFloatAttr(pad, "value", 3.f);
  AddFloatAttr(AddNode(g, "Clip", {"p"}, {"c"}, "clip"), "max", 5.f);
  auto* topk = AddNode(g, "TopK", {"c"}, {"v", "i"}, "topk");
  auto* k = topk->add_attribute();
  k->set_name("k");
  k->set_type(onnx::AttributeProto::INT);
  k->set_i(6);
  AddOutput(g, "v");
  auto graph = ImportOnnxModel(m, ".", "opset6.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  ASSERT_EQ(graph->nodes().size(), 3u);
  const Node* p = graph->nodes()[0];
  const Node* c = graph->nodes()[1];
  const Node* t = graph->nodes()[2];
  ASSERT_EQ(p->num_inputs(), 3);
  EXPECT_TRUE(p->input(1)->is_constant() && p->input(2)->is_constant());
  EXPECT_FALSE(p->attrs.Has("pads") || p->attrs.Has("value"));
  ASSERT_EQ(c->num_inputs(), 3);
  EXPECT_EQ(c->input(1), nullptr);
  EXPECT_TRUE(c->input(2)->is_constant());
  ASSERT_EQ(t->num_inputs(), 2);
  EXPECT_FALSE(t->attrs.Has("k"));
  // pad -> {3, -5, 0.5, 1, 9, 3}, clip -> {3, -5, 0.5, 1, 5, 3}, top 6 -> sorted down.
  EXPECT_EQ(RunOne(*graph, "x", Tensor::FromVector<float>(DType::kF32, {4}, {-5, 0.5, 1, 9})),
            (std::vector<float>{5, 3, 3, 1, 0.5, -5}));
}

TEST(Importer, LegacySoftmaxCoercesToTwoDims) {
  // Softmax-11 with axis=1 on [2, 2, 2] normalizes over the last two dims together.
  auto m = NewModel(11);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2, 2, 2});
  AddNode(g, "Softmax", {"x"}, {"y"}, "sm");
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "sm11.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto y = RunOne(*graph, "x", Tensor::FromVector<float>(DType::kF32, {2, 2, 2}, {0, 0, 0, 0, 1, 2, 3, 4}));
  ASSERT_EQ(y.size(), 8u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], 0.25f, 1e-6);
  double denom = std::exp(1) + std::exp(2) + std::exp(3) + std::exp(4);
  EXPECT_NEAR(y[4], std::exp(1) / denom, 1e-6);
  EXPECT_NEAR(y[7], std::exp(4) / denom, 1e-6);
}

TEST(Importer, UpsampleBecomesResize) {
  auto m = NewModel(9);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {1, 1, 1, 2});
  auto* s = g->add_initializer();
  s->set_name("scales");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_dims(4);
  for (float v : {1.f, 1.f, 2.f, 2.f}) s->add_float_data(v);
  AddNode(g, "Upsample", {"x", "scales"}, {"y"}, "up");
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "up9.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->nodes()[0]->op(), OpKind::kResize);
  EXPECT_EQ(RunOne(*graph, "x", Tensor::FromVector<float>(DType::kF32, {1, 1, 1, 2}, {1, 2})),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2}));
}

TEST(Importer, UnsupportedOpsAreAllListedWithOpset) {
  auto m = NewModel(13);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2});
  AddNode(g, "NoSuchOpA", {"x"}, {"a"}, "first_a");
  AddNode(g, "NoSuchOpB", {"a"}, {"b"}, "only_b");
  AddNode(g, "NoSuchOpA", {"b"}, {"c"}, "second_a");
  AddNode(g, "NoSuchOpA", {"c"}, {"d"}, "third_a");
  AddOutput(g, "d");
  ImportInfo info;
  auto graph = ImportOnnxModel(m, ".", "unsupported.onnx", &info);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), StatusCode::kUnimplemented);
  // Grouped by op type in order of first appearance: a count and the first node.
  EXPECT_NE(graph.status().message().find("2 unsupported ops in 4 nodes (opset 13): "
                                          "NoSuchOpA \u00d73, first 'first_a'; NoSuchOpB 'only_b'"),
            std::string::npos)
      << graph.status().message();
  ASSERT_EQ(info.unsupported.size(), 2u);
  EXPECT_EQ(info.unsupported[1], "NoSuchOpB 'only_b'");
  EXPECT_EQ(info.op_histogram["NoSuchOpA"], 3);
}

TEST(Importer, OpsetAboveRangeIsRefused) {
  auto m = NewModel(18);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2});
  AddNode(g, "Relu", {"x"}, {"y"}, "r");
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "o18.onnx");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("opset 18"), std::string::npos);
}

TEST(Importer, ConstantNodeBecomesConstantValueAndProvenanceIsKept) {
  auto m = NewModel(13);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2});
  auto* c = AddNode(g, "Constant", {}, {"k"}, "const1");
  auto* a = c->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  a->add_floats(3.f);
  a->add_floats(4.f);
  AddNode(g, "Mul", {"x", "k"}, {"y"}, "layer1/mul");
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "c.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  ASSERT_EQ(graph->num_nodes(), 1);
  const Node* mul = graph->nodes()[0];
  EXPECT_TRUE(mul->input(1)->is_constant());
  EXPECT_EQ(mul->provenance, (std::vector<std::string>{"layer1/mul"}));
  EXPECT_EQ(RunOne(*graph, "x", Tensor::FromVector<float>(DType::kF32, {2}, {1, 2})),
            (std::vector<float>{3, 8}));
}

TEST(Exporter, RoundTripKeepsOpsAndNumbers) {
  auto m = NewModel(11);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2, 3});
  auto* r = AddNode(g, "ReduceMean", {"x"}, {"m"}, "mean");
  auto* ax = r->add_attribute();
  ax->set_name("axes");
  ax->set_type(onnx::AttributeProto::INTS);
  ax->add_ints(1);
  AddNode(g, "Sub", {"x", "m"}, {"y"}, "sub");
  AddOutput(g, "y");
  auto graph = ImportOnnxModel(m, ".", "rm.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto exported = ExportOnnxModel(*graph);
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_EQ(exported->opset_import(0).version(), kExportOpset);
  // ReduceMean's axes go back to an attribute at opset 17.
  const auto& rn = exported->graph().node(0);
  EXPECT_EQ(rn.op_type(), "ReduceMean");
  EXPECT_EQ(rn.input_size(), 1);
  auto again = ImportOnnxModel(*exported, ".", "exported");
  ASSERT_TRUE(again.ok()) << again.status().message();
  Tensor x = Tensor::FromVector<float>(DType::kF32, {2, 3}, {1, 2, 3, 10, 20, 60});
  EXPECT_EQ(RunOne(*graph, "x", x), RunOne(*again, "x", x));
  EXPECT_EQ(RunOne(*again, "x", x), (std::vector<float>{-1, 0, 1, -20, -10, 30}));
}

// The training optimizers live in ai.onnx.preview.training (version 1): a model may import
// only that domain; the same op type in the default domain is unsupported; export names the
// domain again, and the round trip computes the same update (Momentum, one step by hand).
TEST(Importer, TrainingDomainOpsImportRunAndExportInTheirDomain) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain(kTrainingDomain);
  o->set_version(1);
  auto* g = m.mutable_graph();
  AddInput(g, "R", {}, onnx::TensorProto::FLOAT);
  AddInput(g, "T", {}, onnx::TensorProto::INT64);
  for (const char* n : {"X", "G", "V"}) AddInput(g, n, {2});
  auto* node = AddNode(g, "Momentum", {"R", "T", "X", "G", "V"}, {"X_new", "V_new"}, "step");
  node->set_domain(kTrainingDomain);
  AddFloatAttr(node, "alpha", 0.5f);
  AddFloatAttr(node, "beta", 0.25f);
  AddFloatAttr(node, "norm_coefficient", 0.f);
  auto* mode = node->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("standard");
  AddOutput(g, "X_new");
  AddOutput(g, "V_new");
  auto graph = ImportOnnxModel(m, ".", "momentum.onnx");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  ASSERT_EQ(graph->num_nodes(), 1);
  EXPECT_EQ(graph->nodes()[0]->op(), OpKind::kMomentum);

  // V' = 0.5·V + 0.25·G (T > 0), X' = X − R·V'.
  auto run = [](const Graph& gr) {
    ReferenceExecutor exec(gr);
    auto out = exec.Run({{"R", Tensor::FromVector<float>(DType::kF32, {}, {2.f})},
                         {"T", Tensor::FromVector<int64_t>(DType::kI64, {}, {3})},
                         {"X", Tensor::FromVector<float>(DType::kF32, {2}, {1.f, -1.f})},
                         {"G", Tensor::FromVector<float>(DType::kF32, {2}, {4.f, 8.f})},
                         {"V", Tensor::FromVector<float>(DType::kF32, {2}, {2.f, 0.f})}});
    EXPECT_TRUE(out.ok()) << out.status().message();
    std::vector<double> r;
    if (!out.ok()) return r;
    for (const Tensor& t : *out) for (double v : t.ToDoubleVector()) r.push_back(v);
    return r;
  };
  EXPECT_EQ(run(*graph), (std::vector<double>{-3, -5, 2, 2}));

  auto exported = ExportOnnxModel(*graph);
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_EQ(exported->graph().node(0).domain(), kTrainingDomain);
  bool imports_training = false;
  for (const auto& op : exported->opset_import()) imports_training |= op.domain() == kTrainingDomain && op.version() == 1;
  EXPECT_TRUE(imports_training);
  auto again = ImportOnnxModel(*exported, ".", "exported");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(run(*again), run(*graph));

  // The default domain has no Momentum; another version of the domain is refused.
  onnx::ModelProto plain = m;
  plain.mutable_graph()->mutable_node(0)->set_domain("");
  plain.mutable_opset_import(0)->set_domain("");
  plain.mutable_opset_import(0)->set_version(13);
  auto refused = ImportOnnxModel(plain, ".", "plain.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unsupported op in 1 node (opset 13): Momentum 'step'"), std::string::npos)
      << refused.status().message();
  onnx::ModelProto v2 = m;
  v2.mutable_opset_import(0)->set_version(2);
  auto newer = ImportOnnxModel(v2, ".", "v2.onnx");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("ai.onnx.preview.training version 2"), std::string::npos)
      << newer.status().message();
}

}  // namespace
}  // namespace edgec::onnx_fe
