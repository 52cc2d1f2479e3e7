// The profile of one run of a compiled model (`edgec profile`): per op and over time.
//
// Per op (one row per graph node, in order): the unit, its time (NPU: the simulator's span of
// its instructions / clock; CPU: the partitioner's cost model), its share of the latency,
// MACs, MAC utilization, DRAM bytes, copies between units, stall cycles by cause and the
// placement reason. Energy per op when the target gives energy figures (npu/target.h Energy).
//
// Over time (one inference, seconds from 0): the run is laid out in graph order the way the
// runtime runs it: a CPU node takes CPU thread 0 (the thread that runs the plan's steps) for
// its time, and each share of its kernel's parallel regions goes on the worker thread that
// ran it (when the run recorded threads: LayerRun::threads, measured or scaled to the cost
// model's time, cpu_thread_trace.h); an NPU segment, when its first
// node comes up, takes its copies into the NPU (CPU thread), then its simulated task with every
// instruction on its core's queue track (load, execute, vector, store, prefetch) and every DMA also on
// the DMA engine that carried it (per core, the first engine free at its start). Tokens between
// queues (SIGNAL -> the WAIT that took it, in the order the semaphore hands them out) are flows.
// Counters: SRAM occupancy (the segment's plan, per layer from its first instruction), arena
// occupancy (the bytes of the memory plan's values live at each node), DRAM bandwidth (DMA
// bytes per time bin). Guarded by tests/report/profile_trace_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/artifact_run.h"

namespace edgec::report {

struct OpProfile {
  std::string node, op, unit;  // unit "npu" / "cpu"
  bool simulated = false;      // NPU: cycles and DRAM figures from the simulator
  double seconds = 0, share = 0, start_s = 0;  // seconds: first to last instruction (NPU spans overlap)
  double attributed_s = 0;  // the latency attributed to it (runtime/artifact_run.h LayerRun); share = this / latency
  double cycles = 0;
  int64_t macs = 0;
  double utilization = 0;  // MACs / (cycles * peak MACs per cycle), NPU only
  int64_t dram_bytes = 0, onchip_bytes = 0, sram_peak = 0;
  int copies = 0;
  int64_t copy_bytes = 0;
  std::map<std::string, double> stalls;  // cycles by cause
  std::string reason;                    // placement reason
  double roofline_cycles = 0;
  bool compute_bound = false;
  double energy_uj = -1;  // -1: the target gives no energy figures
};

// One slice on a track. Tracks: CPU thread 0 (tid 0), CPU thread k > 0 (kCpuThreadBase + k),
// NPU core c queue q (tid 1 + 16c + q), core c DMA engine e (tid 1 + 16c + 4 + e).
struct Span {
  int track = 0;
  std::string name, category, layer;
  double start_s = 0, end_s = 0;
  int64_t bytes = 0;  // DMA: bytes moved
  double transfer_s = -1;  // DRAM DMA: when its bytes began to move (npu::TraceEvent::transfer_start)
};

struct TokenFlow {
  int from_track = 0, to_track = 0;
  double from_s = 0, to_s = 0;
};

struct CounterSample {
  double t_s = 0, value = 0;
};

struct Profile {
  std::string file, target;
  double clock_hz = 0, peak_macs_per_cycle = 0, dram_bytes_per_s = 0;
  int64_t sram_bytes = 0, arena_bytes = 0;
  int cores = 0, dma_engines = 0;
  int cpu_threads = 1;  // CPU threads with a track (the plan's thread count when not recorded)
  double latency_s = 0, npu_s = 0, cpu_s = 0, copy_s = 0, cache_s = 0;
  bool cpu_measured = false;  // cpu_s measured on this host, else the partitioner's cost model
  int npu_nodes = 0, cpu_nodes = 0;
  double energy_uj = -1;
  std::vector<OpProfile> ops;
  std::vector<std::pair<int, int>> edges;  // producer -> consumer, indices into ops (each tensor once)
  std::vector<Span> spans;
  std::vector<TokenFlow> flows;
  std::vector<CounterSample> sram, arena, dram_bw;  // bytes, bytes, bytes/s
  std::map<int, std::string> track_names;
  // Per-layer int8 error (node -> relative error) when given (`--error FILE.json`).
  std::map<std::string, double> error;
  // Weights kept in SRAM between calls (the run's resident_weight_* figures).
  int64_t resident_weight_bytes = 0, resident_weight_skipped = 0;
  std::vector<std::string> resident_weight_layers;
};

inline constexpr int kCpuTrack = 0;
inline constexpr int kCpuThreadBase = 1 << 20;
inline int CpuThreadTrack(int thread) { return thread == 0 ? kCpuTrack : kCpuThreadBase + thread; }
inline bool IsCpuTrack(int track) { return track == kCpuTrack || track >= kCpuThreadBase; }
inline int CpuThreadOf(int track) { return track == kCpuTrack ? 0 : track - kCpuThreadBase; }
// Per NPU core kTracksPerCore tracks: its queues (load, execute, vector, store, prefetch:
// npu::QueueKind), then its DMA engines. A queue waits for its own DMA (npu/sim.cc), so a core
// never has more transfers in flight than queues: its engine tracks never spill into the next
// core's (profile.cc asserts it).
inline constexpr int kTracksPerCore = 16;
inline constexpr int kQueueTracks = 5;
inline constexpr int kDmaTracks = kTracksPerCore - kQueueTracks;
inline int QueueTrack(int core, int queue) { return 1 + kTracksPerCore * core + queue; }
inline int DmaTrack(int core, int engine) { return 1 + kTracksPerCore * core + kQueueTracks + engine; }
// The NPU core of an NPU track, and its place among the core's tracks (a queue, then engines).
inline int CoreOfTrack(int track) { return (track - 1) / kTracksPerCore; }
inline int SlotOfTrack(int track) { return (track - 1) % kTracksPerCore; }
inline bool IsQueueTrack(int track) { return !IsCpuTrack(track) && SlotOfTrack(track) < kQueueTracks; }
inline bool IsDmaTrack(int track) { return !IsCpuTrack(track) && SlotOfTrack(track) >= kQueueTracks; }

// The profile of `r` (a --device npu-sim run of `a`); re-simulates every NPU segment (timing
// only, traced) for the timeline. `timeline` false: per-op rows only.
StatusOr<Profile> BuildProfile(const std::string& file, const LoadedArtifact& a, const ArtifactRunResult& r,
                               bool timeline = true);

// The `top` ops with the most attributed time, slowest first (ties in graph order); every op
// in graph order when top <= 0. The console table and the HTML report list these.
std::vector<const OpProfile*> SlowestOps(const Profile& p, int top);

// The per-op table (top `top` rows by time first when top > 0, else graph order) and totals.
std::string FormatProfile(const Profile& p, int top = 0);
nlohmann::json ProfileJson(const Profile& p);

}  // namespace edgec::report
