// edgec run MODEL.edgec --device npu-sim|cpu [--input NAME=FILE.npy] [--output-dir DIR] [--report F.html]
//   [--reference] [--threads N] [--json]
// Runs a compiled model file: NPU segments in the simulator (npu-sim) or every node on the
// CPU (cpu), the CPU nodes on the fast kernels (the reference kernels with --reference);
// prints the per-layer table and the simulated latency.
#include <chrono>

#include <fmt/format.h>

#include "edgec/compiled_model.h"
#include "edgec/report.h"
#include "edgec/session.h"
#include "edgec/tensor_io.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/run_output.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {

int RunCompiled(const RunFlags& f) {
  const std::string device = f.device.empty() ? "npu-sim" : f.device;
  SessionOptions so;
  if (device == "npu-sim") so.device = Device::kNpuSim;
  else if (device == "cpu") so.device = Device::kCpu;
  else return ReportError(fmt::format("--device: '{}' is not npu-sim or cpu", device));
  auto compiled = CompiledModel::Load(f.model);
  if (!compiled.ok()) return ReportError(compiled.status().message());
  std::vector<std::string> generated;
  auto inputs = GatherInputs(compiled->inputs(), f.inputs, {}, f.seed, &generated);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.model, inputs.status().message()));
  if (!f.quiet && !f.json)
    for (auto& n : generated)
      fmt::print("input '{}': seeded random {} (seed {})\n", n, TypeString(inputs->at(n)), f.seed);
  if (!f.report.empty() && so.device != Device::kNpuSim) return ReportError("--report needs --device npu-sim");
  so.reference_kernels = f.reference;
  so.threads = f.threads;
  so.measure_cpu = f.measure_cpu;
  auto session = Session::Create(*compiled, so);
  if (!session.ok()) return ReportError(session.status().message());
  const auto t0 = std::chrono::steady_clock::now();
  auto outs = session->Run(*inputs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!outs.ok()) return ReportError(outs.status().message());
  const Profile& p = session->profile();
  if (!f.report.empty()) {
    auto html = RunReportHtml(*session, f.model);
    if (!html.ok()) return ReportError(html.status().message());
    if (!WriteTextFile(f.report, *html).ok()) return ReportError(fmt::format("cannot write '{}'", f.report));
    if (!f.quiet && !f.json) fmt::print("wrote the report to {}\n", f.report);
  }
  if (!f.quiet && f.json) {
    nlohmann::json j = {{"model", f.model}, {"device", device}, {"target", compiled->target_name()},
                        {"kernels", f.reference ? "reference" : "fast"},
                        {"inputs", InputsJson(*inputs, generated, f.seed)}, {"outputs", nlohmann::json::array()}};
    for (const NamedTensor& o : *outs) j["outputs"].push_back(OutputJson(o.name, o.tensor, f.top));
    nlohmann::json t = {{"run_ms", wall * 1e3}, {"cpu_ms", p.cpu_seconds * 1e3},
                        {"cpu_source", p.cpu_measured ? "measured" : "cost model"}};
    if (p.simulated) {
      t["latency_ms"] = p.total_seconds * 1e3;
      t["npu_cycles"] = p.npu_cycles;
    }
    j["timings"] = t;
    j["layers"] = NodesJson(p);
    if (!f.output_dir.empty()) j["output_dir"] = f.output_dir;
    if (!f.report.empty()) j["report"] = f.report;
    if (!f.output_dir.empty()) {
      Status st = WriteOutputs(f.output_dir, *outs);
      if (!st.ok()) return ReportError(st.message());
    }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  if (!f.quiet) {
    fmt::print("{} on {} (target {})\n", f.model, device, compiled->target_name());
    if (p.simulated) {
      fmt::print("{}", session->RunReport());
    } else {
      fmt::print("every node on the CPU's {} kernels (the NPU's layers in its fixed-point arithmetic): {:.3f} ms {}\n",
                 f.reference ? "reference" : "fast", p.cpu_seconds * 1e3,
                 p.cpu_measured ? "measured (after a warm-up run)" : "by the partitioner's cost model");
    }
  }
  if (!f.output_dir.empty()) {
    Status st = WriteOutputs(f.output_dir, *outs);
    if (!st.ok()) return ReportError(st.message());
    if (!f.quiet) fmt::print("wrote {} output(s) to {}\n", outs->size(), f.output_dir);
  }
  return 0;
}

}  // namespace edgec::cli
