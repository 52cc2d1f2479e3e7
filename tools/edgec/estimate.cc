// edgec estimate (MODEL.onnx | --decoder CONFIG) [--target T] [--set F=V] [--tiling]
//                [--single-buffer] [--compare-buffering] [--json FILE] [--asm FILE]
// Shape-only NPU estimate: every GEMM-class layer (Conv, MatMul, Gemm and their int8 forms)
// is tiled and simulated on the target; no weights are needed. A QDQ model also gets the
// compiler's own schedule (segments, SRAM plans: NpuWorkload::EstimateSegments) first.
// --decoder generates a decoder-only transformer (e.g. 7b) and prints FP16 vs INT8 weight
// streaming. On the public API only (edgec/estimate.h).
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/estimate.h"
#include "tools/edgec/compiled_input.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"
#include "tools/edgec/workload.h"

namespace edgec::cli {
namespace {

struct EstimateFlags {
  std::string model, decoder, target = "default", json, asm_file;
  std::vector<std::string> sets, shapes;
  bool tiling = false, single = false, compare_buffering = false;
};

nlohmann::json TotalsJson(const NpuEstimate& e) {
  return {{"cycles", e.cycles}, {"ms", e.milliseconds}, {"macs", e.macs}, {"dram_read", e.dram_read},
          {"dram_written", e.dram_written}, {"weight_bytes", e.weight_bytes}, {"mac_utilization", e.mac_utilization}};
}

}  // namespace

// Shared with sweep (sweep.cc): the workload of a model file (shapes bound by --shape) or
// of a generated decoder.
StatusOr<NpuWorkload> WorkloadFor(const std::string& model, const std::string& decoder,
                                  const std::vector<std::string>& shapes, bool fp16) {
  if (!decoder.empty()) return NpuWorkload::FromDecoder(decoder, fp16);
  if (model.empty()) return BadInput("give a model file or --decoder CONFIG");
  EDGEC_ASSIGN_OR_RETURN(ShapeMap bound, ParseShapes(shapes));
  return NpuWorkload::FromModel(model, bound);
}

namespace {

int EstimateMain(const EstimateFlags& f) {
  auto target = TargetWithSets(f.target, f.sets);
  if (!target.ok()) return ReportError(target.status().message());
  const Target& t = *target;
  EstimateOptions opt;
  opt.single_buffer = f.single;
  opt.show_tiling = f.tiling;
  opt.listing = !f.asm_file.empty();
  auto work = WorkloadFor(f.model, f.decoder, f.shapes, false);
  if (!work.ok()) return ReportError(work.status().message());
  fmt::print("target {}: {} cores x {}x{} MACs, {:.1f} TOPS int8, {} B SRAM, {:.1f} GB/s DRAM\n", t.name(), t.cores(),
             t.mac_rows(), t.mac_cols(), t.tops_int8(), t.sram_bytes(), t.dram_bytes_per_s() / 1e9);
  nlohmann::json j;
  auto run = [&](const NpuWorkload& w, const char* label) -> StatusOr<NpuEstimate> {
    auto e = w.Estimate(t, opt);
    if (!e.ok()) return e.status();
    fmt::print("\n{}\n{}", label, e->table);
    j[label] = TotalsJson(*e);
    return e;
  };
  if (!f.decoder.empty()) {
    fmt::print("decoder {}: {:.2f} B parameters\n", work->decoder(), work->decoder_parameters() / 1e9);
    auto int8 = run(*work, "INT8 weights");
    if (!int8.ok()) return ReportError(int8.status().message());
    auto fp16_work = WorkloadFor(f.model, f.decoder, f.shapes, true);
    if (!fp16_work.ok()) return ReportError(fp16_work.status().message());
    auto fp16 = run(*fp16_work, "FP16 weights");
    if (!fp16.ok()) return ReportError(fp16.status().message());
    const double saved = static_cast<double>(fp16->weight_bytes - int8->weight_bytes);
    const double ms = (fp16->cycles - int8->cycles) / t.clock_hz() * 1e3;
    fmt::print("\nFP16 -> INT8: {:.2f} GB less weight traffic per pass; at {:.0f} GB/s that alone is {:.1f} ms; "
               "simulated {:.1f} -> {:.1f} ms ({:.1f} ms, {:.2f}x)\n",
               saved / 1e9, t.dram_bytes_per_s() / 1e9, saved / t.dram_bytes_per_s() * 1e3,
               fp16->cycles / t.clock_hz() * 1e3, int8->cycles / t.clock_hz() * 1e3, ms, fp16->cycles / int8->cycles);
  } else {
    if (work->quantized()) {
      auto se = work->EstimateSegments(t, opt);
      if (!se.ok()) return ReportError(se.status().message());
      fmt::print("\nsegments (the compiler's schedule: {} NPU segment(s), {} layers): NPU {:.3f} ms, DRAM {} B read + "
                 "{} B written, {} B kept on chip, {} B spilled\n",
                 se->segments, se->layers, se->milliseconds, se->dram_read, se->dram_written, se->resident_bytes,
                 se->spilled_bytes);
      j["segments"] = {{"cycles", se->cycles}, {"ms", se->milliseconds}, {"dram_read", se->dram_read},
                       {"dram_written", se->dram_written}, {"resident_bytes", se->resident_bytes},
                       {"spilled_bytes", se->spilled_bytes}};
    }
    auto e = run(*work, "per layer");
    if (!e.ok()) return ReportError(e.status().message());
    if (!f.asm_file.empty()) {
      Status w = WriteTextFile(f.asm_file, e->listing);
      if (!w.ok()) return ReportError(w.message());
      fmt::print("wrote the instruction listing to {}\n", f.asm_file);
    }
    if (f.compare_buffering) {
      EstimateOptions single = opt;
      single.single_buffer = true;
      single.listing = false;
      auto s = work->Estimate(t, single);
      if (!s.ok()) return ReportError(s.status().message());
      fmt::print("single buffering: {:.3f} ms; double buffering: {:.3f} ms; speedup {:.2f}x\n", s->milliseconds,
                 e->milliseconds, s->cycles / e->cycles);
      j["single_buffer_cycles"] = s->cycles;
    }
    if (!work->not_on_npu().empty()) {
      fmt::print("not on the NPU ({}):\n", work->not_on_npu().size());
      for (auto& fb : work->not_on_npu()) fmt::print("  {}\n", fb);
    }
  }
  if (!f.json.empty()) {
    std::ofstream out(f.json);
    if (!out) return ReportError(fmt::format("{}: cannot write", f.json));
    out << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

VerbMain AddEstimateVerb(CLI::App& app) {
  auto flags = std::make_shared<EstimateFlags>();
  CLI::App* sub = app.add_subcommand("estimate", "Shape-only NPU latency estimate (no weights needed)");
  sub->add_option("model", flags->model, "ONNX model (shapes only are used)");
  sub->add_option("--decoder", flags->decoder,
                  "generate a decoder: 7b, 1b, tiny, or layers=32,hidden=4096,heads=32,ffn=11008,seq=1,context=1024");
  sub->add_option("--target", flags->target, "target file or name (edgec targets)")->capture_default_str();
  sub->add_option("--set", flags->sets, "override a target field: FIELD=VALUE");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's symbolic dims");
  sub->add_flag("--tiling", flags->tiling, "show each layer's tiling and the runner-up");
  sub->add_flag("--single-buffer", flags->single, "force single buffering");
  sub->add_flag("--compare-buffering", flags->compare_buffering, "also estimate with single buffering");
  sub->add_option("--json", flags->json, "write the totals as JSON");
  sub->add_option("--asm", flags->asm_file, "write each layer's NPU instruction listing to this file");
  return [flags] { return EstimateMain(*flags); };
}

}  // namespace edgec::cli
