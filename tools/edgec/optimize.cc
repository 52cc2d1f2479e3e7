// edgec optimize MODEL [-O0..-O3 | --passes PIPELINE] -o OUT.onnx
// Runs the graph optimizer and writes the result as ONNX (standard ops unless --keep-fused),
// with a summary: nodes before/after by op, rewrites by kind, copy bytes, each pass's effect.
#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "ir/cost.h"
#include "passes/pass.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct OptimizeFlags {
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

std::map<std::string, int> Histogram(const Graph& g) {
  std::map<std::string, int> h;
  for (const Node* n : g.nodes()) h[std::string(OpName(n->op()))]++;
  return h;
}

std::string Bytes(int64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.2f} MiB", b / (1024.0 * 1024.0));
}

int OptimizeMain(const OptimizeFlags& f) {
  auto g = onnx_fe::ImportOnnxFile(f.model);
  if (!g.ok()) return ReportError(g.status().message());
  auto shapes_text = ParseAssignments(f.shapes, "--shape");
  if (!shapes_text.ok()) return ReportError(shapes_text.status().message());
  std::map<std::string, Dims> shapes;
  for (auto& [name, text] : *shapes_text) {
    auto d = ParseDims(text);
    if (!d.ok()) return ReportError(fmt::format("--shape {}: {}", name, d.status().message()));
    shapes[name] = *d;
  }
  // Symbolic dims stay symbolic unless --shape binds them.
  Status bound = BindInputShapes(*g, shapes, 0);
  if (!bound.ok()) return ReportError(fmt::format("{}: {}", f.model, bound.message()));

  passes::Pipeline pipeline;
  if (!f.passes.empty()) {
    auto p = passes::ParsePipeline(f.passes);
    if (!p.ok()) return ReportError(p.status().message());
    pipeline = *p;
  } else {
    pipeline = passes::NamedPipeline(f.level);
  }
  passes::PassContext ctx;
  ctx.opt_level = f.level;
  ctx.verify_each = f.verify_each;
  ctx.explain = f.explain;
  ctx.evaluator = EvaluateNode;
  for (auto& p : f.print_after) {
    if (p != "all" && !passes::FindPass(p)) return ReportError(fmt::format("--print-after: unknown pass '{}'", p));
    ctx.print_after.insert(p);
  }

  auto before = Histogram(*g);
  int nodes_before = g->num_nodes();
  int64_t copy_before = GraphCopyBytes(*g);
  Status st = passes::RunPipeline(*g, pipeline, ctx);
  if (!st.ok()) return ReportError(fmt::format("{}: {}", f.model, st.message()));
  auto after = Histogram(*g);
  int nodes_after = g->num_nodes();
  int64_t copy_after = GraphCopyBytes(*g);
  // Nodes whose every output is a zero-copy view of memory that exists: nothing runs.
  int views_after = 0;
  for (const Node* n : g->nodes()) {
    bool view = n->num_outputs() > 0;
    for (const Value* o : n->outputs()) view &= o->physical.is_view;
    views_after += view;
  }

  if (!f.output.empty()) {
    Graph out = g->Clone();
    if (!f.keep_fused) {
      passes::PassContext lower;
      Status u = passes::RunPipeline(out, *passes::ParsePipeline("unfuse"), lower);
      if (!u.ok()) return ReportError(fmt::format("{}: {}", f.model, u.message()));
    }
    onnx_fe::ExportOptions eo;
    eo.keep_fused = f.keep_fused;
    Status w = onnx_fe::ExportOnnxFile(out, f.output, eo);
    if (!w.ok()) return ReportError(fmt::format("{}: {}", f.output, w.message()));
  }
  if (!f.json.empty()) {
    nlohmann::json j;
    j["model"] = f.model;
    j["pipeline"] = pipeline.ToString();
    j["nodes_before"] = nodes_before;
    j["nodes_after"] = nodes_after;
    j["views_after"] = views_after;
    j["ops_before"] = before;
    j["ops_after"] = after;
    j["copy_bytes_before"] = copy_before;
    j["copy_bytes_after"] = copy_after;
    nlohmann::json passes = nlohmann::json::array();
    for (const auto& r : ctx.records()) {
      passes.push_back({{"pass", r.pass}, {"ms", r.milliseconds}, {"nodes_before", r.nodes_before},
                        {"nodes_after", r.nodes_after}, {"rewrites", r.stats.rewrites},
                        {"copy_bytes_removed", r.stats.copy_bytes_removed}});
    }
    j["passes"] = passes;
    std::ofstream out(f.json);
    out << j.dump(2) << "\n";
    if (!out) return ReportError(fmt::format("cannot write '{}'", f.json));
  }
  if (f.quiet) return 0;

  fmt::print("pipeline: {}\n", pipeline.steps.empty() ? "(none)" : pipeline.ToString());
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
  for (const auto& r : ctx.records()) {
    for (auto& [k, v] : r.stats.rewrites) rewrites[k] += v;
  }
  fmt::print("rewrites:\n");
  if (rewrites.empty()) fmt::print("  (none)\n");
  for (auto& [k, v] : rewrites) fmt::print("  {:<40} {:>6}\n", k, v);
  fmt::print("copy bytes per inference: {} -> {}\n", Bytes(copy_before), Bytes(copy_after));
  fmt::print("passes that changed the graph:\n");
  std::vector<std::string> unchanged;
  double unchanged_ms = 0;
  for (const auto& r : ctx.records()) {
    std::string what;
    for (auto& [k, v] : r.stats.rewrites) what += fmt::format("{}{} {}", what.empty() ? "" : ", ", v, k);
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
    fmt::print("why patterns did not match ({}):\n", ctx.explanations().size());
    for (auto& e : ctx.explanations()) fmt::print("  {}\n", e);
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
