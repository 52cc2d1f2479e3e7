// The table `edgec run` prints for a compiled model: one row per layer (span and attributed
// cycles, MACs,
// utilization, DRAM bytes, stalls, copies, roofline), the NPU total against its lower bound,
// the CPU part, the copies and cache steps between units, and the simulated latency.
#include "runtime/artifact_run.h"

#include <algorithm>

#include <fmt/ranges.h>

namespace edgec {

std::string FormatArtifactRun(const LoadedArtifact& a, const ArtifactRunResult& r) {
  const npu::Target& t = a.target;
  std::string s = fmt::format("{:<34} {:<12} {:<4} {:>9} {:>9} {:>11} {:>6} {:>6} {:>10} {:>9} {:>9} {:<24} {:>9} {:>15}\n",
                              "layer", "op", "unit", "span cyc", "time cyc", "MACs", "util", "map", "DRAM B", "SRAM pk",
                              "stalls", "top stall", "copies", "roofline");
  for (const LayerRun& l : r.layers) {
    std::string name = l.node.size() > 34 ? ".." + l.node.substr(l.node.size() - 32) : l.node;
    std::string copies = l.copies ? fmt::format("{}/{}B", l.copies, l.copy_bytes) : "-";
    if (!l.simulated) {
      s += fmt::format("{:<34} {:<12} {:<4} {:>9} {:>9} {:>11} {:>6} {:>6} {:>10} {:>9} {:>9} {:<24} {:>9} {:>15}\n", name,
                       l.op.substr(0, 12), artifact_io::UnitName(l.unit), "-", "-", l.macs ? std::to_string(l.macs) : "-",
                       "-", "-", "-", "-", "-",
                       fmt::format("cpu {} {:.4f} ms", r.cpu_measured ? "took" : "est", l.seconds * 1e3), copies, "-");
      continue;
    }
    const npu::Stats& st = l.stats;
    double stall = 0, top = 0;
    std::string top_name = "-";
    for (auto& [k, v] : st.stalls) {
      stall += v;
      if (v > top) top = v, top_name = k;
    }
    // Layers without MACs (adds, pools, views) have no utilization or mapping to show.
    auto pct = [&](double v) { return st.macs ? fmt::format("{:.1f}%", 100 * v) : std::string("-"); };
    const std::string bound = st.cycles == 0 ? "view" : st.compute_bound(t) ? "compute" : "memory";
    s += fmt::format("{:<34} {:<12} {:<4} {:>9.0f} {:>9.0f} {:>11} {:>6} {:>6} {:>10} {:>9} {:>9.0f} {:<24} {:>9} {:>7.0f} {:<7}\n",
                     name, l.op.substr(0, 12), "npu", st.cycles, l.attributed_s * t.clock_hz, st.macs,
                     pct(st.mac_utilization(t)),
                     pct(st.mapping_efficiency()), st.dram_read + st.dram_written, st.sram_peak, stall,
                     top_name.substr(0, 24), copies, st.roofline_cycles(t), bound);
  }
  const npu::Stats& tot = r.npu_total;
  if (tot.cycles > 0)
    s += "(span cyc: a layer's first to last instruction; layers overlap as weights stream in ahead and tiles "
         "pipeline. time cyc: the cycles attributed to it, the layers running at once splitting each interval, its "
         "copies included; they add up.)\n";
  s += fmt::format("NPU: {:.0f} cycles = {:.3f} ms at {:.2f} GHz, {} MACs, MAC utilization {:.1f}%, mapping {:.1f}%, "
                   "DRAM {} B read + {} B written, SRAM peak {} B, roofline {:.3f} ms ({}-bound)\n",
                   tot.cycles, r.npu_s * 1e3, t.clock_hz / 1e9, tot.macs, 100 * tot.mac_utilization(t),
                   100 * tot.mapping_efficiency(), tot.dram_read, tot.dram_written, tot.sram_peak,
                   tot.roofline_cycles(t) / t.clock_hz * 1e3, tot.compute_bound(t) ? "compute" : "memory");
  if (!tot.stalls.empty()) {
    s += "NPU stall cycles by cause (summed over every queue of every core, as the stalls column):";
    for (auto& [k, v] : tot.stalls) s += fmt::format("  {} {:.0f}", k, v);
    s += "\n";
  }
  {
    // The NPU part's lower bound: MAC array at peak, vector cores at peak, or the DRAM moving
    // the constants (weights, parameters) and the segments' inputs and outputs once.
    const double mac = tot.macs / t.peak_int8_macs_per_cycle();
    const double vec = tot.busy[static_cast<int>(npu::QueueKind::kVector)] / std::max(1, t.vector_cores.count);
    const double dram = (r.npu_const_bytes + r.npu_io_bytes) / t.dram_bytes_per_cycle();
    const double bound = std::max({mac, vec, dram});
    if (tot.cycles > 0)
      s += fmt::format("NPU lower bound: {:.3f} ms = max(MAC array {:.3f} ms, vector {:.3f} ms, DRAM {:.3f} ms for {} B "
                       "of constants + {} B in/out); NPU time / bound = {:.2f}\n",
                       bound / t.clock_hz * 1e3, mac / t.clock_hz * 1e3, vec / t.clock_hz * 1e3,
                       dram / t.clock_hz * 1e3, r.npu_const_bytes, r.npu_io_bytes, bound > 0 ? tot.cycles / bound : 0);
  }
  if (r.resident_weight_bytes > 0)
    s += fmt::format("NPU resident weights: {} B of {} layer(s) kept in SRAM between calls ({}); {}\n",
                     r.resident_weight_bytes, r.resident_weight_layers.size(),
                     fmt::join(r.resident_weight_layers, ", "),
                     r.resident_weight_skipped > 0
                         ? fmt::format("this call skipped their load: {} B of DRAM reads saved", r.resident_weight_skipped)
                         : std::string("this call loaded them (later calls of the session skip it)"));
  if (r.cpu_measured)
    s += fmt::format("CPU: {:.3f} ms measured on this host (fast kernels{}, after a warm-up run; the partitioner's "
                     "cost model says {:.3f} ms)",
                     r.cpu_s * 1e3, r.cpu_threads ? fmt::format(", {} thread(s)", r.cpu_threads) : "",
                     r.cpu_model_s * 1e3);
  else
    s += fmt::format("CPU: {:.3f} ms by the partitioner's cost model (the reference kernels ran)", r.cpu_s * 1e3);
  s += fmt::format("; copies between units: {} ({} B, {:.3f} ms)\n", r.copies, r.copy_bytes, r.copy_s * 1e3);
  if (r.cache_steps[0] + r.cache_steps[1] + r.cache_steps[2] > 0)
    s += fmt::format("cache maintenance at CPU <-> NPU hand-overs: {} flush(es), {} invalidate(s), {} barrier(s), "
                     "{:.3f} ms\n",
                     r.cache_steps[0], r.cache_steps[1], r.cache_steps[2], r.cache_s * 1e3);
  s += fmt::format("activation memory plan: {} value(s) in one arena of {} B\n", a.meta.values.size(),
                   a.meta.arena_bytes);
  s += fmt::format("simulated latency: {:.3f} ms\n", r.latency_s() * 1e3);
  return s;
}

}  // namespace edgec
