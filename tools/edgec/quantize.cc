// edgec quantize MODEL --calib DIR [--method entropy] [--per-channel] -o MODEL.int8.onnx
// Calibrates on a folder of inputs, rewrites the model to QDQ form (int8 weights, u8/i8
// activations, int32 bias) and writes it as standard ONNX; --eval DIR then compares
// edgec's int8 execution with FP32 on held-out inputs. On the public API only (Model::
// QuantizeFromDirectory: the pipeline the Python module's quantize runs too).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/model.h"
#include "edgec/target.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/report_json.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct QuantizeFlags {
  std::vector<std::string> freeze;
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
  bool verbose = false;
};

nlohmann::json ReportJson(const QuantizeFlags& f, const QuantizeReport& r) {
  nlohmann::json j = {{"model", f.model}, {"samples", r.error_samples}, {"sensitivity", nlohmann::json::array()}};
  for (const auto& l : r.sensitivity)
    j["sensitivity"].push_back({{"node", l.node}, {"layer", l.layer}, {"sqnr_db", l.sqnr_db}, {"cosine", l.cosine}});
  if (r.budget.ran) {
    const AccuracyBudgetReport& b = r.budget;
    j["accuracy_budget"] = {{"budget", b.budget}, {"met", b.met}, {"mean_cosine", b.mean_cosine},
                            {"int8_cosine", b.int8_cosine}, {"target", b.target},
                            {"int16", nlohmann::json::array()}, {"kept_float", nlohmann::json::array()}};
    for (const auto& p : b.int16)
      j["accuracy_budget"]["int16"].push_back(
          {{"node", p.node}, {"layer", p.layer}, {"cosine_alone", p.cosine_alone}, {"cosine_after", p.cosine_after}});
    for (const auto& l : b.kept_float) j["accuracy_budget"]["kept_float"].push_back(l.node);
  }
  return j;
}

void PrintErrorReport(const QuantizeFlags& f, const QuantizeReport& r) {
  if (f.sensitivity) {
    fmt::print("sensitivity ({} input(s) from {}): each layer quantized alone, most harmful first\n", r.error_samples,
               f.eval.empty() ? f.calib : f.eval);
    fmt::print("  {:<56} {:>10} {:>12}\n", "layer", "SQNR dB", "cosine");
    for (const auto& l : r.sensitivity) fmt::print("  {:<56} {:>10.1f} {:>12.6f}\n", l.layer, l.sqnr_db, l.cosine);
  }
  if (!r.budget.ran) return;
  const AccuracyBudgetReport& b = r.budget;
  fmt::print("accuracy budget: mean output cosine >= {} {} (all int8 {:.6f}, reached {:.6f}); {} layer(s) in "
             "int16, {} kept in float\n",
             b.budget, b.met ? "met" : "NOT met", b.int8_cosine, b.mean_cosine, b.int16.size(), b.kept_float.size());
  if (!b.int16_allowed)
    fmt::print("  no int16: {}\n", f.no_int16 ? "--no-int16" : "target " + b.target + "'s vector cores take no i16");
  for (const auto& p : b.int16)
    fmt::print("  int16: {} (alone: cosine {:.6f}; with the ones above: {:.6f})\n", p.layer, p.cosine_alone,
               p.cosine_after);
  for (const auto& l : b.kept_float)
    fmt::print("  float: {} (alone: SQNR {:.1f} dB, cosine {:.6f})\n", l.layer, l.sqnr_db, l.cosine);
}

int QuantizeMain(const QuantizeFlags& f) {
  auto m = Model::Load(f.model);
  if (!m.ok()) return ReportError(m.status().message());
  if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  auto shapes = ParseShapes(f.shapes);
  if (!shapes.ok()) return ReportError(shapes.status().message());
  QuantizeOptions o;
  o.method = f.method;
  o.percentile = f.percentile;
  o.entropy_min_keep = f.entropy_min_keep;
  o.clip_ratio = f.clip_ratio;
  o.symmetric = f.symmetric;
  if (f.dtype != "u8" && f.dtype != "i8") return ReportError(fmt::format("--dtype: '{}' is not u8 or i8", f.dtype));
  o.dtype = f.dtype == "u8" ? DataType::kU8 : DataType::kI8;
  o.per_channel = !f.per_tensor;
  o.reduce_range = f.reduce_range;
  o.keep_float = f.keep_float;
  o.int16 = f.int16;
  o.shapes = *shapes;
  o.scales_in = f.scales_in;
  o.scales_out = f.scales_out;
  o.sensitivity = f.sensitivity;
  o.accuracy_budget = f.accuracy_budget;
  o.budget_int16 = !f.no_int16;
  o.error_samples = f.sensitivity_samples;
  o.eval_dir = f.eval;
  o.eval_limit = f.eval_limit;
  o.image.resize = f.resize;
  if (!f.mean.empty()) o.image.mean = f.mean;
  if (!f.std.empty()) o.image.std = f.std;
  o.image.bgr = f.bgr;
  o.image.layout = f.layout;
  o.image.pixel_scale = f.pixel_scale;
  o.progress = !f.quiet;
  if (f.scales_in.empty() && f.calib.empty()) return ReportError("give --calib DIR (calibration inputs) or --scales-in FILE");
  if ((f.sensitivity || f.accuracy_budget > 0) && f.calib.empty() && f.eval.empty())
    return ReportError("--sensitivity and --accuracy-budget need --calib or --eval inputs");
  if (!f.json.empty() && !f.sensitivity && f.accuracy_budget <= 0)
    return ReportError("--json: writes the --sensitivity or --accuracy-budget table; give one of them");
  if (f.accuracy_budget > 0) {
    auto target = Target::Load(f.target);
    if (!target.ok()) return ReportError("--target: " + target.status().message());
    o.target = *target;
  }
  QuantizeReport r;
  Status st = m->QuantizeFromDirectory(f.calib, o, f.limit, &r);
  if (!st.ok()) return ReportError(st.message());
  if (!f.quiet)
    for (const auto& b : r.shapes_from_samples) fmt::print("input shape {} (from the calibration samples)\n", b);
  PrintErrorReport(f, r);
  if (!f.json.empty()) {
    Status w = WriteJsonFile(f.json, ReportJson(f, r));
    if (!w.ok()) return ReportError(w.message());
  }
  if (!f.output.empty()) {
    Status w = m->SaveOnnx(f.output);
    if (!w.ok()) return ReportError(fmt::format("{}: {}", f.output, w.message()));
  }
  if (!f.quiet) {
    fmt::print("calibration: {} ({} samples), activations {}{}, weights int8 {}\n", r.method, r.samples,
               DataTypeName(r.activation_dtype), r.symmetric ? " symmetric" : "",
               o.per_channel ? "per channel" : "per tensor");
    fmt::print("quantized {} node(s), {} activation Q/DQ pair(s){}\n", r.quantized_nodes, r.activation_pairs,
               r.int16_pairs ? fmt::format(" ({} of them int16)", r.int16_pairs) : "");
    for (const auto& s : r.skipped) fmt::print("  float: {}\n", s);
    if (!r.float_ops.empty()) {
      fmt::print("left in float ({} node(s){}):\n", r.float_nodes.size(), f.verbose ? "" : "; -v lists them");
      for (const auto& s : f.verbose ? r.float_nodes : r.float_ops) fmt::print("  {}\n", s);
    }
    for (const auto& l : r.int16_layers) fmt::print("  int16: {}\n", l);
    if (!f.scales_out.empty()) fmt::print("wrote scales to {}\n", f.scales_out);
    if (!f.output.empty()) fmt::print("wrote {}\n", f.output);
  }
  if (!f.eval.empty()) {
    fmt::print("int8 (edgec) vs fp32 on {} input(s):\n", r.eval_samples);
    for (const auto& e : r.eval) {
      fmt::print("  output '{}': cosine min {:.6f} mean {:.6f}, top-1 agreement {:.1f}%, max abs err "
                 "{:.4g}, SQNR {:.1f} dB\n", e.output, e.min_cosine, e.mean_cosine, 100 * e.top1, e.max_abs,
                 e.sqnr_db);
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
  sub->add_option("--freeze", f->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
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
  sub->add_flag("--verbose,-v", f->verbose, "list every node left in float with why (default: a count per op kind)");
  return [f] { return QuantizeMain(*f); };
}

}  // namespace edgec::cli
