// edgec run MODEL.edgec --device npu-sim|cpu [--input NAME=FILE.npy] [--output-dir DIR] [--report F.html]
//   [--reference] [--threads N]
// Runs a compiled model file: NPU segments in the simulator (npu-sim) or every node on the
// CPU (cpu), the CPU nodes on the fast kernels (the reference kernels with --reference);
// prints the per-layer table and the simulated latency.
#include <filesystem>
#include <fstream>

#include "report/html_report.h"

#include "runtime/artifact_run.h"
#include "support/npy.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {

int RunCompiled(const std::string& file, const std::string& device, const std::vector<std::string>& input_flags,
                const std::string& output_dir, uint64_t seed, bool quiet, const std::string& report, bool reference,
                int threads, bool measure_cpu) {
  ArtifactDevice d;
  if (device == "npu-sim") d = ArtifactDevice::kNpuSim;
  else if (device == "cpu") d = ArtifactDevice::kCpu;
  else return ReportError(fmt::format("--device: '{}' is not npu-sim or cpu", device));
  auto mapped = artifact_io::MappedArtifact::Open(file);
  if (!mapped.ok()) return ReportError(mapped.status().message());
  auto loaded = LoadArtifact(**mapped);
  if (!loaded.ok()) return ReportError(loaded.status().message());
  std::vector<std::string> generated;
  auto inputs = GatherInputs(loaded->graph, input_flags, {}, seed, &generated);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", file, inputs.status().message()));
  if (!quiet)
    for (auto& n : generated) fmt::print("input '{}': seeded random {} (seed {})\n", n, inputs->at(n).TypeString(), seed);
  if (!report.empty() && d != ArtifactDevice::kNpuSim) return ReportError("--report needs --device npu-sim");
  ArtifactRunOptions options;
  options.fast_kernels = !reference;
  options.threads = threads;
  options.measure_cpu = measure_cpu;
  auto r = RunArtifact(*loaded, d, *inputs, options);
  if (!r.ok()) return ReportError(r.status().message());
  if (!report.empty()) {
    std::ofstream out(report, std::ios::trunc);
    out << report::ArtifactRunHtml(file, *loaded, *r);
    if (!out) return ReportError(fmt::format("cannot write '{}'", report));
    if (!quiet) fmt::print("wrote the report to {}\n", report);
  }
  if (!quiet) {
    fmt::print("{} on {} (target {})\n", file, device, loaded->target.name);
    if (d == ArtifactDevice::kNpuSim) {
      fmt::print("{}", FormatArtifactRun(*loaded, *r));
    } else {
      fmt::print("every node on the CPU's {} kernels (the NPU's layers in its fixed-point arithmetic): {:.3f} ms {}\n",
                 reference ? "reference" : "fast", r->cpu_s * 1e3,
                 r->cpu_measured ? "measured (after a warm-up run)" : "by the partitioner's cost model");
    }
  }
  if (!output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    if (ec) return ReportError(fmt::format("cannot create output folder '{}': {}", output_dir, ec.message()));
    for (size_t i = 0; i < r->outputs.size(); ++i) {
      const std::string path = (std::filesystem::path(output_dir) / (SanitizeFileName(r->output_names[i]) + ".npy")).string();
      Status st = WriteNpy(path, r->outputs[i]);
      if (!st.ok()) return ReportError(st.message());
    }
    if (!quiet) fmt::print("wrote {} output(s) to {}\n", r->outputs.size(), output_dir);
  }
  return 0;
}

}  // namespace edgec::cli
