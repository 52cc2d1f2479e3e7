#include "report/html_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace edgec::report {

namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Bytes(double b) {
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string Ms(double s) { return fmt::format("{:.3f} ms", s * 1e3); }

constexpr const char* kNpuColour = "#2b7bb9";
constexpr const char* kCpuColour = "#e08a1e";
constexpr const char* kCopyColour = "#9a9a9a";

}  // namespace

std::string ArtifactRunHtml(const std::string& file, const LoadedArtifact& a, const ArtifactRunResult& r) {
  std::map<std::string, const artifact_io::Placement*> placement;
  for (const auto& p : a.meta.placements) placement[p.node] = &p;
  const npu::Target& t = a.target;
  const npu::Stats& s = r.npu_total;

  std::string h;
  h += "<!doctype html><html><head><meta charset=\"utf-8\"><title>edgec: " + Escape(file) + "</title><style>\n"
       "body{font-family:system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin-top:28px}"
       ".cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #ddd;border-radius:6px;padding:10px 14px}"
       ".card b{display:block;font-size:18px}table{border-collapse:collapse;font-size:12px}"
       "td,th{border-bottom:1px solid #eee;padding:3px 8px;text-align:right;white-space:nowrap}"
       "td.l,th.l{text-align:left}tr.cpu td.u{color:" + std::string(kCpuColour) + "}tr.npu td.u{color:" +
       kNpuColour + "}.reason{color:#777}svg text{font-size:10px;font-family:monospace}\n</style></head><body>\n";
  h += fmt::format("<h1>{} on {} (target {})</h1>\n", Escape(file), "npu-sim", Escape(t.name));
  h += fmt::format("<p>source model {} &middot; produced by {}</p>\n", Escape(a.meta.source_model), Escape(a.meta.producer));

  int npu_nodes = 0, cpu_nodes = 0;
  for (const auto& l : r.layers) (l.unit == artifact_io::Unit::kNpu ? npu_nodes : cpu_nodes)++;
  h += "<div class=\"cards\">";
  auto card = [&](const std::string& title, const std::string& value) {
    h += "<div class=\"card\">" + Escape(title) + "<b>" + Escape(value) + "</b></div>";
  };
  card("simulated latency", Ms(r.latency_s()));
  card("NPU", Ms(r.npu_s));
  card(r.cpu_measured ? "CPU (measured)" : "CPU (cost model)", Ms(r.cpu_s));
  card(fmt::format("copies ({})", r.copies), fmt::format("{} · {}", Ms(r.copy_s), Bytes(static_cast<double>(r.copy_bytes))));
  card("MAC utilization", fmt::format("{:.1f}%", 100 * s.mac_utilization(t)));
  card("DRAM read / written", Bytes(static_cast<double>(s.dram_read)) + " / " + Bytes(static_cast<double>(s.dram_written)));
  card("NPU roofline", fmt::format("{} ({})", Ms(s.roofline_cycles(t) / t.clock_hz),
                                   s.compute_bound(t) ? "compute-bound" : "memory-bound"));
  card("nodes on NPU / CPU", fmt::format("{} / {}", npu_nodes, cpu_nodes));
  h += "</div>\n";

  // One bar per layer: its time, coloured by unit; the copy share in grey.
  double longest = 1e-12;
  for (const auto& l : r.layers) longest = std::max(longest, l.seconds);
  const int label_w = 330, bar_w = 520, row_h = 14;
  const int height = static_cast<int>(r.layers.size()) * row_h + 24;
  h += "<h2>Time per layer</h2>\n";
  h += fmt::format("<p><span style=\"color:{}\">&#9632; NPU</span> &nbsp; <span style=\"color:{}\">&#9632; CPU</span>"
                   " &nbsp; bars to scale, longest {}</p>\n", kNpuColour, kCpuColour, Ms(longest));
  h += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">\n", label_w + bar_w + 90, height);
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerRun& l = r.layers[i];
    const int y = static_cast<int>(i) * row_h + 4;
    const double w = bar_w * l.seconds / longest;
    std::string name = l.node.size() > 48 ? ".." + l.node.substr(l.node.size() - 46) : l.node;
    h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", label_w - 6, y + 10, Escape(name));
    h += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>",
                     label_w, y + 1, std::max(w, 0.5), row_h - 3,
                     l.unit == artifact_io::Unit::kNpu ? kNpuColour : kCpuColour, Escape(l.node), Ms(l.seconds));
    h += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>\n", label_w + w + 4, y + 10, Ms(l.seconds));
  }
  h += "</svg>\n";

  if (!s.stalls.empty()) {
    h += "<h2>NPU stall cycles by cause (summed over queues)</h2>\n<table><tr><th class=\"l\">cause</th><th>cycles</th></tr>\n";
    std::vector<std::pair<std::string, double>> st(s.stalls.begin(), s.stalls.end());
    std::sort(st.begin(), st.end(), [](auto& x, auto& y) { return x.second > y.second; });
    for (auto& [cause, cyc] : st) h += fmt::format("<tr><td class=\"l\">{}</td><td>{:.0f}</td></tr>\n", Escape(cause), cyc);
    h += "</table>\n";
  }

  h += "<h2>Layers</h2>\n<table><tr><th class=\"l\">node</th><th class=\"l\">op</th><th class=\"l\">unit</th>"
       "<th>time</th><th>cycles</th><th>MACs</th><th>MAC util</th><th>mapping</th><th>DRAM read</th>"
       "<th>DRAM written</th><th>SRAM peak</th><th>copies</th><th>roofline</th><th class=\"l\">placement reason</th></tr>\n";
  for (const LayerRun& l : r.layers) {
    const bool npu = l.unit == artifact_io::Unit::kNpu;
    auto it = placement.find(l.node);
    std::string reason = it != placement.end() ? it->second->reason : "";
    if (reason.empty()) reason = npu ? "supported; NPU cheaper by the cost rule" : "";
    h += fmt::format("<tr class=\"{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l u\">{}</td><td>{}</td>",
                     npu ? "npu" : "cpu", Escape(l.node), Escape(l.op), npu ? "npu" : "cpu", Ms(l.seconds));
    if (l.simulated) {
      const npu::Stats& x = l.stats;
      h += fmt::format("<td>{:.0f}</td><td>{}</td><td>{:.1f}%</td><td>{:.1f}%</td><td>{}</td><td>{}</td><td>{}</td>",
                       x.cycles, x.macs, 100 * x.mac_utilization(t), 100 * x.mapping_efficiency(),
                       Bytes(static_cast<double>(x.dram_read)), Bytes(static_cast<double>(x.dram_written)),
                       Bytes(static_cast<double>(x.sram_peak)));
    } else {
      h += fmt::format("<td>-</td><td>{}</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>", l.macs ? std::to_string(l.macs) : "-");
    }
    h += fmt::format("<td>{}</td>", l.copies ? fmt::format("{} / {}", l.copies, Bytes(static_cast<double>(l.copy_bytes))) : "-");
    h += l.simulated ? fmt::format("<td>{:.0f} ({})</td>", l.stats.roofline_cycles(t),
                                   l.stats.compute_bound(t) ? "compute" : "memory")
                     : "<td>-</td>";
    h += "<td class=\"l reason\">" + Escape(reason) + "</td></tr>\n";
  }
  h += fmt::format("</table>\n<p class=\"reason\">CPU times {}, NPU times come from the cycle-level simulator; see "
                   "docs/npu.md.</p></body></html>\n",
                   r.cpu_measured ? fmt::format("are measured on the host that ran the report (fast kernels; the "
                                                "partitioner's cost model says {})", Ms(r.cpu_model_s))
                                  : std::string("come from the partitioner's cost model (the reference kernels ran)"));
  return h;
}

}  // namespace edgec::report
