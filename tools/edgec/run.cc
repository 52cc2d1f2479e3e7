// edgec run MODEL [--input name=file.npy ...] [--output-dir DIR]
// Runs the model on the reference runtime; writes one <output>.npy per graph output.
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "edgec/model.h"
#include "edgec/session.h"
#include "edgec/tensor_io.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/run_output.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

bool IsCompiled(const std::string& path) {
  if (path.size() > 6 && path.compare(path.size() - 6, 6, ".edgec") == 0) return true;
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) return false;
  char head[8] = {};
  const size_t n = std::fread(head, 1, 8, fp);
  std::fclose(fp);
  return n == 8 && std::string(head + 4, 4) == "EDGC";
}

int RunMain(const RunFlags& f) {
  if (IsCompiled(f.model)) return RunCompiled(f);
  if (!f.report.empty()) return ReportError(fmt::format("{}: --report needs a compiled model (.edgec, edgec compile)", f.model));
  if (!f.device.empty()) return ReportError(fmt::format("{}: --device needs a compiled model (.edgec, edgec compile)", f.model));
  auto m = Model::Load(f.model);
  if (!m.ok()) return ReportError(m.status().message());
  if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  if (f.int8)
    if (Status st = RequireQdq(*m, f.model); !st.ok()) return ReportError(st.message());
  std::vector<std::string> generated;
  auto inputs = GatherInputs(m->inputs(), f.inputs, f.shapes, f.seed, &generated);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.model, inputs.status().message()));
  if (!f.quiet && !f.json) {
    for (auto& n : generated) {
      fmt::print("input '{}': seeded random {} (seed {})\n", n, TypeString(inputs->at(n)), f.seed);
    }
  }
  if (f.int8) {
    QdqFoldSummary folded;
    Status st = m->FoldQdq({.fixed_point = f.fixed_point}, &folded);
    if (!st.ok()) return ReportError(st.message());
    if (f.verbose) {
      fmt::print(stderr, "int8: {} node(s) folded into integer ops, {} data-movement op(s) on int8 values, "
                 "{} float island(s) tabulated\n", folded.folded, folded.int8_movement, folded.tabulated);
      for (const auto& s : folded.skipped) fmt::print(stderr, "  float: {}\n", s);
    }
  }
  const int level = f.level >= 0 ? f.level : f.reference ? 0 : 3;
  StatusOr<std::vector<NamedTensor>> outs = std::vector<NamedTensor>();
  const auto t0 = std::chrono::steady_clock::now();
  if (f.reference) {
    // The oracle: the graph (optimized as asked) on the reference executor.
    OptimizeOptions oo;
    oo.level = level;
    oo.pipeline = f.passes;
    Status st = m->Optimize(oo, nullptr);
    if (!st.ok()) return ReportError(st.message());
    outs = m->RunReference(*inputs);
  } else {
    SessionOptions so;
    so.opt_level = level;
    so.pipeline = f.passes;
    so.threads = f.threads;
    so.tuning = KernelTuningFromEnvironment();
    so.fold_qdq = false;  // done above
    so.profiling = false;
    so.verbose = f.verbose;
    auto session = Session::Create(*m, so);
    if (!session.ok()) return ReportError(session.status().message());
    outs = session->Run(*inputs);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!outs.ok()) return ReportError(fmt::format("{}: {}", f.model, outs.status().message()));

  if (!f.output_dir.empty()) {
    Status st = WriteOutputs(f.output_dir, *outs);
    if (!st.ok()) return ReportError(st.message());
  }
  if (f.quiet) return 0;
  if (f.json) {
    nlohmann::json j = {{"model", f.model}, {"device", f.reference ? "reference" : "cpu"},
                        {"pipeline", f.passes.empty() ? fmt::format("-O{}", level) : f.passes},
                        {"int8", f.int8}, {"inputs", InputsJson(*inputs, generated, f.seed)},
                        {"outputs", nlohmann::json::array()}, {"timings", {{"run_ms", seconds * 1e3}}}};
    for (const NamedTensor& o : *outs) j["outputs"].push_back(OutputJson(o.name, o.tensor, f.top));
    if (!f.output_dir.empty()) j["output_dir"] = f.output_dir;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  for (const NamedTensor& o : *outs) PrintOutput(o.name, o.tensor, f.top);
  if (!f.output_dir.empty()) fmt::print("wrote {} output(s) to {}\n", outs->size(), f.output_dir);
  return 0;
}

}  // namespace

VerbMain AddRunVerb(CLI::App& app) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* sub = app.add_subcommand("run", "Run a model on the CPU and write its outputs");
  sub->add_option("model", flags->model, "ONNX model file")->required();
  sub->add_option("--input,-i", flags->inputs,
                  "NAME=FILE.npy for a graph input (repeatable); inputs not given get seeded "
                  "random data");
  sub->add_option("--freeze", flags->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
  sub->add_option("--shape", flags->shapes,
                  "NAME=1x3x224x224: dims for a random input whose dims are symbolic");
  sub->add_option("--output-dir,-o", flags->output_dir,
                  "write one <output name>.npy per graph output here (characters other than "
                  "letters, digits, '.', '_', '-' become '_')");
  sub->add_option("--seed", flags->seed, "seed for random inputs")->capture_default_str();
  sub->add_option("--top", flags->top, "print the N largest values of each output")->capture_default_str();
  sub->add_option("-O", flags->level,
                  "optimize the graph first with the named pipeline 0-3 (default: 3 for the CPU "
                  "plan, 0 with --reference)")
      ->check(CLI::Range(0, 3));
  sub->add_option("--passes", flags->passes, "optimize with this explicit pipeline instead");
  sub->add_option("--threads", flags->threads, "CPU threads (0 = all cores)")->capture_default_str();
  sub->add_flag("--measure-cpu", flags->measure_cpu,
                "compiled model on npu-sim: the simulated latency's CPU share as measured on this host (default: "
                "the cost model)");
  sub->add_flag("--reference", flags->reference,
                "run on the reference kernels (the correctness oracle) instead of the CPU plan");
  sub->add_flag("--int8", flags->int8,
                "QDQ models: fold Q/DQ around Conv/Gemm/MatMul into integer ops (QLinearConv, "
                "QLinearMatMul) and run those in int8");
  sub->add_flag("--fixed-point", flags->fixed_point,
                "with --int8: requantize with the NPU's integer multiplier + shift instead of "
                "ONNX's float formula (so the CPU equals the NPU bit for bit)");
  sub->add_flag("--verbose,-v", flags->verbose, "say when plans are built and which nodes fell back");
  sub->add_flag("--quiet,-q", flags->quiet, "print nothing but errors");
  sub->add_option("--device", flags->device,
                  "compiled models (.edgec): npu-sim (NPU segments in the simulator, default) or cpu (every layer "
                  "on the CPU: the NPU's layers in its integer arithmetic, the others on the fast kernels, or "
                  "the reference kernels with --reference)");
  sub->add_flag("--json", flags->json,
                "print the run as JSON instead: inputs, outputs (type, dims, min/max/mean, top values), timings, "
                "device; a compiled model adds the target, the simulated latency and the per-layer rows");
  sub->add_option("--report", flags->report,
                  "compiled models on npu-sim: write a self-contained HTML report (time per layer by unit, "
                  "placement reasons, stalls, roofline) to this file");
  return [flags] { return RunMain(*flags); };
}

}  // namespace edgec::cli
