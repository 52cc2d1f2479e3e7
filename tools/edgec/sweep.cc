// edgec sweep (MODEL.onnx | --decoder CONFIG) --target T --set FIELD=V1,V2,... [--svg FILE]
// What-if: re-estimates the model for each value of one target field and prints a table
// (latency, MAC utilization, DRAM traffic) and an SVG plot of latency vs the value. A QDQ
// model is compiled for each value (segments, SRAM plans: the same scheduler as `edgec
// compile`), and the table and plot add the bytes kept on chip and spilled (the knee where
// activations stop fitting) and the same figures without cascades (what the row stripes of
// lower/npu_cascade.h buy); a float model or a decoder is estimated layer by layer. --json
// FILE writes the table's rows. On the public API only (edgec/estimate.h).
#include <sstream>

#include <fmt/format.h>

#include "edgec/estimate.h"
#include "tools/edgec/compiled_input.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/report_json.h"
#include "tools/edgec/verbs.h"
#include "tools/edgec/workload.h"

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
  auto base = TargetWithSets(f.target, f.fixed);
  if (!base.ok()) return ReportError(base.status().message());
  auto work = WorkloadFor(f.model, f.decoder, f.shapes, false);
  if (!work.ok()) return ReportError(work.status().message());
  std::vector<SweepPoint> pts;
  nlohmann::json rows = nlohmann::json::array();
  // A quantized model goes through the compiler's segment scheduler (segments, SRAM plans,
  // spills); a float model or a decoder through the per-layer shape-only estimate.
  if (work->quantized()) {
    // Each value twice: with cascades and without (what the row stripes buy).
    fmt::print("{:<24} {:>12} {:>8} {:>14} {:>14} {:>14} {:>14} {:>14} {:>14}\n", field, "NPU ms", "util",
               "DRAM bytes", "on chip B", "spilled B", "no-casc ms", "no-casc DRAM", "no-casc spill");
    for (const std::string& v : values) {
      Target t = *base;
      Status set = t.Set(field + "=" + v);
      if (!set.ok()) return ReportError(set.message());
      auto e = work->EstimateSegments(t);
      if (!e.ok()) {
        fmt::print("{:<24} {}\n", v, e.status().message());
        rows.push_back({{"value", v}, {"error", e.status().message()}});
        continue;
      }
      EstimateOptions flat;
      flat.cascades = false;
      auto n = work->EstimateSegments(t, flat);
      if (!n.ok()) return ReportError(n.status().message());
      fmt::print("{:<24} {:>12.3f} {:>7.1f}% {:>14} {:>14} {:>14} {:>14.3f} {:>14} {:>14}\n", v, e->milliseconds,
                 100 * e->mac_utilization, e->dram_read + e->dram_written, e->resident_bytes, e->spilled_bytes,
                 n->milliseconds, n->dram_read + n->dram_written, n->spilled_bytes);
      pts.push_back({v, e->milliseconds, e->spilled_bytes});
      rows.push_back({{"value", v}, {"npu_ms", e->milliseconds}, {"mac_utilization", e->mac_utilization},
                      {"dram_bytes", e->dram_read + e->dram_written}, {"on_chip_bytes", e->resident_bytes},
                      {"spilled_bytes", e->spilled_bytes}, {"no_cascade_npu_ms", n->milliseconds},
                      {"no_cascade_dram_bytes", n->dram_read + n->dram_written},
                      {"no_cascade_spilled_bytes", n->spilled_bytes}});
    }
  } else {
    fmt::print("{:<24} {:>12} {:>8} {:>14}   (per layer, shape only)\n", field, "latency ms", "util", "DRAM bytes");
    for (const std::string& v : values) {
      Target t = *base;
      Status set = t.Set(field + "=" + v);
      if (!set.ok()) return ReportError(set.message());
      auto e = work->Estimate(t);
      if (!e.ok()) {
        fmt::print("{:<24} {}\n", v, e.status().message());
        rows.push_back({{"value", v}, {"error", e.status().message()}});
        continue;
      }
      fmt::print("{:<24} {:>12.3f} {:>7.1f}% {:>14}\n", v, e->milliseconds, 100 * e->mac_utilization,
                 e->dram_read + e->dram_written);
      pts.push_back({v, e->milliseconds, -1});
      rows.push_back({{"value", v}, {"npu_ms", e->milliseconds}, {"mac_utilization", e->mac_utilization},
                      {"dram_bytes", e->dram_read + e->dram_written}});
    }
  }
  if (!f.json.empty()) {
    Status st = WriteJsonFile(f.json, {{"field", field}, {"target", base->name()}, {"rows", rows}});
    if (!st.ok()) return ReportError(st.message());
  }
  if (!f.svg.empty()) {
    const std::string what = f.decoder.empty() ? f.model : "decoder " + f.decoder;
    Status w = WriteTextFile(f.svg, SweepSvg(field, fmt::format("{} on {}: latency vs {}", what, base->name(), field), pts));
    if (!w.ok()) return ReportError(w.message());
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
