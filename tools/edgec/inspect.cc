// edgec inspect MODEL: inputs/outputs, op histogram, parameters, MACs per layer and in
// total, unsupported ops. --json prints the same as one JSON object instead. Given a compiled
// model (.edgec): its target, inputs/outputs, where each node runs (the CPU nodes grouped by
// op and reason) and each segment's program and SRAM plan.
#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/compiled_model.h"
#include "edgec/model.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct InspectFlags {
  std::vector<std::string> freeze;
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

// [{"name", "type"}] of a model's inputs or outputs.
nlohmann::json ValuesJson(const std::vector<ValueInfo>& vs) {
  nlohmann::json out = nlohmann::json::array();
  for (const ValueInfo& v : vs) out.push_back({{"name", v.name}, {"type", v.type}});
  return out;
}

// Binds the inputs as inspect shows them: the --shape dims, the other symbolic dims to 1, or
// left open where 1 does not fit the model (a text recognizer's width narrower than its
// pools). Returns why they stay open ("" when bound), or the error of binding them.
StatusOr<std::string> BindAsShown(Model& m, const ShapeMap& shapes) {
  Model bound = m.Clone();
  Status st = bound.BindInputShapes(shapes, 1);
  if (st.ok()) {
    m = std::move(bound);
    return std::string();
  }
  if (!m.BindInputShapes(shapes, 0).ok()) return st;
  return st.message();
}

// --json: {"model", "ir_version", "opset", "producer", "inputs", "outputs": [{"name", "type"}],
// "ops": {op: count}, "parameters", "parameter_bytes", "layers": [{"name", "op", "output",
// "macs"}] (every layer with MACs; -1: unknown), "total_macs"}. Input shapes are bound as
// for the table: symbolic dims to 1, or left open where 1 fails ("symbolic_dims_open": why).
int PrintJson(const InspectFlags& f, Model& m, const OnnxFileInfo& info) {
  auto shapes = ParseShapes(f.shapes);
  if (!shapes.ok()) return ReportError(shapes.status().message());
  auto open_why = BindAsShown(m, *shapes);
  if (!open_why.ok()) return ReportError(open_why.status().message());
  int64_t total = 0;
  nlohmann::json layers = nlohmann::json::array();
  for (const NodeInfo& n : m.nodes()) {
    if (n.macs != 0)
      layers.push_back({{"name", n.name}, {"op", n.op}, {"output", n.outputs.at(0).type}, {"macs", n.macs}});
    if (n.macs > 0) total += n.macs;
  }
  nlohmann::json j = {{"model", f.model},          {"ir_version", info.ir_version},
                      {"opset", info.opset},       {"producer", info.producer},
                      {"inputs", ValuesJson(m.inputs())}, {"outputs", ValuesJson(m.outputs())},
                      {"ops", info.op_histogram},  {"parameters", m.parameter_count()},
                      {"parameter_bytes", m.parameter_bytes()}, {"layers", layers},
                      {"total_macs", total}};
  if (!open_why->empty()) j["symbolic_dims_open"] = *open_why;
  fmt::print("{}\n", j.dump(2));
  return 0;
}

// The identifier of runtime/artifact.fbs at bytes 4..7 of a compiled model.
bool IsCompiledModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  return in.read(head, 8) && std::string(head + 4, 4) == "EDGC";
}

nlohmann::json CompiledJson(const InspectFlags& f, const CompiledModel& c) {
  nlohmann::json segments = nlohmann::json::array(), placements = nlohmann::json::array();
  for (const SegmentInfo& s : c.segments()) {
    nlohmann::json j = {{"unit", UnitName(s.unit)}, {"nodes", s.nodes}, {"inputs", s.inputs}, {"outputs", s.outputs}};
    if (s.unit == Unit::kNpu)
      j.update({{"layers", s.npu_layers}, {"cores", s.npu_cores}, {"program_bytes", s.npu_program_bytes},
                {"constant_bytes", s.npu_constant_bytes}, {"sram_peak", s.sram_peak},
                {"tensors_on_chip", s.tensors_on_chip}, {"bytes_on_chip", s.bytes_on_chip},
                {"tensors_in_bands", s.tensors_in_bands}, {"bytes_in_bands", s.bytes_in_bands},
                {"tensors_spilled", s.tensors_spilled}, {"bytes_spilled", s.bytes_spilled},
                {"tensors_in_dram", s.tensors_in_dram}, {"bytes_in_dram", s.bytes_in_dram},
                {"hand_over_steps", s.hand_over_steps}});
    segments.push_back(std::move(j));
  }
  for (const NodePlacement& p : c.placements())
    placements.push_back({{"node", p.node}, {"op", p.op}, {"unit", UnitName(p.unit)}, {"reason", p.reason},
                          {"code", p.code}, {"macs", p.macs}});
  return {{"model", f.model},          {"compiled", true},      {"producer", c.producer()},
          {"source_model", c.source_model()}, {"target", c.target_name()}, {"inputs", ValuesJson(c.inputs())},
          {"outputs", ValuesJson(c.outputs())}, {"segments", segments}, {"placements", placements}};
}

// A compiled model: what `edgec compile` said about it, read back from the file.
int InspectCompiled(const InspectFlags& f) {
  auto c = CompiledModel::Load(f.model);
  if (!c.ok()) return ReportError(c.status().message());
  if (f.json) {
    fmt::print("{}\n", CompiledJson(f, *c).dump(2));
    return 0;
  }
  fmt::print("compiled model: {} (written by {} from {})\ntarget: {}\n", f.model, c->producer(),
             c->source_model().empty() ? "?" : c->source_model(), c->target_name());
  fmt::print("inputs:\n");
  for (const ValueInfo& v : c->inputs()) fmt::print("  {:<24} {}\n", v.name, v.type);
  fmt::print("outputs:\n");
  for (const ValueInfo& v : c->outputs()) fmt::print("  {:<24} {}\n", v.name, v.type);

  const std::vector<NodePlacement> ps = c->placements();
  int npu = 0;
  int64_t macs = 0, npu_macs = 0;
  std::map<std::pair<std::string, std::string>, int> cpu_groups;  // (op, reason code or reason) -> nodes
  for (const NodePlacement& p : ps) {
    macs += p.macs;
    if (p.unit == Unit::kNpu) {
      ++npu;
      npu_macs += p.macs;
    } else {
      ++cpu_groups[{p.op, p.code.empty() ? p.reason : p.code}];
    }
  }
  fmt::print("placement: {} node(s): {} on the NPU, {} on the CPU; {:.1f}% of {} on the NPU\n", ps.size(), npu,
             ps.size() - npu, macs ? 100.0 * static_cast<double>(npu_macs) / static_cast<double>(macs) : 0.0,
             Human(static_cast<double>(macs), "MAC"));
  if (!cpu_groups.empty()) {  // the largest groups first
    std::vector<std::pair<int, std::string>> groups;
    for (const auto& [key, n] : cpu_groups) groups.push_back({n, fmt::format("{} {} ({})", n, key.first, key.second)});
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    fmt::print("  on the CPU:");
    for (size_t i = 0; i < groups.size(); ++i) fmt::print("{} {}", i ? "," : "", groups[i].second);
    fmt::print("\n");
  }

  const std::vector<SegmentInfo> segs = c->segments();
  fmt::print("segments: {} ({} on the NPU)\n", segs.size(),
             std::count_if(segs.begin(), segs.end(), [](const SegmentInfo& s) { return s.unit == Unit::kNpu; }));
  fmt::print("  {:>3} {:<4} {:>6} {:>7} {:>6} {:>10} {:>10} {:>10} {:>16} {:>16} {:>16} {:>16} {:>9}\n", "#",
             "unit", "nodes", "layers", "cores", "program", "constants", "SRAM peak", "kept on chip",
             "in bands", "spilled", "in/out in DRAM", "hand-over");
  for (size_t i = 0; i < segs.size(); ++i) {
    if (!f.all_layers && i >= 40) {
      fmt::print("  ... {} more (--all-layers)\n", segs.size() - i);
      break;
    }
    const SegmentInfo& s = segs[i];
    if (s.unit != Unit::kNpu) {
      fmt::print("  {:>3} {:<4} {:>6}\n", i, "cpu", s.nodes.size());
      continue;
    }
    auto tensors = [](int n, int64_t bytes) { return n ? fmt::format("{} ({})", n, Human(static_cast<double>(bytes), "B")) : "0"; };
    fmt::print("  {:>3} {:<4} {:>6} {:>7} {:>6} {:>10} {:>10} {:>10} {:>16} {:>16} {:>16} {:>16} {:>9}\n", i,
               "npu", s.nodes.size(), s.npu_layers, s.npu_cores, Human(static_cast<double>(s.npu_program_bytes), "B"),
               Human(static_cast<double>(s.npu_constant_bytes), "B"), Human(static_cast<double>(s.sram_peak), "B"),
               tensors(s.tensors_on_chip, s.bytes_on_chip), tensors(s.tensors_in_bands, s.bytes_in_bands),
               tensors(s.tensors_spilled, s.bytes_spilled),
               tensors(s.tensors_in_dram, s.bytes_in_dram), s.hand_over_steps);
  }
  if (f.all_layers) fmt::print("per node:\n{}", c->PlacementReport());
  else fmt::print("each node's unit and reason: --all-layers\n");
  return 0;
}

int InspectMain(const InspectFlags& f) {
  if (IsCompiledModel(f.model)) return InspectCompiled(f);
  OnnxFileInfo info;
  auto m = Model::Load(f.model, &info);
  if (m.ok()) {
    if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  }
  if (f.json && m.ok()) return PrintJson(f, *m, info);
  fmt::print("model: {}\n", f.model);
  if (info.ir_version) {
    fmt::print("  ir_version {}, opset {}, producer '{}'\n", info.ir_version, info.opset, info.producer);
  }
  if (!m.ok()) {
    if (!info.op_histogram.empty()) PrintHistogram(info.op_histogram);
    if (!info.unsupported.empty()) {
      fmt::print("unsupported ops ({}):\n", info.unsupported.size());
      for (auto& u : info.unsupported) fmt::print("  {}\n", u);
    }
    return ReportError(m.status().message());
  }
  auto shapes = ParseShapes(f.shapes);
  if (!shapes.ok()) return ReportError(shapes.status().message());
  bool had_symbolic = false;
  for (const ValueInfo& v : m->inputs()) {
    if (!shapes->count(v.name) && !v.is_static()) had_symbolic = true;
  }
  fmt::print("inputs:\n");
  for (const ValueInfo& v : m->inputs()) fmt::print("  {:<24} {}\n", v.name, v.type);
  // Which shapes are static, symbolic (follow the input dims) or value-dependent (follow
  // input values or data, still open with every dim bound).
  Model symbolic = m->Clone();
  Status st = symbolic.BindInputShapes(*shapes, 0);
  if (!st.ok()) return ReportError(st.message());
  auto open_why = BindAsShown(*m, *shapes);
  if (!open_why.ok()) return ReportError(open_why.status().message());
  if (had_symbolic && open_why->empty()) {
    fmt::print("  (symbolic dims bound to 1; choose with --shape NAME=1x3x224x224)\n");
  } else if (had_symbolic) {
    fmt::print("  (symbolic dims left open: bound to 1 they fail ({}); choose with --shape NAME=1x3x224x224)\n",
               *open_why);
  }
  fmt::print("outputs:\n");
  for (const ValueInfo& v : m->outputs()) fmt::print("  {:<24} {}\n", v.name, v.type);
  std::map<std::string, bool> static_before;
  for (const NodeInfo& n : symbolic.nodes())
    for (const ValueInfo& o : n.outputs) static_before[o.name] = o.is_static();
  const std::vector<NodeInfo> nodes = m->nodes();
  int num_static = 0, num_symbolic = 0;
  std::vector<std::pair<const ValueInfo*, const NodeInfo*>> value_dependent;
  for (const NodeInfo& n : nodes) {
    for (const ValueInfo& o : n.outputs) {
      auto before = static_before.find(o.name);
      if (!o.is_static()) value_dependent.emplace_back(&o, &n);
      else if (before != static_before.end() && !before->second) ++num_symbolic;
      else ++num_static;
    }
  }
  fmt::print("shapes: {} static, {} symbolic (follow the input dims), {} value-dependent (follow input "
             "values or data{})\n", num_static, num_symbolic, value_dependent.size(),
             value_dependent.empty() ? "" : "; `run` builds a plan per shape-input value, data-dependent sizes "
                                             "are allocated at run time");
  for (size_t i = 0; i < value_dependent.size() && i < 8; ++i) {
    const auto& [v, producer] = value_dependent[i];
    fmt::print("  {:<24} {} from {}\n", v->name, v->type, producer->label);
  }
  if (value_dependent.size() > 8) fmt::print("  ... {} more\n", value_dependent.size() - 8);
  PrintHistogram(info.op_histogram);

  const int64_t params = m->parameter_count(), param_bytes = m->parameter_bytes();
  fmt::print("parameters: {} ({} elements, {})\n", Human(static_cast<double>(params), ""), params,
             Human(static_cast<double>(param_bytes), "B"));

  std::vector<const NodeInfo*> rows;
  int64_t total = 0;
  bool unknown = false;
  for (const NodeInfo& n : nodes) {
    if (n.macs < 0) unknown = true;
    if (n.macs != 0) rows.push_back(&n);
    if (n.macs > 0) total += n.macs;
  }
  fmt::print("MACs per layer ({} layers):\n", rows.size());
  fmt::print("  {:<40} {:<16} {:<22} {:>12} {:>7}\n", "layer", "op", "output", "MACs", "share");
  size_t shown = 0;
  for (const NodeInfo* r : rows) {
    if (!f.all_layers && shown >= 40) break;
    ++shown;
    std::string name = r->name.size() > 40 ? "..." + r->name.substr(r->name.size() - 37) : r->name;
    fmt::print("  {:<40} {:<16} {:<22} {:>12} {:>6.1f}%\n", name, r->op, r->outputs.at(0).type,
               r->macs < 0 ? std::string("?") : std::to_string(r->macs),
               r->macs > 0 && total ? 100.0 * static_cast<double>(r->macs) / static_cast<double>(total) : 0.0);
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
  sub->add_option("model", flags->model, "ONNX model file, or a compiled model (.edgec)")->required();
  sub->add_option("--freeze", flags->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's symbolic dims");
  sub->add_flag("--all-layers", flags->all_layers,
               "list every layer with MACs, not the first 40 (a compiled model: every node's unit and reason)");
  sub->add_flag("--json", flags->json, "print all of it (every layer) as one JSON object");
  return [flags] { return InspectMain(*flags); };
}

}  // namespace edgec::cli
