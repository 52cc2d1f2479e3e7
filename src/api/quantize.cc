// api::QuantizeGraph (quantize.h): calibration, the per-layer error report, the accuracy
// budget (int16 first, then float), the QDQ rewrite and the int8-vs-FP32 check, for the C++
// API, the C API, the Python module and `edgec quantize` alike. tests/api/api_test.cc
// (Quantize*) and tests/python/test_edgec.py guard that the paths agree.
#include "api/quantize.h"

#include "api/convert.h"
#include "api/impl.h"
#include "driver/sample_shapes.h"
#include "quant/mixed_precision.h"
#include "quant/pipeline.h"
#include "runtime/shape_binding.h"
#include "support/name_list.h"
#include "support/status.h"

namespace edgec::api {
namespace {

quant::ImagePreprocess PreprocessOf(const ImageOptions& o) {
  quant::ImagePreprocess pre;
  EDGEC_COPY_FIELDS(pre, o, resize, pixel_scale, mean, std, bgr, layout)
  return pre;
}

const Node* FindNode(const Graph& g, const std::string& name) {
  const Node* found = nullptr;
  for (const Node* n : g.nodes())
    if (n->name() == name) found = n;
  return found;
}

// The rewrite options: keep_float and int16 name nodes that exist ("all": every int16
// candidate); int16 only norms and softmaxes.
StatusOr<quant::QuantizeOptions> RewriteOptions(const Graph& g, const std::string& name, const QuantizeOptions& o) {
  quant::QuantizeOptions qo;
  qo.per_channel = o.per_channel;
  qo.reduce_range = o.reduce_range;
  for (const auto& n : o.keep_float) {
    if (!FindNode(g, n)) return NotFound("{}: quantize: keep_float names '{}', which is no node of the model", name, n);
    qo.keep_float.insert(n);
  }
  for (const auto& n : o.int16) {
    if (n == "all") {
      for (const Node* c : quant::Int16Candidates(g, qo)) qo.int16_nodes.insert(c->name());
      continue;
    }
    const Node* found = FindNode(g, n);
    if (!found) return NotFound("{}: quantize: int16 names '{}', which is no node of the model", name, n);
    if (found->op() != OpKind::kSoftmax && found->op() != OpKind::kLayerNormalization &&
        found->op() != OpKind::kInstanceNormalization)
      return InvalidArgument("{}: quantize: int16 names {}, not a Softmax, LayerNormalization or "
                             "InstanceNormalization", name, found->Label());
    qo.int16_nodes.insert(n);
  }
  return qo;
}

StatusOr<quant::CalibrationOptions> CalibrationOf(const QuantizeOptions& o) {
  quant::CalibrationOptions co;
  auto method = quant::ParseCalibrationMethod(o.method);
  if (!method.ok()) return method.status().WithContext("quantize: method");
  co.method = *method;
  EDGEC_COPY_FIELDS(co, o, percentile, entropy_min_keep, clip_ratio, symmetric)
  if (o.dtype != DataType::kI8 && o.dtype != DataType::kU8)
    return InvalidArgument("quantize: activation dtype {} is not i8 or u8", DataTypeName(o.dtype));
  co.storage = ToDType(o.dtype);
  return co;
}

LayerSensitivity ToPublic(const quant::LayerSensitivity& l) { return {l.node, l.label, l.sqnr_db, l.mean_cosine}; }

// Sensitivity, then (accuracy_budget > 0) the int16 promotions and the layers kept in float,
// which `qo` takes on.
Status MeasureAndFit(const Graph& g, const std::string& name, const CalibrationSource& source,
                     const QuantizeOptions& o, const quant::ImagePreprocess& pre, const quant::ScaleTable& table,
                     quant::QuantizeOptions& qo, QuantizeReport& report) {
  std::vector<quant::Sample> samples;
  if (source.given && o.eval_dir.empty()) {
    const size_t n = o.error_samples > 0 ? std::min<size_t>(o.error_samples, source.given->size()) : source.given->size();
    samples.assign(source.given->begin(), source.given->begin() + static_cast<std::ptrdiff_t>(n));
  } else {
    // Held-out inputs when given, else the calibration folder.
    const std::string& dir = o.eval_dir.empty() ? source.dir : o.eval_dir;
    if (dir.empty()) return InvalidArgument("quantize: sensitivity and accuracy_budget need calibration or eval inputs");
    ASSIGN_OR_RETURN(samples, quant::LoadCalibrationSet(g, dir, pre, o.error_samples));
  }
  report.error_samples = static_cast<int64_t>(samples.size());
  auto ranked = quant::Sensitivity(g, table, qo, samples, o.progress);
  if (!ranked.ok()) return ranked.status().WithContext(name);
  for (const auto& l : *ranked) report.sensitivity.push_back(ToPublic(l));
  if (o.accuracy_budget <= 0) return Status::Ok();
  // int16 first where the target's vector cores take it (targets.md: vector_cores.dtype_rates).
  const npu::Target& t = o.target.impl().target;
  const bool int16 = o.budget_int16 && t.vector_cores.VecRate("i16") > 0;
  auto mixed = quant::FitAccuracyBudgetMixed(g, table, qo, *ranked, samples, o.accuracy_budget, int16);
  if (!mixed.ok()) return mixed.status().WithContext(name);
  AccuracyBudgetReport& b = report.budget;
  b.ran = true;
  b.budget = o.accuracy_budget;
  b.met = mixed->float_fit.met;
  b.int8_cosine = mixed->int8_cosine;
  b.mean_cosine = mixed->float_fit.mean_cosine;
  b.int16_allowed = int16;
  b.target = t.name;
  for (const auto& p : mixed->int16) {
    b.int16.push_back({p.node, p.label, p.cosine_alone, p.cosine_after});
    qo.int16_nodes.insert(p.node);
  }
  for (const auto& l : mixed->float_fit.kept_float) {
    b.kept_float.push_back(ToPublic(l));
    qo.keep_float.insert(l.node);
  }
  return Status::Ok();
}

}  // namespace

Status QuantizeGraph(Graph& g, const std::string& name, const CalibrationSource& source, const QuantizeOptions& o,
                     QuantizeReport* out) {
  QuantizeReport report;
  const quant::ImagePreprocess pre = PreprocessOf(o.image);
  std::map<std::string, Dims> given;
  for (const auto& [input, dims] : o.shapes) given[input] = Dims(dims.begin(), dims.end());
  ASSIGN_OR_RETURN(quant::CalibrationOptions co, CalibrationOf(o));
  // Symbolic input dims take the calibration samples' dims (options.shapes override).
  std::vector<quant::Sample> samples;
  if (!o.scales_in.empty()) {
    RETURN_IF_ERROR(BindInputShapes(g, given, 1).WithContext(name));
  } else if (source.given) {
    if (source.given->empty()) return InvalidArgument("{}: quantize: no calibration samples", name);
    ASSIGN_OR_RETURN(auto shapes, driver::ShapesFromSamples(g, *source.given, given));
    RETURN_IF_ERROR(BindInputShapes(g, shapes, 1).WithContext(name));
  } else {
    if (source.dir.empty()) return InvalidArgument("{}: quantize: give calibration samples or a scale table", name);
    auto loaded = driver::BindShapesFromCalibration(g, given, source.dir, pre, source.limit, &report.shapes_from_samples);
    if (!loaded.ok()) return loaded.status().WithContext(name);
    samples = std::move(loaded).value();
  }
  const std::vector<quant::Sample>& calib = source.given ? *source.given : samples;
  RETURN_IF_ERROR(quant::PrepareForQuantization(g).WithContext(name));
  ASSIGN_OR_RETURN(quant::QuantizeOptions qo, RewriteOptions(g, name, o));
  quant::ScaleTable table;
  if (!o.scales_in.empty()) {
    ASSIGN_OR_RETURN(table, quant::ReadScaleTable(o.scales_in));
  } else {
    auto t = quant::Calibrate(g, calib, co, qo, o.progress);
    if (!t.ok()) return t.status().WithContext(name);
    table = std::move(t).value();
  }
  if (!o.scales_out.empty()) RETURN_IF_ERROR(quant::WriteScaleTable(table, o.scales_out));
  Graph float_graph = g.Clone();
  if (o.sensitivity || o.accuracy_budget > 0)
    RETURN_IF_ERROR(MeasureAndFit(g, name, source, o, pre, table, qo, report));
  auto summary = quant::RewriteToQdq(g, table, qo);
  if (!summary.ok()) return summary.status().WithContext(name);
  EDGEC_COPY_FIELDS(report, table, samples, method, symmetric)
  report.activation_dtype = FromDType(table.dtype);
  EDGEC_COPY_FIELDS(report, *summary, quantized_nodes, activation_pairs, int16_pairs, skipped, float_ops, float_nodes)
  for (const Node* n : float_graph.nodes())
    if (qo.int16_nodes.count(n->name())) report.int16_layers.push_back(n->Label());
  if (!o.eval_dir.empty()) {
    ASSIGN_OR_RETURN(auto held_out, quant::LoadCalibrationSet(float_graph, o.eval_dir, pre, o.eval_limit));
    auto int8 = quant::Int8Executable(g);
    if (!int8.ok()) return int8.status().WithContext(name);
    auto a = quant::CompareOnSamples(float_graph, *int8, held_out, o.progress);
    if (!a.ok()) return a.status().WithContext(name);
    report.eval_samples = a->samples;
    for (const auto& r : a->outputs)
      report.eval.push_back({r.output, r.min_cosine, r.mean_cosine, r.top1, r.max_abs, r.sqnr_db});
  }
  if (out) *out = std::move(report);
  return Status::Ok();
}

}  // namespace edgec::api
