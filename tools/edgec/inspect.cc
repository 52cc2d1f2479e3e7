// edgec inspect MODEL: inputs/outputs, op histogram, parameters, MACs per layer and in
// total, unsupported ops. --json prints the same as one JSON object instead.
#include <algorithm>

#include "frontend/onnx/importer.h"
#include "ir/cost.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct InspectFlags {
  std::string model;
  std::vector<std::string> shapes;
  bool all_layers = false, json = false;
};

std::string Human(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (v >= 1000 && i < 4) {
    v /= 1000;
    ++i;
  }
  return fmt::format("{:.3g} {}{}", v, prefixes[i], unit);
}

void PrintHistogram(const std::map<std::string, int>& h) {
  std::vector<std::pair<std::string, int>> v(h.begin(), h.end());
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  int total = 0;
  for (auto& [op, n] : v) total += n;
  fmt::print("ops ({} nodes):\n", total);
  for (auto& [op, n] : v) fmt::print("  {:<24} {:>6}\n", op, n);
}

// --json: {"model", "ir_version", "opset", "producer", "inputs", "outputs": [{"name", "type"}],
// "ops": {op: count}, "parameters", "parameter_bytes", "layers": [{"name", "op", "output",
// "macs"}] (every layer with MACs; -1: unknown), "total_macs"}. Input shapes are bound as
// for the table.
int PrintJson(const InspectFlags& f, Graph& g, const onnx_fe::ImportInfo& info) {
  auto shapes_text = ParseAssignments(f.shapes, "--shape");
  if (!shapes_text.ok()) return ReportError(shapes_text.status().message());
  std::map<std::string, Dims> shapes;
  for (auto& [name, text] : *shapes_text) {
    auto d = ParseDims(text);
    if (!d.ok()) return ReportError(fmt::format("--shape {}: {}", name, d.status().message()));
    shapes[name] = *d;
  }
  Status st = BindInputShapes(g, shapes, 1);
  if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
  auto values = [](const std::vector<Value*>& vs) {
    nlohmann::json out = nlohmann::json::array();
    for (const Value* v : vs) out.push_back({{"name", v->name()}, {"type", v->type.ToString()}});
    return out;
  };
  int64_t params = 0, param_bytes = 0, total = 0;
  for (const Value* c : g.constants()) {
    params += c->constant().numel();
    param_bytes += static_cast<int64_t>(c->constant().nbytes());
  }
  nlohmann::json layers = nlohmann::json::array();
  for (const Node* n : g.nodes()) {
    const int64_t m = NodeMacs(*n);
    if (m != 0)
      layers.push_back({{"name", n->name()}, {"op", OpName(n->op())}, {"output", n->output(0)->type.ToString()},
                        {"macs", m}});
    if (m > 0) total += m;
  }
  nlohmann::json j = {{"model", f.model},          {"ir_version", info.ir_version},
                      {"opset", info.opset},       {"producer", info.producer},
                      {"inputs", values(g.inputs())}, {"outputs", values(g.outputs())},
                      {"ops", info.op_histogram},  {"parameters", params},
                      {"parameter_bytes", param_bytes}, {"layers", layers},
                      {"total_macs", total}};
  fmt::print("{}\n", j.dump(2));
  return 0;
}

int InspectMain(const InspectFlags& f) {
  onnx_fe::ImportInfo info;
  auto g = onnx_fe::ImportOnnxFile(f.model, &info);
  if (f.json && g.ok()) return PrintJson(f, *g, info);
  fmt::print("model: {}\n", f.model);
  if (info.ir_version) {
    fmt::print("  ir_version {}, opset {}, producer '{}'\n", info.ir_version, info.opset, info.producer);
  }
  if (!g.ok()) {
    if (!info.op_histogram.empty()) PrintHistogram(info.op_histogram);
    if (!info.unsupported.empty()) {
      fmt::print("unsupported ops ({}):\n", info.unsupported.size());
      for (auto& u : info.unsupported) fmt::print("  {}\n", u);
    }
    return ReportError(g.status().message());
  }
  auto shapes_text = ParseAssignments(f.shapes, "--shape");
  if (!shapes_text.ok()) return ReportError(shapes_text.status().message());
  std::map<std::string, Dims> shapes;
  for (auto& [name, text] : *shapes_text) {
    auto d = ParseDims(text);
    if (!d.ok()) return ReportError(fmt::format("--shape {}: {}", name, d.status().message()));
    shapes[name] = *d;
  }
  bool had_symbolic = false;
  for (const Value* v : g->inputs()) {
    if (!shapes.count(v->name()) && !v->type.IsStatic()) had_symbolic = true;
  }
  fmt::print("inputs:\n");
  for (const Value* v : g->inputs()) fmt::print("  {:<24} {}\n", v->name(), v->type.ToString());
  // Which shapes are static, symbolic (follow the input dims) or value-dependent (follow
  // input values or data, still open with every dim bound).
  Graph symbolic = g->Clone();
  Status st = BindInputShapes(symbolic, shapes, 0);
  if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
  st = BindInputShapes(*g, shapes, 1);
  if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
  if (had_symbolic) fmt::print("  (symbolic dims bound to 1; choose with --shape NAME=1x3x224x224)\n");
  fmt::print("outputs:\n");
  for (const Value* v : g->outputs()) fmt::print("  {:<24} {}\n", v->name(), v->type.ToString());
  int num_static = 0, num_symbolic = 0;
  std::vector<const Value*> value_dependent;
  for (const Node* n : g->nodes()) {
    for (const Value* o : n->outputs()) {
      const Value* before = symbolic.FindValue(o->name());
      if (!o->type.IsStatic()) value_dependent.push_back(o);
      else if (before && !before->type.IsStatic()) ++num_symbolic;
      else ++num_static;
    }
  }
  fmt::print("shapes: {} static, {} symbolic (follow the input dims), {} value-dependent (follow input "
             "values or data{})\n", num_static, num_symbolic, value_dependent.size(),
             value_dependent.empty() ? "" : "; `run` builds a plan per shape-input value, data-dependent sizes "
                                             "are allocated at run time");
  for (size_t i = 0; i < value_dependent.size() && i < 8; ++i) {
    const Value* v = value_dependent[i];
    fmt::print("  {:<24} {} from {}\n", v->name(), v->type.ToString(), v->producer()->Label());
  }
  if (value_dependent.size() > 8) fmt::print("  ... {} more\n", value_dependent.size() - 8);
  PrintHistogram(info.op_histogram);

  int64_t params = 0, param_bytes = 0;
  for (const Value* c : g->constants()) {
    params += c->constant().numel();
    param_bytes += static_cast<int64_t>(c->constant().nbytes());
  }
  fmt::print("parameters: {} ({} elements, {})\n", Human(static_cast<double>(params), ""), params,
             Human(static_cast<double>(param_bytes), "B"));

  struct Row {
    const Node* n;
    int64_t macs;
  };
  std::vector<Row> rows;
  int64_t total = 0;
  bool unknown = false;
  for (const Node* n : g->nodes()) {
    int64_t m = NodeMacs(*n);
    if (m < 0) unknown = true;
    if (m != 0) rows.push_back({n, m});
    if (m > 0) total += m;
  }
  fmt::print("MACs per layer ({} layers):\n", rows.size());
  fmt::print("  {:<40} {:<16} {:<22} {:>12} {:>7}\n", "layer", "op", "output", "MACs", "share");
  size_t shown = 0;
  for (const Row& r : rows) {
    if (!f.all_layers && shown >= 40) break;
    ++shown;
    std::string name = r.n->name().size() > 40 ? "..." + r.n->name().substr(r.n->name().size() - 37) : r.n->name();
    fmt::print("  {:<40} {:<16} {:<22} {:>12} {:>6.1f}%\n", name, OpName(r.n->op()),
               r.n->output(0)->type.ToString(), r.macs < 0 ? std::string("?") : std::to_string(r.macs),
               r.macs > 0 && total ? 100.0 * static_cast<double>(r.macs) / static_cast<double>(total) : 0.0);
  }
  if (shown < rows.size()) fmt::print("  ... {} more (--all-layers)\n", rows.size() - shown);
  fmt::print("total MACs: {} ({}){}\n", total, Human(static_cast<double>(total), "MAC"),
             unknown ? "  (some layers have unknown shapes and are not counted)" : "");
  fmt::print("unsupported ops: none\n");
  return 0;
}

}  // namespace

VerbMain AddInspectVerb(CLI::App& app) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* sub = app.add_subcommand("inspect", "Show a model's inputs, outputs, ops, parameters and MACs");
  sub->add_option("model", flags->model, "ONNX model file")->required();
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's symbolic dims");
  sub->add_flag("--all-layers", flags->all_layers, "list every layer with MACs, not the first 40");
  sub->add_flag("--json", flags->json, "print all of it (every layer) as one JSON object");
  return [flags] { return InspectMain(*flags); };
}

}  // namespace edgec::cli
