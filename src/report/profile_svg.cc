// The profile's SVG plots (see profile_svg.h).
#include "report/profile_svg.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "support/status.h"

namespace edgec::report {
namespace {

constexpr const char* kCpu = "#d9822b";
constexpr const char* kNpu = "#2f6fb0";
// Queue colours: load, execute, vector, store, prefetch.
constexpr const char* kQueueColour[kQueueTracks] = {"#5aa9e6", "#2e9e5b", "#e0a526", "#8e6cc2", "#4fb3b3"};
constexpr const char* kQueueName[kQueueTracks] = {"load", "exec", "vec", "store", "prefetch"};

std::string Open(const char* cls, int w, int h) {
  return fmt::format("<svg class=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                     "viewBox=\"0 0 {} {}\" font-family=\"sans-serif\" font-size=\"11\">\n"
                     "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
                     cls, w, h, w, h);
}

std::string Text(double x, double y, const std::string& s, const char* anchor = "start", const char* extra = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>\n", x, y, anchor, extra, EscapeXml(s));
}

std::string Ms(double s) {
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.0f} us", s * 1e6);
}

std::string Si(double v, const char* unit) {
  const char* p[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::abs(v) >= 1000 && i < 5) v /= 1000, ++i;
  return fmt::format("{:.3g} {}{}", v, p[i], unit);
}

// Time axis ticks along [x0, x0 + w] for [0, total] seconds.
std::string TimeAxis(double x0, double w, double y, double total, double grid_top) {
  std::string s;
  const double raw = total / 8;
  const double mag = std::pow(10, std::floor(std::log10(std::max(raw, 1e-12))));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) { step = m * mag; break; }
  for (double t = 0; t <= total * 1.0001 && step > 0; t += step) {
    const double x = x0 + w * t / total;
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#e6e6e6\"/>\n", x, grid_top, y);
    s += Text(x, y + 13, Ms(t), "middle");
  }
  return s;
}

}  // namespace

std::string EscapeXml(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string TimelineSvg(const Profile& p, int width, bool npu_only) {
  // Rows: the CPU threads, then the queues of each core that ran something.
  std::vector<int> rows;
  std::map<int, std::vector<const Span*>> by_track;
  for (const Span& s : p.spans)
    if (s.category != "sync" && (IsCpuTrack(s.track) ? !npu_only : IsQueueTrack(s.track))) by_track[s.track].push_back(&s);
  if (!npu_only) rows.push_back(kCpuTrack);
  for (auto& [track, list] : by_track)
    if (track != kCpuTrack && IsCpuTrack(track)) rows.push_back(track);
  for (auto& [track, list] : by_track)
    if (!IsCpuTrack(track)) rows.push_back(track);
  // NPU only: the stretches where the CPU thread ran while no NPU queue was busy are cut out;
  // `busy` holds the NPU's intervals (idle time inside a task kept) and where each starts on
  // the cut axis.
  struct Busy {
    double from, to, at;
  };
  std::vector<Busy> busy;
  if (npu_only) {
    std::vector<std::pair<double, double>> iv;
    for (auto& [track, list] : by_track)
      for (const Span* sp : list) iv.push_back({sp->start_s, sp->end_s});
    std::sort(iv.begin(), iv.end());
    std::vector<double> cpu_starts;
    for (const Span& sp : p.spans)
      if (sp.track == kCpuTrack) cpu_starts.push_back(sp.start_s);
    std::sort(cpu_starts.begin(), cpu_starts.end());
    auto cpu_ran = [&](double a, double b) {
      auto it = std::lower_bound(cpu_starts.begin(), cpu_starts.end(), a);
      return it != cpu_starts.end() && *it < b;
    };
    for (auto [a, b] : iv) {
      if (!busy.empty() && (a <= busy.back().to || !cpu_ran(busy.back().to, a))) busy.back().to = std::max(busy.back().to, b);
      else busy.push_back({a, b, busy.empty() ? 0 : busy.back().at + busy.back().to - busy.back().from});
    }
  }
  auto at = [&](double t) {
    if (!npu_only) return t;
    auto it = std::upper_bound(busy.begin(), busy.end(), t, [](double v, const Busy& b) { return v < b.from; });
    if (it == busy.begin()) return 0.0;
    --it;
    return it->at + std::min(t, it->to) - it->from;
  };
  const int label_w = 110, row_h = 9, top = 28;
  const double plot_w = width - label_w - 20;
  const int height = top + static_cast<int>(rows.size()) * row_h + 40;
  const double total = std::max(npu_only ? (busy.empty() ? 0 : at(busy.back().to)) : p.latency_s, 1e-12);
  std::string s = Open(npu_only ? "timeline-npu" : "timeline", width, height);
  if (npu_only)
    s += Text(label_w, 16, fmt::format("the NPU's {} back to back: the {} stretches where the CPU ran (nodes, copies) "
                                       "and no NPU queue was busy are cut out (dashed lines)", Ms(total),
                                       busy.size() > 0 ? busy.size() - 1 : 0));
  else
    s += Text(label_w, 16, fmt::format("one inference, {} in all; rows: CPU threads (times {}), then each NPU core's "
                                       "load / exec / vector / store / prefetch queue", Ms(total),
                                       p.cpu_measured ? "measured" : "from the cost model"));
  s += TimeAxis(label_w, plot_w, top + rows.size() * row_h + 4, total, top);
  for (size_t k = 1; k < busy.size(); ++k) {
    const double x = label_w + plot_w * busy[k].at / total;
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#888\" stroke-dasharray=\"2 2\"/>\n",
                     x, top, top + rows.size() * row_h);
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const int track = rows[r];
    const double y = top + r * row_h;
    const int q = IsCpuTrack(track) ? -1 : SlotOfTrack(track);
    if (IsCpuTrack(track))
      s += Text(label_w - 6, y + row_h - 1, fmt::format("CPU thread {}", CpuThreadOf(track)), "end", " font-size=\"9\"");
    else if (q == 0 || rows.size() < 40)
      s += Text(label_w - 6, y + row_h - 1, fmt::format("core {} {}", CoreOfTrack(track), kQueueName[q]), "end",
                " font-size=\"9\"");
    if (q == 0) s += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#ccc\"/>\n", label_w - 100,
                                 width - 20, y, y);
    auto& list = by_track[track];
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->start_s < b->start_s; });
    // Merge slices closer than a pixel into one bar.
    double bx0 = -1, bx1 = -1;
    std::string colour;
    auto flush = [&] {
      if (bx0 < 0) return;
      s += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", bx0, y + 1,
                       std::max(bx1 - bx0, 0.6), row_h - 2, colour);
      bx0 = -1;
    };
    for (const Span* sp : list) {
      const double x0 = label_w + plot_w * at(sp->start_s) / total, x1 = label_w + plot_w * at(sp->end_s) / total;
      const std::string c = IsCpuTrack(track) ? (sp->category == "copy" ? "#999" : kCpu) : kQueueColour[q];
      if (bx0 >= 0 && x0 <= bx1 + 1 && c == colour) {
        bx1 = std::max(bx1, x1);
        continue;
      }
      flush();
      bx0 = x0, bx1 = x1, colour = c;
    }
    flush();
    s += "\n";
  }
  return s + "</svg>\n";
}

std::string RooflineSvg(const Profile& p, int width, int height) {
  struct Pt {
    double x, y, r;
    const OpProfile* o;
  };
  std::vector<Pt> pts;
  const double peak = p.peak_macs_per_cycle * p.clock_hz;  // MAC/s
  double xmin = 1e30, xmax = 0, tmax = 0;
  for (const OpProfile& o : p.ops) {
    if (!o.simulated || o.macs == 0 || o.cycles <= 0 || o.dram_bytes <= 0) continue;
    const double x = static_cast<double>(o.macs) / o.dram_bytes, y = o.macs / (o.cycles / p.clock_hz);
    pts.push_back({x, y, o.seconds, &o});
    xmin = std::min(xmin, x), xmax = std::max(xmax, x), tmax = std::max(tmax, o.seconds);
  }
  const double ridge = peak / p.dram_bytes_per_s;  // MACs per byte where the roofs meet
  xmin = std::pow(10, std::floor(std::log10(std::min(pts.empty() ? ridge / 10 : xmin, ridge / 10))));
  xmax = std::pow(10, std::ceil(std::log10(std::max(pts.empty() ? ridge * 10 : xmax, ridge * 10))));
  const double ymax = std::pow(10, std::ceil(std::log10(peak * 1.01)));
  double ymin = std::min(ymax / 1e4, xmin * p.dram_bytes_per_s);
  for (const Pt& q : pts) ymin = std::min(ymin, q.y);
  ymin = std::pow(10, std::floor(std::log10(ymin)));
  const double l = 70, r = width - 20.0, t = 30, b = height - 40.0;
  auto X = [&](double v) { return l + (r - l) * std::log10(v / xmin) / std::log10(xmax / xmin); };
  auto Y = [&](double v) { return b - (b - t) * std::log10(v / ymin) / std::log10(ymax / ymin); };
  std::string s = Open("roofline", width, height);
  s += Text(l, 18, fmt::format("roofs: peak {}, DRAM {}; a point per NPU layer, area ~ time",
                               Si(peak, "MAC/s"), Si(p.dram_bytes_per_s, "B/s")));
  for (double v = xmin; v <= xmax * 1.001; v *= 10) {
    s += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eee\"/>", X(v), t, b);
    s += Text(X(v), b + 14, fmt::format("{:g}", v), "middle");
  }
  for (double v = ymin; v <= ymax * 1.001; v *= 10) {
    s += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#eee\"/>", l, r, Y(v));
    s += Text(l - 4, Y(v) + 4, Si(v, ""), "end");
  }
  s += Text((l + r) / 2, height - 6, "arithmetic intensity (MACs per DRAM byte)", "middle");
  s += Text(14, (t + b) / 2, "achieved MAC/s", "middle", fmt::format(" transform=\"rotate(-90 14 {})\"", (t + b) / 2).c_str());
  // The roofs: bandwidth from xmin to the ridge, then compute.
  s += fmt::format("<polyline class=\"roof\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\" points=\"{:.1f},{:.1f} "
                   "{:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
                   X(xmin), Y(std::max(ymin, xmin * p.dram_bytes_per_s)), X(ridge), Y(peak), X(xmax), Y(peak));
  for (const Pt& q : pts) {
    const double rad = 2.5 + 9 * std::sqrt(q.r / std::max(tmax, 1e-15));
    s += fmt::format("<circle class=\"layer\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.55\" "
                     "stroke=\"{}\"><title>{} ({}): {}, {:.1f}% of peak, {:.1f} MACs/B</title></circle>\n",
                     X(q.x), Y(q.y), rad, kNpu, kNpu, EscapeXml(q.o->node), EscapeXml(q.o->op), Ms(q.o->seconds),
                     100 * q.y / peak, q.x);
  }
  return s + "</svg>\n";
}

std::string OccupancySvg(const Profile& p, int width) {
  const int panel_h = 90, gap = 34, l = 80;
  const double w = width - l - 20.0, total = std::max(p.latency_s, 1e-12);
  struct Panel {
    const char* title;
    const std::vector<CounterSample>* v;
    double limit;
    const char* unit;
    const char* colour;
  };
  const Panel panels[3] = {{"NPU shared SRAM occupancy", &p.sram, static_cast<double>(p.sram_bytes), "B", "#2f6fb0"},
                           {"activation arena occupancy", &p.arena, static_cast<double>(p.arena_bytes), "B", "#d9822b"},
                           {"DRAM bandwidth", &p.dram_bw, p.dram_bytes_per_s, "B/s", "#2e9e5b"}};
  std::string s = Open("occupancy", width, 3 * (panel_h + gap) + 20);
  for (int k = 0; k < 3; ++k) {
    const Panel& pn = panels[k];
    const double top = 20 + k * (panel_h + gap), bot = top + panel_h;
    double vmax = pn.limit;
    for (const auto& c : *pn.v) vmax = std::max(vmax, c.value);
    vmax = std::max(vmax, 1.0);
    auto Y = [&](double v) { return bot - panel_h * v / vmax; };
    s += Text(l, top - 6, fmt::format("{} (limit {})", pn.title, Si(pn.limit, pn.unit)));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"none\" stroke=\"#ddd\"/>\n", l, top, w, panel_h);
    s += Text(l - 4, top + 8, Si(vmax, pn.unit), "end");
    s += Text(l - 4, bot, "0", "end");
    std::vector<CounterSample> v = *pn.v;
    std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.t_s < b.t_s; });
    std::string pts = fmt::format("{:.1f},{:.1f}", static_cast<double>(l), bot);
    double last = 0;
    for (const auto& c : v) {
      const double x = l + w * std::clamp(c.t_s / total, 0.0, 1.0);
      pts += fmt::format(" {:.1f},{:.1f} {:.1f},{:.1f}", x, Y(last), x, Y(c.value));  // steps
      last = c.value;
    }
    pts += fmt::format(" {:.1f},{:.1f} {:.1f},{:.1f}", l + w, Y(last), l + w, bot);
    s += fmt::format("<polygon class=\"series\" points=\"{}\" fill=\"{}\" fill-opacity=\"0.35\" stroke=\"{}\"/>\n", pts,
                     pn.colour, pn.colour);
    s += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#c0392b\" stroke-dasharray=\"4 3\"/>\n",
                     l, l + w, Y(pn.limit), Y(pn.limit));
    if (k == 2) s += TimeAxis(l, w, bot, total, bot);
  }
  return s + "</svg>\n";
}

std::string BarsSvg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars, int width) {
  const int row = 13, label_w = 260;
  std::string s = Open("bars", width, static_cast<int>(bars.size()) * row + 30);
  s += Text(10, 14, title);
  double vmax = 1e-30;
  for (const Bar& b : bars) vmax = std::max(vmax, b.value);
  const double w = width - label_w - 90.0;
  for (size_t i = 0; i < bars.size(); ++i) {
    const double y = 22 + i * row;
    const std::string name = bars[i].label.size() > 40 ? ".." + bars[i].label.substr(bars[i].label.size() - 38) : bars[i].label;
    s += Text(label_w - 6, y + 10, name, "end", " font-size=\"10\"");
    const double bw = std::max(0.8, w * bars[i].value / vmax);
    s += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", label_w, y + 1, bw, row - 3,
                     bars[i].npu ? kNpu : kCpu);
    s += Text(label_w + bw + 4, y + 10, fmt::format("{:.3g} {}", bars[i].value, unit), "start", " font-size=\"10\"");
  }
  return s + "</svg>\n";
}

}  // namespace edgec::report
