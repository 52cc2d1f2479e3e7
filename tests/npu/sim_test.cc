// Simulator timing invariants: cost formulas, mapping efficiency, buffering speedup,
// dispatch overhead, shared DRAM bandwidth, burst efficiency, tokens across cores, the
// roofline bound; and the tiler (fits, streams weights once, heuristic within 5% of
// exhaustive search).
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "npu/sim.h"
#include "npu/tiler.h"

namespace edgec::npu {
namespace {

Instr Sig(int core, QueueKind q, int sem) { return Instr{.op = Opcode::kSignal, .core = uint8_t(core), .queue = q, .sem = sem}; }
Instr Wt(int core, QueueKind q, int sem) { return Instr{.op = Opcode::kWait, .core = uint8_t(core), .queue = q, .sem = sem}; }
Instr MatMul(int core, int m, int k, int n) {
  Instr in{.op = Opcode::kMatMul, .core = uint8_t(core), .queue = QueueKind::kExecute};
  in.m = m; in.k = k; in.n = n; in.a_stride = k; in.b_stride = n; in.acc_stride = 4 * n;
  return in;
}
Instr Dma(int core, bool load, int64_t rows, int row_bytes) {
  Instr in{.op = load ? Opcode::kDmaLoad : Opcode::kDmaStore, .core = uint8_t(core),
           .queue = load ? QueueKind::kLoad : QueueKind::kStore};
  in.row_bytes = in.sram_row_bytes = row_bytes;
  in.ndims = 1;
  in.dims[0] = {static_cast<int32_t>(rows), row_bytes, row_bytes, 0, static_cast<int32_t>(rows)};
  return in;
}

Program OneTask(std::vector<Instr> body, int sems = 4) {
  Program p;
  p.semaphores = sems;
  p.task_names = {"t"};
  p.instrs.push_back({.op = Opcode::kTaskBegin});
  p.instrs.insert(p.instrs.end(), body.begin(), body.end());
  p.instrs.push_back({.op = Opcode::kTaskEnd});
  return p;
}

double Cycles(const Program& p, const Target& t = DefaultTarget()) {
  auto r = Simulate(p, t);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->total.cycles : 0;
}

TEST(NpuSimTest, MatMulCostFormula) {
  const Target& t = DefaultTarget();
  // ceil(k/R) * ceil(n/C) * (2R + C + m - 2) with R = 128, C = 32.
  EXPECT_EQ(MatMulCycles(t, 100, 64, 32), 1 * 1 * (256 + 32 + 100 - 2));
  EXPECT_EQ(MatMulCycles(t, 7, 300, 70), 3 * 3 * (256 + 32 + 7 - 2));
  const double c = Cycles(OneTask({MatMul(0, 100, 300, 70)}));
  EXPECT_DOUBLE_EQ(c, t.dispatch_overhead_cycles + MatMulCycles(t, 100, 300, 70));
}

// Two layers: layer 0 a matmul on core 0, layer 1 two matmuls on core 1 starting with it, so
// they overlap for the first matmul's time m0 and layer 1 runs alone for its second, m1. The
// overlap splits in halves: layer 0 gets m0 / 2, layer 1 m0 / 2 + m1; together they are the
// task's cycles without the dispatch, while each span is the full m0 and m0 + m1.
TEST(NpuSimTest, AttributedCyclesSplitOverlapsAndAddUp) {
  const Target& t = DefaultTarget();
  Instr a = MatMul(0, 100, 256, 64), b1 = MatMul(1, 100, 256, 64), b2 = MatMul(1, 40, 128, 32);
  a.layer = 0;
  b1.layer = b2.layer = 1;
  auto r = Simulate(OneTask({a, b1, b2}), t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->layers.size(), 2u);
  const double m0 = MatMulCycles(t, 100, 256, 64), m1 = MatMulCycles(t, 40, 128, 32);
  EXPECT_DOUBLE_EQ(r->layers[0].stats.cycles, m0);
  EXPECT_DOUBLE_EQ(r->layers[1].stats.cycles, m0 + m1);
  EXPECT_DOUBLE_EQ(r->layers[0].attributed, m0 / 2);
  EXPECT_DOUBLE_EQ(r->layers[1].attributed, m0 / 2 + m1);
  EXPECT_DOUBLE_EQ(r->layers[0].attributed + r->layers[1].attributed, r->total.cycles - t.dispatch_overhead_cycles);
}

TEST(NpuSimTest, MappingEfficiencyOnTheArrayRows) {
  const std::vector<std::pair<int, double>> cases = {{16, 0.125}, {32, 0.25}, {64, 0.5}, {128, 1.0}, {129, 129.0 / 256}};
  for (auto [k, want] : cases) {
    auto r = Simulate(OneTask({MatMul(0, 64, k, 32)}), DefaultTarget());
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR(r->total.mapping_efficiency(), want, 1e-12) << "K=" << k;
  }
  EXPECT_NEAR(129.0 / 256, 0.504, 0.001);
}

// A loop of `iters` tiles whose buffers live from load to store: `slots` tokens circulate
// free -> load -> full -> exec -> done -> store -> free.
Program TiledLoop(int iters, int slots, int load_bytes, int k, int store_bytes) {
  std::vector<Instr> b;
  for (int s = 0; s < slots; ++s) b.push_back(Sig(0, QueueKind::kStore, 0));
  for (int i = 0; i < iters; ++i) {
    b.push_back(Wt(0, QueueKind::kLoad, 0));
    b.push_back(Dma(0, true, 1, load_bytes));
    b.push_back(Sig(0, QueueKind::kLoad, 1));
    b.push_back(Wt(0, QueueKind::kExecute, 1));
    b.push_back(MatMul(0, 64, k, 32));
    b.push_back(Sig(0, QueueKind::kExecute, 2));
    b.push_back(Wt(0, QueueKind::kStore, 2));
    b.push_back(Dma(0, false, 1, store_bytes));
    b.push_back(Sig(0, QueueKind::kStore, 0));
  }
  return OneTask(b);
}

TEST(NpuSimTest, BufferingSpeedupFollowsStageTimes) {
  auto target = ApplyOverrides(DefaultTarget(), {"dispatch_overhead_cycles=0", "token_latency_cycles=0"});
  ASSERT_TRUE(target.ok());
  const Target& t = *target;
  const int iters = 200;
  struct Shape { int load, k, store, slots; };
  // Compute-dominated (C >= L + S: two slots reach the bound) and balanced (three slots).
  for (Shape s : {Shape{128, 1024, 128, 2}, Shape{128, 256, 128, 3}, Shape{4096, 128, 2048, 3}}) {
    const double L = DmaCycles(t, Dma(0, true, 1, s.load));
    const double C = MatMulCycles(t, 64, s.k, 32);
    const double S = DmaCycles(t, Dma(0, false, 1, s.store));
    const double single = Cycles(TiledLoop(iters, 1, s.load, s.k, s.store), t);
    const double multi = Cycles(TiledLoop(iters, s.slots, s.load, s.k, s.store), t);
    EXPECT_NEAR(single, iters * (L + C + S), 1e-6 * single);
    const double want = (L + C + S) / std::max({L, C, S});
    EXPECT_NEAR(single / multi, want, 0.02 * want) << "L " << L << " C " << C << " S " << S;
  }
}

TEST(NpuSimTest, TinyTasksCostTheirDispatches) {
  const Target& t = DefaultTarget();
  Program p;
  p.semaphores = 1;
  const int n = 500;
  for (int i = 0; i < n; ++i) {
    p.instrs.push_back({.op = Opcode::kTaskBegin, .sem = i});
    p.instrs.push_back(MatMul(i % 16, 1, 1, 1));
    p.instrs.push_back({.op = Opcode::kTaskEnd, .sem = i});
  }
  auto r = Simulate(p, t);
  ASSERT_TRUE(r.ok());
  const double per = r->total.cycles / (n * t.dispatch_overhead_cycles);
  EXPECT_GE(per, 1.0);
  EXPECT_LT(per, 1.35);  // a 1x1x1 MATMUL still pays the array's fill and drain (2R+C-1)
  EXPECT_EQ(r->tasks.size(), size_t(n));
}

TEST(NpuSimTest, ConcurrentStreamsShareDramBandwidth) {
  auto target = ApplyOverrides(DefaultTarget(), {"dispatch_overhead_cycles=0"});
  const Target& t = *target;
  const int rows = 8192, row = 128;  // 1 MiB
  const double one = Cycles(OneTask({Dma(0, true, rows, row)}), t);
  const double two = Cycles(OneTask({Dma(0, true, rows, row), Dma(1, true, rows, row)}), t);
  const double eight = Cycles(OneTask({Dma(0, true, rows, row), Dma(1, true, rows, row), Dma(2, true, rows, row),
                                       Dma(3, true, rows, row), Dma(4, true, rows, row), Dma(5, true, rows, row),
                                       Dma(6, true, rows, row), Dma(7, true, rows, row)}), t);
  const double transfer = double(rows) * row / t.dram_bytes_per_cycle();
  EXPECT_NEAR(one, t.dma.setup_cycles + t.dram.read_latency_cycles + transfer, 1e-6 * one);
  EXPECT_NEAR(two - one, transfer, 1e-3 * transfer);
  EXPECT_NEAR(eight - one, 7 * transfer, 1e-3 * transfer);
  auto r = Simulate(OneTask({Dma(0, true, rows, row), Dma(1, true, rows, row)}), t);
  EXPECT_NEAR(r->total.stalls["dram contention"], 2 * transfer, 1e-3 * transfer);
}

TEST(NpuSimTest, ShortRowsWasteBursts) {
  auto target = ApplyOverrides(DefaultTarget(), {"dispatch_overhead_cycles=0"});
  const Target& t = *target;
  // 64-byte rows move whole 128-byte bursts: same time as 128-byte rows.
  const double half = Cycles(OneTask({Dma(0, true, 4096, 64)}), t);
  const double full = Cycles(OneTask({Dma(0, true, 4096, 128)}), t);
  EXPECT_DOUBLE_EQ(half, full);
  auto r = Simulate(OneTask({Dma(0, true, 4096, 64)}), t);
  EXPECT_EQ(r->total.dram_read, 4096 * 64);
  EXPECT_EQ(r->total.dram_burst_bytes, 4096 * 128);
}

TEST(NpuSimTest, TokensAcrossCores) {
  // Core 0 loads and signals cores 0 and 1; core 1 multiplies once the load has landed and the
  // token is visible. A WAIT for two tokens starts after the second load.
  const Target& t = DefaultTarget();
  const Instr load = Dma(0, true, 64, 128);
  Instr both = Sig(0, QueueKind::kLoad, 0);
  both.to_core = 0;
  both.count = 2;
  const double mm = MatMulCycles(t, 100, 128, 32);
  EXPECT_NEAR(Cycles(OneTask({load, both, Wt(1, QueueKind::kExecute, 0), MatMul(1, 100, 128, 32)})),
              t.dispatch_overhead_cycles + DmaCycles(t, load) + t.token_latency_cycles + mm, 1e-6);
  Instr two = Wt(1, QueueKind::kExecute, 0);
  two.count = 2;
  EXPECT_NEAR(Cycles(OneTask({load, both, load, both, two, MatMul(1, 100, 128, 32)})),
              t.dispatch_overhead_cycles + 2 * DmaCycles(t, load) + t.token_latency_cycles + mm, 1e-6);
  // One token is not enough for it.
  auto r = Simulate(OneTask({load, both, two, MatMul(1, 100, 128, 32)}), t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlocks"), std::string::npos);
}

// The prefetch queue is a core's own: a load there runs while the core's load queue waits for a
// token (a segment's weight chunk no longer waits behind a load blocked on its producer).
// Core 0's load queue waits for the exec queue's token after a long MATMUL, then loads; the
// same load on the prefetch queue runs at once, so the program is one load shorter.
TEST(NpuSimTest, PrefetchQueueRunsBesideABlockedLoadQueue) {
  const Target& t = DefaultTarget();
  const Instr load = Dma(0, true, 64, 128);
  Instr early = load;
  early.queue = QueueKind::kPrefetch;
  const double mm = MatMulCycles(t, 2000, 512, 128);
  ASSERT_GT(mm, 2 * DmaCycles(t, load));
  const std::vector<Instr> head = {MatMul(0, 2000, 512, 128), Sig(0, QueueKind::kExecute, 0),
                                   Wt(0, QueueKind::kLoad, 0), load};
  std::vector<Instr> behind = head, beside = head;
  behind.push_back(load);   // a second load behind the wait
  beside.push_back(early);  // the same load on the prefetch queue
  const double both_behind = Cycles(OneTask(behind)), one_beside = Cycles(OneTask(beside));
  EXPECT_NEAR(both_behind, t.dispatch_overhead_cycles + mm + t.token_latency_cycles + DmaCycles(t, load) +
                               DmaCycles(t, load), 1e-6);
  EXPECT_NEAR(one_beside, t.dispatch_overhead_cycles + mm + t.token_latency_cycles + DmaCycles(t, load), 1e-6);
}

// A prefetch-queue transfer yields the DRAM: beside a load of the load queue it waits, and the
// load runs at the full bandwidth (as alone); alone it takes the full bandwidth itself.
TEST(NpuSimTest, PrefetchYieldsTheDramToTheLayersLoads) {
  const Target& t = DefaultTarget();
  const Instr load = Dma(0, true, 64, 128);
  Instr stream = Dma(1, true, 64, 128);
  stream.queue = QueueKind::kPrefetch;
  const double alone = DmaCycles(t, load), transfer = alone - t.dma.setup_cycles - t.dram.read_latency_cycles;
  const Program p = OneTask({load, stream});
  SimOptions so;
  so.trace = true;
  auto r = Simulate(p, t, so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  double load_end = -1, stream_end = -1;
  for (const TraceEvent& e : r->trace)
    (p.instrs[e.instr].queue == QueueKind::kPrefetch ? stream_end : load_end) = e.end;
  EXPECT_NEAR(r->total.cycles, t.dispatch_overhead_cycles + alone + transfer, 1e-6);
  EXPECT_NEAR(stream_end - load_end, transfer, 1e-6) << "the load ran at the full bandwidth, the stream after it";
  // Two loads of the load queues share it equally: both end at alone + transfer.
  Instr other = Dma(1, true, 64, 128);
  EXPECT_NEAR(Cycles(OneTask({load, other})), t.dispatch_overhead_cycles + alone + transfer, 1e-6);
  EXPECT_NEAR(Cycles(OneTask({stream})), t.dispatch_overhead_cycles + alone, 1e-6);
}

TEST(NpuSimTest, DeadlockIsAnError) {
  auto r = Simulate(OneTask({Wt(0, QueueKind::kExecute, 1), MatMul(0, 1, 1, 1)}), DefaultTarget());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlocks"), std::string::npos);
}

ConvLayer RandomShape(std::mt19937& rng, bool small) {
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ConvLayer l;
  l.in_h = U(4, small ? 16 : 56);
  l.in_w = U(4, small ? 16 : 56);
  l.channels = U(1, small ? 96 : 256);
  l.out_channels = U(1, small ? 96 : 256);
  l.kernel_h = l.kernel_w = U(0, 1) ? 3 : 1;
  l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = l.kernel_h / 2;
  l.stride_h = l.stride_w = U(1, 2);
  return l;
}

TEST(NpuSimTest, NoLayerBeatsItsRoofline) {
  std::mt19937 rng(5);
  for (const char* target : {"default", "edge-mcu", "edge-large"}) {
    auto t = LoadTarget(target);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    for (int i = 0; i < 12; ++i) {
      const ConvLayer l = RandomShape(rng, false);
      auto c = ChooseTiling(l, *t);
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      EXPECT_GE(c->stats.cycles, c->stats.roofline_cycles(*t)) << target << " " << c->best.tiling.ToString();
      EXPECT_EQ(c->stats.macs, l.macs());
      EXPECT_LE(c->stats.sram_peak, t->shared_sram.bytes);
      EXPECT_LE(c->stats.mac_utilization(*t), 1.0);
    }
  }
}

TEST(NpuSimTest, HeuristicWithinFivePercentOfExhaustive) {
  std::mt19937 rng(9);
  for (int i = 0; i < 10; ++i) {
    const ConvLayer l = RandomShape(rng, true);
    // On cycles alone (no traffic slack, which may pick a slower tiling of the exhaustive set
    // than of the heuristic's) the exhaustive choice is the fastest.
    TilerOptions fastest;
    fastest.traffic_slack = 0;
    TilerOptions ex = fastest;
    ex.exhaustive = true;
    auto f = ChooseTiling(l, DefaultTarget(), fastest);
    auto e = ChooseTiling(l, DefaultTarget(), ex);
    ASSERT_TRUE(f.ok() && e.ok());
    EXPECT_GE(e->simulated, f->simulated);
    EXPECT_LE(e->best.cycles, f->best.cycles);
    EXPECT_LE(f->best.cycles, 1.05 * e->best.cycles)
        << "heuristic " << f->best.tiling.ToString() << " vs best " << e->best.tiling.ToString();
    auto h = ChooseTiling(l, DefaultTarget());
    ASSERT_TRUE(h.ok());
    ASSERT_TRUE(h->runner_up.has_value());
    // The best may trade up to 3% of cycles for less DRAM traffic (traffic_slack).
    EXPECT_LE(h->best.cycles, 1.03 * h->runner_up->cycles + 1e-9);
  }
}

TEST(NpuSimTest, LargeWeightsAreStreamedOnce) {
  // 16 MiB of int8 weights on a 2 MiB SRAM: each weight byte crosses DRAM once; the small
  // input (64 KiB) is re-read once per group of output channels.
  const ConvLayer l = ConvLayer::MatMul("proj", 16, 4096, 4096);
  auto c = ChooseTiling(l, DefaultTarget());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const int64_t weights = 4096LL * 4096;
  EXPECT_GE(c->stats.dram_read, weights);
  EXPECT_LE(c->stats.dram_read, weights * 12 / 10);
  EXPECT_LE(c->stats.sram_peak, DefaultTarget().shared_sram.bytes);
  // Memory-bound: at least bytes / bandwidth.
  EXPECT_GE(c->stats.cycles, weights / DefaultTarget().dram_bytes_per_cycle());
  EXPECT_FALSE(c->stats.compute_bound(DefaultTarget()));
}

// A segment keeps a layer's input in SRAM: the tiler then simulates the input's DMAs as
// on-chip copies (MarkOnChip) — no DRAM byte, no burst — so a gather tiling that wastes half
// of each burst on 64-byte rows from DRAM costs only its weights and output there.
TEST(NpuSimTest, OnChipInputMovesNoDramBytes) {
  ConvLayer l;
  l.in_h = l.in_w = 28;
  l.channels = 64;
  l.out_channels = 64;
  l.kernel_h = l.kernel_w = 3;
  l.pad_top = l.pad_left = l.pad_bottom = l.pad_right = 1;
  const Target& t = DefaultTarget();
  const Tiling tl{4, 28, 64, 3, 64, Resident::kWeights, true, 8};  // gather: one DMA per kernel column
  TilerOptions chip;
  chip.on_chip_inputs = 1;
  auto dram = SimulateTiling(l, t, tl);
  auto onchip = SimulateTiling(l, t, tl, chip);
  ASSERT_TRUE(dram.ok() && onchip.ok());
  // The same transfers: the input's bytes move from the DRAM count to the on-chip count.
  EXPECT_GE(onchip->total.onchip_bytes, l.m() * l.k() * 9 / 10);  // the gathered input (padding not read)
  EXPECT_EQ(dram->total.onchip_bytes, 0);
  EXPECT_EQ(dram->total.dram_read - onchip->total.dram_read, onchip->total.onchip_bytes);
  EXPECT_EQ(onchip->total.dram_written, l.m() * l.n());
  EXPECT_LT(onchip->total.dram_burst_bytes, dram->total.dram_burst_bytes - onchip->total.onchip_bytes);
  EXPECT_LT(onchip->total.cycles, dram->total.cycles);
  // The segment's chooser sees it: with the input on chip the choice moves fewer DRAM bytes.
  auto a = ChooseTiling(l, t), b = ChooseTiling(l, t, chip);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(b->stats.dram_read, a->stats.dram_read);
}

TEST(NpuSimTest, NothingFitsIsAnError) {
  auto tiny = ApplyOverrides(DefaultTarget(), {"shared_sram.bytes=1K", "shared_sram.alignment=64"});
  ASSERT_TRUE(tiny.ok());
  auto c = ChooseTiling(ConvLayer::MatMul("big", 64, 4096, 64), *tiny);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no tiling fits"), std::string::npos);
}

}  // namespace
}  // namespace edgec::npu

namespace edgec::npu {
namespace {

// SCALE-Sim v2's golden GEMM figures on a 128 x 32 array (tests/npu/data/README.md): the
// compute-only cycles must match exactly. SCALE-Sim reports the 0-based index of the last
// cycle, so its total is ours minus one; its stall cycles come from its own memory model and
// are compared only in the stall-free modes.
TEST(NpuSimTest, MatchesScaleSimComputeCycles) {
  std::ifstream in;
  for (const char* prefix : {"", "../", "../../"}) {
    in.open(std::string(prefix) + "tests/npu/data/scalesim_gemm.csv");
    if (in) break;
    in.clear();
  }
  ASSERT_TRUE(in.is_open()) << "tests/npu/data/scalesim_gemm.csv not found";
  std::string line;
  std::getline(in, line);
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 12u);
    const std::string dataflow = f[0], mode = f[6];
    if (mode != "CALC" && mode != "USER_100000") continue;
    const int64_t M = std::stoll(f[3]), N = std::stoll(f[4]), K = std::stoll(f[5]);
    const int64_t total = std::stoll(f[7]);
    const double mapping = std::stod(f[11]) / 100;
    auto t = ApplyOverrides(DefaultTarget(), {"ai_cores.mac_rows=" + f[1], "ai_cores.mac_cols=" + f[2],
                                              std::string("ai_cores.dataflow=") +
                                                  (dataflow == "ws" ? "weight_stationary" : "output_stationary")});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(MatMulCycles(*t, M, K, N) - 1, total) << line;
    EXPECT_NEAR(double(M * K * N) / MappedMacs(*t, M, K, N), mapping, 1e-6) << line;
    ++rows;
  }
  EXPECT_GE(rows, 20);
}

}  // namespace
}  // namespace edgec::npu
