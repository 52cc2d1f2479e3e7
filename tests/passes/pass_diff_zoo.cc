// Differential test of the optimizer on real models: every pass alone, and every named -O
// level, on every zoo model. The optimized graph runs on the reference executor with the
// model's stored inputs and must agree with the unoptimized graph within --rtol (default
// 1e-5) relative to each output's scale. Also checks that a plain export of the result
// (internal ops lowered by `unfuse`) uses only standard ops and reimports with the same
// numbers.
//
// The models are checked --jobs at a time (default: the machine's cores; each model's
// reference runs are single-threaded), the results printed in the models' order.
//
// usage: pass_diff ZOO_DIR [--rtol R] [--model NAME] [--pass NAME] [--jobs N]
#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#include "driver/load.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "runtime/reference_executor.h"
#include "support/npy.h"

namespace fs = std::filesystem;
using namespace edgec;

namespace {

double RelError(const std::vector<Tensor>& a, const std::vector<Tensor>& b, std::string* why) {
  if (a.size() != b.size()) {
    *why = fmt::format("{} outputs vs {}", a.size(), b.size());
    return INFINITY;
  }
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dims() != b[i].dims() || a[i].dtype() != b[i].dtype()) {
      *why = fmt::format("output {}: {} vs {}", i, a[i].TypeString(), b[i].TypeString());
      return INFINITY;
    }
    auto x = a[i].ToDoubleVector(), y = b[i].ToDoubleVector();
    double scale = 1e-6, diff = 0;
    for (double v : x) scale = std::max(scale, std::fabs(v));
    for (size_t k = 0; k < x.size(); ++k) {
      double d = std::fabs(x[k] - y[k]);
      if (std::isnan(d)) d = INFINITY;
      diff = std::max(diff, d);
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

struct Result {
  std::string model, what;
  bool ok;
  std::string detail;
};

// Every variant on one model.
std::vector<Result> CheckModel(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& variants,
                               double rtol) {
  std::vector<Result> results;
  std::string name = dir.filename().string();
  auto base = driver::LoadModel((dir / "model.onnx").string(), {});
  if (!base.ok()) {
    results.push_back({name, "import", false, base.status().message()});
    return results;
  }
  std::map<std::string, Tensor> inputs;
  for (const Value* v : base->inputs()) {
    auto t = ReadNpy((dir / "inputs" / (v->name() + ".npy")).string());
    if (!t.ok()) {
      results.push_back({name, "inputs", false, t.status().message()});
      continue;
    }
    inputs[v->name()] = *t;
  }
  auto want = ReferenceExecutor(*base).Run(inputs);
  if (!want.ok()) {
    results.push_back({name, "reference", false, want.status().message()});
    return results;
  }
  for (const auto& [label, pipeline] : variants) {
    Graph g = base->Clone();
    passes::PassContext ctx;
    ctx.verify_each = true;
    Status st = driver::Optimize(g, 0, pipeline, ctx);
    if (!st.ok()) {
      results.push_back({name, label, false, st.message()});
      continue;
    }
    auto got = ReferenceExecutor(g).Run(inputs);
    if (!got.ok()) {
      results.push_back({name, label, false, "run: " + got.status().message()});
      continue;
    }
    std::string why;
    double err = RelError(*want, *got, &why);
    bool ok = err <= rtol;
    std::string detail = why.empty() ? fmt::format("{} nodes, error {:.2e}", g.num_nodes(), err) : why;
    // Plain export: unfuse, only standard ops, same numbers after reimport.
    if (ok) {
      Graph plain = g.Clone();
      passes::PassContext lower;
      Status u = driver::Optimize(plain, 0, "unfuse", lower);
      auto proto = u.ok() ? onnx_fe::ExportOnnxModel(plain) : StatusOr<onnx::ModelProto>(u);
      if (!proto.ok()) {
        ok = false;
        detail = "export: " + proto.status().message();
      } else {
        auto again = onnx_fe::ImportOnnxModel(*proto, dir, "exported");
        auto out = again.ok() ? ReferenceExecutor(*again).Run(inputs) : StatusOr<std::vector<Tensor>>(again.status());
        double e2 = out.ok() ? RelError(*want, *out, &why) : INFINITY;
        if (!(e2 <= rtol)) {
          ok = false;
          detail = out.ok() ? fmt::format("exported model error {:.2e} {}", e2, why) : "exported: " + out.status().message();
        }
      }
    }
    results.push_back({name, label, ok, detail});
  }
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  std::string zoo, only_model, only_pass;
  double rtol = 1e-5;
  int jobs = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rtol" && i + 1 < argc) rtol = std::atof(argv[++i]);
    else if (a == "--model" && i + 1 < argc) only_model = argv[++i];
    else if (a == "--pass" && i + 1 < argc) only_pass = argv[++i];
    else if (a == "--jobs" && i + 1 < argc) jobs = std::max(1, std::atoi(argv[++i]));
    else zoo = a;
  }
  if (zoo.empty() || !fs::is_directory(zoo)) {
    fmt::print(stderr, "usage: pass_diff ZOO_DIR [--rtol R] [--model NAME] [--pass NAME] [--jobs N]\n");
    return 2;
  }
  std::vector<fs::path> models;
  for (auto& e : fs::directory_iterator(zoo)) {
    if (fs::exists(e.path() / "model.onnx") && (only_model.empty() || e.path().filename() == only_model)) {
      models.push_back(e.path());
    }
  }
  std::sort(models.begin(), models.end());
  std::vector<std::pair<std::string, std::string>> variants;  // label, pipeline
  for (const auto& p : passes::AllPasses()) {
    if (p.name == "unfuse") continue;
    if (only_pass.empty() || p.name == only_pass) variants.push_back({std::string(p.name), std::string(p.name)});
  }
  if (only_pass.empty()) {
    for (int level = 1; level <= 3; ++level) variants.push_back({fmt::format("-O{}", level), passes::NamedPipelineText(level)});
  }

  // Each model on its own: a thread takes the next model until none is left.
  std::vector<std::vector<Result>> per_model(models.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < models.size();) per_model[i] = CheckModel(models[i], variants, rtol);
  };
  std::vector<std::thread> pool;
  for (int j = 1; j < std::min<int>(jobs, static_cast<int>(models.size())); ++j) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  std::vector<Result> results;
  for (auto& r : per_model) results.insert(results.end(), r.begin(), r.end());
  int passed = 0, failed = 0;
  for (const auto& r : results) {
    fmt::print("{} {:<20} {:<20} {}\n", r.ok ? "ok  " : "FAIL", r.model, r.what, r.detail);
    (r.ok ? passed : failed)++;
  }
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed ? 1 : 0;
}
