// edgec::Model's questions and answers beyond the pipeline (include/edgec/model.h): what the
// file declares, the nodes with their MACs, parameters, copies, shape binding, saving with
// options and running on the reference kernels — what `inspect`, `export` and `run
// --reference` print.
#include "api/convert.h"
#include "api/impl.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "ir/cost.h"
#include "passes/pass.h"
#include "quant/fold_qdq.h"
#include "quant/pipeline.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"
#include "support/status.h"

namespace edgec {
inline namespace v1 {

static_assert(kOnnxExportOpset == onnx_fe::kExportOpset);

StatusOr<Model> Model::Load(const std::string& path, OnnxFileInfo* info) {
  onnx_fe::ImportInfo ii;
  auto g = onnx_fe::ImportOnnxFile(path, &ii);
  if (info) {
    info->ir_version = ii.ir_version;
    info->opset = ii.opset;
    info->producer = ii.producer;
    info->op_histogram = ii.op_histogram;
    info->unsupported = ii.unsupported;
  }
  if (!g.ok()) return g.status();
  auto impl = std::make_unique<Impl>();
  impl->graph = std::move(g).value();
  impl->name = path;
  return Model(std::move(impl));
}

bool Model::has_qdq() const {
  for (const Node* n : impl_->graph.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kDequantizeLinear) return true;
  return false;
}

std::vector<NodeInfo> Model::nodes() const {
  std::vector<NodeInfo> r;
  for (const Node* n : impl_->graph.nodes()) {
    NodeInfo i;
    i.name = n->name();
    i.op = std::string(OpName(n->op()));
    i.label = n->Label();
    i.macs = NodeMacs(*n);
    i.is_view = n->num_outputs() > 0;
    for (const Value* o : n->outputs()) {
      i.outputs.push_back(api::InfoOf(*o));
      i.is_view &= o->physical.is_view;
    }
    r.push_back(std::move(i));
  }
  return r;
}

int64_t Model::parameter_count() const {
  int64_t n = 0;
  for (const Value* c : impl_->graph.constants()) n += c->constant().numel();
  return n;
}

int64_t Model::parameter_bytes() const {
  int64_t n = 0;
  for (const Value* c : impl_->graph.constants()) n += static_cast<int64_t>(c->constant().nbytes());
  return n;
}

int64_t Model::copy_bytes() const { return GraphCopyBytes(impl_->graph); }

Status Model::BindInputShapes(const std::map<std::string, std::vector<int64_t>>& dims, int64_t default_dim) {
  std::map<std::string, Dims> bound;
  for (const auto& [name, d] : dims) bound[name] = Dims(d.begin(), d.end());
  return ::edgec::BindInputShapes(impl_->graph, bound, default_dim).WithContext(impl_->name);
}

Status Model::FreezeInputs(const std::map<std::string, TensorView>& values) {
  std::map<std::string, Tensor> owned;
  for (const auto& [name, view] : values) {
    if (view.data() == nullptr && view.numel() > 0) return InvalidArgument("freeze: input '{}' has no data", name);
    owned.emplace(name, api::BorrowTensor(view).Clone());
  }
  return ::edgec::FreezeInputs(impl_->graph, owned).WithContext(impl_->name);
}

Status Model::SaveOnnx(const std::string& path, const OnnxSaveOptions& options) const {
  Graph out = impl_->graph.Clone();
  if (!options.keep_fused) {
    passes::PassContext lower;
    ASSIGN_OR_RETURN(passes::Pipeline unfuse, passes::ParsePipeline("unfuse"));
    RETURN_IF_ERROR(passes::RunPipeline(out, unfuse, lower).WithContext(impl_->name));
  }
  onnx_fe::ExportOptions eo;
  eo.keep_fused = options.keep_fused;
  return onnx_fe::ExportOnnxFile(out, path, eo);
}

Status Model::FoldQdq(const QdqFoldOptions& options, QdqFoldSummary* summary) {
  quant::FoldOptions fo;
  fo.fixed_point = options.fixed_point;
  auto folded = quant::FoldQdqForCpu(impl_->graph, fo);
  if (!folded.ok()) return folded.status().WithContext(impl_->name);
  if (summary) {
    summary->folded = folded->folded;
    summary->int8_movement = folded->int8_movement;
    summary->tabulated = folded->tabulated;
    summary->skipped = folded->skipped;
  }
  return Status::Ok();
}

StatusOr<std::vector<NamedTensor>> Model::RunReference(const std::map<std::string, TensorView>& inputs) const {
  std::map<std::string, Tensor> in;
  for (const auto& [name, v] : inputs) {
    if (v.data() == nullptr && v.numel() > 0) return InvalidArgument("run: input '{}' has no data", name);
    in.emplace(name, api::BorrowTensor(v));
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> outs, ReferenceExecutor(impl_->graph).Run(in));
  std::vector<NamedTensor> r;
  const auto& names = impl_->graph.outputs();
  for (size_t i = 0; i < outs.size(); ++i)
    r.push_back({i < names.size() ? names[i]->name() : "", api::AdoptTensor(std::move(outs[i]))});
  return r;
}

}  // namespace v1
}  // namespace edgec
