// edgec::NpuWorkload (include/edgec/estimate.h): shape-only NPU estimates of a model's or a
// generated decoder's GEMM-class layers, and a QDQ model's segment schedule, as `edgec
// estimate` and `edgec sweep` print them. tests/api/api_test.cc (Estimate*) guards the figures
// against the internal estimator's.
#include "edgec/estimate.h"

#include <sstream>

#include "api/handle.h"
#include "api/impl.h"
#include "frontend/onnx/importer.h"
#include "lower/npu_compile.h"
#include "lower/npu_epilogue.h"
#include "lower/npu_layers.h"
#include "npu/estimate.h"
#include "quant/pipeline.h"
#include "report/sram_svg.h"
#include "runtime/shape_binding.h"
#include "support/name_list.h"
#include "support/status.h"

namespace edgec {
inline namespace v1 {

struct NpuWorkload::Impl {
  std::vector<npu::RepeatedLayer> layers;
  std::vector<std::string> not_on_npu;
  std::string decoder;
  int64_t decoder_parameters = 0;
  std::string model;  // the file, for messages
  // A QDQ model: its integer graph, or why it could not be folded.
  bool quantized = false;
  StatusOr<Graph> integer = InvalidArgument("not a quantized (QDQ) model");
};

namespace {

npu::TilerOptions TilerFor(const EstimateOptions& o) {
  npu::TilerOptions opt;
  opt.allow_double = !o.single_buffer;
  opt.cascades = o.cascades;
  return opt;
}

}  // namespace

NpuWorkload::NpuWorkload(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EDGEC_HANDLE_MOVES(NpuWorkload)

StatusOr<NpuWorkload> NpuWorkload::FromModel(const std::string& path,
                                             const std::map<std::string, std::vector<int64_t>>& shapes) {
  ASSIGN_OR_RETURN(Graph g, onnx_fe::ImportOnnxFile(path));
  std::map<std::string, Dims> bound;
  for (const auto& [name, dims] : shapes) bound[name] = Dims(dims.begin(), dims.end());
  RETURN_IF_ERROR(BindInputShapes(g, bound, 1).WithContext(path));
  auto impl = std::make_unique<Impl>();
  impl->model = path;
  for (const Node* n : g.nodes()) {
    auto l = lower::GemmLayerShape(*n);
    if (l.ok()) {
      impl->layers.push_back({*l, 1});
    } else if (l.status().message() != lower::kNotGemm) {
      impl->not_on_npu.push_back(fmt::format("{} '{}': {}", OpName(n->op()), n->name(), l.status().message()));
    }
  }
  impl->quantized = HasQuantizeOps(g);
  if (impl->layers.empty() && !impl->quantized)
    return InvalidArgument("{}: no Conv/MatMul/Gemm layer the NPU can run", path);
  if (impl->quantized) {
    auto folded = quant::Int8Executable(g);
    if (folded.ok()) {
      impl->integer = std::move(*folded);
    } else {
      impl->integer = folded.status().WithContext(path);
    }
  }
  return NpuWorkload(std::move(impl));
}

StatusOr<NpuWorkload> NpuWorkload::FromDecoder(const std::string& config, bool fp16) {
  ASSIGN_OR_RETURN(npu::DecoderConfig c, npu::ParseDecoderConfig(config));
  c.fp16 = fp16;
  auto impl = std::make_unique<Impl>();
  impl->layers = npu::DecoderLayers(c);
  impl->decoder = c.ToString();
  impl->decoder_parameters = c.parameters();
  return NpuWorkload(std::move(impl));
}

bool NpuWorkload::quantized() const { return impl_->quantized; }
const std::vector<std::string>& NpuWorkload::not_on_npu() const { return impl_->not_on_npu; }
const std::string& NpuWorkload::decoder() const { return impl_->decoder; }
int64_t NpuWorkload::decoder_parameters() const { return impl_->decoder_parameters; }

StatusOr<NpuEstimate> NpuWorkload::Estimate(const Target& target, const EstimateOptions& options) const {
  const npu::Target& t = target.impl().target;
  if (impl_->layers.empty()) return InvalidArgument("{}: no Conv/MatMul/Gemm layer the NPU can run", impl_->model);
  ASSIGN_OR_RETURN(npu::ModelEstimate e, npu::EstimateModel(impl_->layers, t, TilerFor(options)));
  NpuEstimate r;
  EDGEC_COPY_FIELDS(r, e.total, cycles, macs, dram_read, dram_written)
  r.milliseconds = e.total.cycles / t.clock_hz * 1e3;
  r.weight_bytes = e.weight_bytes;
  r.mac_utilization = e.total.mac_utilization(t);
  r.table = npu::FormatEstimate(e, t, options.show_tiling);
  std::ostringstream listing;
  for (const npu::LayerEstimate& le : e.layers) {
    const npu::Stats& s = le.tiling.stats;
    r.layers.push_back({le.layer.layer.name, le.layer.count, s.cycles, s.macs, s.dram_read, s.dram_written,
                        le.tiling.best.tiling.ToString()});
    if (options.listing) {
      ASSIGN_OR_RETURN(npu::Program p, npu::LowerConv(le.layer.layer, t, le.tiling.best.tiling, nullptr));
      listing << "; layer " << le.layer.layer.name << ": " << le.tiling.best.tiling.ToString() << "\n"
              << npu::FormatProgram(p);
    }
  }
  r.listing = listing.str();
  return r;
}

StatusOr<NpuSegmentEstimate> NpuWorkload::EstimateSegments(const Target& target, const EstimateOptions& options) const {
  if (!impl_->quantized)
    return InvalidArgument("{}: not a quantized (QDQ) model", impl_->decoder.empty() ? impl_->model : "decoder");
  if (!impl_->integer.ok()) return impl_->integer.status();
  const npu::Target& t = target.impl().target;
  partition::PartitionOptions po;
  po.tiler = TilerFor(options);
  Graph g = impl_->integer->Clone();
  RETURN_IF_ERROR(lower::PrepareNpuGraph(g, t));  // as CompiledModel::Compile does
  ASSIGN_OR_RETURN(lower::CompileResult c, lower::CompileGraph(g, t, "estimate", po));
  ASSIGN_OR_RETURN(lower::SegmentEstimate e, lower::EstimateSegments(c, t));
  NpuSegmentEstimate r;
  EDGEC_COPY_FIELDS(r, e, segments, layers, cycles, macs, dram_read, dram_written, resident_bytes, spilled_bytes)
  r.milliseconds = e.cycles / t.clock_hz * 1e3;
  r.mac_utilization = e.cycles > 0 ? e.macs / (e.cycles * t.peak_int8_macs_per_cycle()) : 0;
  return r;
}

std::string SweepSvg(const std::string& field, const std::string& title, const std::vector<SweepPoint>& points) {
  std::vector<report::SweepPoint> pts;
  for (const SweepPoint& p : points) pts.push_back({p.label, p.milliseconds, p.spilled_bytes});
  return report::SweepSvg(field, title, pts);
}

}  // namespace v1
}  // namespace edgec
