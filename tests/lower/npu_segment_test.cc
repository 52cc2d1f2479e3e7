// NPU segments as one program: a run of NPU nodes is one task, its inner tensors stay in SRAM
// where the plan keeps them (no DRAM byte written for them), npu-sim equals the CPU's int8
// kernels bit for bit, and the cache maintenance at the CPU <-> NPU hand-over matters: without
// the flush of the input the NPU reads stale DRAM and the output changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "npu/segment.h"
#include "npu/sim.h"
#include "quant/pipeline.h"
#include "runtime/artifact_run.h"
#include "runtime/cpu_cache.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"

namespace edgec::lower {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

// x[1,8,12,12] -> conv1 3x3 -> relu -> conv2 1x1 -> add(conv1) -> relu -> conv3 1x1 -> y
Graph ResidualBlock() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 12, 12}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({16, 8, 3, 3}, 1, 0.2)),
                                     g.AddConstant("b1", Normal({16}, 2, 0.1))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* c2 = Add(g, OpKind::kConv, {r1, g.AddConstant("w2", Normal({16, 16, 1, 1}, 3, 0.3)),
                                     g.AddConstant("b2", Normal({16}, 4, 0.1))}, {}, "conv2");
  Value* sum = Add(g, OpKind::kAdd, {c2, r1}, {}, "add");
  Value* r2 = Add(g, OpKind::kRelu, {sum}, {}, "relu2");
  Value* y = Add(g, OpKind::kConv, {r2, g.AddConstant("w3", Normal({24, 16, 1, 1}, 5, 0.3)),
                                    g.AddConstant("b3", Normal({24}, 6, 0.1))}, {}, "conv3");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 12, 12}, 100, 4, DType::kI8);
}

// x[1,16,28,28] -> conv a 3x3 (64 out) and conv b 1x1 (64 out), both of x -> add -> y: two
// independent convs of one segment.
Graph TwoBranches() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 16, 28, 28}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("wa", Normal({64, 16, 3, 3}, 21, 0.2)),
                                    g.AddConstant("ba", Normal({64}, 22, 0.1))}, pad, "conv_a");
  Value* b = Add(g, OpKind::kConv, {x, g.AddConstant("wb", Normal({64, 16, 1, 1}, 23, 0.3)),
                                    g.AddConstant("bb", Normal({64}, 24, 0.1))}, {}, "conv_b");
  Value* y = Add(g, OpKind::kAdd, {a, b}, {}, "add");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 16, 28, 28}, 200, 4, DType::kI8);
}

// x[1,8,96,96] -> conv_a 3x3 (16 out) -> relu -> conv_b depthwise 3x3 -> y: a producer and its
// consumer, the tensor between them on chip.
Graph TwoConvChain() {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 96, 96}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* a = Add(g, OpKind::kConv, {x, g.AddConstant("wa", Normal({16, 8, 3, 3}, 51, 0.2)),
                                    g.AddConstant("ba", Normal({16}, 52, 0.1))}, pad, "conv_a");
  Value* r = Add(g, OpKind::kRelu, {a}, {}, "relu");
  Attributes dw;
  dw.Set("pads", Ints{1, 1, 1, 1});
  dw.Set("group", int64_t{16});
  Value* y = Add(g, OpKind::kConv, {r, g.AddConstant("wb", Normal({16, 1, 3, 3}, 53, 0.3)),
                                    g.AddConstant("bb", Normal({16}, 54, 0.1))}, dw, "conv_b");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 8, 96, 96}, 300, 4, DType::kI8);
}

struct Compiled {
  std::string path;
  std::unique_ptr<artifact_io::MappedArtifact> file;
  LoadedArtifact loaded;
};

Compiled CompileAndLoad(const npu::Target& t, const std::string& tag, Graph (*make)() = ResidualBlock) {
  Graph g = make();
  partition::PartitionOptions o;
  o.cost_rule = false;  // every legal node on the NPU
  auto r = CompileGraph(g, t, "residual", o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Compiled c;
  c.path = (std::filesystem::temp_directory_path() / ("npu_segment_" + tag + ".edgec")).string();
  EXPECT_TRUE(artifact_io::WriteArtifact(c.path, r->model).ok());
  auto f = artifact_io::MappedArtifact::Open(c.path);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  c.file = std::move(*f);
  auto l = LoadArtifact(*c.file);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  c.loaded = std::move(*l);
  return c;
}

// The model's float boundary in a segment (the input's quantize, the output's dequantize, on
// targets whose vector cores take f32): how many such layers, and how many lead the segment.
int BoundaryLayers(const npu::Program& p) {
  int n = 0;
  for (const std::string& l : p.layer_names) n += l.find("quantize.") != std::string::npos;
  return n;
}
int LeadingBoundary(const npu::Program& p) {
  return !p.layer_names.empty() && p.layer_names[0].find("/quantize.") != std::string::npos ? 1 : 0;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(NpuSegmentTest, OneTaskInnerTensorsOnChipAndBitExact) {
  for (const std::string name : {"edge-default", "edge-mcu", "edge-large"}) {
    auto t = npu::LoadTarget(name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    Compiled c = CompileAndLoad(*t, name);
    const artifact_io::Segment* seg = nullptr;
    int npu_segments = 0;
    for (const auto& s : c.loaded.meta.segments)
      if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s, ++npu_segments;
    ASSERT_EQ(npu_segments, 1) << name;  // the convs, the add: one run of NPU nodes
    ASSERT_GE(seg->nodes.size(), 4u) << name;
    auto p = npu::DecodeProgram(seg->npu.instructions);
    ASSERT_TRUE(p.ok());
    int tasks = 0;
    for (const npu::Instr& in : p->instrs) tasks += in.op == npu::Opcode::kTaskBegin;
    EXPECT_EQ(tasks, 1) << name << ": one dispatch per segment";
    EXPECT_EQ(p->layer_names.size() - BoundaryLayers(*p), 4u) << name;
    EXPECT_EQ(BoundaryLayers(*p), t->vector_cores.VecRate("f32") > 0 ? 2 : 0) << name;
    int64_t resident = 0, outputs = 0;
    for (const auto& x : seg->sram_plan) {
      if (x.in_sram) resident += x.bytes;
      for (const auto& o : seg->outputs) outputs += o == x.value ? x.bytes : 0;
    }
    EXPECT_GT(resident, 0) << name << ": the inner tensors fit beside the working tiles";
    const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 7)}};
    auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, in);
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    ASSERT_EQ(sim->outputs.size(), cpu->outputs.size());
    for (size_t i = 0; i < sim->outputs.size(); ++i) EXPECT_TRUE(SameBytes(sim->outputs[i], cpu->outputs[i])) << name;
    // Only what leaves the segment is written to DRAM; a resident tensor never is.
    EXPECT_EQ(sim->npu_total.dram_written, outputs) << name;
    EXPECT_GT(sim->npu_total.onchip_bytes, 0) << name;
    // No layer beats its roofline (its own MACs and DRAM bytes), overlapping or not.
    for (const LayerRun& l : sim->layers)
      if (l.simulated && l.stats.cycles > 0) {
        EXPECT_GE(l.stats.cycles + 1e-6, l.stats.roofline_cycles(c.loaded.target)) << name << " " << l.node;
      }
    std::filesystem::remove(c.path);
  }
}

TEST(NpuSegmentTest, DroppedFlushMakesTheNpuReadStaleInput) {
  const npu::Target& t = npu::DefaultTarget();
  ASSERT_FALSE(t.cpu_cache.coherent);
  Compiled c = CompileAndLoad(t, "flush");
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 11)}};
  auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
  EXPECT_EQ(sim->cache_steps[0], 1);  // the input's flush
  EXPECT_GT(sim->cache_s, 0);
  int dropped = 0;
  for (auto& s : c.loaded.meta.segments) {
    auto& h = s.hand_over;
    const size_t before = h.size();
    h.erase(std::remove_if(h.begin(), h.end(),
                           [](const artifact_io::HandOver& x) { return x.kind == artifact_io::HandOverKind::kFlush; }),
            h.end());
    dropped += static_cast<int>(before - h.size());
  }
  ASSERT_EQ(dropped, 1);
  auto stale = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  EXPECT_FALSE(SameBytes(stale->outputs[0], cpu->outputs[0])) << "the NPU read the input before the CPU flushed it";
  std::filesystem::remove(c.path);
}

// The CPU read the segment's output once (its lines are cached), the NPU then overwrites it
// in DRAM: the invalidate after the segment is what makes the CPU's second read see the new
// bytes; without it the CPU reads its stale lines.
TEST(NpuSegmentTest, DroppedInvalidateReadsStaleOutput) {
  const npu::Target& t = npu::DefaultTarget();
  Compiled c = CompileAndLoad(t, "invalidate");
  const artifact_io::Segment* seg = nullptr;
  for (const auto& s : c.loaded.meta.segments)
    if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s;
  ASSERT_NE(seg, nullptr);
  ASSERT_EQ(seg->outputs.size(), 1u);
  const artifact_io::HandOver* inv = nullptr;
  for (const auto& h : seg->hand_over)
    if (h.kind == artifact_io::HandOverKind::kInvalidate && h.value == seg->outputs[0]) inv = &h;
  ASSERT_NE(inv, nullptr) << "the CPU reads the output: an invalidate step after the segment";
  auto p = npu::DecodeProgram(seg->npu.instructions);
  ASSERT_TRUE(p.ok());
  p->regions.clear();
  for (const auto& r : seg->npu.regions) p->regions.push_back({r.name, r.addr, r.bytes});
  p->dram_bytes = seg->npu.dram_bytes;
  p->cores_used = seg->npu.cores_used;
  p->semaphores = seg->npu.semaphores;
  const artifact_io::Region *in = nullptr, *out = nullptr;
  for (const auto& r : seg->npu.regions) {
    if (r.name == seg->inputs[0]) in = &r;
    if (r.name == seg->outputs[0]) out = &r;
  }
  ASSERT_TRUE(in && out);
  for (bool invalidate : {true, false}) {
    std::vector<uint8_t> dram(seg->npu.dram_bytes, 0);
    std::copy(seg->npu.dram_init.begin(), seg->npu.dram_init.end(), dram.begin());
    std::memset(dram.data() + out->addr, 0x5a, out->bytes);  // the previous result
    CpuCache cache(&dram, t.cpu_cache.line_bytes, t.cpu_cache.coherent);
    std::vector<uint8_t> before(out->bytes), x(in->bytes);
    cache.Read(out->addr, before.data(), out->bytes);  // the CPU read it once
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 37 % 251);
    cache.Write(in->addr, x.data(), in->bytes);
    cache.Flush(in->addr, in->bytes);
    npu::SimOptions so;
    so.functional = true;
    so.dram = &dram;
    auto sim = npu::Simulate(*p, t, so);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    ASSERT_NE(std::memcmp(dram.data() + out->addr, before.data(), out->bytes), 0) << "the NPU wrote the output";
    if (invalidate) cache.Invalidate(out->addr, out->bytes);
    std::vector<uint8_t> again(out->bytes);
    cache.Read(out->addr, again.data(), out->bytes);
    if (invalidate) {
      EXPECT_EQ(std::memcmp(again.data(), dram.data() + out->addr, out->bytes), 0);
    } else {
      EXPECT_EQ(again, before) << "without the invalidate the CPU reads its stale lines";
      EXPECT_NE(std::memcmp(again.data(), dram.data() + out->addr, out->bytes), 0);
    }
  }
  std::filesystem::remove(c.path);
}

// `edgec estimate` / `edgec sweep` time the programs the compiler wrote: the same cycles and
// DRAM bytes as running the compiled model, and the SRAM plan's on-chip bytes.
TEST(NpuSegmentTest, SegmentEstimateIsTheCompiledSchedule) {
  const npu::Target& t = npu::DefaultTarget();
  Graph g = ResidualBlock();
  partition::PartitionOptions o;
  o.cost_rule = false;
  auto r = CompileGraph(g, t, "residual", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto e = EstimateSegments(*r, t);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->segments, 1);
  EXPECT_EQ(e->layers, 4 + 2);  // and the float boundary's quantize and dequantize (f32 on the vector cores)
  EXPECT_GT(e->resident_bytes, 0);
  EXPECT_EQ(e->spilled_bytes, 0);
  Compiled c = CompileAndLoad(t, "estimate");
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 5)}};
  auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  EXPECT_DOUBLE_EQ(e->cycles, sim->npu_total.cycles);
  EXPECT_EQ(e->dram_read, sim->npu_total.dram_read);
  EXPECT_EQ(e->dram_written, sim->npu_total.dram_written);
  // 8 KiB of SRAM: fewer tensors stay on chip, and the estimate says so (without cascades:
  // with them the block runs in row stripes whose bands all stay on chip).
  auto small = npu::ApplyOverride(t, "shared_sram.bytes=8K");
  ASSERT_TRUE(small.ok());
  o.tiler.cascades = false;
  auto rs = CompileGraph(g, *small, "residual", o);
  ASSERT_TRUE(rs.ok()) << rs.status().ToString();
  auto es = EstimateSegments(*rs, *small);
  ASSERT_TRUE(es.ok());
  EXPECT_LT(es->resident_bytes, e->resident_bytes);
  std::filesystem::remove(c.path);
}

TEST(NpuSegmentTest, CoherentTargetHasNoHandOverSteps) {
  auto t = npu::ApplyOverride(npu::DefaultTarget(), "cpu_cache.coherent=true");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Compiled c = CompileAndLoad(*t, "coherent");
  for (const auto& s : c.loaded.meta.segments) EXPECT_TRUE(s.hand_over.empty());
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 12)}};
  auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(sim.ok() && cpu.ok());
  EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
  EXPECT_EQ(sim->cache_s, 0);
  std::filesystem::remove(c.path);
}

// Two convs reading the same input are a parallel group: each runs on its own cores, and
// their spans in the segment's task overlap; the numbers stay the CPU's.
TEST(NpuSegmentTest, IndependentConvsRunOnDisjointCoresAtOnce) {
  const npu::Target& t = npu::DefaultTarget();
  Compiled c = CompileAndLoad(t, "branches", TwoBranches);
  const artifact_io::Segment* seg = nullptr;
  for (const auto& s : c.loaded.meta.segments)
    if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s;
  ASSERT_NE(seg, nullptr);
  auto p = npu::DecodeProgram(seg->npu.instructions);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->layer_names.size() - BoundaryLayers(*p), 3u);
  const int q0 = LeadingBoundary(*p);
  std::vector<std::set<int>> cores(p->layer_names.size());  // per layer: the cores its MATMULs run on
  for (const npu::Instr& in : p->instrs)
    if (in.op == npu::Opcode::kMatMul && in.layer >= q0) cores[in.layer - q0].insert(in.core);
  ASSERT_FALSE(cores[0].empty());
  ASSERT_FALSE(cores[1].empty());
  for (int k : cores[0]) EXPECT_EQ(cores[1].count(k), 0u) << "conv_a and conv_b share core " << k;
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 16, 28, 28}, 31)}};
  auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
  const LayerRun *a = nullptr, *b = nullptr;
  for (const LayerRun& l : sim->layers) {
    if (l.node.rfind("conv_a/int8", 0) == 0 && l.simulated) a = &l;
    if (l.node.rfind("conv_b/int8", 0) == 0 && l.simulated) b = &l;
  }
  ASSERT_TRUE(a && b);
  const double a0 = a->start_cycle, a1 = a0 + a->stats.cycles, b0 = b->start_cycle, b1 = b0 + b->stats.cycles;
  EXPECT_LT(std::max(a0, b0), std::min(a1, b1)) << "conv_a [" << a0 << ", " << a1 << ") and conv_b [" << b0 << ", "
                                                << b1 << ") do not overlap";
  std::filesystem::remove(c.path);
}

// Layer pipelining: conv_b's loads of conv_a's output wait for the stores of conv_a that wrote
// those rows (per core, a count of its store tokens), not for the whole of conv_a, so conv_b
// reads its first rows while conv_a still stores its last ones; no byte conv_b reads or writes
// is one conv_a has yet to write or still reads: the output equals the CPU's bit for bit.
TEST(NpuSegmentTest, ConsumerTilesStartBeforeTheProducerEnds) {
  npu::Target t = npu::DefaultTarget();
  t.shared_sram.bytes = int64_t{8} << 20;  // room for both layers' tiles and tensors at once
  Compiled c = CompileAndLoad(t, "pipeline", TwoConvChain);
  const artifact_io::Segment* seg = nullptr;
  for (const auto& s : c.loaded.meta.segments)
    if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s;
  ASSERT_NE(seg, nullptr);
  auto p = npu::DecodeProgram(seg->npu.instructions);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  int la = -1, lb = -1;
  for (size_t i = 0; i < p->layer_names.size(); ++i) {
    if (p->layer_names[i].rfind("conv_a/int8", 0) == 0) la = static_cast<int>(i);
    if (p->layer_names[i].rfind("conv_b/int8", 0) == 0) lb = static_cast<int>(i);
  }
  ASSERT_TRUE(la >= 0 && lb > la);
  // conv_a's output: the bytes its stores write (on chip: SRAM addresses).
  int64_t lo = INT64_MAX, hi = -1;
  for (const npu::Instr& in : p->instrs)
    if (in.layer == la && in.op == npu::Opcode::kDmaStore) {
      lo = std::min<int64_t>(lo, in.dram_addr);
      hi = std::max<int64_t>(hi, in.dram_addr + in.dma_bytes());
    }
  ASSERT_GT(hi, lo);
  npu::SimOptions so;
  so.trace = true;
  auto r = npu::Simulate(*p, t, so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  double a_stored = -1, b_reads = 1e300;
  for (const npu::TraceEvent& e : r->trace) {
    const npu::Instr& in = p->instrs[e.instr];
    if (in.layer == la && in.op == npu::Opcode::kDmaStore) a_stored = std::max(a_stored, e.end);
    if (in.layer == lb && in.op == npu::Opcode::kDmaLoad && in.dram_addr >= lo && in.dram_addr < hi)
      b_reads = std::min(b_reads, e.start);
  }
  ASSERT_GE(a_stored, 0);
  ASSERT_LT(b_reads, 1e300) << "conv_b reads nothing of conv_a's output";
  EXPECT_LT(b_reads, a_stored) << "conv_b's first read of conv_a's output waits for all of conv_a";
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 96, 96}, 55)}};
  auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(sim.ok()) << sim.status().ToString();
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
  std::filesystem::remove(c.path);
}

// Weight streaming: conv3's weights (layer 3) come from DRAM in the slot's contiguous chunks,
// finished before the add (layer 2) computes, two layers ahead; its weight tiles then load on
// chip; the numbers stay the CPU's.
TEST(NpuSegmentTest, WeightsStreamSeveralLayersAhead) {
  const npu::Target& t = npu::DefaultTarget();
  Compiled c = CompileAndLoad(t, "stream");
  const artifact_io::Segment* seg = nullptr;
  for (const auto& s : c.loaded.meta.segments)
    if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s;
  ASSERT_NE(seg, nullptr);
  auto p = npu::DecodeProgram(seg->npu.instructions);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->layer_names.size() - BoundaryLayers(*p), 4u);
  const int q0 = LeadingBoundary(*p);
  npu::SimOptions so;
  so.trace = true;
  auto r = npu::Simulate(*p, t, so);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  double add_starts = 1e300, weights_in = -1;
  int on_chip = 0;
  for (const npu::TraceEvent& e : r->trace) {
    const npu::Instr& in = p->instrs[e.instr];
    if (in.layer == 2 + q0 && (in.op == npu::Opcode::kVec || in.op == npu::Opcode::kMatMul))
      add_starts = std::min(add_starts, e.start);
    if (in.layer != 3 + q0 || in.op != npu::Opcode::kDmaLoad) continue;
    if (in.on_chip) {
      ++on_chip;
      EXPECT_EQ(in.queue, npu::QueueKind::kLoad) << "conv3's own load off its load queue: " << npu::FormatInstr(in);
    } else {
      EXPECT_EQ(in.ndims, 0) << "a DRAM load of conv3 that is not a slot chunk: " << npu::FormatInstr(in);
      // The weight stream rides the prefetch queues, apart from the layers' own loads.
      EXPECT_EQ(in.queue, npu::QueueKind::kPrefetch) << "a slot chunk on the load queue: " << npu::FormatInstr(in);
      weights_in = std::max(weights_in, e.end);
    }
  }
  ASSERT_GE(weights_in, 0) << "conv3's weights never come from DRAM";
  EXPECT_GT(on_chip, 0);
  EXPECT_LT(weights_in, add_starts) << "conv3's weights are not in SRAM before the add runs";
  const std::map<std::string, Tensor> in = {{"x", Normal({1, 8, 12, 12}, 17)}};
  auto sim = RunArtifact(c.loaded, ArtifactDevice::kNpuSim, in);
  auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, in);
  ASSERT_TRUE(sim.ok() && cpu.ok());
  EXPECT_TRUE(SameBytes(sim->outputs[0], cpu->outputs[0]));
  std::filesystem::remove(c.path);
}

// Resident weights (shared_sram.resident_weights): the first call of a session loads them in
// the program's first task, the second skips it (exactly their bytes fewer DRAM reads, fewer
// cycles) and still computes the CPU's numbers from what the first call left in SRAM.
TEST(NpuSegmentTest, ResidentWeightsSkipTheirLoadOnTheSecondCall) {
  auto t = npu::ApplyOverride(npu::DefaultTarget(), "shared_sram.resident_weights=true");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Compiled c = CompileAndLoad(*t, "resident");
  int64_t resident = 0;
  const artifact_io::Segment* seg = nullptr;
  for (const auto& s : c.loaded.meta.segments)
    if (s.unit == artifact_io::Unit::kNpu && !s.npu.instructions.empty()) seg = &s;
  ASSERT_NE(seg, nullptr);
  for (const auto& l : seg->layer_plan) resident += l.resident_weight_bytes;
  ASSERT_GT(resident, 0) << "the residual block's weights fit in 2 MiB";
  EXPECT_EQ(seg->npu.task_names.size(), 2u) << "the weights' task, then the segment's";
  auto ex = ArtifactExecutor::Create(c.loaded);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  const std::map<std::string, Tensor> in1 = {{"x", Normal({1, 8, 12, 12}, 41)}};
  const std::map<std::string, Tensor> in2 = {{"x", Normal({1, 8, 12, 12}, 42)}};
  auto first = (*ex)->Run(ArtifactDevice::kNpuSim, in1);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = (*ex)->Run(ArtifactDevice::kNpuSim, in2);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(first->resident_weight_bytes, resident);
  EXPECT_EQ(first->resident_weight_skipped, 0);
  EXPECT_EQ(second->resident_weight_skipped, resident);
  EXPECT_EQ(first->npu_total.dram_read - second->npu_total.dram_read, resident);
  EXPECT_LT(second->npu_total.cycles, first->npu_total.cycles);
  for (auto [run, in] : {std::pair{&*first, &in1}, std::pair{&*second, &in2}}) {
    auto cpu = RunArtifact(c.loaded, ArtifactDevice::kCpu, *in);
    ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
    EXPECT_TRUE(SameBytes(run->outputs[0], cpu->outputs[0])) << (run == &*first ? "first" : "second") << " call";
  }
  std::filesystem::remove(c.path);
}

TEST(NpuSegmentTest, DmaWithoutRegionIsRefused) {
  npu::SegmentLayer l;
  l.name = "untagged";
  l.program.cores_used = 1;
  npu::Instr ld{.op = npu::Opcode::kDmaLoad};
  ld.row_bytes = ld.sram_row_bytes = 16;
  l.program.instrs = {npu::Instr{.op = npu::Opcode::kTaskBegin}, ld, npu::Instr{.op = npu::Opcode::kTaskEnd}};
  std::vector<npu::SegmentTensor> tensors;
  auto p = npu::AssembleSegment({l}, tensors, npu::DefaultTarget(), "s");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("untagged"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace edgec::lower
