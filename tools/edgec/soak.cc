// edgec soak MODEL(.edgec|.onnx) --runs N [--target T] [--device npu-sim|cpu] [--warmup W]
//            [--input NAME=FILE.npy] [--json] [--max-rss-growth PCT]
// The fatigue test: runs the model N times on the same input and reports the latency drift
// (median of the last tenth of the runs against the first tenth), the resident memory growth
// after the warm-up runs, and every run whose outputs differ from the first run's (byte for
// byte). A progress bar on a terminal only. Exit 3 when an output changed or the RSS grew by
// more than --max-rss-growth percent; 1 on an error.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/progress.h"
#include "edgec/session.h"
#include "tools/edgec/compiled_input.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct SoakFlags {
  std::string model, target, device = "npu-sim";
  std::vector<std::string> sets, inputs;
  int runs = 100, warmup = -1;
  double max_rss_growth = -1;
  bool json = false;
};

// The resident set size now (bytes), from /proc/self/statm.
int64_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool SameBytes(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const TensorView &x = a[i].tensor, &y = b[i].tensor;
    const size_t n = x.nbytes();
    if (n != y.nbytes() || x.dtype() != y.dtype() || x.dims() != y.dims()) return false;
    if (n && std::memcmp(x.data(), y.data(), n) != 0) return false;
  }
  return true;
}

int SoakMain(const SoakFlags& f) {
  if (f.runs < 2) return ReportError(fmt::format("--runs: must be >= 2, got {}", f.runs));
  SessionOptions so;
  if (f.device == "npu-sim") so.device = Device::kNpuSim;
  else if (f.device == "cpu") so.device = Device::kCpu;
  else return ReportError(fmt::format("--device: '{}' is not npu-sim or cpu", f.device));
  so.profiling = false;
  auto compiled = OpenCompiled(f.model, f.target, f.sets);
  if (!compiled.ok()) return ReportError(compiled.status().message());
  auto inputs = GatherInputs(compiled->inputs(), f.inputs, {}, 0, nullptr);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.model, inputs.status().message()));
  auto session = Session::Create(*compiled, so);
  if (!session.ok()) return ReportError(session.status().message());
  const int warmup = f.warmup >= 0 ? std::min(f.warmup, f.runs - 1) : std::max(1, f.runs / 10);
  std::vector<double> lat;
  std::vector<NamedTensor> first;
  std::vector<int> changed;
  int64_t rss_warm = 0, rss_end = 0;
  ProgressBar bar("soak", f.runs, isatty(2) ? stderr : nullptr, 1);  // a log gets no progress lines
  for (int i = 0; i < f.runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = session->Run(*inputs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) return ReportError(fmt::format("run {}: {}", i, r.status().message()));
    lat.push_back(s);
    if (i == 0) first = std::move(*r);
    else if (!SameBytes(first, *r)) changed.push_back(i);
    if (i + 1 == warmup) rss_warm = RssBytes();
    bar.Step();
  }
  bar.Done();
  rss_end = RssBytes();
  const size_t tenth = std::max<size_t>(1, lat.size() / 10);
  const double head = Median({lat.begin(), lat.begin() + tenth});
  const double tail = Median({lat.end() - tenth, lat.end()});
  const double drift = head > 0 ? (tail - head) / head : 0;
  const double growth = rss_warm > 0 ? static_cast<double>(rss_end - rss_warm) / rss_warm : 0;
  const bool rss_fail = f.max_rss_growth >= 0 && 100 * growth > f.max_rss_growth;
  if (f.json) {
    nlohmann::json j = {{"model", f.model},          {"device", f.device},
                        {"runs", f.runs},            {"warmup", warmup},
                        {"latency_first_decile_s", head}, {"latency_last_decile_s", tail},
                        {"latency_drift", drift},    {"latency_median_s", Median(lat)},
                        {"rss_after_warmup_bytes", rss_warm}, {"rss_end_bytes", rss_end},
                        {"rss_growth", growth},      {"outputs_changed", changed.size()},
                        {"changed_runs", changed}};
    fmt::print("{}\n", j.dump(1));
  } else {
    fmt::print("{} x {} on {} (warm-up {} runs)\n", f.model, f.runs, f.device, warmup);
    fmt::print("latency (wall, one run): median {:.3f} ms; first tenth {:.3f} ms, last tenth {:.3f} ms: drift {:+.1f}%\n",
               Median(lat) * 1e3, head * 1e3, tail * 1e3, 100 * drift);
    fmt::print("resident memory: {:.1f} MB after warm-up, {:.1f} MB at the end: growth {:+.2f}%\n", rss_warm / 1e6,
               rss_end / 1e6, 100 * growth);
    if (changed.empty()) fmt::print("outputs: identical in every run\n");
    else fmt::print("outputs: {} run(s) differ from the first (first at run {})\n", changed.size(), changed[0]);
  }
  if (!changed.empty()) return 3;
  if (rss_fail) {
    fmt::print(stderr, "edgec: soak: resident memory grew {:.2f}% > --max-rss-growth {}%\n", 100 * growth, f.max_rss_growth);
    return 3;
  }
  return 0;
}

}  // namespace

VerbMain AddSoakVerb(CLI::App& app) {
  auto flags = std::make_shared<SoakFlags>();
  CLI::App* sub = app.add_subcommand("soak", "Run a model many times: latency drift, memory growth, output changes");
  sub->add_option("model", flags->model, "compiled model (.edgec) or QDQ ONNX model (compiled for --target)")->required();
  sub->add_option("--runs", flags->runs, "runs")->capture_default_str();
  sub->add_option("--warmup", flags->warmup, "runs before the RSS baseline (default: a tenth)");
  sub->add_option("--target", flags->target, "target file or name (ONNX models)");
  sub->add_option("--set", flags->sets, "override a target field: FIELD=VALUE (ONNX models)");
  sub->add_option("--device", flags->device, "npu-sim or cpu")->capture_default_str();
  sub->add_option("--input", flags->inputs, "NAME=FILE.npy (others: seeded random)");
  sub->add_option("--max-rss-growth", flags->max_rss_growth, "fail (exit 3) when RSS grows more (percent)");
  sub->add_flag("--json", flags->json, "print the figures as JSON");
  return [flags] { return SoakMain(*flags); };
}

}  // namespace edgec::cli
