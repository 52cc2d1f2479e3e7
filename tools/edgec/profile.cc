// edgec profile MODEL(.edgec|.onnx) [--target T] [--set F=V] [--input NAME=FILE.npy] [--json]
//               [--top K] [--trace FILE.json] [--html FILE.html] [--error FILE.json]
// Runs the model once on the simulated NPU (CPU nodes by the cost model) and prints per op:
// unit, time or cycles, share, MACs, utilization, DRAM bytes, copies, the top stall and the
// fallback reason (ProfileReport, edgec/report.h). --trace writes the Chrome trace, --html the report.
#include <chrono>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/report.h"
#include "edgec/session.h"
#include "tools/edgec/compiled_input.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct ProfileFlags {
  std::string model, target, trace, html, error;
  std::vector<std::string> sets, inputs;
  uint64_t seed = 0;
  int top = 0;
  bool json = false;
  bool measure_cpu = false;
};

// --error FILE.json: {"node": relative error, ...} or compare's {"layers": [{"node", "rel_error"}]}.
StatusOr<std::map<std::string, double>> ReadErrors(const std::string& path) {
  std::ifstream in(path);
  if (!in) return BadInput("--error: cannot read '{}'", path);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return BadInput("--error: {}: expected a JSON object", path);
  std::map<std::string, double> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number()) return BadInput("--error: {}: '{}' is not a number", path, it.key());
    out[it.key()] = it.value().get<double>();
  }
  return out;
}

int ProfileMain(const ProfileFlags& f) {
  auto compiled = OpenCompiled(f.model, f.target, f.sets);
  if (!compiled.ok()) return ReportError(compiled.status().message());
  auto inputs = GatherInputs(compiled->inputs(), f.inputs, {}, f.seed, nullptr);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.model, inputs.status().message()));
  const auto t0 = std::chrono::steady_clock::now();
  SessionOptions so;
  so.device = Device::kNpuSim;
  so.measure_cpu = f.measure_cpu;
  so.record_threads = true;  // the CPU thread tracks of --trace and --html
  auto session = Session::Create(*compiled, so);
  if (!session.ok()) return ReportError(session.status().message());
  auto r = session->Run(*inputs);
  if (!r.ok()) return ReportError(r.status().message());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto p = ProfileReport::Of(*session, f.model, !f.trace.empty() || !f.html.empty());
  if (!p.ok()) return ReportError(p.status().message());
  if (!f.error.empty()) {
    auto e = ReadErrors(f.error);
    if (!e.ok()) return ReportError(e.status().message());
    p->SetLayerErrors(*e);
  }
  if (!f.trace.empty()) {
    Status st = WriteTextFile(f.trace, p->ChromeTrace());
    if (!st.ok()) return ReportError(st.message());
  }
  if (!f.html.empty()) {
    Status st = WriteTextFile(f.html, p->Html());
    if (!st.ok()) return ReportError(st.message());
  }
  if (f.json) {
    auto j = nlohmann::json::parse(p->Json());
    j["simulation_wall_s"] = wall;
    fmt::print("{}\n", j.dump(1));
    return 0;
  }
  fmt::print("{}", p->Text(f.top));
  fmt::print("(simulation took {:.2f} s of wall time)\n", wall);
  if (!f.trace.empty()) fmt::print("wrote the trace to {} ({} slices, {} flows)\n", f.trace, p->span_count(), p->flow_count());
  if (!f.html.empty()) fmt::print("wrote the report to {}\n", f.html);
  return 0;
}

}  // namespace

VerbMain AddProfileVerb(CLI::App& app) {
  auto flags = std::make_shared<ProfileFlags>();
  CLI::App* sub = app.add_subcommand("profile", "Run a model once on the simulated NPU and explain every op");
  sub->add_option("model", flags->model, "compiled model (.edgec) or QDQ ONNX model (compiled for --target)")->required();
  sub->add_option("--target", flags->target, "target file or name (ONNX models; default edge-default)");
  sub->add_option("--set", flags->sets, "override a target field: FIELD=VALUE (ONNX models)");
  sub->add_option("--input", flags->inputs, "NAME=FILE.npy (others: seeded random)");
  sub->add_option("--seed", flags->seed, "seed of the random inputs")->capture_default_str();
  sub->add_flag("--measure-cpu", flags->measure_cpu,
                "time the CPU nodes on this host (fast kernels, after a warm-up run) instead of the cost model");
  sub->add_option("--top", flags->top, "print the K slowest ops only (0: every op in graph order)");
  sub->add_option("--trace", flags->trace, "write the timeline as a Chrome trace (Perfetto, chrome://tracing)");
  sub->add_option("--html", flags->html, "write the self-contained HTML report");
  sub->add_option("--error", flags->error, "per-layer INT8 error to show: JSON {\"node\": relative error}");
  sub->add_flag("--json", flags->json, "print the per-op profile as JSON");
  return [flags] { return ProfileMain(*flags); };
}

}  // namespace edgec::cli
