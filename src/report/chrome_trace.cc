// Chrome Trace Event Format (see chrome_trace.h).
#include "report/chrome_trace.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "support/status.h"

namespace edgec::report {
namespace {

constexpr int kCpuPid = 1, kNpuPid = 2;
int PidOf(int track) { return IsCpuTrack(track) ? kCpuPid : kNpuPid; }
double Us(double s) { return s * 1e6; }

}  // namespace

nlohmann::json ChromeTrace(const Profile& p) {
  using nlohmann::json;
  json ev = json::array();
  const char* source = p.cpu_measured ? "measured on this host" : "cost model, threads as run on this host";
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kCpuPid}, {"tid", 0},
                {"args", {{"name", fmt::format("CPU ({} thread(s); times: {})", p.cpu_threads, source)}}}});
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kNpuPid}, {"tid", 0},
                {"args", {{"name", "NPU (" + p.target + ")"}}}});
  for (const auto& [track, name] : p.track_names) {
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", PidOf(track)}, {"tid", track}, {"args", {{"name", name}}}});
    ev.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", PidOf(track)}, {"tid", track},
                  {"args", {{"sort_index", IsCpuTrack(track) ? CpuThreadOf(track) : track}}}});
  }
  // Slices per track in time order; a slice never starts before the previous one ended.
  std::map<int, std::vector<const Span*>> by_track;
  for (const Span& s : p.spans) by_track[s.track].push_back(&s);
  for (auto& [track, list] : by_track) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->start_s < b->start_s; });
    double last = 0;
    for (const Span* s : list) {
      const double b = std::max(Us(s->start_s), last), e = std::max(Us(s->end_s), b);
      json args = {{"layer", s->layer}};
      if (s->bytes) args["bytes"] = s->bytes;
      if (s->category == "cpu") args["source"] = p.cpu_measured ? "measured" : "cost model";
      ev.push_back({{"name", s->name}, {"cat", s->category}, {"ph", "B"}, {"ts", b}, {"pid", PidOf(track)},
                    {"tid", track}, {"args", args}});
      ev.push_back({{"name", s->name}, {"cat", s->category}, {"ph", "E"}, {"ts", e}, {"pid", PidOf(track)}, {"tid", track}});
      last = e;
    }
  }
  int id = 0;
  for (const TokenFlow& f : p.flows) {
    ++id;
    ev.push_back({{"name", "token"}, {"cat", "token"}, {"ph", "s"}, {"id", id}, {"ts", Us(f.from_s)},
                  {"pid", PidOf(f.from_track)}, {"tid", f.from_track}});
    ev.push_back({{"name", "token"}, {"cat", "token"}, {"ph", "f"}, {"bp", "e"}, {"id", id}, {"ts", Us(f.to_s)},
                  {"pid", PidOf(f.to_track)}, {"tid", f.to_track}});
  }
  auto counter = [&](const char* name, int pid, const char* key, const std::vector<CounterSample>& v, double scale) {
    std::vector<CounterSample> sorted = v;
    std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.t_s < b.t_s; });
    for (const CounterSample& c : sorted)
      ev.push_back({{"name", name}, {"ph", "C"}, {"ts", Us(c.t_s)}, {"pid", pid}, {"tid", 0}, {"args", {{key, c.value * scale}}}});
  };
  counter("SRAM occupancy", kNpuPid, "bytes", p.sram, 1);
  counter("DRAM bandwidth", kNpuPid, "GB/s", p.dram_bw, 1e-9);
  counter("arena occupancy", kCpuPid, "bytes", p.arena, 1);
  return json{{"traceEvents", ev}, {"displayTimeUnit", "ns"},
              {"otherData", {{"model", p.file}, {"target", p.target}, {"latency_ms", p.latency_s * 1e3}}}};
}

}  // namespace edgec::report
