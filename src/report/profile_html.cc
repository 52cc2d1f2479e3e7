// The profile's HTML report (see profile_html.h).
#include "report/profile_html.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/placement_graph.h"
#include "report/profile_svg.h"
#include "support/status.h"

namespace edgec::report {
namespace {

std::string Ms(double s) { return fmt::format("{:.3f} ms", s * 1e3); }

}  // namespace

std::string ProfileHtml(const Profile& p) {
  const int width = 1180;
  std::string h;
  h += "<!doctype html><html><head><meta charset=\"utf-8\"><title>edgec profile: " + EscapeXml(p.file) +
       "</title><style>\n"
       "body{font-family:sans-serif;margin:20px 28px;color:#222;max-width:1200px}h1{font-size:20px;margin:0 0 4px}"
       "h2{font-size:15px;margin:26px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}"
       ".sub{color:#666;font-size:12px}.cards{display:flex;gap:10px;flex-wrap:wrap;margin-top:12px}"
       ".card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;font-size:12px;color:#555}"
       ".card b{display:block;font-size:17px;color:#222}table{border-collapse:collapse;font-size:12px}"
       "td,th{border-bottom:1px solid #eee;padding:2px 8px;text-align:right;white-space:nowrap}"
       "td.l,th.l{text-align:left}.cpu{color:#b5651d}.npu{color:#2f6fb0}.reason{color:#555;white-space:normal}"
       ".legend span{display:inline-block;margin-right:14px;font-size:12px}"
       ".legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}"
       ".row{display:flex;gap:16px;align-items:flex-start}\n</style></head><body>\n";
  h += fmt::format("<h1>{} on {}</h1>\n<div class=\"sub\">simulated inference: NPU cycles from the cycle-level "
                   "simulator, CPU nodes {}</div>\n",
                   EscapeXml(p.file), EscapeXml(p.target),
                   p.cpu_measured ? "as measured on the host that made the report" : "from the partitioner's cost model");
  h += "<div class=\"cards\">";
  auto card = [&](const std::string& t, const std::string& v) {
    h += "<div class=\"card\">" + EscapeXml(t) + "<b>" + EscapeXml(v) + "</b></div>";
  };
  card("latency", Ms(p.latency_s));
  card("NPU", Ms(p.npu_s));
  card(p.cpu_measured ? "CPU (measured)" : "CPU (cost model)", Ms(p.cpu_s));
  card("copies + cache", Ms(p.copy_s + p.cache_s));
  card("nodes NPU / CPU", fmt::format("{} / {}", p.npu_nodes, p.cpu_nodes));
  int64_t macs = 0, dram = 0;
  double npu_cycles = 0;
  for (const auto& o : p.ops)
    if (o.simulated) macs += o.macs, dram += o.dram_bytes, npu_cycles += o.cycles;
  card("MAC utilization (NPU time)", fmt::format("{:.1f}%", p.npu_s > 0 ? 100.0 * macs / (p.npu_s * p.clock_hz * p.peak_macs_per_cycle) : 0));
  card("DRAM traffic", fmt::format("{:.2f} MB", dram / 1e6));
  card("peak arena / SRAM", fmt::format("{:.2f} MB / {:.2f} MB", p.arena_bytes / 1e6, p.sram_bytes / 1e6));
  if (p.energy_uj >= 0) card("energy", fmt::format("{:.1f} uJ", p.energy_uj));
  h += "</div>\n";

  h += "<h2>Timeline</h2>\n<div class=\"legend\"><span><i style=\"background:#d9822b\"></i>CPU node</span>"
       "<span><i style=\"background:#999\"></i>copy CPU&rarr;NPU</span><span><i style=\"background:#5aa9e6\"></i>load "
       "(DMA in)</span><span><i style=\"background:#2e9e5b\"></i>execute (MAC array)</span><span><i "
       "style=\"background:#e0a526\"></i>vector</span><span><i style=\"background:#8e6cc2\"></i>store (DMA out)</span><span><i "
       "style=\"background:#4fb3b3\"></i>prefetch (weights in)</span></div>\n";
  h += TimelineSvg(p, width);
  if (p.npu_s < 0.5 * p.latency_s && p.npu_s > 0)  // the NPU's part is thin on the whole run's axis
    h += "<h3 class=\"sub\">The NPU's part alone</h3>\n" + TimelineSvg(p, width, /*npu_only=*/true);
  h += "<div class=\"row\"><div><h2>Roofline</h2>\n" + RooflineSvg(p, 560, 380) + "</div><div><h2>Memory over time</h2>\n" +
       OccupancySvg(p, 600) + "</div></div>\n";
  h += "<h2>Placement</h2>\n<div class=\"legend\"><span><i style=\"background:#2f6fb0\"></i>NPU</span><span><i "
       "style=\"background:#d9822b\"></i>CPU (hover a box for its node and reason)</span><span><i style=\"background:"
       "#c0392b\"></i>edge with a copy between CPU and NPU</span><span>thick border: a chain of nodes in one box</span></div>\n";
  h += "<div class=\"graph\">" + PlacementGraphSvg(p, width) + "</div>\n";
  // The CPU nodes and why: counted by the reason's kind (its text before a ':'), then every
  // node in a <details> (open when there are few).
  std::map<std::string, std::pair<int, double>> kinds;
  for (const auto& o : p.ops)
    if (o.unit == "cpu") {
      auto& k = kinds[o.reason.substr(0, o.reason.find(':'))];
      ++k.first, k.second += o.seconds;
    }
  if (p.cpu_nodes == 0) h += "<p class=\"sub\">Every node runs on the NPU.</p>\n";
  else h += "<table class=\"cpu-kinds\"><tr><th class=\"l\">why CPU nodes are not on the NPU</th><th>nodes</th><th>time</th></tr>\n";
  for (const auto& [kind, nt] : kinds)
    h += fmt::format("<tr><td class=\"l reason\">{}</td><td>{}</td><td>{}</td></tr>\n", EscapeXml(kind), nt.first, Ms(nt.second));
  if (p.cpu_nodes > 0) {
    h += fmt::format("</table>\n<details{}><summary>every CPU node ({})</summary>", p.cpu_nodes <= 20 ? " open" : "", p.cpu_nodes);
    h += "<table class=\"cpu-reasons\"><tr><th class=\"l\">CPU node</th><th class=\"l\">op</th><th>time</th><th "
         "class=\"l\">why not on the NPU</th></tr>\n";
    for (const auto& o : p.ops)
      if (o.unit == "cpu")
        h += fmt::format("<tr><td class=\"l cpu\">{}</td><td class=\"l\">{}</td><td>{}</td><td class=\"l reason\">{}</td></tr>\n",
                         EscapeXml(o.node), EscapeXml(o.op), Ms(o.seconds), EscapeXml(o.reason));
    h += "</table></details>\n";
  }
  if (!p.error.empty()) {
    std::vector<Bar> bars;
    for (const auto& o : p.ops)
      if (auto e = p.error.find(o.node); e != p.error.end()) bars.push_back({o.node, e->second, o.unit == "npu"});
    h += "<h2>INT8 error per layer</h2>\n" + BarsSvg("relative error of each layer's output against float", "", bars, width);
  }
  if (p.energy_uj >= 0) {
    std::vector<Bar> bars;
    for (const auto& o : p.ops)
      if (o.energy_uj > 0) bars.push_back({o.node, o.energy_uj, o.unit == "npu"});
    h += "<h2>Energy per layer</h2>\n" +
         BarsSvg("MACs x pJ/MAC + DRAM bytes x pJ/B + on-chip bytes x pJ/B (the target's energy figures)", "uJ", bars, width);
  }
  const std::vector<const OpProfile*> top = SlowestOps(p, 25);
  h += "<h2>Slowest ops</h2>\n<p class=\"sub\">time: the latency attributed to the node (NPU layers that run at "
       "once split it, so the shares add up to 100%); span: its first to last NPU instruction (spans overlap: weights "
       "stream in ahead of their layer, tiles pipeline)</p>\n"
       "<table><tr><th class=\"l\">node</th><th class=\"l\">op</th><th class=\"l\">unit</th>"
       "<th>time</th><th>share</th><th>span cycles</th><th>MACs</th><th>MAC util</th><th>DRAM</th><th>bound</th>"
       "<th class=\"l\">top stall</th></tr>\n";
  for (const OpProfile* o : top) {
    std::string stall = "-";
    double c = 0;
    for (auto& [k, v] : o->stalls)
      if (v > c) c = v, stall = fmt::format("{} ({:.0f} cycles)", k, v);
    h += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l {}\">{}</td><td>{}</td><td>{:.1f}%</td>"
                     "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
                     EscapeXml(o->node), EscapeXml(o->op), o->unit, o->unit, Ms(o->attributed_s), 100 * o->share,
                     o->simulated ? fmt::format("{:.0f}", o->cycles) : "-", o->macs,
                     o->simulated && o->macs ? fmt::format("{:.1f}%", 100 * o->utilization) : "-",
                     o->simulated ? fmt::format("{:.1f} kB", o->dram_bytes / 1e3) : "-",
                     o->simulated ? (o->compute_bound ? "compute" : "memory") : "cpu", EscapeXml(stall));
  }
  h += "</table>\n</body></html>\n";
  return h;
}

}  // namespace edgec::report
