// edgec: compile and run ONNX models for edge devices. `edgec --help` lists the verbs.
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "driver/kernel_tuning.h"
#include "tools/edgec/output_options.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {

int ReportError(const std::string& message) {
  fmt::print(stderr, "{}edgec: error:{} {}\n", UseColor(stderr) ? "\x1b[1;31m" : "",
             UseColor(stderr) ? "\x1b[0m" : "", message);
  return kExitFailure;
}

}  // namespace edgec::cli

int main(int argc, char** argv) {
  edgec::cli::ChooseOmpWaitPolicy(argv);
  edgec::driver::ApplyCpuIsaFromEnvironment();
  CLI::App app{
      "edgec: a compiler and runtime that deploys ONNX models to edge devices with an NPU.\n"
      "Run `edgec VERB --help` for a verb's flags."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "edgec 0.1");
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
