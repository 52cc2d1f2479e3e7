// The placement graph (see placement_graph.h).
#include "report/placement_graph.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/profile_svg.h"
#include "support/status.h"

namespace edgec::report {
namespace {

constexpr const char* kCpuFill = "#d9822b";
constexpr const char* kNpuFill = "#2f6fb0";
constexpr const char* kCopy = "#c0392b";
constexpr int kBoxW = 96, kBoxH = 20, kColW = 118, kRowH = 28, kMargin = 18, kBandHead = 24, kBandGap = 18;

std::string Short(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

}  // namespace

GraphLayout LayoutPlacementGraph(const Profile& p) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<std::vector<int>> preds(n), succs(n);
  std::set<std::pair<int, int>> seen;
  for (auto [a, b] : p.edges)
    if (a >= 0 && b >= 0 && a < n && b < n && a != b && seen.insert({a, b}).second) succs[a].push_back(b), preds[b].push_back(a);
  // Boxes: one per node, or per chain when the graph is large.
  GraphLayout g;
  std::vector<int> box_of(n, -1);
  for (int i = 0; i < n; ++i) {
    if (box_of[i] >= 0) continue;
    box_of[i] = static_cast<int>(g.boxes.size());
    g.boxes.push_back({{i}, 0, 0});
    for (int cur = i; n > kCollapseAbove && succs[cur].size() == 1;) {
      const int next = succs[cur][0];
      if (preds[next].size() != 1 || box_of[next] >= 0 || p.ops[next].unit != p.ops[i].unit) break;
      box_of[next] = box_of[i];
      g.boxes.back().ops.push_back(next);
      cur = next;
    }
  }
  // Edges between boxes; a box's edges come from earlier boxes (a chain is entered at its head).
  const int nb = static_cast<int>(g.boxes.size());
  std::vector<std::vector<int>> box_preds(nb);
  std::set<std::pair<int, int>> box_seen;
  for (int a = 0; a < n; ++a)
    for (int b : succs[a]) {
      const int x = box_of[a], y = box_of[b];
      if (x == y || !box_seen.insert({x, y}).second) continue;
      g.edges.push_back({x, y, p.ops[a].unit != p.ops[b].unit});
      box_preds[y].push_back(x);
    }
  // Layers: the longest path from the inputs.
  for (int b = 0; b < nb; ++b) {
    for (int a : box_preds[b]) g.boxes[b].layer = std::max(g.boxes[b].layer, g.boxes[a].layer + 1);
    g.layers = std::max(g.layers, g.boxes[b].layer + 1);
  }
  // Slots: each column ordered by the mean slot of the boxes' producers (graph order breaks ties).
  std::vector<std::vector<int>> column(g.layers);
  for (int b = 0; b < nb; ++b) column[g.boxes[b].layer].push_back(b);
  for (auto& col : column) {
    std::vector<std::pair<double, int>> keyed;
    for (int b : col) {
      double key = -1;
      if (!box_preds[b].empty()) {
        key = 0;
        for (int a : box_preds[b]) key += g.boxes[a].slot;
        key /= static_cast<double>(box_preds[b].size());
      }
      keyed.push_back({key, b});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](auto& x, auto& y) { return x.first < y.first; });
    for (size_t k = 0; k < keyed.size(); ++k) g.boxes[keyed[k].second].slot = static_cast<int>(k);
  }
  return g;
}

std::string PlacementGraphSvg(const Profile& p, int width) {
  const GraphLayout g = LayoutPlacementGraph(p);
  const int per_band = std::max(1, (width - 2 * kMargin) / kColW);
  const int bands = std::max(1, (g.layers + per_band - 1) / per_band);
  // Band tops: each band as tall as its fullest column.
  std::vector<int> rows(bands, 1);
  for (const GraphBox& b : g.boxes) rows[b.layer / per_band] = std::max(rows[b.layer / per_band], b.slot + 1);
  std::vector<double> band_top(bands + 1);
  band_top[0] = 26;
  for (int k = 0; k < bands; ++k) band_top[k + 1] = band_top[k] + kBandHead + rows[k] * kRowH + kBandGap;
  auto X = [&](const GraphBox& b) { return kMargin + (b.layer % per_band) * kColW + 0.0; };
  auto Y = [&](const GraphBox& b) { return band_top[b.layer / per_band] + kBandHead + b.slot * kRowH; };

  int copies = 0;
  for (const GraphEdge& e : g.edges) copies += e.copy;
  std::string s = fmt::format(
      "<svg class=\"placement\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1:.0f}\" viewBox=\"0 0 {0} "
      "{1:.0f}\" font-family=\"sans-serif\" font-size=\"9\" data-nodes=\"{2}\" data-boxes=\"{3}\" data-edges=\"{4}\" "
      "data-copies=\"{5}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      width, band_top[bands], p.ops.size(), g.boxes.size(), g.edges.size(), copies);
  s += fmt::format("<text x=\"{}\" y=\"14\" font-size=\"11\">{} nodes ({} on the NPU, {} on the CPU) in {} layers, read left "
                   "to right and down; {} edges, {} of them a copy between the units{}</text>\n",
                   kMargin, p.ops.size(), p.npu_nodes, p.cpu_nodes, g.layers, g.edges.size(), copies,
                   g.boxes.size() < p.ops.size() ? fmt::format("; chains collapsed into {} boxes", g.boxes.size()) : "");
  for (int k = 0; k < bands; ++k) {
    const int first = k * per_band, last = std::min(g.layers, first + per_band) - 1;
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#e3e3e3\"/><text x=\"{0}\" "
                     "y=\"{3:.1f}\" fill=\"#888\">layers {4}-{5}</text>\n",
                     kMargin, width - kMargin, band_top[k] + 2, band_top[k] + 13, first, last);
  }
  // Edges under the boxes.
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const GraphEdge& e = g.edges[k];
    const GraphBox &a = g.boxes[e.from], &b = g.boxes[e.to];
    const bool across = a.layer / per_band != b.layer / per_band;
    const double lane = static_cast<double>(k % 5) - 2;  // edges between bands each on their own lane
    const double x1 = X(a) + kBoxW, y1 = Y(a) + kBoxH / 2.0, x2 = X(b), y2 = Y(b) + kBoxH / 2.0;
    std::string d;
    double mx, my;
    if (!across && b.layer - a.layer > 1) {  // skips columns: over the band's first row, clear of the boxes between
      const double top = band_top[a.layer / per_band] + kBandHead - 6 + 1.2 * lane;
      const double out = x1 + 11 + 2 * lane, in = x2 - 11 + 2 * lane;
      d = fmt::format("M{:.1f},{:.1f} H{:.1f} V{:.1f} H{:.1f} V{:.1f} H{:.1f}", x1, y1, out, top, in, y2, x2);
      mx = (out + in) / 2, my = top;
    } else if (!across) {
      const double dx = std::max(12.0, (x2 - x1) / 2);
      d = fmt::format("M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}", x1, y1, x1 + dx, y1, x2 - dx, y2, x2, y2);
      mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
    } else {  // right of the source, along the gap below its band, down to the target
      const double gap = band_top[a.layer / per_band + 1] - kBandGap / 2.0 + 2.5 * lane;
      const double out = x1 + 11 + 2 * lane, in = x2 - 11 + 2 * lane;
      d = fmt::format("M{:.1f},{:.1f} H{:.1f} V{:.1f} H{:.1f} V{:.1f} H{:.1f}", x1, y1, out, gap, in, y2, x2);
      mx = in, my = y2;
    }
    s += fmt::format("<path class=\"edge{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}{}/>\n",
                     e.copy ? " copy" : "", d, e.copy ? kCopy : across ? "#b8c2cc" : "#8795a3", e.copy ? "1.6" : "1",
                     e.copy ? " stroke-dasharray=\"4 2\"" : "", across ? " stroke-opacity=\"0.8\"" : "");
    if (e.copy)
      s += fmt::format("<circle class=\"copy\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"#fff\" stroke=\"{}\" "
                       "stroke-width=\"1.5\"><title>copy {} -&gt; {}</title></circle>\n",
                       mx, my, kCopy, p.ops[a.ops.back()].unit == "cpu" ? "CPU" : "NPU",
                       p.ops[b.ops.front()].unit == "cpu" ? "CPU" : "NPU");
  }
  for (const GraphBox& b : g.boxes) {
    const OpProfile& head = p.ops[b.ops.front()];
    const bool npu = head.unit == "npu";
    bool same_op = true;
    for (int i : b.ops) same_op &= p.ops[i].op == head.op;
    const std::string suffix = b.ops.size() == 1 ? ""
                               : same_op         ? fmt::format(" x{}", b.ops.size())
                                                 : fmt::format(" +{}", b.ops.size() - 1);
    const std::string label = Short(head.op, 17 - suffix.size()) + suffix;  // fits the box at 9px
    std::string title;
    for (size_t k = 0; k < b.ops.size() && k < 40; ++k) {
      const OpProfile& o = p.ops[b.ops[k]];
      title += fmt::format("{}{} ({}) on {}{}", k ? "\n" : "", o.node, o.op, o.unit, o.reason.empty() ? "" : ": " + o.reason);
    }
    if (b.ops.size() > 40) title += fmt::format("\n... {} more", b.ops.size() - 40);
    const double x = X(b), y = Y(b);
    s += fmt::format("<g><title>{}</title><rect class=\"node {}\" data-ops=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" "
                     "height=\"{}\" rx=\"3\" fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>",
                     EscapeXml(title), npu ? "npu" : "cpu", b.ops.size(), x, y, kBoxW, kBoxH, npu ? kNpuFill : kCpuFill,
                     npu ? "#1d4f85" : "#7a3d00", b.ops.size() > 1 ? 2.5 : 1);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#fff\">{}</text></g>\n", x + kBoxW / 2.0,
                     y + 13.5, EscapeXml(label));
  }
  return s + "</svg>\n";
}

}  // namespace edgec::report
