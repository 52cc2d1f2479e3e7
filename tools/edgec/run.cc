// edgec run MODEL [--input name=file.npy ...] [--output-dir DIR]
// Runs the model on the reference runtime; writes one <output>.npy per graph output.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>

#include "driver/kernel_tuning.h"
#include "driver/load.h"
#include "driver/session.h"
#include "frontend/onnx/importer.h"
#include "quant/fold_qdq.h"
#include "runtime/reference_executor.h"
#include "support/npy.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct RunFlags {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir;
  uint64_t seed = 0;
  int top = 5;
  int level = -1;  // -O not given: 3 for the CPU plan, 0 with --reference
  std::string passes;
  int threads = 0;
  bool reference = false;
  bool measure_cpu = false;
  bool int8 = false;
  bool fixed_point = false;
  bool verbose = false;
  bool quiet = false;
  std::string device;
  std::string report;
};

// One summary line per output plus its largest values (e.g. the top classes).
void PrintOutput(const std::string& name, const Tensor& t, int top) {
  fmt::print("output '{}': {}", name, t.TypeString());
  if (t.numel() == 0) {
    fmt::print(" (empty)\n");
    return;
  }
  auto v = t.ToDoubleVector();
  double mn = v[0], mx = v[0], sum = 0;
  int64_t nonfinite = 0;
  for (double x : v) {
    if (!std::isfinite(x)) {
      ++nonfinite;
      continue;
    }
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    sum += x;
  }
  fmt::print("  min {:.6g}  max {:.6g}  mean {:.6g}", mn, mx, sum / static_cast<double>(v.size()));
  if (nonfinite) fmt::print("  ({} non-finite)", nonfinite);
  fmt::print("\n");
  if (top <= 0) return;
  std::vector<int64_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  int k = static_cast<int>(std::min<size_t>(top, idx.size()));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](int64_t a, int64_t b) { return v[a] > v[b]; });
  fmt::print("  top {}:", k);
  for (int i = 0; i < k; ++i) fmt::print("  [{}] {:.6g}", idx[i], v[idx[i]]);
  fmt::print("\n");
}

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
  if (IsCompiled(f.model)) return RunCompiled(f.model, f.device.empty() ? "npu-sim" : f.device, f.inputs,
                                              f.output_dir, f.seed, f.quiet, f.report, f.reference, f.threads,
                                              f.measure_cpu);
  if (!f.report.empty()) return ReportError(fmt::format("{}: --report needs a compiled model (.edgec, edgec compile)", f.model));
  if (!f.device.empty()) return ReportError(fmt::format("{}: --device needs a compiled model (.edgec, edgec compile)", f.model));
  auto g = onnx_fe::ImportOnnxFile(f.model);
  if (!g.ok()) return ReportError(g.status().message());
  if (f.int8)
    if (Status st = RequireQdq(*g, f.model); !st.ok()) return ReportError(st.message());
  std::vector<std::string> generated;
  auto inputs = GatherInputs(*g, f.inputs, f.shapes, f.seed, &generated);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.model, inputs.status().message()));
  if (!f.quiet) {
    for (auto& n : generated) {
      fmt::print("input '{}': seeded random {} (seed {})\n", n, inputs->at(n).TypeString(), f.seed);
    }
  }
  if (f.int8) {
    quant::FoldOptions fo;
    fo.fixed_point = f.fixed_point;
    auto folded = quant::FoldQdqToInteger(*g, fo);
    if (!folded.ok()) return ReportError(fmt::format("{}: {}", f.model, folded.status().message()));
    if (f.verbose) {
      fmt::print(stderr, "int8: {} node(s) folded into integer ops, {} data-movement op(s) on int8 values, "
                 "{} float island(s) tabulated\n", folded->folded, folded->int8_movement, folded->tabulated);
      for (const auto& s : folded->skipped) fmt::print(stderr, "  float: {}\n", s);
    }
  }
  std::vector<std::string> names;  // output names: passes keep them
  for (const Value* v : g->outputs()) names.push_back(v->name());
  StatusOr<std::vector<Tensor>> outs = std::vector<Tensor>();
  const int level = f.level >= 0 ? f.level : f.reference ? 0 : 3;
  if (f.reference) {
    // The oracle: the graph (optimized as asked) on the reference executor.
    passes::PassContext ctx;
    Status st = driver::Optimize(*g, level, f.passes, ctx);
    if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
    outs = ReferenceExecutor(*g).Run(*inputs);
  } else {
    SessionOptions so;
    so.opt_level = level;
    so.pipeline = f.passes;
    so.plan.threads = f.threads;
    so.plan.tuning = driver::KernelTuningFromEnvironment();
    so.verbose = f.verbose;
    auto session = Session::FromGraph(std::move(g).value(), f.model, so);
    if (!session.ok()) return ReportError(session.status().message());
    Status st = (*session)->Run(*inputs, &*outs);
    if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
    if (f.verbose) {
      for (const auto& s : (*session)->last_plan()->steps()) {
        if (!s.fallback_reason.empty()) fmt::print(stderr, "  reference: {}\n", s.fallback_reason);
        for (const auto& what : s.staged) fmt::print(stderr, "  staged copy: {}: {}\n", s.node->Label(), what);
      }
    }
  }
  if (!outs.ok()) return ReportError(fmt::format("{}: {}", f.model, outs.status().message()));

  if (!f.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.output_dir, ec);
    if (ec) return ReportError(fmt::format("cannot create output folder '{}': {}", f.output_dir, ec.message()));
    std::map<std::string, std::string> used;  // file -> output name, to catch collisions
    for (size_t i = 0; i < outs->size(); ++i) {
      const std::string& name = names[i];
      std::string file = SanitizeFileName(name) + ".npy";
      if (used.count(file)) {
        return ReportError(fmt::format("outputs '{}' and '{}' map to the same file name '{}'",
                                       used[file], name, file));
      }
      used[file] = name;
    }
    for (size_t i = 0; i < outs->size(); ++i) {
      std::string file = (std::filesystem::path(f.output_dir) /
                          (SanitizeFileName(names[i]) + ".npy")).string();
      Status st = WriteNpy(file, (*outs)[i]);
      if (!st.ok()) return ReportError(st.message());
    }
  }
  if (!f.quiet) {
    for (size_t i = 0; i < outs->size(); ++i) PrintOutput(names[i], (*outs)[i], f.top);
    if (!f.output_dir.empty()) fmt::print("wrote {} output(s) to {}\n", outs->size(), f.output_dir);
  }
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
  sub->add_option("--report", flags->report,
                  "compiled models on npu-sim: write a self-contained HTML report (time per layer by unit, "
                  "placement reasons, stalls, roofline) to this file");
  return [flags] { return RunMain(*flags); };
}

}  // namespace edgec::cli
