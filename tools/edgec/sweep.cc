// edgec sweep (MODEL.onnx | --decoder CONFIG) --target T --set FIELD=V1,V2,... [--svg FILE]
// What-if: re-estimates the model for each value of one target field and prints a table
// (latency, MAC utilization, DRAM traffic) and an SVG plot of latency vs the value.
#include <fstream>
#include <sstream>

#include "npu/estimate.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct SweepFlags {
  std::string model, decoder, target = "default", svg;
  std::vector<std::string> sets, fixed, shapes;
};

struct Point {
  std::string label;
  double value = 0, ms = 0, util = 0;
  int64_t dram = 0;
};

std::string Svg(const std::string& field, const std::string& title, const std::vector<Point>& pts) {
  const double W = 640, H = 400, L = 70, R = 20, T = 40, B = 60;
  double ymax = 0;
  for (const Point& p : pts) ymax = std::max(ymax, p.ms);
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  const size_t n = pts.size();
  auto x = [&](size_t i) { return L + (n > 1 ? (W - L - R) * i / (n - 1) : (W - L - R) / 2); };
  auto y = [&](double v) { return T + (H - T - B) * (1 - v / ymax); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"14\">{}</text>\n",
      W, H, L, title);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", L, H - B, W - R, H - B);
  s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", L, T, L, H - B);
  for (int k = 0; k <= 4; ++k) {
    const double v = ymax * k / 4;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.3g}</text>\n", L - 6, y(v) + 4, v);
  }
  std::string path;
  for (size_t i = 0; i < n; ++i) {
    path += fmt::format("{}{:.1f},{:.1f}", i ? " L" : "M", x(i), y(pts[i].ms));
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#1f77b4\"/>\n", x(i), y(pts[i].ms));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x(i), H - B + 18, pts[i].label);
  }
  s += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", path);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2, H - 15, field);
  s += fmt::format("<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">latency (ms)</text>\n",
                   (T + H - B) / 2, (T + H - B) / 2);
  s += "</svg>\n";
  return s;
}

int SweepMain(const SweepFlags& f) {
  if (f.sets.size() != 1)
    return ReportError("sweep: give exactly one --set FIELD=V1,V2,... (use --fix for other overrides)");
  const std::string& spec = f.sets[0];
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) return ReportError(fmt::format("--set '{}': expected FIELD=V1,V2,...", spec));
  const std::string field = spec.substr(0, eq);
  std::vector<std::string> values;
  std::stringstream ss(spec.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');)
    if (!v.empty()) values.push_back(v);
  if (values.empty()) return ReportError(fmt::format("--set {}: no values", field));
  auto base = TargetFor(f.target, f.fixed);
  if (!base.ok()) return ReportError(base.status().message());
  auto layers = LayersFor(f.model, f.decoder, f.shapes, false, nullptr);
  if (!layers.ok()) return ReportError(layers.status().message());
  std::vector<Point> pts;
  fmt::print("{:<24} {:>12} {:>8} {:>14}\n", field, "latency ms", "util", "DRAM bytes");
  for (const std::string& v : values) {
    auto t = npu::ApplyOverride(*base, field + "=" + v);
    if (!t.ok()) return ReportError(t.status().message());
    auto e = npu::EstimateModel(*layers, *t);
    if (!e.ok()) {
      fmt::print("{:<24} {}\n", v, e.status().message());
      continue;
    }
    Point p{v, 0, e->total.cycles / t->clock_hz * 1e3, e->total.mac_utilization(*t),
            e->total.dram_read + e->total.dram_written};
    fmt::print("{:<24} {:>12.3f} {:>7.1f}% {:>14}\n", v, p.ms, 100 * p.util, p.dram);
    pts.push_back(p);
  }
  if (!f.svg.empty()) {
    std::ofstream out(f.svg);
    if (!out) return ReportError(fmt::format("{}: cannot write", f.svg));
    const std::string what = f.decoder.empty() ? f.model : "decoder " + f.decoder;
    out << Svg(field, fmt::format("{} on {}: latency vs {}", what, base->name, field), pts);
    fmt::print("wrote {}\n", f.svg);
  }
  return 0;
}

}  // namespace

VerbMain AddSweepVerb(CLI::App& app) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* sub = app.add_subcommand("sweep", "What-if: estimate latency over a list of values of one target field");
  sub->add_option("model", flags->model, "ONNX model (shapes only are used)");
  sub->add_option("--decoder", flags->decoder, "generate a decoder instead (see estimate)");
  sub->add_option("--target", flags->target, "target file or name")->capture_default_str();
  sub->add_option("--set", flags->sets, "FIELD=V1,V2,...: the field to sweep (units allowed, e.g. 256K,1M)");
  sub->add_option("--fix", flags->fixed, "FIELD=VALUE: other overrides, applied first");
  sub->add_option("--shape", flags->shapes, "NAME=1x3x224x224: bind an input's symbolic dims");
  sub->add_option("--svg", flags->svg, "write a plot of latency vs the value");
  return [flags] { return SweepMain(*flags); };
}

}  // namespace edgec::cli
