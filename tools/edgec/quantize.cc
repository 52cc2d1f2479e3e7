// edgec quantize MODEL --calib DIR [--method entropy] [--per-channel] -o MODEL.int8.onnx
// Calibrates on a folder of inputs, rewrites the model to QDQ form (int8 weights, u8/i8
// activations, int32 bias) and writes it as standard ONNX; --eval DIR then compares
// edgec's int8 execution with FP32 on held-out inputs.
#include <fmt/format.h>

#include "driver/sample_shapes.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "npu/target.h"
#include "quant/mixed_precision.h"
#include "quant/pipeline.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/report_json.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct QuantizeFlags {
  std::string model, output, calib, eval, scales_in, scales_out, json;
  std::string method = "entropy";
  double percentile = 99.99;
  double entropy_min_keep = 0.9999;
  double clip_ratio = 1.0;
  bool per_tensor = false, per_channel = false;
  bool symmetric = false;
  bool reduce_range = false;
  std::string dtype = "u8";
  int64_t limit = 0, eval_limit = 0;
  std::vector<std::string> keep_float, int16;
  std::string target = "edge-default";
  bool no_int16 = false;
  std::vector<std::string> shapes;
  bool sensitivity = false;
  double accuracy_budget = 0;
  int64_t sensitivity_samples = 8;
  // image preprocessing
  int64_t resize = 0;
  std::vector<float> mean, std;
  bool bgr = false;
  std::string layout = "auto";
  float pixel_scale = 1.0f / 255;
  bool quiet = false;
};

int QuantizeMain(const QuantizeFlags& f) {
  auto g = onnx_fe::ImportOnnxFile(f.model);
  if (!g.ok()) return ReportError(g.status().message());
  auto shapes = ParseShapes(f.shapes);
  if (!shapes.ok()) return ReportError(shapes.status().message());
  quant::ImagePreprocess pre;
  pre.resize = f.resize;
  if (!f.mean.empty()) pre.mean = f.mean;
  if (!f.std.empty()) pre.std = f.std;
  pre.bgr = f.bgr;
  pre.layout = f.layout;
  pre.pixel_scale = f.pixel_scale;
  // Symbolic input dims take the calibration samples' dims (--shape overrides).
  std::optional<std::vector<quant::Sample>> calib_samples;
  if (f.scales_in.empty() && !f.calib.empty()) {
    std::vector<std::string> from_data;
    auto samples = driver::BindShapesFromCalibration(*g, *shapes, f.calib, pre, f.limit, &from_data);
    if (!samples.ok()) return ReportError(fmt::format("{}: {}", f.model, samples.status().message()));
    calib_samples = std::move(samples).value();
    if (!f.quiet) {
      for (const auto& b : from_data) fmt::print("input shape {} (from the calibration samples)\n", b);
    }
  } else {
    Status bound = BindInputShapes(*g, *shapes, 1);
    if (!bound.ok()) return ReportError(fmt::format("{}: {}", f.model, bound.message()));
  }
  Status prep = quant::PrepareForQuantization(*g);
  if (!prep.ok()) return ReportError(fmt::format("{}: {}", f.model, prep.message()));

  quant::CalibrationOptions co;
  auto method = quant::ParseCalibrationMethod(f.method);
  if (!method.ok()) return ReportError("--method: " + method.status().message());
  co.method = *method;
  co.percentile = f.percentile;
  co.entropy_min_keep = f.entropy_min_keep;
  co.clip_ratio = f.clip_ratio;
  co.symmetric = f.symmetric;
  if (f.dtype != "u8" && f.dtype != "i8") return ReportError(fmt::format("--dtype: '{}' is not u8 or i8", f.dtype));
  co.storage = f.dtype == "u8" ? DType::kU8 : DType::kI8;
  quant::QuantizeOptions qo;
  qo.per_channel = !f.per_tensor;
  qo.reduce_range = f.reduce_range;
  qo.keep_float.insert(f.keep_float.begin(), f.keep_float.end());
  for (const std::string& name : f.int16) {
    if (name == "all") {  // every candidate (quant/mixed_precision.h)
      for (const Node* n : quant::Int16Candidates(*g, qo)) qo.int16_nodes.insert(n->name());
      continue;
    }
    qo.int16_nodes.insert(name);
    const Node* n = nullptr;
    for (const Node* m : g->nodes())
      if (m->name() == name) n = m;
    if (!n || (n->op() != OpKind::kSoftmax && n->op() != OpKind::kLayerNormalization &&
               n->op() != OpKind::kInstanceNormalization))
      return ReportError(fmt::format("--int16 '{}': {}", name, n ? n->Label() + " is not a Softmax, LayerNormalization "
                                                                   "or InstanceNormalization" : "no such node"));
  }
  quant::ScaleTable table;
  if (!f.scales_in.empty()) {
    auto t = quant::ReadScaleTable(f.scales_in);
    if (!t.ok()) return ReportError(t.status().message());
    table = *t;
  } else {
    if (f.calib.empty()) return ReportError("give --calib DIR (calibration inputs) or --scales-in FILE");
    auto t = quant::Calibrate(*g, *calib_samples, co, qo, !f.quiet);
    if (!t.ok()) return ReportError(fmt::format("{}: {}", f.model, t.status().message()));
    table = *t;
  }
  if (!f.scales_out.empty()) {
    Status w = quant::WriteScaleTable(table, f.scales_out);
    if (!w.ok()) return ReportError(w.message());
  }
  Graph float_graph = g->Clone();
  if (f.sensitivity || f.accuracy_budget > 0) {
    // Held-out inputs when --eval is given, else the calibration set.
    const std::string& dir = f.eval.empty() ? f.calib : f.eval;
    if (dir.empty()) return ReportError("--sensitivity and --accuracy-budget need --calib or --eval inputs");
    auto samples = quant::LoadCalibrationSet(*g, dir, pre, f.sensitivity_samples);
    if (!samples.ok()) return ReportError(samples.status().message());
    auto ranked = quant::Sensitivity(*g, table, qo, *samples, !f.quiet);
    if (!ranked.ok()) return ReportError(fmt::format("{}: {}", f.model, ranked.status().message()));
    nlohmann::json report = {{"model", f.model}, {"samples", samples->size()}, {"sensitivity", nlohmann::json::array()}};
    for (const auto& l : *ranked)
      report["sensitivity"].push_back({{"node", l.node}, {"layer", l.label}, {"sqnr_db", l.sqnr_db},
                                       {"cosine", l.mean_cosine}});
    if (f.sensitivity) {
      fmt::print("sensitivity ({} input(s) from {}): each layer quantized alone, most harmful first\n",
                 samples->size(), dir);
      fmt::print("  {:<56} {:>10} {:>12}\n", "layer", "SQNR dB", "cosine");
      for (const auto& l : *ranked)
        fmt::print("  {:<56} {:>10.1f} {:>12.6f}\n", l.label, l.sqnr_db, l.mean_cosine);
    }
    if (f.accuracy_budget > 0) {
      // int16 first where the target's vector cores take it (targets.md: vector_cores.dtype_rates).
      auto target = npu::LoadTarget(f.target);
      if (!target.ok()) return ReportError("--target: " + target.status().message());
      const bool int16 = !f.no_int16 && target->vector_cores.VecRate("i16") > 0;
      auto mixed = quant::FitAccuracyBudgetMixed(*g, table, qo, *ranked, *samples, f.accuracy_budget, int16);
      if (!mixed.ok()) return ReportError(fmt::format("{}: {}", f.model, mixed.status().message()));
      const quant::BudgetResult* fit = &mixed->float_fit;
      fmt::print("accuracy budget: mean output cosine >= {} {} (all int8 {:.6f}, reached {:.6f}); {} layer(s) in "
                 "int16, {} kept in float\n",
                 f.accuracy_budget, fit->met ? "met" : "NOT met", mixed->int8_cosine, fit->mean_cosine,
                 mixed->int16.size(), fit->kept_float.size());
      if (!int16)
        fmt::print("  no int16: {}\n", f.no_int16 ? "--no-int16" : "target " + target->name + "'s vector cores take no i16");
      for (const auto& p : mixed->int16)
        fmt::print("  int16: {} (alone: cosine {:.6f}; with the ones above: {:.6f})\n", p.label, p.cosine_alone,
                   p.cosine_after);
      for (const auto& l : fit->kept_float)
        fmt::print("  float: {} (alone: SQNR {:.1f} dB, cosine {:.6f})\n", l.label, l.sqnr_db, l.mean_cosine);
      for (const auto& p : mixed->int16) qo.int16_nodes.insert(p.node);
      for (const auto& l : fit->kept_float) qo.keep_float.insert(l.node);
      report["accuracy_budget"] = {{"budget", f.accuracy_budget}, {"met", fit->met}, {"mean_cosine", fit->mean_cosine},
                                   {"int8_cosine", mixed->int8_cosine}, {"target", target->name},
                                   {"int16", nlohmann::json::array()}, {"kept_float", nlohmann::json::array()}};
      for (const auto& p : mixed->int16)
        report["accuracy_budget"]["int16"].push_back(
            {{"node", p.node}, {"layer", p.label}, {"cosine_alone", p.cosine_alone}, {"cosine_after", p.cosine_after}});
      for (const auto& l : fit->kept_float) report["accuracy_budget"]["kept_float"].push_back(l.node);
    }
    if (!f.json.empty()) {
      Status w = WriteJsonFile(f.json, report);
      if (!w.ok()) return ReportError(w.message());
    }
  } else if (!f.json.empty()) {
    return ReportError("--json: writes the --sensitivity or --accuracy-budget table; give one of them");
  }
  auto summary = quant::RewriteToQdq(*g, table, qo);
  if (!summary.ok()) return ReportError(fmt::format("{}: {}", f.model, summary.status().message()));
  if (!f.output.empty()) {
    Status w = onnx_fe::ExportOnnxFile(*g, f.output);
    if (!w.ok()) return ReportError(fmt::format("{}: {}", f.output, w.message()));
  }
  if (!f.quiet) {
    fmt::print("calibration: {} ({} samples), activations {}{}, weights int8 {}\n", table.method,
               table.samples, DTypeName(table.dtype), table.symmetric ? " symmetric" : "",
               qo.per_channel ? "per channel" : "per tensor");
    fmt::print("quantized {} node(s), {} activation Q/DQ pair(s){}\n", summary->quantized_nodes,
               summary->activation_pairs,
               summary->int16_pairs ? fmt::format(" ({} of them int16)", summary->int16_pairs) : "");
    for (const auto& s : summary->skipped) fmt::print("  float: {}\n", s);
    for (const Node* n : float_graph.nodes())
      if (qo.int16_nodes.count(n->name())) fmt::print("  int16: {}\n", n->Label());
    if (!f.scales_out.empty()) fmt::print("wrote scales to {}\n", f.scales_out);
    if (!f.output.empty()) fmt::print("wrote {}\n", f.output);
  }
  if (!f.eval.empty()) {
    auto samples = quant::LoadCalibrationSet(float_graph, f.eval, pre, f.eval_limit);
    if (!samples.ok()) return ReportError(samples.status().message());
    auto int8 = quant::Int8Executable(*g);
    if (!int8.ok()) return ReportError(fmt::format("{}: {}", f.model, int8.status().message()));
    auto a = quant::CompareOnSamples(float_graph, *int8, *samples, !f.quiet);
    if (!a.ok()) return ReportError(fmt::format("{}: {}", f.model, a.status().message()));
    fmt::print("int8 (edgec) vs fp32 on {} input(s):\n", a->samples);
    for (const auto& o : a->outputs) {
      fmt::print("  output '{}': cosine min {:.6f} mean {:.6f}, top-1 agreement {:.1f}%, max abs err "
                 "{:.4g}, SQNR {:.1f} dB\n", o.output, o.min_cosine, o.mean_cosine, 100 * o.top1,
                 o.max_abs, o.sqnr_db);
    }
  }
  return 0;
}

}  // namespace

VerbMain AddQuantizeVerb(CLI::App& app) {
  auto f = std::make_shared<QuantizeFlags>();
  CLI::App* sub = app.add_subcommand("quantize", "Calibrate and quantize a model to INT8 (QDQ ONNX)");
  sub->add_option("model", f->model, "ONNX model file")->required();
  sub->add_option("--output,-o", f->output, "write the QDQ model here");
  sub->add_option("--shape", f->shapes,
                  "NAME=1x3x640x640: bind an input's symbolic dims (default: the calibration samples' dims)");
  sub->add_option("--calib", f->calib,
                  "calibration folder: <sample>.npy per sample (one input), <sample>/<input>.npy "
                  "(several inputs), or .png/.jpg images");
  sub->add_option("--method", f->method, "calibrator: minmax, percentile, entropy, mse")->capture_default_str();
  sub->add_option("--percentile", f->percentile, "percentile for --method percentile")->capture_default_str();
  sub->add_option("--entropy-min-keep", f->entropy_min_keep,
                  "entropy: only thresholds that keep at least this share of the values")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub->add_option("--clip-ratio", f->clip_ratio, "shrink every calibrated range by this factor (<= 1)")
      ->check(CLI::Range(0.01, 1.0))->capture_default_str();
  auto* pc = sub->add_flag("--per-channel", f->per_channel, "weights per output channel (the default)");
  sub->add_flag("--per-tensor", f->per_tensor, "weights per tensor")->excludes(pc);
  sub->add_flag("--reduce-range", f->reduce_range,
               "weights in 7 bits: no 16-bit saturation in u8*s8 kernels on CPUs without VNNI");
  sub->add_flag("--symmetric", f->symmetric, "symmetric activations (zero point 0, or 128 for u8)");
  sub->add_option("--dtype", f->dtype, "activation type: u8 or i8")->capture_default_str();
  sub->add_option("--limit", f->limit, "use only the first N calibration samples");
  sub->add_option("--scales-out", f->scales_out, "write the chosen scales and zero points (JSON)");
  sub->add_option("--scales-in", f->scales_in, "use these scales (JSON, as --scales-out writes) instead of calibrating");
  sub->add_option("--keep-float", f->keep_float, "leave this node (by name) in float; repeatable");
  sub->add_option("--int16", f->int16,
                  "carry this Softmax / LayerNormalization / InstanceNormalization node's input and output "
                  "in int16 (by name; 'all': every one whose input is quantized); repeatable");
  sub->add_flag("--no-int16", f->no_int16, "--accuracy-budget keeps layers in float only, never promotes to int16");
  sub->add_option("--target", f->target,
                  "--accuracy-budget promotes to int16 only if this target's vector cores take i16")
      ->capture_default_str();
  sub->add_flag("--sensitivity", f->sensitivity,
                "quantize one layer at a time and print the output error each adds");
  sub->add_option("--accuracy-budget", f->accuracy_budget,
                  "promote the norms and softmaxes that lose most to int16 (where --target allows), then "
                  "keep the most sensitive layers in float, until the mean output cosine vs FP32 reaches "
                  "this (e.g. 0.9995)")->check(CLI::Range(0.0, 1.0));
  sub->add_option("--json", f->json, "with --sensitivity or --accuracy-budget: also write the table (and the layers kept in float) as JSON");
  sub->add_option("--sensitivity-samples", f->sensitivity_samples,
                  "inputs used by --sensitivity/--accuracy-budget (from --eval, else --calib)")
      ->capture_default_str();
  sub->add_option("--eval", f->eval, "compare edgec's int8 execution with FP32 on the inputs in this folder");
  sub->add_option("--eval-limit", f->eval_limit, "use only the first N --eval samples");
  sub->add_option("--resize", f->resize, "images: resize the shorter side to N pixels before the center crop");
  sub->add_option("--mean", f->mean, "images: per-channel mean (R G B, after --pixel-scale)")->expected(3)->delimiter(',');
  sub->add_option("--std", f->std, "images: per-channel std (R G B)")->expected(3)->delimiter(',');
  sub->add_option("--pixel-scale", f->pixel_scale, "images: pixel values are multiplied by this first")->capture_default_str();
  sub->add_flag("--bgr", f->bgr, "images: the model wants channels in BGR order");
  sub->add_option("--layout", f->layout, "images: nchw, nhwc or auto")->capture_default_str();
  sub->add_flag("--quiet,-q", f->quiet, "print nothing but errors (and --eval results)");
  return [f] { return QuantizeMain(*f); };
}

}  // namespace edgec::cli
