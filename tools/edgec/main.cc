// edgec: compile and run ONNX models for edge devices. `edgec --help` lists the verbs.
#include <chrono>
#include <map>
#include <new>
#include <tuple>

#include <fmt/format.h>

#include "edgec/limits.h"
#include "edgec/session.h"
#include "tools/edgec/output_options.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {

int ReportError(const std::string& message) {
  fmt::print(stderr, "{}edgec: error:{} {}\n", UseColor(stderr) ? "\x1b[1;31m" : "",
             UseColor(stderr) ? "\x1b[0m" : "", message);
  return kExitFailure;
}

}  // namespace edgec::cli

int RunVerb(CLI::App& app, const std::map<std::string, edgec::cli::VerbMain>& verbs);

int main(int argc, char** argv) {
  edgec::cli::ChooseOmpWaitPolicy(argv);
  edgec::cli::KeepFreedMemory();
  edgec::ApplyVectorIsaFromEnvironment();
  CLI::App app{
      "edgec: a compiler and runtime that deploys ONNX models to edge devices with an NPU.\n"
      "Run `edgec VERB --help` for a verb's flags."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "edgec 0.1");
  // Resource limits (support/limits.h; docs/reliability.md), before or after the verb.
  app.fallthrough();
  const edgec::ResourceLimits defaults;
  std::string max_model, max_tensor, max_nodes, max_arena;
  app.add_option("--max-model-bytes", max_model,
                 fmt::format("Largest model file accepted (default {}; units K/M/G)", defaults.model_bytes));
  app.add_option("--max-tensor-bytes", max_tensor,
                 fmt::format("Largest single tensor (default {})", defaults.tensor_bytes));
  app.add_option("--max-nodes", max_nodes, fmt::format("Most nodes in a graph (default {})", defaults.nodes));
  app.add_option("--max-arena-bytes", max_arena,
                 fmt::format("Largest activation arena a memory plan may need (default {})", defaults.arena_bytes));
  std::map<std::string, edgec::cli::VerbMain> verbs;
  verbs["run"] = edgec::cli::AddRunVerb(app);
  verbs["inspect"] = edgec::cli::AddInspectVerb(app);
  verbs["optimize"] = edgec::cli::AddOptimizeVerb(app);
  verbs["bench"] = edgec::cli::AddBenchVerb(app);
  verbs["export"] = edgec::cli::AddExportVerb(app);
  verbs["quantize"] = edgec::cli::AddQuantizeVerb(app);
  verbs["compare"] = edgec::cli::AddCompareVerb(app);
  verbs["targets"] = edgec::cli::AddTargetsVerb(app);
  verbs["estimate"] = edgec::cli::AddEstimateVerb(app);
  verbs["sweep"] = edgec::cli::AddSweepVerb(app);
  verbs["compile"] = edgec::cli::AddCompileVerb(app);
  verbs["profile"] = edgec::cli::AddProfileVerb(app);
  verbs["diff"] = edgec::cli::AddDiffVerb(app);
  verbs["soak"] = edgec::cli::AddSoakVerb(app);
  edgec::cli::AddOutputFlags(app);  // after every verb is registered
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a command line that does not parse is a usage error.
    return app.exit(e) == 0 ? edgec::cli::kExitOk : edgec::cli::kExitUsage;
  }
  edgec::ResourceLimits limits = edgec::GetResourceLimits();
  for (auto [flag, text, field] : {std::tuple{"--max-model-bytes", &max_model, &limits.model_bytes},
                                   std::tuple{"--max-tensor-bytes", &max_tensor, &limits.tensor_bytes},
                                   std::tuple{"--max-nodes", &max_nodes, &limits.nodes},
                                   std::tuple{"--max-arena-bytes", &max_arena, &limits.arena_bytes}}) {
    if (text->empty()) continue;
    auto q = edgec::ParseQuantity(*text);
    if (!q.ok() || *q < 1 || *q > 9.2e18)
      return edgec::cli::ReportError(fmt::format("{} {}: expected a positive count (units K/M/G allowed)", flag, *text));
    *field = static_cast<int64_t>(*q);
  }
  edgec::SetResourceLimits(limits);
  // Last line of defence: an exception escaping a verb is a bug, but it is reported as one
  // line and exit 1, never as an abort (tests/bad_models/run.py).
  try {
    return RunVerb(app, verbs);
  } catch (const std::bad_alloc&) {
    return edgec::cli::ReportError("out of memory: the model or its input needs more than this machine has");
  } catch (const std::exception& e) {
    return edgec::cli::ReportError(fmt::format("internal error: {}", e.what()));
  }
}

int RunVerb(CLI::App& app, const std::map<std::string, edgec::cli::VerbMain>& verbs) {
  for (auto* sub : app.get_subcommands()) {
    auto it = verbs.find(sub->get_name());
    if (it == verbs.end()) continue;
    edgec::cli::ApplyOutputFlags(*sub);
    const auto start = std::chrono::steady_clock::now();
    const int rc = it->second();
    edgec::cli::ReportVerbose(*sub, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return rc;
  }
  return edgec::cli::kExitUsage;
}
