// edgec compile MODEL.onnx --target T [--set F=V] [--calib DIR] -o MODEL.edgec [--emit=asm FILE]
// Quantizes (with --calib; a QDQ model is taken as it is), folds Q/DQ into integer ops,
// partitions the graph between NPU and CPU, lowers every NPU node and writes the compiled
// model file. Prints the placement of every node with its reason (--sram-plan: and each NPU
// segment's SRAM plan). --sram-svg FILE plots the
// SRAM occupancy over the largest NPU segment's layers. --json FILE writes the placement
// report (per node: unit, reason code, violated constraint, costs, fix hint), also when a
// coverage gate fails; --pin NODE=cpu|npu overrides the cost rule for a node; --strict (every
// node on the NPU) and --min-npu-share F (the share of the model's MACs on the NPU) fail with
// exit code 3, listing the offending nodes, and write no .edgec file.
#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/compiled_model.h"
#include "edgec/model.h"
#include "tools/edgec/compiled_input.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/report_json.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct CompileFlags {
  std::vector<std::string> freeze;
  std::string model, target = "default", calib, output, method = "entropy", dtype = "i8";
  std::vector<std::string> sets, shapes, emit;
  std::string sram_svg, json;
  std::vector<std::string> pins;
  bool strict = false;
  double min_npu_share = -1;
  int64_t limit = 0;
  bool single = false, all_npu = false, quiet = false, sram_plan = false;
  double cpu_gmacs = 20;
};

// --strict / --min-npu-share: 0 when the placement passes (nodes pinned to the CPU and the
// model's own float input/output conversions do not count against --strict), else prints the offending nodes
// (CPU nodes, the largest MACs first) and returns 3.
int CoverageGate(const std::vector<NodePlacement>& ps, bool strict, double min_share, const std::string& target) {
  if (!strict && min_share < 0) return 0;
  int64_t macs = 0, npu_macs = 0;
  std::vector<const NodePlacement*> cpu;
  for (const auto& p : ps) {
    macs += p.macs;
    if (p.unit == Unit::kNpu) npu_macs += p.macs;
    else if (p.code != "pinned_cpu" && p.code != "model_boundary") cpu.push_back(&p);
  }
  const double share = macs ? static_cast<double>(npu_macs) / macs : 1.0;
  const bool fail = (strict && !cpu.empty()) || (min_share >= 0 && share < min_share);
  if (!fail) return 0;
  std::stable_sort(cpu.begin(), cpu.end(), [](auto* a, auto* b) { return a->macs > b->macs; });
  fmt::print(stderr, "edgec: error: placement on {} fails {}: {:.1f}% of the MACs on the NPU, {} node(s) on the CPU\n",
             target, strict && !cpu.empty() ? "--strict" : fmt::format("--min-npu-share {}", min_share), 100 * share,
             cpu.size());
  for (const auto* p : cpu)
    fmt::print(stderr, "  {} ({}) {} MACs: {} [{}]{}\n", p->node, p->op, p->macs, p->reason, p->code,
               p->hint.empty() ? "" : "; fix: " + p->hint);
  return 3;
}

int CompileMain(const CompileFlags& f) {
  auto target = TargetWithSets(f.target, f.sets);
  if (!target.ok()) return ReportError(target.status().message());
  std::string asm_file;
  if (!f.emit.empty()) {
    if (f.emit.size() != 2 || f.emit[0] != "asm") return ReportError("--emit: expected 'asm FILE'");
    asm_file = f.emit[1];
  }
  auto m = Model::Load(f.model);
  if (!m.ok()) return ReportError(m.status().message());
  if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  auto bound = ParseShapes(f.shapes);
  if (!bound.ok()) return ReportError(bound.status().message());
  Status st = m->BindInputShapes(*bound, f.calib.empty() ? 1 : 0);
  if (!st.ok()) return ReportError(st.message());
  if (!f.calib.empty()) {
    if (m->quantized()) return ReportError(fmt::format("{}: already quantized; drop --calib", f.model));
    if (f.dtype != "u8" && f.dtype != "i8") return ReportError(fmt::format("--dtype: '{}' is not u8 or i8", f.dtype));
    // Symbolic input dims take the calibration samples' dims (--shape overrides).
    QuantizeOptions qo;
    qo.method = f.method;
    qo.dtype = f.dtype == "u8" ? DataType::kU8 : DataType::kI8;
    QuantizeReport q;
    st = m->QuantizeFromDirectory(f.calib, qo, f.limit, &q);
    if (!st.ok()) return ReportError(st.message());
    if (!f.quiet) {
      for (const auto& b : q.shapes_from_samples) fmt::print("input shape {} (from the calibration samples)\n", b);
      fmt::print("quantized {} node(s) ({} calibration samples, {} activations)\n", q.quantized_nodes, q.samples,
                 f.dtype);
    }
  } else if (!m->quantized()) {
    return ReportError(fmt::format("{}: a float model: give --calib DIR to quantize it, or a QDQ model "
                                   "(edgec quantize)", f.model));
  }
  CompileOptions options;
  options.target = *target;
  options.cpu_gmacs = f.cpu_gmacs;
  options.single_buffer = f.single;
  options.all_npu = f.all_npu;
  auto pins = ParseAssignments(f.pins, "--pin");
  if (!pins.ok()) return ReportError(pins.status().message());
  for (const auto& [node, unit] : *pins) {
    if (unit != "cpu" && unit != "npu") return ReportError(fmt::format("--pin {}={}: the unit must be cpu or npu", node, unit));
    options.pins[node] = unit == "npu";
  }
  if (f.min_npu_share > 1) return ReportError(fmt::format("--min-npu-share: must be in [0, 1], got {}", f.min_npu_share));
  auto r = CompiledModel::Compile(*m, options);
  if (!r.ok()) return ReportError(r.status().message());
  if (!f.json.empty()) {
    st = WriteJsonFile(f.json, {{"model", f.model}, {"target", target->name()}, {"output", f.output},
                                {"segments", r->segment_count()}, {"npu_segments", r->npu_segment_count()},
                                {"placements", nlohmann::json::parse(r->PlacementJson())}});
    if (!st.ok()) return ReportError(st.message());
  }
  if (int gate = CoverageGate(r->placements(), f.strict, f.min_npu_share, target->name()); gate != 0) return gate;
  st = r->Save(f.output);
  if (!st.ok()) return ReportError(st.message());
  if (!asm_file.empty()) {
    std::ofstream out(asm_file);
    if (!out) return ReportError(fmt::format("{}: cannot write", asm_file));
    out << r->NpuListing();
  }
  if (!f.sram_svg.empty()) {  // the NPU segment with the most layers
    if (r->widest_npu_segment_layers() == 0)
      return ReportError(fmt::format("--sram-svg: {} has no NPU segment on {}", f.model, target->name()));
    std::ofstream out(f.sram_svg);
    if (!out) return ReportError(fmt::format("{}: cannot write", f.sram_svg));
    auto svg = r->SramOccupancySvg(fmt::format("{} on {}: SRAM occupancy over {} layers", f.model, target->name(),
                                               r->widest_npu_segment_layers()));
    if (!svg.ok()) return ReportError(svg.status().message());
    out << *svg;
  }
  if (!f.quiet) {
    fmt::print("target {}\n{}", target->name(), r->PlacementTable());
    if (f.sram_plan) fmt::print("{}", r->SramSummary());
    else if (r->npu_segment_count() > 0) fmt::print("the SRAM plan of each NPU segment: --sram-plan\n");
    fmt::print("{} segment(s) ({} NPU); activation memory plan: {}\nwrote {}\n", r->segment_count(),
               r->npu_segment_count(), r->MemorySummary(), f.output);
    if (!asm_file.empty()) fmt::print("wrote the NPU listing to {}\n", asm_file);
  }
  return 0;
}

}  // namespace

VerbMain AddCompileVerb(CLI::App& app) {
  auto flags = std::make_shared<CompileFlags>();
  CLI::App* sub = app.add_subcommand("compile", "Compile a model for an NPU target into one .edgec file");
  sub->add_option("model", flags->model, "ONNX model (float with --calib, or QDQ)")->required();
  sub->add_option("--target", flags->target, "target file or name (edgec targets)")->capture_default_str();
  sub->add_option("--set", flags->sets, "override a target field: FIELD=VALUE");
  sub->add_option("--calib", flags->calib, "quantize first with the calibration inputs in DIR");
  sub->add_option("--limit", flags->limit, "use the first N calibration inputs (0 = all)");
  sub->add_option("--method", flags->method, "calibrator (with --calib)")->capture_default_str();
  sub->add_option("--dtype", flags->dtype, "activation dtype when quantizing: i8 or u8")->capture_default_str();
  sub->add_option("--freeze", flags->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's dims (default with --calib: the samples' dims)");
  sub->add_option("-o,--output", flags->output, "the .edgec file to write")->required();
  sub->add_option("--emit", flags->emit, "asm FILE: also write the NPU instruction listing")->expected(2);
  sub->add_option("--sram-svg", flags->sram_svg, "write the SRAM occupancy over the layers of the largest NPU segment");
  sub->add_flag("--sram-plan", flags->sram_plan,
                "print each NPU segment's SRAM plan (occupancy per layer, where each tensor lives)");
  sub->add_option("--json", flags->json,
                  "write the placement report as JSON (per node: unit, reason code, violated constraint, costs, "
                  "fix hint)");
  sub->add_flag("--single-buffer", flags->single, "tile every layer with single buffering");
  sub->add_option("--pin", flags->pins, "NODE=cpu|npu: place a node there whatever the cost rule says");
  sub->add_flag("--strict", flags->strict, "fail (exit 3) when a node not pinned to the CPU falls back to the CPU");
  sub->add_option("--min-npu-share", flags->min_npu_share, "fail (exit 3) when less than this share of the MACs runs on the NPU");
  sub->add_flag("--all-npu", flags->all_npu, "skip the cost rule: every legal node to the NPU");
  sub->add_option("--cpu-gmacs", flags->cpu_gmacs, "the cost rule's CPU int8 rate (GMAC/s)")->capture_default_str();
  sub->add_flag("--quiet,-q", flags->quiet, "print nothing but errors");
  return [flags] { return CompileMain(*flags); };
}

}  // namespace edgec::cli
