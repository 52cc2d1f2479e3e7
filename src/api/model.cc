// edgec::Model (include/edgec/model.h): import, shape binding, optimization and quantization
// as the `optimize` and `quantize` verbs do them.
#include <onnx/onnx_pb.h>

#include "api/convert.h"
#include "api/impl.h"
#include "driver/load.h"
#include "driver/sample_shapes.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "quant/pipeline.h"
#include "runtime/shape_binding.h"

namespace edgec {
inline namespace v1 {
namespace {

bool HasQuantizedOps(const Graph& g) {
  for (const Node* n : g.nodes()) {
    switch (n->op()) {
      case OpKind::kQuantizeLinear:
      case OpKind::kDequantizeLinear:
      case OpKind::kQLinearConv:
      case OpKind::kQLinearMatMul: return true;
      default: break;
    }
  }
  return false;
}

// Calibrates `g` (input shapes bound) on `samples` and rewrites it to the QDQ form.
Status QuantizeBound(Graph& g, const std::string& name, const std::vector<quant::Sample>& samples,
                     const QuantizeOptions& o, QuantizeReport* report = nullptr) {
  if (samples.empty()) return InvalidArgument("{}: quantize: no calibration samples", name);
  RETURN_IF_ERROR(quant::PrepareForQuantization(g).WithContext(name));
  quant::CalibrationOptions co;
  auto method = quant::ParseCalibrationMethod(o.method);
  if (!method.ok()) return method.status().WithContext("quantize: method");
  co.method = *method;
  co.symmetric = o.symmetric;
  if (o.dtype != DataType::kI8 && o.dtype != DataType::kU8)
    return InvalidArgument("quantize: activation dtype {} is not i8 or u8", DataTypeName(o.dtype));
  co.storage = api::ToDType(o.dtype);
  quant::QuantizeOptions qo;
  qo.per_channel = o.per_channel;
  for (const auto& n : o.keep_float) {
    bool found = false;
    for (const Node* node : g.nodes()) found |= node->name() == n;
    if (!found) return NotFound("{}: quantize: keep_float names '{}', which is no node of the model", name, n);
    qo.keep_float.insert(n);
  }
  for (const auto& n : o.int16) {
    const Node* found = nullptr;
    for (const Node* node : g.nodes())
      if (node->name() == n) found = node;
    if (!found) return NotFound("{}: quantize: int16 names '{}', which is no node of the model", name, n);
    if (found->op() != OpKind::kSoftmax && found->op() != OpKind::kLayerNormalization &&
        found->op() != OpKind::kInstanceNormalization)
      return InvalidArgument("{}: quantize: int16 names {}, not a Softmax, LayerNormalization or "
                             "InstanceNormalization", name, found->Label());
    qo.int16_nodes.insert(n);
  }
  ASSIGN_OR_RETURN(quant::ScaleTable table, quant::Calibrate(g, samples, co, qo, false));
  auto summary = quant::RewriteToQdq(g, table, qo);
  if (!summary.ok()) return summary.status().WithContext(name);
  if (report) {
    report->samples = static_cast<int64_t>(samples.size());
    report->quantized_nodes = summary->quantized_nodes;
    report->activation_pairs = summary->activation_pairs;
    report->skipped = summary->skipped;
  }
  return Status::Ok();
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

StatusOr<Model> Model::Load(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->graph, onnx_fe::ImportOnnxFile(path));
  impl->name = path;
  return Model(std::move(impl));
}

StatusOr<Model> Model::FromBytes(const void* data, size_t size, const std::string& name) {
  onnx::ModelProto proto;
  if (data == nullptr || size == 0) return InvalidArgument("{}: no ONNX bytes given", name);
  if (size > static_cast<size_t>(INT32_MAX) || !proto.ParseFromArray(data, static_cast<int>(size)))
    return InvalidArgument("{}: the {} bytes given are not an ONNX model", name, size);
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->graph, onnx_fe::ImportOnnxModel(proto, "", name));
  impl->name = name;
  return Model(std::move(impl));
}

Model Model::Clone() const {
  auto impl = std::make_unique<Impl>();
  impl->graph = impl_->graph.Clone();
  impl->name = impl_->name;
  return Model(std::move(impl));
}

const std::string& Model::name() const { return impl_->name; }
std::vector<ValueInfo> Model::inputs() const { return api::InputsOf(impl_->graph); }
std::vector<ValueInfo> Model::outputs() const { return api::OutputsOf(impl_->graph); }
bool Model::quantized() const { return HasQuantizedOps(impl_->graph); }
int64_t Model::node_count() const { return static_cast<int64_t>(impl_->graph.nodes().size()); }

Status Model::SetInputShape(const std::string& input, const std::vector<int64_t>& dims) {
  bool known = false;
  for (const Value* v : impl_->graph.inputs()) known |= v->name() == input;
  if (!known) return NotFound("{}: no graph input named '{}'", impl_->name, input);
  return ::edgec::BindInputShapes(impl_->graph, {{input, Dims(dims.begin(), dims.end())}}, 0).WithContext(impl_->name);
}

Status Model::Optimize(int level) {
  if (level < 0 || level > 3) return InvalidArgument("optimize: level {} is not 0-3", level);
  passes::PassContext ctx;
  return driver::Optimize(impl_->graph, level, "", ctx).WithContext(impl_->name);
}

Status Model::Optimize(const std::string& pipeline) {
  if (pipeline.empty()) return InvalidArgument("optimize: empty pipeline");
  passes::PassContext ctx;
  return driver::Optimize(impl_->graph, 0, pipeline, ctx).WithContext(impl_->name);
}

Status Model::Quantize(const std::vector<Sample>& calibration, const QuantizeOptions& options) {
  if (quantized()) return InvalidArgument("{}: already quantized", impl_->name);
  std::vector<quant::Sample> samples;
  for (const Sample& s : calibration) {
    quant::Sample q;
    for (const auto& [name, view] : s) {
      if (view.data() == nullptr && view.numel() > 0)
        return InvalidArgument("quantize: sample {} input '{}' has no data", samples.size(), name);
      q[name] = api::BorrowTensor(view);
    }
    samples.push_back(std::move(q));
  }
  Graph g = impl_->graph.Clone();
  ASSIGN_OR_RETURN(auto shapes, driver::ShapesFromSamples(g, samples, {}));
  RETURN_IF_ERROR(::edgec::BindInputShapes(g, shapes, 1).WithContext(impl_->name));
  RETURN_IF_ERROR(QuantizeBound(g, impl_->name, samples, options));
  impl_->graph = std::move(g);
  return Status::Ok();
}

Status Model::QuantizeFromDirectory(const std::string& dir, const QuantizeOptions& options, int64_t limit) {
  return QuantizeFromDirectory(dir, options, limit, nullptr);
}

Status Model::QuantizeFromDirectory(const std::string& dir, const QuantizeOptions& options, int64_t limit,
                                    QuantizeReport* report) {
  if (quantized()) return InvalidArgument("{}: already quantized", impl_->name);
  Graph g = impl_->graph.Clone();
  std::vector<std::string> from_data;
  auto samples = driver::BindShapesFromCalibration(g, {}, dir, {}, limit, &from_data);
  if (!samples.ok()) return samples.status().WithContext(impl_->name);
  if (report) report->shapes_from_samples = from_data;
  RETURN_IF_ERROR(QuantizeBound(g, impl_->name, *samples, options, report));
  impl_->graph = std::move(g);
  return Status::Ok();
}

Status Model::SaveOnnx(const std::string& path) const { return onnx_fe::ExportOnnxFile(impl_->graph, path); }

}  // namespace v1
}  // namespace edgec
