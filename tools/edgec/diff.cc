// edgec diff A.edgec B.edgec [--threshold 0.01] [--top K] [--json]
// Compares two compiles of a model layer by layer (DiffCompiled, edgec/report.h). Exit code 0: no
// regression; 3: B is worse than A (latency or DRAM bytes up by more than the threshold, or a
// node left the NPU), for CI; 1: an error.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/report.h"
#include "tools/edgec/compiled_input.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct DiffFlags {
  std::string a, b;
  double threshold = 0.01;
  int top = 30;
  bool json = false;
};

int DiffMain(const DiffFlags& f) {
  if (f.threshold < 0) return ReportError(fmt::format("--threshold: must be >= 0, got {}", f.threshold));
  auto a = OpenCompiled(f.a, "", {});
  if (!a.ok()) return ReportError(a.status().message());
  auto b = OpenCompiled(f.b, "", {});
  if (!b.ok()) return ReportError(b.status().message());
  auto d = DiffCompiled(*a, *b, f.threshold, f.top, f.a, f.b);
  if (!d.ok()) return ReportError(d.status().message());
  if (f.json) fmt::print("{}\n", nlohmann::json::parse(d->json).dump(1));
  else fmt::print("{}", d->text);
  return d->regression ? 3 : 0;
}

}  // namespace

VerbMain AddDiffVerb(CLI::App& app) {
  auto flags = std::make_shared<DiffFlags>();
  CLI::App* sub = app.add_subcommand("diff", "Compare two compiled models layer by layer; exit 3 on a regression");
  sub->add_option("a", flags->a, "the baseline .edgec (or QDQ .onnx)")->required();
  sub->add_option("b", flags->b, "the candidate .edgec (or QDQ .onnx)")->required();
  sub->add_option("--threshold", flags->threshold, "relative growth of latency or DRAM bytes that is a regression")
      ->capture_default_str();
  sub->add_option("--top", flags->top, "rows to print (0: all)")->capture_default_str();
  sub->add_flag("--json", flags->json, "print the diff as JSON");
  return [flags] { return DiffMain(*flags); };
}

}  // namespace edgec::cli
