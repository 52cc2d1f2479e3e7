// edgec bench MODEL [--input name=file.npy ...] [--threads N] [--runs R] [--warmup W] [--json]
//                   [--profile] [--top K] [--int8 [--fixed-point]]
// Latency (min/median/p90/p99), throughput, arena bytes, peak RSS, compile time, MACs and
// achieved GFLOP/s of the CPU plan; with --profile the time of every step (the top K by
// time printed, with op, kernel and share).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/model.h"
#include "edgec/session.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct BenchFlags {
  std::vector<std::string> freeze;
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  int threads = 0;
  int runs = 50;
  int warmup = 5;
  int level = 3;
  std::string passes;
  uint64_t seed = 0;
  bool json = false;
  bool reference = false;
  bool profile = false;
  int top = 15;
  bool int8 = false;
  bool fixed_point = false;
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  double idx = p * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(idx);
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

int64_t PeakRssBytes() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// MACs of one inference: the source graph (before fusion: composites such as Attention count none)
// with the bench's input shapes bound. 0 when they cannot be bound.
int64_t SourceMacs(const Model& source, const std::map<std::string, std::vector<int64_t>>& shapes) {
  Model m = source.Clone();
  if (!m.BindInputShapes(shapes, 1).ok()) return 0;
  int64_t total = 0;
  for (const NodeInfo& n : m.nodes()) total += std::max<int64_t>(n.macs, 0);
  return total;
}

int BenchMain(const BenchFlags& f) {
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  auto m = Model::Load(f.model);
  if (!m.ok()) return ReportError(m.status().message());
  if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  auto inputs = GatherInputs(m->inputs(), f.inputs, f.shapes, f.seed, nullptr);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.model, inputs.status().message()));
  if (f.int8) {
    if (Status st = RequireQdq(*m, f.model); !st.ok()) return ReportError(st.message());
    Status st = m->FoldQdq({.fixed_point = f.fixed_point}, nullptr);
    if (!st.ok()) return ReportError(st.message());
  }
  SessionOptions so;
  so.opt_level = f.level;
  so.pipeline = f.passes;
  so.threads = f.threads;
  so.reference_kernels = f.reference;
  so.tuning = KernelTuningFromEnvironment();
  so.fold_qdq = false;  // done above with --int8
  so.profiling = false;
  auto session = Session::Create(*m, so);
  if (!session.ok()) return ReportError(session.status().message());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (auto& [name, t] : *inputs) shapes[name] = t.dims();
  auto plan = session->Prepare(shapes);
  if (!plan.ok()) return ReportError(plan.status().message());
  double compile_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();

  for (int i = 0; i < f.warmup; ++i) {
    auto st = session->Run(*inputs);
    if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.status().message()));
  }
  if (f.profile) session->SetProfiling(true);
  std::vector<double> ms;
  ms.reserve(f.runs);
  auto all0 = clock::now();
  for (int i = 0; i < f.runs; ++i) {
    auto a = clock::now();
    auto st = session->Run(*inputs);
    if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.status().message()));
    ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - a).count());
  }
  double total_s = std::chrono::duration<double>(clock::now() - all0).count();
  const PlanInfo& p = *plan;
  double median = Percentile(ms, 0.5);
  const int64_t macs = SourceMacs(*m, shapes);
  const double gflops = macs > 0 ? 2.0 * static_cast<double>(macs) / (median * 1e-3) * 1e-9 : 0.0;
  if (f.json) {
    nlohmann::json j = {
        {"model", f.model}, {"threads", p.threads}, {"omp_wait_policy", OmpWaitPolicyNote()}, {"runs", f.runs}, {"warmup", f.warmup},
        {"latency_ms", {{"min", *std::min_element(ms.begin(), ms.end())}, {"median", median},
                        {"p90", Percentile(ms, 0.9)}, {"p99", Percentile(ms, 0.99)}}},
        {"throughput_per_s", f.runs / total_s}, {"arena_bytes", p.arena_bytes},
        {"arena_lower_bound_bytes", p.arena_lower_bound_bytes}, {"naive_bytes", p.naive_bytes},
        {"peak_rss_bytes", PeakRssBytes()}, {"compile_ms", compile_ms}, {"plan", p.summary},
        {"macs", macs}, {"gflops", gflops}, {"samples_ms", ms}};
    if (f.profile) j["profile"] = nlohmann::json::parse(session->StepProfileJson());
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("model: {}\n", f.model);
  fmt::print("plan: {}\n", p.summary);
  fmt::print("latency over {} runs ({} warm-up), {} thread(s), OpenMP wait policy {}:\n", f.runs, f.warmup,
             p.threads, OmpWaitPolicyNote());
  fmt::print("  min {:.3f} ms  median {:.3f} ms  p90 {:.3f} ms  p99 {:.3f} ms\n",
             *std::min_element(ms.begin(), ms.end()), median, Percentile(ms, 0.9), Percentile(ms, 0.99));
  fmt::print("throughput: {:.1f} inferences/s\n", f.runs / total_s);
  fmt::print("memory: arena {:.2f} MiB (lower bound {:.2f} MiB, naive {:.2f} MiB), peak RSS {:.1f} MiB\n",
             p.arena_bytes / 1048576.0, p.arena_lower_bound_bytes / 1048576.0,
             p.naive_bytes / 1048576.0, PeakRssBytes() / 1048576.0);
  fmt::print("compile (import + optimize + plan): {:.1f} ms\n", compile_ms);
  if (macs > 0) {
    fmt::print("compute: {:.3f} GMAC per inference, {:.1f} GFLOP/s at the median\n",
               static_cast<double>(macs) * 1e-9, gflops);
  }
  if (f.profile) fmt::print("{}", session->StepProfileTable(f.top));
  return 0;
}

}  // namespace

VerbMain AddBenchVerb(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* sub = app.add_subcommand("bench", "Measure a model's CPU latency, throughput and memory");
  sub->add_option("model", flags->model, "ONNX model file")->required();
  sub->add_option("--input,-i", flags->inputs, "NAME=FILE.npy (seeded random data for inputs not given)");
  sub->add_option("--freeze", flags->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: dims for a random input with symbolic dims");
  sub->add_option("--threads", flags->threads, "threads (0 = all cores)")->capture_default_str();
  sub->add_option("--runs", flags->runs, "timed runs")->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--warmup", flags->warmup, "untimed runs first")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("-O", flags->level, "optimization level 0-3")->check(CLI::Range(0, 3))->capture_default_str();
  sub->add_option("--passes", flags->passes, "optimize with this explicit pipeline instead of -O");
  sub->add_option("--seed", flags->seed, "seed for random inputs")->capture_default_str();
  sub->add_flag("--json", flags->json, "print the results as JSON");
  sub->add_flag("--reference", flags->reference, "use the reference kernels only");
  sub->add_flag("--profile", flags->profile, "time every step; print the top steps by time (op, kernel, ms, %)");
  sub->add_option("--top", flags->top, "steps shown by --profile (0 = all)")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_flag("--int8", flags->int8,
                "fold the QDQ patterns of a quantized model into integer ops (QLinearConv, "
                "QLinearMatMul) and run those on the fast int8 kernels");
  sub->add_flag("--fixed-point", flags->fixed_point,
                "with --int8: requantize with the NPU's integer multiplier + shift instead of "
                "ONNX's float formula");
  return [flags] { return BenchMain(*flags); };
}

}  // namespace edgec::cli
