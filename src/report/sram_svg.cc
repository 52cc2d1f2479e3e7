// SRAM occupancy and what-if plots (see sram_svg.h).
#include "report/sram_svg.h"

#include <algorithm>

#include <fmt/format.h>

#include "report/profile_svg.h"

namespace edgec::report {
namespace {

std::string Head(double w, double h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"70\" y=\"22\" font-size=\"14\">{}</text>\n",
      w, h, EscapeXml(title));
}

std::string Line(double x1, double y1, double x2, double y2, const char* stroke, const char* extra = "") {
  return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"{}/>\n", x1, y1, x2,
                     y2, stroke, extra);
}

}  // namespace

std::vector<SramStep> SramSteps(const artifact_io::Segment& s) {
  std::vector<SramStep> steps;
  for (size_t j = 0; j < s.layer_plan.size(); ++j) {
    const artifact_io::LayerSram& l = s.layer_plan[j];
    SramStep st{l.layer, l.work_bytes, 0, 0};
    for (const artifact_io::TensorSram& x : s.sram_plan)
      if (x.in_sram && x.first <= static_cast<int>(j) && x.last >= static_cast<int>(j)) st.resident += x.bytes;
    st.other = std::max<int64_t>(0, l.occupancy - st.tiles - st.resident);
    steps.push_back(st);
  }
  return steps;
}

std::string SramOccupancySvg(const std::string& title, const std::vector<SramStep>& steps, int64_t sram_bytes) {
  const double L = 70, R = 20, T = 40, B = 110, H = 420;
  const double bar = std::clamp(900.0 / std::max<size_t>(1, steps.size()), 4.0, 24.0);
  const double W = L + R + bar * steps.size();
  double ymax = static_cast<double>(sram_bytes);
  for (const SramStep& s : steps) ymax = std::max(ymax, double(s.tiles + s.resident + s.other));
  ymax *= 1.05;
  auto y = [&](double v) { return T + (H - T - B) * (1 - v / ymax); };
  std::string o = Head(W, H, title);
  o += Line(L, H - B, W - R, H - B, "black") + Line(L, T, L, H - B, "black");
  for (int k = 0; k <= 4; ++k) {
    const double v = ymax * k / 4;
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.2f} MiB</text>\n", L - 4, y(v) + 4,
                     v / (1 << 20));
  }
  const char* colour[] = {"#1f77b4", "#2ca02c", "#c7c7c7"};
  for (size_t i = 0; i < steps.size(); ++i) {
    const double x = L + bar * i;
    double base = 0;
    const int64_t parts[] = {steps[i].tiles, steps[i].resident, steps[i].other};
    for (int k = 0; k < 3; ++k) {
      if (parts[k] <= 0) continue;
      o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {} "
                       "B</title></rect>\n",
                       x + 0.5, y(base + parts[k]), bar - 1, y(base) - y(base + parts[k]), colour[k],
                       EscapeXml(steps[i].layer), parts[k]);
      base += parts[k];
    }
    if (steps.size() <= 80)
      o += fmt::format("<text transform=\"translate({:.1f},{}) rotate(60)\" font-size=\"8\">{}</text>\n",
                       x + bar / 2, H - B + 6, EscapeXml(steps[i].layer.substr(0, 28)));
  }
  o += Line(L, y(double(sram_bytes)), W - R, y(double(sram_bytes)), "#d62728", " stroke-dasharray=\"6 3\"");
  o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#d62728\">SRAM {} B</text>\n", L + 4, y(double(sram_bytes)) - 4,
                   sram_bytes);
  const char* names[] = {"working tiles", "tensors kept on chip", "prefetch: next layers' tiles and weights"};
  for (int k = 0; k < 3; ++k)
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                     L + 190 * k, H - 14, colour[k], L + 190 * k + 14, H - 5, names[k]);
  return o + "</svg>\n";
}

std::string SweepSvg(const std::string& field, const std::string& title, const std::vector<SweepPoint>& pts) {
  const double W = 640, H = 400, L = 70, R = 70, T = 40, B = 60;
  double ymax = 0, smax = 0;
  for (const SweepPoint& p : pts) {
    ymax = std::max(ymax, p.ms);
    smax = std::max(smax, double(p.spilled_bytes));
  }
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  smax = smax > 0 ? smax * 1.1 : 1;
  const size_t n = pts.size();
  auto x = [&](size_t i) { return L + (n > 1 ? (W - L - R) * i / (n - 1) : (W - L - R) / 2); };
  auto y = [&](double v, double top) { return T + (H - T - B) * (1 - v / top); };
  std::string o = Head(W, H, title);
  o += Line(L, H - B, W - R, H - B, "black") + Line(L, T, L, H - B, "black");
  for (int k = 0; k <= 4; ++k)
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.3g}</text>\n", L - 6, y(ymax * k / 4, ymax) + 4,
                     ymax * k / 4);
  const bool spills = std::any_of(pts.begin(), pts.end(), [](const SweepPoint& p) { return p.spilled_bytes >= 0; });
  std::string lat, sp;
  for (size_t i = 0; i < n; ++i) {
    lat += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", x(i), y(pts[i].ms, ymax));
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#1f77b4\"/>\n", x(i), y(pts[i].ms, ymax));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x(i), H - B + 18,
                     EscapeXml(pts[i].label));
    if (spills && pts[i].spilled_bytes >= 0)
      sp += fmt::format("{}{:.1f},{:.1f}", sp.empty() ? "M" : " L", x(i), y(double(pts[i].spilled_bytes), smax));
  }
  o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", lat);
  if (spills) {
    o += Line(W - R, T, W - R, H - B, "black");
    for (int k = 0; k <= 4; ++k)
      o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#ff7f0e\">{:.2f} MB</text>\n", W - R + 6,
                       y(smax * k / 4, smax) + 4, smax * k / 4 / 1e6);
    o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/>\n",
                     sp);
    for (size_t i = 0; i < n; ++i)
      if (pts[i].spilled_bytes == 0 && (i == 0 || pts[i - 1].spilled_bytes > 0)) {
        o += Line(x(i), T, x(i), H - B, "#2ca02c", " stroke-dasharray=\"2 2\"");
        o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#2ca02c\">activations fit</text>\n", x(i) + 4, T + 12);
        break;
      }
    o += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#ff7f0e\">dashed: bytes spilled to DRAM</text>\n", W - R - 180,
                     T - 6);
  }
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2, H - 15,
                   EscapeXml(field));
  o += fmt::format("<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">latency (ms)</text>\n",
                   (T + H - B) / 2, (T + H - B) / 2);
  return o + "</svg>\n";
}

}  // namespace edgec::report
