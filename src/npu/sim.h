// The NPU simulator: event-driven timing and functional execution of one instruction stream.
// It sees only the Program and the Target (never the Graph).
//
// Timing. Each core's five queues issue in order; an instruction starts when its queue is
// free and (for WAIT) a token is there, (for VEC) its vector core is free, (for DMA) the core
// has a free DMA engine. Costs:
//   MATMUL  ceil(k/R) * ceil(n/C) * (2R + C + m - 2) / int8_rate      (fill and drain included;
//           weight-stationary; output-stationary: ceil(m/R) * ceil(n/C) * (R + C + k - 2))
//   DMA     setup + latency + burst_bytes_moved / (share of DRAM bandwidth);
//           on-chip (SRAM <-> SRAM): setup + bytes / shared_sram.bandwidth_bytes_per_cycle
//   VEC     pipeline_latency + ceil(elements / lanes) * cycles_per_element(op)
//   SIGNAL  visible to WAITs token_latency cycles later
// DRAM bandwidth is shared equally between the DMA transfers active at each moment
// (processor sharing), so concurrent streams of many cores slow each other; a transfer of a
// prefetch queue (a segment's weight stream) takes only what the others leave, so the stream
// fills the DRAM's idle time without slowing the layers' own loads and stores (guarded by
// NpuSimTest.PrefetchYieldsTheDramToTheLayersLoads). A row of B bytes
// moves ceil(B / burst) whole bursts (burst efficiency). Tasks run one after another, each
// preceded by the dispatch overhead.
//
// Function. With `functional`, every instruction also acts on simulated DRAM, SRAM and
// accumulator memories: it reads its operands when it starts and writes its results when it
// ends, so a schedule whose tokens allow a race computes wrong numbers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/status.h"
#include "npu/isa.h"
#include "npu/target.h"

namespace edgec::npu {

// Cost of one instruction in isolation (DMA at the full DRAM bandwidth).
double MatMulCycles(const Target& t, int64_t m, int64_t k, int64_t n, bool fp16 = false);
double VecCycles(const Target& t, const Instr& in);
int64_t BurstBytes(const Target& t, const Instr& dma);  // bytes the bursts move
double DmaCycles(const Target& t, const Instr& dma);
// Array slots used by a MATMUL: ceil(k/R)*R * ceil(n/C)*C * m (mapping efficiency's denominator).
int64_t MappedMacs(const Target& t, int64_t m, int64_t k, int64_t n);
// One past the highest shared-SRAM byte an instruction (or a program) touches.
int64_t SramEnd(const Instr& in);
int64_t SramFootprint(const Program& p);

struct Stats {
  double cycles = 0;
  int64_t macs = 0;
  int64_t mapped_macs = 0;
  int64_t dram_read = 0, dram_written = 0;  // useful bytes
  int64_t dram_burst_bytes = 0;             // bytes the bursts moved
  int64_t onchip_bytes = 0;                 // bytes on-chip DMAs copied SRAM <-> SRAM
  int64_t sram_peak = 0;                    // highest SRAM byte any instruction touches
  int64_t instructions = 0, dmas = 0, matmuls = 0, vecs = 0, copies = 0, copy_bytes = 0;
  double compute_cycles = 0;                // sum of MATMUL busy cycles (all cores)
  // Stall cycles by cause (summed over queues): "exec waits for data", "load waits for a
  // free buffer", "vector core busy", "dma engine busy", "dram contention", "dispatch".
  std::map<std::string, double> stalls;
  // Busy cycles per queue kind, summed over cores.
  double busy[kNumQueues] = {};

  double mac_utilization(const Target& t) const;  // macs / (cycles * peak)
  double mapping_efficiency() const { return mapped_macs ? double(macs) / mapped_macs : 0; }
  // max(MACs / peak, DRAM bytes / bandwidth) in cycles, and which side bounds it.
  double roofline_cycles(const Target& t) const;
  bool compute_bound(const Target& t) const;
  void Add(const Stats& o);
};

struct SimOptions {
  bool functional = false;
  std::vector<uint8_t>* dram = nullptr;  // functional: the DRAM image (program.dram_bytes)
  bool trace = false;                    // record each instruction's start and end
  // functional: the shared SRAM kept between runs (resident weights); the run starts from
  // its contents and leaves them as the program does. nullptr: a zeroed SRAM per run.
  std::vector<uint8_t>* sram = nullptr;
};

struct TraceEvent {
  int instr = 0;  // index into program.instrs
  double start = 0, end = 0;
  // A DRAM DMA: when its bytes began to move (after setup and latency); -1 otherwise. The DRAM
  // channel moves bytes at its full bandwidth whenever some DMA is in this phase (sharing and
  // priority split it, never idle it).
  double transfer_start = -1;
};

// One layer of a segment program (Instr::layer): its instructions' statistics, and the span
// from the first start to the last end of its instructions that do work (not SIGNAL/WAIT),
// which is its `cycles` (layers may overlap in time, so they do not add up to the task).
// `attributed` splits the task's time among the layers instead: each interval goes in equal
// parts to the layers with an instruction running in it (a DMA in flight included), so the
// layers' attributed cycles add up to the cycles in which anything ran
// (SimTest.AttributedCyclesSplitOverlapsAndAddUp).
struct LayerSpan {
  Stats stats;
  double start = 0, end = 0;
  double attributed = 0;
  bool ran = false;
};

struct SimResult {
  Stats total;
  std::vector<Stats> tasks;  // one per task, in program order
  std::vector<LayerSpan> layers;  // one per layer index used (max Instr::layer + 1)
  std::vector<TraceEvent> trace;
};

StatusOr<SimResult> Simulate(const Program& p, const Target& t, const SimOptions& opt = {});

// Formats the per-task table (cycles, MACs, utilization, mapping, DRAM, SRAM peak, stalls,
// roofline bound).
std::string FormatStats(const Program& p, const Target& t, const SimResult& r);

}  // namespace edgec::npu
