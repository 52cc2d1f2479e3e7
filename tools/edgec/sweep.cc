// edgec sweep (MODEL.onnx | --decoder CONFIG) --target T --set FIELD=V1,V2,... [--svg FILE]
// What-if: re-estimates the model for each value of one target field and prints a table
// (latency, MAC utilization, DRAM traffic) and an SVG plot of latency vs the value. A QDQ
// model is compiled for each value (segments, SRAM plans: the same scheduler as `edgec
// compile`), and the table and plot add the bytes kept on chip and spilled (the knee where
// activations stop fitting) and the same figures without cascades (what the row stripes of
// lower/npu_cascade.h buy); a float model or a decoder is estimated layer by layer. --json
// FILE writes the table's rows.
#include <fstream>
#include <sstream>

#include "frontend/onnx/importer.h"

#include "npu/estimate.h"
#include "report/sram_svg.h"
#include "tools/edgec/report_json.h"
#include "tools/edgec/segment_estimate.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct SweepFlags {
  std::string model, decoder, target = "default", svg, json;
  std::vector<std::string> sets, fixed, shapes;
};

int SweepMain(const SweepFlags& f) {
  if (f.sets.size() != 1)
    return ReportError("sweep: give exactly one --set FIELD=V1,V2,... (use --fix for other overrides)");
  const std::string& spec = f.sets[0];
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) return ReportError(fmt::format("--set '{}': expected FIELD=V1,V2,...", spec));
  const std::string field = spec.substr(0, eq);
  std::vector<std::string> values;
  std::stringstream ss(spec.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');)
    if (!v.empty()) values.push_back(v);
  if (values.empty()) return ReportError(fmt::format("--set {}: no values", field));
  auto base = TargetFor(f.target, f.fixed);
  if (!base.ok()) return ReportError(base.status().message());
  std::vector<report::SweepPoint> pts;
  nlohmann::json rows = nlohmann::json::array();
  // A quantized model goes through the compiler's segment scheduler (segments, SRAM plans,
  // spills); a float model or a decoder through the per-layer shape-only estimate.
  StatusOr<Graph> integer = InvalidArgument("");
  if (f.decoder.empty()) {
    auto g = onnx_fe::ImportOnnxFile(f.model);
    if (g.ok() && IsQdqModel(*g)) integer = IntegerGraphOf(f.model, f.shapes);
    if (g.ok() && IsQdqModel(*g) && !integer.ok()) return ReportError(integer.status().message());
  }
  if (integer.ok()) {
    // Each value twice: with cascades and without (what the row stripes buy).
    fmt::print("{:<24} {:>12} {:>8} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14}\n", field, "NPU ms", "util",
               "DRAM bytes", "on chip B", "spilled B", "no-casc ms", "no-casc DRAM", "no-casc spill");
    for (const std::string& v : values) {
      auto t = npu::ApplyOverride(*base, field + "=" + v);
      if (!t.ok()) return ReportError(t.status().message());
      auto e = EstimateWithSegments(*integer, *t, {});
      if (!e.ok()) {
        fmt::print("{:<24} {}\n", v, e.status().message());
        rows.push_back({{"value", v}, {"error", e.status().message()}});
        continue;
      }
      npu::TilerOptions flat;
      flat.cascades = false;
      auto n = EstimateWithSegments(*integer, *t, flat);
      if (!n.ok()) return ReportError(n.status().message());
      const double ms = e->cycles / t->clock_hz * 1e3, flat_ms = n->cycles / t->clock_hz * 1e3;
      const double util = e->cycles > 0 ? e->macs / (e->cycles * t->peak_int8_macs_per_cycle()) : 0;
      fmt::print("{:<24} {:>12.3f} {:>7.1f}% {:>14} {:>14} {:>14} {:>14.3f} {:>14} {:>14}\n", v, ms, 100 * util,
                 e->dram_read + e->dram_written, e->resident_bytes, e->spilled_bytes, flat_ms,
                 n->dram_read + n->dram_written, n->spilled_bytes);
      pts.push_back({v, ms, e->spilled_bytes});
      rows.push_back({{"value", v}, {"npu_ms", ms}, {"mac_utilization", util},
                      {"dram_bytes", e->dram_read + e->dram_written}, {"on_chip_bytes", e->resident_bytes},
                      {"spilled_bytes", e->spilled_bytes}, {"no_cascade_npu_ms", flat_ms},
                      {"no_cascade_dram_bytes", n->dram_read + n->dram_written},
                      {"no_cascade_spilled_bytes", n->spilled_bytes}});
    }
  } else {
    auto layers = LayersFor(f.model, f.decoder, f.shapes, false, nullptr);
    if (!layers.ok()) return ReportError(layers.status().message());
    fmt::print("{:<24} {:>12} {:>8} {:>14}   (per layer, shape only)\n", field, "latency ms", "util", "DRAM bytes");
    for (const std::string& v : values) {
      auto t = npu::ApplyOverride(*base, field + "=" + v);
      if (!t.ok()) return ReportError(t.status().message());
      auto e = npu::EstimateModel(*layers, *t);
      if (!e.ok()) {
        fmt::print("{:<24} {}\n", v, e.status().message());
        rows.push_back({{"value", v}, {"error", e.status().message()}});
        continue;
      }
      const double ms = e->total.cycles / t->clock_hz * 1e3;
      fmt::print("{:<24} {:>12.3f} {:>7.1f}% {:>14}\n", v, ms, 100 * e->total.mac_utilization(*t),
                 e->total.dram_read + e->total.dram_written);
      pts.push_back({v, ms, -1});
      rows.push_back({{"value", v}, {"npu_ms", ms}, {"mac_utilization", e->total.mac_utilization(*t)},
                      {"dram_bytes", e->total.dram_read + e->total.dram_written}});
    }
  }
  if (!f.json.empty()) {
    Status st = WriteJsonFile(f.json, {{"field", field}, {"target", base->name}, {"rows", rows}});
    if (!st.ok()) return ReportError(st.message());
  }
  if (!f.svg.empty()) {
    std::ofstream out(f.svg);
    if (!out) return ReportError(fmt::format("{}: cannot write", f.svg));
    const std::string what = f.decoder.empty() ? f.model : "decoder " + f.decoder;
    out << report::SweepSvg(field, fmt::format("{} on {}: latency vs {}", what, base->name, field), pts);
    fmt::print("wrote {}\n", f.svg);
  }
  return 0;
}

}  // namespace

VerbMain AddSweepVerb(CLI::App& app) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* sub = app.add_subcommand("sweep", "What-if: estimate latency over a list of values of one target field");
  sub->add_option("model", flags->model, "ONNX model (shapes only are used)");
  sub->add_option("--decoder", flags->decoder, "generate a decoder instead (see estimate)");
  sub->add_option("--target", flags->target, "target file or name")->capture_default_str();
  sub->add_option("--set", flags->sets, "FIELD=V1,V2,...: the field to sweep (units allowed, e.g. 256K,1M)");
  sub->add_option("--fix", flags->fixed, "FIELD=VALUE: other overrides, applied first");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's symbolic dims");
  sub->add_option("--svg", flags->svg, "write a plot of latency vs the value");
  sub->add_option("--json", flags->json, "also write the table as JSON");
  return [flags] { return SweepMain(*flags); };
}

}  // namespace edgec::cli
