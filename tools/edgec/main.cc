// edgec: compile and run ONNX models for edge devices. `edgec --help` lists the verbs.
#include <map>

#include <fmt/format.h>

#include "driver/kernel_tuning.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {

int ReportError(const std::string& message) {
  fmt::print(stderr, "edgec: error: {}\n", message);
  return 1;
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto* sub : app.get_subcommands()) {
    auto it = verbs.find(sub->get_name());
    if (it != verbs.end()) return it->second();
  }
  return 2;
}
