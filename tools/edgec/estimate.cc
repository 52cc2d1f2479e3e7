// edgec estimate (MODEL.onnx | --decoder CONFIG) [--target T] [--set F=V] [--tiling]
//                [--single-buffer] [--compare-buffering] [--json FILE] [--asm FILE]
// Shape-only NPU estimate: every GEMM-class layer (Conv, MatMul, Gemm and their int8 forms)
// is tiled and simulated on the target; no weights are needed. A QDQ model also gets the
// compiler's own schedule (segments, SRAM plans; lower::EstimateSegments) first. --decoder generates a
// decoder-only transformer (e.g. 7b) and prints FP16 vs INT8 weight streaming.
#include <fstream>

#include <nlohmann/json.hpp>

#include "frontend/onnx/importer.h"
#include "npu/estimate.h"
#include "lower/npu_layers.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/segment_estimate.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct EstimateFlags {
  std::string model, decoder, target = "default", json, asm_file;
  std::vector<std::string> sets, shapes;
  bool tiling = false, single = false, compare_buffering = false;
};

StatusOr<npu::ConvLayer> LayerOf(const Node& n) { return lower::GemmLayerShape(n); }

}  // namespace

StatusOr<std::vector<npu::RepeatedLayer>> ModelLayers(const std::string& model, const std::vector<std::string>& shapes,
                                                      std::vector<std::string>* fallbacks) {
  ASSIGN_OR_RETURN(Graph g, onnx_fe::ImportOnnxFile(model));
  ASSIGN_OR_RETURN(auto text, ParseAssignments(shapes, "--shape"));
  std::map<std::string, Dims> bound;
  for (auto& [name, t] : text) {
    ASSIGN_OR_RETURN(Dims d, ParseDims(t));
    bound[name] = d;
  }
  RETURN_IF_ERROR(BindInputShapes(g, bound, 1).WithContext(model));
  std::vector<npu::RepeatedLayer> out;
  for (const Node* n : g.nodes()) {
    auto l = LayerOf(*n);
    if (l.ok()) {
      out.push_back({*l, 1});
    } else if (l.status().message() != lower::kNotGemm && fallbacks) {
      fallbacks->push_back(fmt::format("{} '{}': {}", OpName(n->op()), n->name(), l.status().message()));
    }
  }
  if (out.empty()) return InvalidArgument("{}: no Conv/MatMul/Gemm layer the NPU can run", model);
  return out;
}

StatusOr<std::vector<npu::RepeatedLayer>> LayersFor(const std::string& model, const std::string& decoder,
                                                    const std::vector<std::string>& shapes, bool fp16,
                                                    std::vector<std::string>* fallbacks) {
  if (!decoder.empty()) {
    ASSIGN_OR_RETURN(npu::DecoderConfig c, npu::ParseDecoderConfig(decoder));
    c.fp16 = fp16;
    return npu::DecoderLayers(c);
  }
  if (model.empty()) return InvalidArgument("give a model file or --decoder CONFIG");
  return ModelLayers(model, shapes, fallbacks);
}

StatusOr<npu::Target> TargetFor(const std::string& name, const std::vector<std::string>& sets) {
  ASSIGN_OR_RETURN(npu::Target t, npu::LoadTarget(name));
  return npu::ApplyOverrides(t, sets);
}

namespace {

int EstimateMain(const EstimateFlags& f) {
  auto target = TargetFor(f.target, f.sets);
  if (!target.ok()) return ReportError(target.status().message());
  const npu::Target& t = *target;
  npu::TilerOptions opt;
  opt.allow_double = !f.single;
  std::vector<std::string> fallbacks;
  auto layers = LayersFor(f.model, f.decoder, f.shapes, false, &fallbacks);
  if (!layers.ok()) return ReportError(layers.status().message());
  fmt::print("target {}: {} cores x {}x{} MACs, {:.1f} TOPS int8, {} B SRAM, {:.1f} GB/s DRAM\n", t.name,
             t.ai_cores.count, t.ai_cores.mac_rows, t.ai_cores.mac_cols, t.tops_int8(), t.shared_sram.bytes,
             t.dram.bandwidth_bytes_per_s / 1e9);
  nlohmann::json j;
  auto run = [&](const std::vector<npu::RepeatedLayer>& ls, const char* label) -> StatusOr<npu::ModelEstimate> {
    auto e = npu::EstimateModel(ls, t, opt);
    if (!e.ok()) return e.status();
    fmt::print("\n{}\n{}", label, npu::FormatEstimate(*e, t, f.tiling));
    j[label] = {{"cycles", e->total.cycles}, {"ms", e->total.cycles / t.clock_hz * 1e3},
                {"macs", e->total.macs}, {"dram_read", e->total.dram_read},
                {"dram_written", e->total.dram_written}, {"weight_bytes", e->weight_bytes},
                {"mac_utilization", e->total.mac_utilization(t)}};
    return e;
  };
  if (!f.decoder.empty()) {
    auto c = npu::ParseDecoderConfig(f.decoder);
    fmt::print("decoder {}: {:.2f} B parameters\n", c->ToString(), c->parameters() / 1e9);
    auto int8 = run(*layers, "INT8 weights");
    if (!int8.ok()) return ReportError(int8.status().message());
    auto fp16_layers = LayersFor(f.model, f.decoder, f.shapes, true, nullptr);
    auto fp16 = run(*fp16_layers, "FP16 weights");
    if (!fp16.ok()) return ReportError(fp16.status().message());
    const double saved = static_cast<double>(fp16->weight_bytes - int8->weight_bytes);
    const double ms = (fp16->total.cycles - int8->total.cycles) / t.clock_hz * 1e3;
    fmt::print("\nFP16 -> INT8: {:.2f} GB less weight traffic per pass; at {:.0f} GB/s that alone is {:.1f} ms; "
               "simulated {:.1f} -> {:.1f} ms ({:.1f} ms, {:.2f}x)\n",
               saved / 1e9, t.dram.bandwidth_bytes_per_s / 1e9, saved / t.dram.bandwidth_bytes_per_s * 1e3,
               fp16->total.cycles / t.clock_hz * 1e3, int8->total.cycles / t.clock_hz * 1e3, ms,
               fp16->total.cycles / int8->total.cycles);
  } else {
    if (auto g = onnx_fe::ImportOnnxFile(f.model); g.ok() && IsQdqModel(*g)) {
      auto integer = IntegerGraphOf(f.model, f.shapes);
      if (!integer.ok()) return ReportError(integer.status().message());
      auto se = EstimateWithSegments(*integer, t, opt);
      if (!se.ok()) return ReportError(se.status().message());
      fmt::print("\nsegments (the compiler's schedule: {} NPU segment(s), {} layers): NPU {:.3f} ms, DRAM {} B read + "
                 "{} B written, {} B kept on chip, {} B spilled\n",
                 se->segments, se->layers, se->cycles / t.clock_hz * 1e3, se->dram_read, se->dram_written,
                 se->resident_bytes, se->spilled_bytes);
      j["segments"] = {{"cycles", se->cycles}, {"ms", se->cycles / t.clock_hz * 1e3}, {"dram_read", se->dram_read},
                       {"dram_written", se->dram_written}, {"resident_bytes", se->resident_bytes},
                       {"spilled_bytes", se->spilled_bytes}};
    }
    auto e = run(*layers, "per layer");
    if (!e.ok()) return ReportError(e.status().message());
    if (!f.asm_file.empty()) {
      std::ofstream out(f.asm_file);
      if (!out) return ReportError(fmt::format("{}: cannot write", f.asm_file));
      for (const npu::LayerEstimate& le : e->layers) {
        auto p = npu::LowerConv(le.layer.layer, t, le.tiling.best.tiling, nullptr);
        if (!p.ok()) return ReportError(p.status().message());
        out << "; layer " << le.layer.layer.name << ": " << le.tiling.best.tiling.ToString() << "\n"
            << npu::FormatProgram(*p);
      }
      fmt::print("wrote the instruction listing to {}\n", f.asm_file);
    }
    if (f.compare_buffering) {
      npu::TilerOptions single;
      single.allow_double = false;
      auto s = npu::EstimateModel(*layers, t, single);
      if (!s.ok()) return ReportError(s.status().message());
      fmt::print("single buffering: {:.3f} ms; double buffering: {:.3f} ms; speedup {:.2f}x\n",
                 s->total.cycles / t.clock_hz * 1e3, e->total.cycles / t.clock_hz * 1e3,
                 s->total.cycles / e->total.cycles);
      j["single_buffer_cycles"] = s->total.cycles;
    }
    if (!fallbacks.empty()) {
      fmt::print("not on the NPU ({}):\n", fallbacks.size());
      for (auto& fb : fallbacks) fmt::print("  {}\n", fb);
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
