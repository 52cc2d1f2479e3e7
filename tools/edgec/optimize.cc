// edgec optimize MODEL [-O0..-O3 | --passes PIPELINE] -o OUT.onnx
// Runs the graph optimizer and writes the result as ONNX (standard ops unless --keep-fused),
// with a summary: nodes before/after by op, rewrites by kind, copy bytes, each pass's effect.
#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "edgec/model.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct OptimizeFlags {
  std::vector<std::string> freeze;
  std::string model;
  std::string output;
  int level = 3;
  std::string passes;
  std::vector<std::string> print_after;
  std::vector<std::string> shapes;
  bool verify_each = false;
  bool explain = false;
  bool keep_fused = false;
  bool quiet = false;
  std::string json;
};

std::map<std::string, int> Histogram(const Model& m) {
  std::map<std::string, int> h;
  for (const NodeInfo& n : m.nodes()) h[n.op]++;
  return h;
}

std::string Bytes(int64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.2f} MiB", b / (1024.0 * 1024.0));
}

int OptimizeMain(const OptimizeFlags& f) {
  auto m = Model::Load(f.model);
  if (!m.ok()) return ReportError(m.status().message());
  if (Status fz = ApplyFreeze(*m, f.freeze, f.model); !fz.ok()) return ReportError(fz.message());
  auto shapes = ParseShapes(f.shapes);
  if (!shapes.ok()) return ReportError(shapes.status().message());
  // Symbolic dims stay symbolic unless --shape binds them.
  Status bound = m->BindInputShapes(*shapes, 0);
  if (!bound.ok()) return ReportError(bound.message());

  OptimizeOptions options;
  options.level = f.level;
  options.pipeline = f.passes;
  options.verify_each = f.verify_each;
  options.explain = f.explain;
  const std::vector<std::string> known = PassNames();
  for (auto& p : f.print_after) {
    if (p != "all" && std::find(known.begin(), known.end(), p) == known.end())
      return ReportError(fmt::format("--print-after: unknown pass '{}'", p));
    options.print_after.push_back(p);
  }

  auto before = Histogram(*m);
  const int64_t nodes_before = m->node_count();
  const int64_t copy_before = m->copy_bytes();
  OptimizeReport report;
  Status st = m->Optimize(options, &report);
  if (!st.ok()) return ReportError(st.message());
  auto after = Histogram(*m);
  const int64_t nodes_after = m->node_count();
  const int64_t copy_after = m->copy_bytes();
  // Nodes whose every output is a zero-copy view of memory that exists: nothing runs.
  int views_after = 0;
  for (const NodeInfo& n : m->nodes()) views_after += n.is_view;

  if (!f.output.empty()) {
    Status w = m->SaveOnnx(f.output, {.keep_fused = f.keep_fused});
    if (!w.ok()) return ReportError(fmt::format("{}: {}", f.output, w.message()));
  }
  if (!f.json.empty()) {
    nlohmann::json j;
    j["model"] = f.model;
    j["pipeline"] = report.pipeline;
    j["nodes_before"] = nodes_before;
    j["nodes_after"] = nodes_after;
    j["views_after"] = views_after;
    j["ops_before"] = before;
    j["ops_after"] = after;
    j["copy_bytes_before"] = copy_before;
    j["copy_bytes_after"] = copy_after;
    nlohmann::json passes = nlohmann::json::array();
    for (const PassRecord& r : report.passes) {
      passes.push_back({{"pass", r.pass}, {"ms", r.milliseconds}, {"nodes_before", r.nodes_before},
                        {"nodes_after", r.nodes_after}, {"rewrites", r.rewrites},
                        {"copy_bytes_removed", r.copy_bytes_removed}});
    }
    j["passes"] = passes;
    std::ofstream out(f.json);
    out << j.dump(2) << "\n";
    if (!out) return ReportError(fmt::format("cannot write '{}'", f.json));
  }
  if (f.quiet) return 0;

  fmt::print("pipeline: {}\n", report.pipeline.empty() ? "(none)" : report.pipeline);
  fmt::print("nodes: {} -> {}", nodes_before, nodes_after);
  if (views_after) fmt::print(" ({} zero-copy views, {} run)", views_after, nodes_after - views_after);
  fmt::print("\n");
  std::set<std::string> ops;
  for (auto& [k, v] : before) ops.insert(k);
  for (auto& [k, v] : after) ops.insert(k);
  fmt::print("  {:<24} {:>7} {:>7}\n", "op", "before", "after");
  for (auto& op : ops) {
    int b = before.count(op) ? before[op] : 0, a = after.count(op) ? after[op] : 0;
    fmt::print("  {:<24} {:>7} {:>7}\n", op, b, a);
  }
  std::map<std::string, int64_t> rewrites;
  for (const PassRecord& r : report.passes) {
    for (auto& [k, v] : r.rewrites) rewrites[k] += v;
  }
  fmt::print("rewrites:\n");
  if (rewrites.empty()) fmt::print("  (none)\n");
  for (auto& [k, v] : rewrites) fmt::print("  {:<40} {:>6}\n", k, v);
  fmt::print("copy bytes per inference: {} -> {}\n", Bytes(copy_before), Bytes(copy_after));
  fmt::print("passes that changed the graph:\n");
  std::vector<std::string> unchanged;
  double unchanged_ms = 0;
  for (const PassRecord& r : report.passes) {
    std::string what;
    for (auto& [k, v] : r.rewrites) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", v, k);
    if (what.empty() && r.nodes_before == r.nodes_after) {
      if (std::find(unchanged.begin(), unchanged.end(), r.pass) == unchanged.end()) unchanged.push_back(r.pass);
      unchanged_ms += r.milliseconds;
      continue;
    }
    fmt::print("  {:<20} {:>5} -> {:<5} {:>8.2f} ms  {}\n", r.pass, r.nodes_before, r.nodes_after,
               r.milliseconds, what.empty() ? "(nodes changed)" : what);
  }
  if (!unchanged.empty()) {
    fmt::print("  no change ({:.2f} ms): {}\n", unchanged_ms, fmt::join(unchanged, ", "));
  }
  if (f.explain) {
    fmt::print("why patterns did not match ({}):\n", report.explanations.size());
    for (auto& e : report.explanations) fmt::print("  {}\n", e);
  }
  if (!f.output.empty()) fmt::print("wrote {}{}\n", f.output, f.keep_fused ? " (fused ops in the edgec domain)" : "");
  return 0;
}

}  // namespace

VerbMain AddOptimizeVerb(CLI::App& app) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* sub = app.add_subcommand("optimize", "Optimize a model's graph and write it as ONNX");
  sub->add_option("model", flags->model, "ONNX model file")->required();
  sub->add_option("--output,-o", flags->output, "write the optimized model here");
  sub->add_option("-O", flags->level, "optimization level 0-3 (named pipelines)")
      ->check(CLI::Range(0, 3))->capture_default_str();
  sub->add_option("--passes", flags->passes,
                  "explicit pipeline, e.g. 'eliminate-dead,fold-constants,layout{to=nhwc}' "
                  "(overrides -O)");
  sub->add_option("--print-after", flags->print_after, "print the IR after pass NAME (or 'all')");
  sub->add_option("--freeze", flags->freeze, "NAME=VALUE: make input NAME a constant (a number, a comma list, or a .npy file), so what depends on it folds");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's symbolic dims");
  sub->add_flag("--verify-each", flags->verify_each, "re-check shapes and types after every pass");
  sub->add_flag("--explain", flags->explain, "say which patterns did not match where, and why");
  sub->add_flag("--keep-fused", flags->keep_fused,
                "write fused ops as nodes of the 'edgec' domain instead of standard ops");
  sub->add_option("--json", flags->json, "also write the summary as JSON to this file");
  sub->add_flag("--quiet,-q", flags->quiet, "print nothing but errors");
  return [flags] { return OptimizeMain(*flags); };
}

}  // namespace edgec::cli
