// edgec export MODEL -o OUT.onnx: imports the model and writes it back as standard ONNX at
// opset 17 (older forms normalized, Constant nodes as initializers, shapes inferred).
#include <fmt/format.h>

#include "edgec/model.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct ExportFlags {
  std::vector<std::string> freeze;
  std::string model;
  std::string output;
};

int ExportMain(const ExportFlags& f) {
  auto m = Model::Load(f.model);
  if (!m.ok()) return ReportError(m.status().message());
  if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  Status st = m->SaveOnnx(f.output);
  if (!st.ok()) return ReportError(fmt::format("{}: {}", f.output, st.message()));
  fmt::print("wrote {} ({} nodes, opset {})\n", f.output, m->node_count(), kOnnxExportOpset);
  return 0;
}

}  // namespace

VerbMain AddExportVerb(CLI::App& app) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* sub = app.add_subcommand(
      "export", "Import a model and write it back as standard ONNX (opset 17)");
  sub->add_option("--freeze", flags->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
  sub->add_option("model", flags->model, "ONNX model file")->required();
  sub->add_option("--output,-o", flags->output, "output ONNX file")->required();
  return [flags] { return ExportMain(*flags); };
}

}  // namespace edgec::cli
