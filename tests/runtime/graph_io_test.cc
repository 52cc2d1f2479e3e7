#include "runtime/graph_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "frontend/onnx/exporter.h"
#include "npu/target.h"
#include "runtime/artifact_run.h"

namespace edgec::graph_io {
namespace {

Tensor Ramp(DType dtype, Dims dims) {
  Tensor t = Tensor::Create(dtype, dims).value();
  auto* p = static_cast<uint8_t*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(i * 37 + 11);
  return t;
}

// Every kind of field: symbolic dims with names, constants, each attribute kind, an absent
// optional input, quantization parameters, provenance, opset, several outputs.
Graph Sample() {
  Graph g;
  g.name = "sample";
  TensorType in;
  in.dtype = DType::kF32;
  in.dims = {kUnknownDim, 3, 8, 8};
  in.dim_names = {"batch", "", "", ""};
  Value* x = g.AddInput("x", in);
  Value* w = g.AddConstant("w", Ramp(DType::kF32, {4, 3, 3, 3}));
  Value* hi = g.AddConstant("hi", Tensor::Scalar(6.0f));
  Node* conv = g.AddNode(OpKind::kConv, "conv1", {x, w, nullptr}, 1, {"y"});
  conv->attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv->attrs.Set("group", int64_t{1});
  conv->attrs.Set("auto_pad", std::string("NOTSET"));
  conv->attrs.Set("edgec_scales", std::vector<float>{0.5f, 0.25f});
  conv->attrs.Set("edgec_names", std::vector<std::string>{"a", "b"});
  conv->attrs.Set("edgec_table", Ramp(DType::kI8, {16}));
  conv->attrs.Set("edgec_alpha", 0.125f);
  conv->provenance = {"conv1", "bn1"};
  conv->opset = 13;
  conv->output(0)->type.dtype = DType::kF32;
  conv->output(0)->type.dims = {kUnknownDim, 4, 8, 8};
  QuantParams q;
  q.scales = {0.1f, 0.2f, 0.3f, 0.4f};
  q.zero_points = {0, 1, 2, 3};
  q.axis = 1;
  q.storage = DType::kU8;
  conv->output(0)->quant = q;
  Node* clip = g.AddNode(OpKind::kClip, "clip", {conv->output(0), nullptr, hi}, 1, {"z"});
  clip->output(0)->type = conv->output(0)->type;
  g.MarkOutput(clip->output(0));
  g.MarkOutput(conv->output(0));
  return g;
}

TEST(GraphIo, RoundTripsEveryField) {
  Graph g = Sample();
  ASSERT_TRUE(Verify(g).ok());
  auto back = DeserializeGraph(SerializeGraph(g), "sample.edgec");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(PrintGraph(*back), PrintGraph(g));
  EXPECT_EQ(back->name, "sample");
  ASSERT_EQ(back->inputs().size(), 1u);
  EXPECT_EQ(back->inputs()[0]->type.dim_names, g.inputs()[0]->type.dim_names);
  EXPECT_EQ(back->inputs()[0]->type.dims, g.inputs()[0]->type.dims);
  const auto nodes = back->nodes(), want = g.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]->op(), OpKind::kConv);
  EXPECT_TRUE(nodes[0]->attrs == want[0]->attrs);
  EXPECT_EQ(nodes[0]->provenance, want[0]->provenance);
  EXPECT_EQ(nodes[0]->opset, 13);
  EXPECT_EQ(nodes[0]->input(2), nullptr);
  EXPECT_EQ(nodes[1]->input(1), nullptr);
  ASSERT_TRUE(nodes[0]->output(0)->quant.has_value());
  EXPECT_EQ(nodes[0]->output(0)->quant->scales, want[0]->output(0)->quant->scales);
  EXPECT_EQ(nodes[0]->output(0)->quant->zero_points, want[0]->output(0)->quant->zero_points);
  EXPECT_EQ(nodes[0]->output(0)->quant->axis, 1);
  EXPECT_EQ(nodes[0]->output(0)->quant->storage, DType::kU8);
  const Tensor& w0 = g.FindValue("w")->constant();
  const Tensor& w1 = back->FindValue("w")->constant();
  ASSERT_EQ(w1.dims(), w0.dims());
  EXPECT_EQ(std::memcmp(w0.raw(), w1.raw(), w0.nbytes()), 0);
  ASSERT_EQ(back->outputs().size(), 2u);
  EXPECT_EQ(back->outputs()[0]->name(), "z");
  EXPECT_EQ(back->outputs()[1]->name(), "y");
}

TEST(GraphIo, DamagedBytesFailNamingTheFile) {
  const std::vector<uint8_t> good = SerializeGraph(Sample());
  std::vector<uint8_t> cut(good.begin(), good.begin() + good.size() / 2);
  auto a = DeserializeGraph(cut, "cut.edgec");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("cut.edgec"), std::string::npos) << a.status().message();
  auto b = DeserializeGraph({}, "empty.edgec");
  EXPECT_FALSE(b.ok());
  // An op this edgec does not know.
  std::vector<uint8_t> renamed = good;
  const std::string clip = "Clip";
  auto it = std::search(renamed.begin(), renamed.end(), clip.begin(), clip.end());
  ASSERT_NE(it, renamed.end());
  it[1] = 'x';
  auto c = DeserializeGraph(renamed, "op.edgec");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("Cxip"), std::string::npos) << c.status().message();
}

// A compiled model file whose graph is ONNX (as format 2 wrote it) loads through the importer;
// the same graph as graph_ir loads to the same graph.
TEST(GraphIo, OnnxGraphStillLoads) {
  Graph g;
  g.name = "edgec";  // the name the exporter gives the ONNX graph
  TensorType t;
  t.dtype = DType::kF32;
  t.dims = {1, 4};
  Value* x = g.AddInput("x", t);
  Node* relu = g.AddNode(OpKind::kRelu, "relu", {x}, 1, {"y"});
  relu->output(0)->type = t;
  g.MarkOutput(relu->output(0));
  auto proto = onnx_fe::ExportOnnxModel(g);
  ASSERT_TRUE(proto.ok()) << proto.status().message();
  std::string bytes;
  ASSERT_TRUE(proto->SerializeToString(&bytes));
  artifact_io::CompiledModel onnx_form, own_form;
  onnx_form.target_json = own_form.target_json = npu::DefaultTargetJson();
  onnx_form.graph_onnx.assign(bytes.begin(), bytes.end());
  own_form.graph_ir = SerializeGraph(g);
  std::string printed[2];
  for (int i = 0; i < 2; ++i) {
    const std::string path = (std::filesystem::temp_directory_path() / ("edgec_graph_io_" + std::to_string(i))).string();
    ASSERT_TRUE(artifact_io::WriteArtifact(path, i == 0 ? onnx_form : own_form).ok());
    auto file = artifact_io::MappedArtifact::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    EXPECT_EQ((*file)->graph_onnx().empty(), i == 1);
    EXPECT_EQ((*file)->graph_ir().empty(), i == 0);
    auto loaded = LoadArtifact(**file);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    printed[i] = PrintGraph(loaded->graph);
    std::filesystem::remove(path);
  }
  EXPECT_NE(printed[0].find("Relu"), std::string::npos);
  EXPECT_EQ(printed[0], printed[1]);
}

}  // namespace
}  // namespace edgec::graph_io
