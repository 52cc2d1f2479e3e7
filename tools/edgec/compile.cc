// edgec compile MODEL.onnx --target T [--set F=V] [--calib DIR] -o MODEL.edgec [--emit=asm FILE]
// Quantizes (with --calib; a QDQ model is taken as it is), folds Q/DQ into integer ops,
// partitions the graph between NPU and CPU, lowers every NPU node and writes the compiled
// model file. Prints the placement of every node with its reason. --sram-svg FILE plots the
// SRAM occupancy over the largest NPU segment's layers. --json FILE writes the placement
// report (per node: unit, reason code, violated constraint, costs, fix hint), also when a
// coverage gate fails; --pin NODE=cpu|npu overrides the cost rule for a node; --strict (every
// node on the NPU) and --min-npu-share F (the share of the model's MACs on the NPU) fail with
// exit code 3, listing the offending nodes, and write no .edgec file.
#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "driver/sample_shapes.h"
#include "frontend/onnx/importer.h"
#include "lower/npu_compile.h"
#include "quant/calibration_data.h"
#include "quant/pipeline.h"
#include "report/sram_svg.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/report_json.h"
#include "tools/edgec/segment_estimate.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct CompileFlags {
  std::string model, target = "default", calib, output, method = "entropy", dtype = "i8";
  std::vector<std::string> sets, shapes, emit;
  std::string sram_svg, json;
  std::vector<std::string> pins;
  bool strict = false;
  double min_npu_share = -1;
  int64_t limit = 0;
  bool single = false, all_npu = false, quiet = false;
  double cpu_gmacs = 20;
};

bool HasQdq(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kQLinearConv || n->op() == OpKind::kQLinearMatMul)
      return true;
  return false;
}

// --strict / --min-npu-share: 0 when the placement passes (nodes pinned to the CPU and the
// model's own float input/output conversions do not count against --strict), else prints the offending nodes
// (CPU nodes, the largest MACs first) and returns 3.
int CoverageGate(const std::vector<partition::NodePlacement>& ps, bool strict, double min_share, const std::string& target) {
  if (!strict && min_share < 0) return 0;
  int64_t macs = 0, npu_macs = 0;
  std::vector<const partition::NodePlacement*> cpu;
  for (const auto& p : ps) {
    macs += p.macs;
    if (p.unit == artifact_io::Unit::kNpu) npu_macs += p.macs;
    else if (p.code != partition::ReasonCode::kPinnedCpu && p.code != partition::ReasonCode::kBoundary) cpu.push_back(&p);
  }
  const double share = macs ? static_cast<double>(npu_macs) / macs : 1.0;
  const bool fail = (strict && !cpu.empty()) || (min_share >= 0 && share < min_share);
  if (!fail) return 0;
  std::stable_sort(cpu.begin(), cpu.end(), [](auto* a, auto* b) { return a->macs > b->macs; });
  fmt::print(stderr, "edgec: error: placement on {} fails {}: {:.1f}% of the MACs on the NPU, {} node(s) on the CPU\n",
             target, strict && !cpu.empty() ? "--strict" : fmt::format("--min-npu-share {}", min_share), 100 * share,
             cpu.size());
  for (const auto* p : cpu)
    fmt::print(stderr, "  {} ({}) {} MACs: {} [{}]{}\n", p->node->name(), OpName(p->node->op()), p->macs, p->reason,
               partition::ReasonCodeName(p->code), p->hint.empty() ? "" : "; fix: " + p->hint);
  return 3;
}

int CompileMain(const CompileFlags& f) {
  auto target = TargetFor(f.target, f.sets);
  if (!target.ok()) return ReportError(target.status().message());
  std::string asm_file;
  if (!f.emit.empty()) {
    if (f.emit.size() != 2 || f.emit[0] != "asm") return ReportError("--emit: expected 'asm FILE'");
    asm_file = f.emit[1];
  }
  auto g = onnx_fe::ImportOnnxFile(f.model);
  if (!g.ok()) return ReportError(g.status().message());
  auto bound = ParseShapes(f.shapes);
  if (!bound.ok()) return ReportError(bound.status().message());
  Status st;
  std::vector<quant::Sample> calib_samples;
  if (!f.calib.empty()) {
    if (HasQdq(*g)) return ReportError(fmt::format("{}: already quantized; drop --calib", f.model));
    // Symbolic input dims take the calibration samples' dims (--shape overrides).
    std::vector<std::string> from_data;
    auto samples = driver::BindShapesFromCalibration(*g, *bound, f.calib, {}, f.limit, &from_data);
    if (!samples.ok()) return ReportError(fmt::format("{}: {}", f.model, samples.status().message()));
    calib_samples = std::move(samples).value();
    if (!f.quiet) {
      for (const auto& b : from_data) fmt::print("input shape {} (from the calibration samples)\n", b);
    }
  } else {
    st = BindInputShapes(*g, *bound, 1);
    if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
  }
  if (!f.calib.empty()) {
    st = quant::PrepareForQuantization(*g);
    if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
    quant::CalibrationOptions co;
    auto method = quant::ParseCalibrationMethod(f.method);
    if (!method.ok()) return ReportError("--method: " + method.status().message());
    co.method = *method;
    if (f.dtype != "u8" && f.dtype != "i8") return ReportError(fmt::format("--dtype: '{}' is not u8 or i8", f.dtype));
    co.storage = f.dtype == "u8" ? DType::kU8 : DType::kI8;
    quant::QuantizeOptions qo;
    auto table = quant::Calibrate(*g, calib_samples, co, qo, false);
    if (!table.ok()) return ReportError(fmt::format("{}: {}", f.model, table.status().message()));
    auto summary = quant::RewriteToQdq(*g, *table, qo);
    if (!summary.ok()) return ReportError(fmt::format("{}: {}", f.model, summary.status().message()));
    if (!f.quiet)
      fmt::print("quantized {} node(s) ({} calibration samples, {} activations)\n", summary->quantized_nodes,
                 calib_samples.size(), f.dtype);
  } else if (!HasQdq(*g)) {
    return ReportError(fmt::format("{}: a float model: give --calib DIR to quantize it, or a QDQ model "
                                   "(edgec quantize)", f.model));
  }
  auto folded = quant::Int8Executable(*g);
  if (!folded.ok()) return ReportError(fmt::format("{}: {}", f.model, folded.status().message()));
  partition::PartitionOptions po;
  po.cpu.int8_macs_per_s = f.cpu_gmacs * 1e9;
  po.tiler.allow_double = !f.single;
  po.cost_rule = !f.all_npu;
  auto pins = ParseAssignments(f.pins, "--pin");
  if (!pins.ok()) return ReportError(pins.status().message());
  for (const auto& [node, unit] : *pins) {
    if (unit != "cpu" && unit != "npu") return ReportError(fmt::format("--pin {}={}: the unit must be cpu or npu", node, unit));
    po.pins[node] = unit == "npu" ? artifact_io::Unit::kNpu : artifact_io::Unit::kCpu;
  }
  if (f.min_npu_share > 1) return ReportError(fmt::format("--min-npu-share: must be in [0, 1], got {}", f.min_npu_share));
  auto r = lower::CompileGraph(*folded, *target, f.model, po);
  if (!r.ok()) return ReportError(fmt::format("{}: {}", f.model, r.status().message()));
  if (!f.json.empty()) {
    int npu_segments = 0;
    for (const auto& s : r->model.segments) npu_segments += s.unit == artifact_io::Unit::kNpu;
    st = WriteJsonFile(f.json, {{"model", f.model}, {"target", target->name}, {"output", f.output},
                                {"segments", r->model.segments.size()}, {"npu_segments", npu_segments},
                                {"placements", partition::PlacementJson(r->placements)}});
    if (!st.ok()) return ReportError(st.message());
  }
  if (int gate = CoverageGate(r->placements, f.strict, f.min_npu_share, target->name); gate != 0) return gate;
  st = artifact_io::WriteArtifact(f.output, r->model);
  if (!st.ok()) return ReportError(st.message());
  if (!asm_file.empty()) {
    std::ofstream out(asm_file);
    if (!out) return ReportError(fmt::format("{}: cannot write", asm_file));
    out << r->listing;
  }
  if (!f.sram_svg.empty()) {  // the NPU segment with the most layers
    const artifact_io::Segment* widest = nullptr;
    for (const auto& s : r->model.segments)
      if (s.unit == artifact_io::Unit::kNpu && (!widest || s.layer_plan.size() > widest->layer_plan.size())) widest = &s;
    if (!widest) return ReportError(fmt::format("--sram-svg: {} has no NPU segment on {}", f.model, target->name));
    std::ofstream out(f.sram_svg);
    if (!out) return ReportError(fmt::format("{}: cannot write", f.sram_svg));
    out << report::SramOccupancySvg(
        fmt::format("{} on {}: SRAM occupancy over {} layers", f.model, target->name, widest->layer_plan.size()),
        report::SramSteps(*widest), target->shared_sram.bytes);
  }
  if (!f.quiet) {
    fmt::print("target {}\n{}", target->name, partition::FormatPlacements(r->placements));
    fmt::print("{}", r->sram_summary);
    int npu_segments = 0;
    for (const auto& s : r->model.segments) npu_segments += s.unit == artifact_io::Unit::kNpu;
    fmt::print("{} segment(s) ({} NPU); activation memory plan: {}\nwrote {}\n", r->model.segments.size(),
               npu_segments, r->memory_summary, f.output);
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
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's dims (default with --calib: the samples' dims)");
  sub->add_option("-o,--output", flags->output, "the .edgec file to write")->required();
  sub->add_option("--emit", flags->emit, "asm FILE: also write the NPU instruction listing")->expected(2);
  sub->add_option("--sram-svg", flags->sram_svg, "write the SRAM occupancy over the layers of the largest NPU segment");
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
