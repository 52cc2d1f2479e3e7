// The profile of a compiled model's run and its Chrome trace (report/profile.h,
// report/chrome_trace.h): the trace validates against the Trace Event Format (required
// fields, monotonic timestamps per thread, matched B/E, paired flows, counters), it has a
// track per core queue and per DMA engine with cores running at the same time, and the
// per-op rows agree with the run (shares add up; energy from the target's figures).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "report/chrome_trace.h"
#include "report/profile.h"
#include "report/profile_html.h"
#include "report/profile_svg.h"
#include "report_test_model.h"

namespace edgec::report {
namespace {

using nlohmann::json;

// Every violation of the format the trace viewers rely on; empty when valid.
std::vector<std::string> ValidateTrace(const json& trace) {
  std::vector<std::string> err;
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return {"no traceEvents array"};
  std::map<std::pair<int, int>, double> last_ts;
  std::map<std::pair<int, int>, std::vector<std::string>> open;
  std::map<std::string, double> last_counter;
  std::map<int, int> flow_starts, flow_ends;
  for (const json& e : trace["traceEvents"]) {
    for (const char* k : {"name", "ph", "pid"})
      if (!e.contains(k)) err.push_back(std::string("event without ") + k + ": " + e.dump());
    if (!err.empty()) return err;
    const std::string ph = e["ph"];
    if (ph == "M") continue;
    if (!e.contains("ts") || !e["ts"].is_number() || !e.contains("tid")) {
      err.push_back("event without ts/tid: " + e.dump());
      continue;
    }
    const double ts = e["ts"];
    const std::pair<int, int> thread{e["pid"].get<int>(), e["tid"].get<int>()};
    if (ph == "B" || ph == "E") {
      if (last_ts.count(thread) && ts < last_ts[thread]) err.push_back("time goes back on a thread: " + e.dump());
      last_ts[thread] = ts;
      if (ph == "B") {
        open[thread].push_back(e["name"]);
      } else if (open[thread].empty() || open[thread].back() != e["name"].get<std::string>()) {
        err.push_back("E without its B: " + e.dump());
      } else {
        open[thread].pop_back();
      }
    } else if (ph == "C") {
      const std::string key = std::to_string(thread.first) + "/" + e["name"].get<std::string>();
      if (last_counter.count(key) && ts < last_counter[key]) err.push_back("counter goes back: " + e.dump());
      last_counter[key] = ts;
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) err.push_back("counter without value");
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id")) err.push_back("flow without id: " + e.dump());
      else (ph == "s" ? flow_starts : flow_ends)[e["id"].get<int>()]++;
    } else {
      err.push_back("unexpected phase " + ph);
    }
  }
  for (auto& [thread, stack] : open)
    if (!stack.empty()) err.push_back("B without E on tid " + std::to_string(thread.second));
  for (auto& [id, n] : flow_starts)
    if (n != 1 || flow_ends[id] != 1) err.push_back("flow " + std::to_string(id) + " not paired");
  for (auto& [id, n] : flow_ends)
    if (!flow_starts.count(id)) err.push_back("flow " + std::to_string(id) + " ends without a start");
  return err;
}

struct ProfiledRun {
  Graph g;
  std::unique_ptr<testing_report::CompiledArtifact> c;
  ArtifactRunResult run;
  Profile profile;
};

std::unique_ptr<ProfiledRun> ProfileSmallCnn(const npu::Target& t, const std::string& tag) {
  auto pr = std::make_unique<ProfiledRun>();
  pr->g = testing_report::IntegerCnn();
  pr->c = testing_report::CompileAndLoad(pr->g, t, tag);
  if (!pr->c) return nullptr;
  std::map<std::string, Tensor> in = {{"x", testing_quant::Normal({1, 16, 24, 24}, 5)}};
  auto r = RunArtifact(pr->c->loaded, ArtifactDevice::kNpuSim, in);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return nullptr;
  pr->run = std::move(*r);
  auto p = BuildProfile("small.edgec", pr->c->loaded, pr->run);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return nullptr;
  pr->profile = std::move(*p);
  return pr;
}

TEST(ProfileTrace, TraceValidatesWithQueuesEnginesFlowsAndCounters) {
  auto pr = ProfileSmallCnn(npu::DefaultTarget(), "trace");
  ASSERT_TRUE(pr);
  const Profile& p = pr->profile;
  const json trace = ChromeTrace(p);
  const auto errors = ValidateTrace(trace);
  EXPECT_TRUE(errors.empty()) << errors.size() << " error(s), first: " << errors[0];
  // Tracks: the CPU thread, the queues of several cores, DMA engines.
  std::set<int> cores, queues;
  bool engine = false, cpu = false;
  std::map<std::string, int> counters;
  int flows = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      const std::string n = e["args"]["name"];
      cpu |= n == "CPU thread 0";
      engine |= n.find("DMA engine") != std::string::npos;
    }
    if (e["ph"] == "B" && e["pid"] == 2) {
      const int tid = e["tid"];
      if (IsQueueTrack(tid)) cores.insert(CoreOfTrack(tid)), queues.insert(SlotOfTrack(tid));
    }
    if (e["ph"] == "C") counters[e["name"]]++;
    flows += e["ph"] == "s";
  }
  EXPECT_TRUE(cpu);
  EXPECT_TRUE(engine);
  EXPECT_GE(cores.size(), 2u);
  EXPECT_GE(queues.size(), 4u);  // load, execute, vector, store (prefetch when weights stream)
  EXPECT_GT(flows, 0);
  EXPECT_GT(counters["SRAM occupancy"], 1);
  EXPECT_GT(counters["arena occupancy"], 1);
  EXPECT_GT(counters["DRAM bandwidth"], 1);
  // The DRAM counter is the channel's occupancy: never above its bandwidth, busy somewhere.
  double most = 0;
  for (const CounterSample& c : p.dram_bw) most = std::max(most, c.value);
  EXPECT_GT(most, 0);
  EXPECT_LE(most, p.dram_bytes_per_s * (1 + 1e-9));
  // Two cores' execute queues overlap in time (the layers are split over cores).
  bool parallel = false;
  for (const Span& a : p.spans)
    for (const Span& b : p.spans)
      if (!parallel && a.category == "MATMUL" && b.category == "MATMUL" && CoreOfTrack(a.track) != CoreOfTrack(b.track) &&
          a.start_s < b.end_s && b.start_s < a.end_s)
        parallel = true;
  EXPECT_TRUE(parallel);
}

// With two CPU threads the trace has a track per thread: each share of a CPU node's parallel
// regions that ran on the worker is a slice on "CPU thread 1" inside its node's slice on
// thread 0, whether the times are measured or the cost model's (scaled).
TEST(ProfileTrace, PerThreadCpuTracks) {
  Graph g = testing_report::IntegerCnn();
  partition::PartitionOptions o = testing_report::SlowCpu();
  for (const Node* n : g.nodes())  // the residual add on the CPU: 36864 elements, two threads' worth
    if (n->op() == OpKind::kQLinearAdd) o.pins[n->name()] = artifact_io::Unit::kCpu;
  ASSERT_EQ(o.pins.size(), 1u);
  auto c = testing_report::CompileAndLoad(g, npu::DefaultTarget(), "threads", o);
  ASSERT_TRUE(c);
  const std::string pinned = o.pins.begin()->first;
  std::map<std::string, Tensor> in = {{"x", testing_quant::Normal({1, 16, 24, 24}, 5)}};
  for (bool measured : {true, false}) {
    ArtifactRunOptions ro;
    ro.threads = 2;
    ro.record_threads = true;
    ro.measure_cpu = measured;
    auto r = RunArtifact(c->loaded, ArtifactDevice::kNpuSim, in, ro);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto p = BuildProfile("threads.edgec", c->loaded, *r);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->cpu_threads, 2);
    const json trace = ChromeTrace(*p);
    const auto errors = ValidateTrace(trace);
    EXPECT_TRUE(errors.empty()) << errors.size() << " error(s), first: " << errors[0];
    std::map<int, std::string> cpu_tracks;
    for (const json& e : trace["traceEvents"])
      if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 1) cpu_tracks[e["tid"]] = e["args"]["name"];
    ASSERT_EQ(cpu_tracks.size(), 2u);
    EXPECT_EQ(cpu_tracks[kCpuTrack], "CPU thread 0");
    EXPECT_EQ(cpu_tracks[CpuThreadTrack(1)], "CPU thread 1");
    // Thread 1's slices: on the CPU process, inside their node's slice on thread 0.
    std::map<std::string, std::pair<double, double>> node_span;
    for (const Span& s : p->spans)
      if (s.track == kCpuTrack && s.category == "cpu") node_span[s.layer] = {s.start_s, s.end_s};
    int worker = 0, on_pinned = 0;
    for (const Span& s : p->spans) {
      if (s.track != CpuThreadTrack(1)) continue;
      ++worker;
      on_pinned += s.layer == pinned;
      ASSERT_TRUE(node_span.count(s.layer)) << s.layer;
      EXPECT_GE(s.start_s, node_span[s.layer].first - 1e-12) << s.layer;
      EXPECT_LE(s.end_s, node_span[s.layer].second + 1e-12) << s.layer;
    }
    EXPECT_GT(on_pinned, 0) << (measured ? "measured" : "cost model");
    int trace_slices = 0;
    for (const json& e : trace["traceEvents"])
      if (e["ph"] == "B" && e["pid"] == 1 && e["tid"] == CpuThreadTrack(1)) {
        ++trace_slices;
        EXPECT_EQ(e["args"]["source"], measured ? "measured" : "cost model");
      }
    EXPECT_EQ(trace_slices, worker);
  }
}

// The report's NPU-only timeline cuts out the CPU's stretches between NPU segments: with the
// residual add on the CPU the small CNN has two NPU tasks, so one cut; no CPU rows.
TEST(ProfileTrace, NpuOnlyTimelineCutsTheCpuStretches) {
  Graph g = testing_report::IntegerCnn();
  partition::PartitionOptions o = testing_report::SlowCpu();
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQLinearAdd) o.pins[n->name()] = artifact_io::Unit::kCpu;
  auto c = testing_report::CompileAndLoad(g, npu::DefaultTarget(), "npu_only", o);
  ASSERT_TRUE(c);
  int tasks = 0;
  for (const auto& s : c->loaded.meta.segments) tasks += s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty();
  ASSERT_EQ(tasks, 2);
  std::map<std::string, Tensor> in = {{"x", testing_quant::Normal({1, 16, 24, 24}, 5)}};
  auto r = RunArtifact(c->loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto p = BuildProfile("npu_only.edgec", c->loaded, *r);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::string svg = TimelineSvg(*p, 1180, /*npu_only=*/true);
  int cuts = 0;
  for (size_t at = svg.find("stroke-dasharray=\"2 2\""); at != std::string::npos; at = svg.find("stroke-dasharray=\"2 2\"", at + 1))
    ++cuts;
  EXPECT_EQ(cuts, tasks - 1);
  EXPECT_EQ(svg.find("CPU thread"), std::string::npos);
  EXPECT_NE(svg.find("core 0 load"), std::string::npos);
  EXPECT_NE(svg.find("class=\"timeline-npu\""), std::string::npos);
  // The whole-run timeline has none of those cuts.
  EXPECT_EQ(TimelineSvg(*p, 1180).find("stroke-dasharray=\"2 2\""), std::string::npos);
}

// edge-default with vector cores that take no f32: the model's float boundary stays on the
// CPU, so the run has CPU rows and a CPU thread in the trace.
npu::Target WithCpuBoundary() {
  npu::Target t = npu::DefaultTarget();
  t.vector_cores.dtype_rates.erase("f32");
  return t;
}

TEST(ProfileTrace, ValidatorCatchesBrokenTraces) {
  auto pr = ProfileSmallCnn(WithCpuBoundary(), "broken");
  ASSERT_TRUE(pr);
  json trace = ChromeTrace(pr->profile);
  auto& ev = trace["traceEvents"];
  // Drop the first E: an unmatched B.
  json no_end = trace;
  for (size_t i = 0; i < ev.size(); ++i)
    if (ev[i]["ph"] == "E") {
      no_end["traceEvents"].erase(i);
      break;
    }
  EXPECT_FALSE(ValidateTrace(no_end).empty());
  // A slice moved before its thread's previous one.
  json back = trace;
  int seen = 0;
  for (auto& e : back["traceEvents"])
    if (e["ph"] == "B" && e["tid"] == 0 && ++seen == 2) e["ts"] = -1.0;
  EXPECT_FALSE(ValidateTrace(back).empty());
  // A flow without its end.
  json half = trace;
  for (size_t i = 0; i < half["traceEvents"].size(); ++i)
    if (half["traceEvents"][i]["ph"] == "f") {
      half["traceEvents"].erase(i);
      break;
    }
  EXPECT_FALSE(ValidateTrace(half).empty());
}

TEST(ProfileTrace, RowsAgreeWithTheRun) {
  auto pr = ProfileSmallCnn(WithCpuBoundary(), "rows");
  ASSERT_TRUE(pr);
  const Profile& p = pr->profile;
  ASSERT_EQ(p.ops.size(), pr->run.layers.size());
  double npu_nodes = 0, cycles = 0, shares = 0;
  bool cpu_reason = false;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    EXPECT_EQ(p.ops[i].node, pr->run.layers[i].node);
    EXPECT_NEAR(p.ops[i].share, pr->run.layers[i].attributed_s / pr->run.latency_s(), 1e-12);
    EXPECT_LE(p.ops[i].attributed_s, p.ops[i].seconds * (1 + 1e-9)) << p.ops[i].node;  // within its span
    shares += p.ops[i].share;
    npu_nodes += p.ops[i].unit == "npu";
    if (p.ops[i].unit == "cpu") cpu_reason |= !p.ops[i].reason.empty();
    if (p.ops[i].simulated) cycles = std::max(cycles, p.ops[i].cycles);
  }
  EXPECT_GT(npu_nodes, 3);
  // The attributed times add up: at most the latency (the dispatch and the cache steps belong to
  // no node), and most of it.
  EXPECT_LE(shares, 1 + 1e-9);
  EXPECT_GT(shares, 0.5);
  EXPECT_TRUE(cpu_reason);
  EXPECT_GT(cycles, 0);
  // The timeline's NPU slices end within the latency; no energy without figures.
  for (const Span& s : p.spans) EXPECT_LE(s.end_s, p.latency_s * (1 + 1e-9)) << s.name;
  EXPECT_LT(p.energy_uj, 0);
  const json j = ProfileJson(p);
  EXPECT_EQ(j["ops"].size(), p.ops.size());
  EXPECT_FALSE(j.contains("energy_uj"));
}

TEST(ProfileTrace, EnergyFromTheTargetsFigures) {
  auto t = npu::ApplyOverrides(npu::DefaultTarget(), {"energy.pj_per_mac=0.25", "energy.pj_per_dram_byte=20",
                                                      "energy.pj_per_sram_byte=1", "energy.cpu_pj_per_mac=4"});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto pr = ProfileSmallCnn(*t, "energy");
  ASSERT_TRUE(pr);
  double sum = 0;
  for (const OpProfile& o : pr->profile.ops) {
    const double want = o.unit == "cpu" ? o.macs * 4e-6 : (o.macs * 0.25 + o.dram_bytes * 20.0 + o.onchip_bytes * 1.0) * 1e-6;
    EXPECT_NEAR(o.energy_uj, want, 1e-9) << o.node;
    sum += o.energy_uj;
  }
  EXPECT_GT(sum, 0);
  EXPECT_NEAR(pr->profile.energy_uj, sum, 1e-9);
  // The target's energy figures survive the artifact (its target JSON).
  EXPECT_EQ(pr->c->loaded.target.energy.pj_per_dram_byte, 20);
  const std::string html = ProfileHtml(pr->profile);
  EXPECT_NE(html.find("Energy per layer"), std::string::npos);
}

// The arena plot is the union of the live values' planned bytes: views and in-place outputs
// share their source's bytes, so no step exceeds the plan's arena.
TEST(ProfileTrace, ArenaOccupancyStaysWithinThePlan) {
  for (const char* name : {"edge-default", "edge-mcu"}) {
    auto target = npu::LoadTarget(name);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    const npu::Target& t = *target;
    auto pr = ProfileSmallCnn(t, std::string("arena_") + name);
    ASSERT_TRUE(pr);
    ASSERT_FALSE(pr->profile.arena.empty());
    double peak = 0;
    for (const auto& s : pr->profile.arena) peak = std::max(peak, s.value);
    EXPECT_GT(peak, 0);
    EXPECT_LE(peak, static_cast<double>(pr->profile.arena_bytes)) << t.name;
  }
}

}  // namespace
}  // namespace edgec::report

