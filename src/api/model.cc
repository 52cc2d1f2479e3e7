// edgec::Model (include/edgec/model.h): import, shape binding, optimization and quantization
// as the `optimize` and `quantize` verbs do them (quantization: api::QuantizeGraph).
#include <onnx/onnx_pb.h>

#include "api/convert.h"
#include "api/handle.h"
#include "api/impl.h"
#include "api/quantize.h"
#include "driver/load.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
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

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EDGEC_HANDLE_MOVES(Model)

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
  return Quantize(calibration, options, nullptr);
}

Status Model::Quantize(const std::vector<Sample>& calibration, const QuantizeOptions& options,
                       QuantizeReport* report) {
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
  api::CalibrationSource source;
  source.given = &samples;
  RETURN_IF_ERROR(api::QuantizeGraph(g, impl_->name, source, options, report));
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
  RETURN_IF_ERROR(api::QuantizeGraph(g, impl_->name, {nullptr, dir, limit}, options, report));
  impl_->graph = std::move(g);
  return Status::Ok();
}

Status Model::SaveOnnx(const std::string& path) const { return onnx_fe::ExportOnnxFile(impl_->graph, path); }

}  // namespace v1
}  // namespace edgec
