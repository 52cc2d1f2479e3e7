// Compile diffs (see compile_diff.h).
#include "report/compile_diff.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "support/status.h"
#include "lower/npu_layers.h"

namespace edgec::report {

StatusOr<StaticRun> MeasureStatic(const LoadedArtifact& a) {
  const npu::Target& t = a.target;
  StaticRun r;
  std::unordered_map<std::string, size_t> index;
  std::unordered_map<std::string, artifact_io::Unit> unit;
  for (const auto& p : a.meta.placements) unit[p.node] = p.unit;
  for (const Node* n : a.graph.nodes()) {
    index[n->name()] = r.nodes.size();
    r.nodes.push_back(n->name());
    r.ops.push_back(std::string(OpName(n->op())));
    LayerFigures f;
    f.present = true;
    auto u = unit.find(n->name());
    const bool npu = u != unit.end() && u->second == artifact_io::Unit::kNpu;
    f.unit = npu ? "npu" : "cpu";
    f.macs = lower::MacsOf(*n);
    if (!npu) {
      f.seconds = partition::CpuSeconds(*n, {});
      r.seconds += f.seconds;
    } else {
      ++r.npu_nodes;
    }
    r.layers.push_back(f);
  }
  for (const artifact_io::Segment& s : a.meta.segments) {
    if (s.unit != artifact_io::Unit::kNpu || s.npu.instructions.empty()) continue;
    ASSIGN_OR_RETURN(npu::Program p, npu::DecodeProgram(s.npu.instructions));
    p.dram_bytes = s.npu.dram_bytes;
    p.cores_used = s.npu.cores_used;
    p.semaphores = s.npu.semaphores;
    ASSIGN_OR_RETURN(npu::SimResult sim, npu::Simulate(p, t));
    r.seconds += sim.total.cycles / t.clock_hz;
    r.dram_bytes += sim.total.dram_read + sim.total.dram_written;
    for (size_t k = 0; k < p.layer_names.size() && k < sim.layers.size(); ++k) {
      auto it = index.find(p.layer_names[k]);
      if (it == index.end()) continue;
      LayerFigures& f = r.layers[it->second];
      const npu::Stats& st = sim.layers[k].stats;
      f.cycles = st.cycles;
      f.seconds = st.cycles / t.clock_hz;
      f.dram_bytes = st.dram_read + st.dram_written;
      f.utilization = st.mac_utilization(t);
    }
  }
  return r;
}

CompileDiff DiffRuns(const StaticRun& a, const StaticRun& b, double threshold) {
  CompileDiff d;
  d.a_seconds = a.seconds, d.b_seconds = b.seconds;
  d.a_dram = a.dram_bytes, d.b_dram = b.dram_bytes;
  d.a_npu_nodes = a.npu_nodes, d.b_npu_nodes = b.npu_nodes;
  std::unordered_map<std::string, size_t> in_b;
  for (size_t i = 0; i < b.nodes.size(); ++i) in_b[b.nodes[i]] = i;
  std::vector<bool> seen_b(b.nodes.size(), false);
  auto pct = [](double x, double y) { return x > 0 ? fmt::format("{:+.1f}%", 100 * (y - x) / x) : std::string("new"); };
  auto add = [&](const std::string& node, const std::string& op, const LayerFigures& fa, const LayerFigures& fb) {
    DiffRow row{node, op, fa, fb, fb.seconds - fa.seconds, ""};
    std::vector<std::string> ch;
    if (!fa.present) ch.push_back("only in B");
    else if (!fb.present) ch.push_back("only in A");
    else {
      if (fa.unit != fb.unit) ch.push_back(fa.unit + " -> " + fb.unit);
      if (std::abs(fb.cycles - fa.cycles) > 0.005 * std::max(fa.cycles, 1.0)) ch.push_back("cycles " + pct(fa.cycles, fb.cycles));
      if (fa.dram_bytes != fb.dram_bytes) ch.push_back("DRAM " + pct(static_cast<double>(fa.dram_bytes), static_cast<double>(fb.dram_bytes)));
      if (std::abs(fb.utilization - fa.utilization) > 0.005)
        ch.push_back(fmt::format("util {:.1f}% -> {:.1f}%", 100 * fa.utilization, 100 * fb.utilization));
      if (fa.unit == "cpu" && fb.unit == "cpu" && std::abs(fb.seconds - fa.seconds) > 1e-12) ch.push_back("cpu time " + pct(fa.seconds, fb.seconds));
    }
    if (ch.empty()) return;
    if (fa.present && fb.present && fa.unit == "npu" && fb.unit == "cpu") ++d.left_npu;
    for (size_t k = 0; k < ch.size(); ++k) row.change += (k ? ", " : "") + ch[k];
    d.rows.push_back(std::move(row));
  };
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    auto it = in_b.find(a.nodes[i]);
    if (it == in_b.end()) {
      add(a.nodes[i], a.ops[i], a.layers[i], {});
      continue;
    }
    seen_b[it->second] = true;
    add(a.nodes[i], a.ops[i], a.layers[i], b.layers[it->second]);
  }
  for (size_t i = 0; i < b.nodes.size(); ++i)
    if (!seen_b[i]) add(b.nodes[i], b.ops[i], {}, b.layers[i]);
  std::stable_sort(d.rows.begin(), d.rows.end(), [](auto& x, auto& y) { return std::abs(x.impact_s) > std::abs(y.impact_s); });
  if (d.b_seconds > d.a_seconds * (1 + threshold))
    d.why.push_back(fmt::format("latency {:.3f} ms -> {:.3f} ms ({})", d.a_seconds * 1e3, d.b_seconds * 1e3, pct(d.a_seconds, d.b_seconds)));
  if (d.b_dram > d.a_dram * (1 + threshold))
    d.why.push_back(fmt::format("DRAM bytes {} -> {} ({})", d.a_dram, d.b_dram, pct(static_cast<double>(d.a_dram), static_cast<double>(d.b_dram))));
  if (d.left_npu > 0) d.why.push_back(fmt::format("{} node(s) moved from the NPU to the CPU", d.left_npu));
  d.regression = !d.why.empty();
  return d;
}

std::string FormatDiff(const CompileDiff& d, const std::string& a_name, const std::string& b_name, int top) {
  std::string s = fmt::format("A = {}\nB = {}\n", a_name, b_name);
  s += fmt::format("latency {:.3f} ms -> {:.3f} ms, DRAM {:.2f} MB -> {:.2f} MB, nodes on the NPU {} -> {}\n",
                   d.a_seconds * 1e3, d.b_seconds * 1e3, d.a_dram / 1e6, d.b_dram / 1e6, d.a_npu_nodes, d.b_npu_nodes);
  s += fmt::format("{:<34} {:<12} {:>11} {:>11} {:>11}  {}\n", "node (by impact)", "op", "A ms", "B ms", "delta ms", "change");
  int k = 0;
  for (const DiffRow& r : d.rows) {
    if (top > 0 && k++ >= top) {
      s += fmt::format("... {} more changed node(s)\n", d.rows.size() - top);
      break;
    }
    const std::string name = r.node.size() > 34 ? ".." + r.node.substr(r.node.size() - 32) : r.node;
    s += fmt::format("{:<34} {:<12} {:>11.4f} {:>11.4f} {:>+11.4f}  {}\n", name, r.op.substr(0, 12), r.a.seconds * 1e3,
                     r.b.seconds * 1e3, r.impact_s * 1e3, r.change);
  }
  if (d.rows.empty()) s += "no layer changed\n";
  if (d.regression) {
    s += "REGRESSION:";
    for (const auto& w : d.why) s += " " + w + ";";
    s += "\n";
  } else {
    s += "no regression\n";
  }
  return s;
}

nlohmann::json DiffJson(const CompileDiff& d) {
  auto fig = [](const LayerFigures& f) -> nlohmann::json {
    if (!f.present) return nullptr;
    return {{"unit", f.unit}, {"seconds", f.seconds}, {"cycles", f.cycles}, {"dram_bytes", f.dram_bytes},
            {"utilization", f.utilization}};
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const DiffRow& r : d.rows)
    rows.push_back({{"node", r.node}, {"op", r.op}, {"a", fig(r.a)}, {"b", fig(r.b)}, {"impact_s", r.impact_s}, {"change", r.change}});
  return {{"a_seconds", d.a_seconds}, {"b_seconds", d.b_seconds}, {"a_dram_bytes", d.a_dram}, {"b_dram_bytes", d.b_dram},
          {"a_npu_nodes", d.a_npu_nodes}, {"b_npu_nodes", d.b_npu_nodes}, {"regression", d.regression}, {"why", d.why},
          {"rows", rows}};
}

}  // namespace edgec::report
