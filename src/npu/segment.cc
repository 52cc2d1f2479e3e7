// Assembly of a segment's layers into one program (see segment.h).
#include "npu/segment.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "npu/sim.h"

namespace edgec::npu {
namespace {


struct Range {
  int64_t lo, hi;
  bool Overlaps(const Range& o) const { return lo < o.hi && o.lo < hi; }
};

bool AnyOverlap(const std::vector<Range>& a, const std::vector<Range>& b) {
  for (const Range& x : a)
    for (const Range& y : b)
      if (x.Overlaps(y)) return true;
  return false;
}

bool IsSramOperand(const Instr& in) { return !(in.op == Opcode::kVec && in.vec == VecOp::kRequantize); }

// The far-side bytes a DMA may touch (every row of its box, padding rows included).
Range FarRange(const Instr& in) {
  Range r{in.dram_addr, in.dram_addr + in.row_bytes};
  if (in.gather && in.ndims >= 1)  // any row of the table (isa.h Instr::gather)
    return {in.dram_addr, in.dram_addr + int64_t{in.dims[0].valid_hi - 1} * in.dims[0].dram_stride + in.row_bytes};
  for (int d = 0; d < in.ndims; ++d) {
    const int64_t span = int64_t{in.dims[d].count - 1} * in.dims[d].dram_stride;
    (span < 0 ? r.lo : r.hi) += span;
  }
  return r;
}

// A load of a constant box whose outer dim may be cut (no gather, no padding rows on it):
// how many of its first outer rows lie wholly below `end` (0: none, or it cannot be cut).
// The assembler reads those from a lead-in slot holding the image's first `end` bytes.
int RowsWithin(const Instr& in, int64_t end) {
  if (in.op != Opcode::kDmaLoad || in.gather || in.ndims < 1 || in.dims[0].valid_lo != 0 ||
      in.dims[0].valid_hi != in.dims[0].count || in.dims[0].dram_stride <= 0 || in.dims[0].count < 2)
    return 0;
  Instr row = in;
  row.dims[0].count = row.dims[0].valid_hi = 1;
  const Range first = FarRange(row);
  if (first.lo < 0 || first.hi > end) return 0;
  const int64_t rows = (end - first.hi) / in.dims[0].dram_stride + 1;
  return static_cast<int>(std::min<int64_t>(rows, in.dims[0].count - 1));
}

// Each region of a layer's program -> the tensor it binds to (-1: a constant region).
std::vector<int> RegionTensors(const SegmentLayer& l) {
  std::vector<int> out(l.program.regions.size(), -1);
  for (size_t r = 0; r < out.size(); ++r) {
    auto [is_out, k] = RegionOperand(l.program.regions[r].name);
    const std::vector<int>& ops = is_out ? l.outputs : l.inputs;
    if (k >= 0 && k < static_cast<int>(ops.size())) out[r] = ops[k];
  }
  return out;
}

// Layer pipelining: a consumer's load of its producer's tensor waits for the producer's stores
// that wrote those bytes (per producer core, a count of its P tokens: its stores complete in
// order) instead of the producer's D, so a consumer's first tiles start while the producer
// still computes its last ones. Only where nothing else orders the two: the tensor has one
// writer and no slices, the producer writes it by store-queue DMAs only, and the consumer
// writes no SRAM the producer uses (else it waits D at its head anyway).
// Guarded by NpuSegmentTest.ConsumerTilesStartBeforeTheProducerEnds.
struct StoreSpan {
  int ordinal;  // among the store-queue DMA_STs of its core
  int tensor;
  Range bytes;  // within the tensor
};
struct Progress {
  std::vector<std::vector<std::vector<StoreSpan>>> stores;  // [layer][local core]
  std::vector<std::set<int>> pipelined;                     // [consumer]: tensors it reads store by store
  std::vector<std::pair<int, int>> signal_to;               // [producer]: {first core, count} of its P signals
};

Progress PlanProgress(const std::vector<SegmentLayer>& layers, const std::vector<SegmentTensor>& tensors,
                      const std::vector<std::vector<int>>& writers, const std::vector<std::vector<Range>>& uses,
                      const std::vector<std::vector<Range>>& writes) {
  const int L = static_cast<int>(layers.size());
  const int T = static_cast<int>(tensors.size());
  Progress pr;
  pr.stores.resize(L);
  pr.pipelined.resize(L);
  pr.signal_to.assign(L, {0, 0});
  std::vector<bool> sliced(T, false);
  for (const SegmentTensor& x : tensors)
    if (x.slice_of >= 0 && x.slice_of < T) sliced[x.slice_of] = true;
  std::vector<std::set<int>> store_only(L);  // per layer: outputs written by store-queue DMA_STs only
  for (int j = 0; j < L; ++j) {
    const Program& p = layers[j].program;
    const std::vector<int> rt = RegionTensors(layers[j]);
    pr.stores[j].resize(std::max(p.cores_used, 0));
    std::vector<int> ordinal(std::max(p.cores_used, 0), 0);
    std::set<int> bad;
    for (const Instr& in : p.instrs) {
      if (in.op != Opcode::kDmaLoad && in.op != Opcode::kDmaStore) continue;
      const bool store = in.op == Opcode::kDmaStore && in.queue == QueueKind::kStore;
      const int x = in.region >= 0 && in.region < static_cast<int>(rt.size()) ? rt[in.region] : -1;
      if (in.core >= p.cores_used) continue;  // the main pass reports it
      if (store) {
        const int k = ordinal[in.core]++;
        if (x >= 0) {
          const Range far = FarRange(in);
          const int64_t base = p.regions[in.region].addr;
          pr.stores[j][in.core].push_back({k, x, {far.lo - base, far.hi - base}});
        }
      } else if (x >= 0 && in.op == Opcode::kDmaStore) {
        bad.insert(x);
      }
    }
    for (int x : layers[j].outputs)
      if (x >= 0 && x < T && !bad.count(x)) store_only[j].insert(x);
  }
  for (int i = 0; i < L; ++i) {
    const int lo = layers[i].core_base, hi = layers[i].core_base + layers[i].program.cores_used;
    for (int x : layers[i].inputs) {
      if (x < 0 || x >= T) continue;
      const int j = tensors[x].producer;
      if (j < 0 || j >= i || tensors[x].slice_of >= 0 || sliced[x] || writers[x] != std::vector<int>{j} ||
          !store_only[j].count(x) || AnyOverlap(uses[j], writes[i]))
        continue;
      pr.pipelined[i].insert(x);
      auto& to = pr.signal_to[j];
      if (to.second == 0) {
        to = {lo, hi - lo};
      } else {
        const int a = std::min(to.first, lo), b = std::max(to.first + to.second, hi);
        to = {a, b - a};
      }
    }
  }
  return pr;
}

}  // namespace

int64_t ConstantExtent(const Program& p) {
  int64_t extent = static_cast<int64_t>(p.dram_init.size());
  for (const DramRegion& r : p.regions)
    if (RegionOperand(r.name).second < 0) extent = std::max(extent, r.addr + r.bytes);
  return extent;
}

std::vector<std::pair<int64_t, int64_t>> ConstantReads(const Program& p) {
  const int64_t extent = ConstantExtent(p);
  std::map<int64_t, int64_t> by_end;
  for (const Instr& in : p.instrs) {
    if (in.op != Opcode::kDmaLoad || in.on_chip || in.region < 0 ||
        in.region >= static_cast<int>(p.regions.size()) || RegionOperand(p.regions[in.region].name).second >= 0)
      continue;
    const Range far = FarRange(in);
    if (far.lo < 0 || far.hi > extent) continue;
    if (RowsWithin(in, far.hi) == 0) {
      by_end[far.hi] += in.dma_bytes();
      continue;
    }
    const int64_t row_bytes = in.dma_bytes() / in.dims[0].count;  // per outer row
    for (int r = 0; r < in.dims[0].count; ++r)
      by_end[far.hi - int64_t{in.dims[0].count - 1 - r} * in.dims[0].dram_stride] += row_bytes;
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t sum = 0;
  for (auto [end, bytes] : by_end) out.push_back({end, sum += bytes});
  return out;
}

std::pair<bool, int> RegionOperand(const std::string& name) {
  const size_t dot = name.rfind('.');
  const std::string tail = dot == std::string::npos ? name : name.substr(dot + 1);
  for (const char* kind : {"input", "output"}) {
    const std::string k = kind;
    if (tail.compare(0, k.size(), k) != 0) continue;
    const std::string num = tail.substr(k.size());
    if (!num.empty() && !std::all_of(num.begin(), num.end(), ::isdigit)) continue;
    return {k == "output", num.empty() ? 0 : std::stoi(num)};
  }
  return {false, -1};
}

StatusOr<Program> AssembleSegment(const std::vector<SegmentLayer>& layers, std::vector<SegmentTensor>& tensors,
                                  const Target& t, const std::string& task_name) {
  const int N = t.ai_cores.count;
  const int L = static_cast<int>(layers.size());
  Program out;
  out.task_names = {task_name};
  // The constant prefix: each layer's constant image (dram_init, or its constant regions'
  // extent when lowered without data) at its own base.
  std::vector<int64_t> const_base(L, 0);
  int64_t addr = 0;
  std::vector<int64_t> const_extent(L, 0);
  for (int i = 0; i < L; ++i) {
    const Program& p = layers[i].program;
    const int64_t extent = const_extent[i] = ConstantExtent(p);
    const int of = layers[i].constants_of;
    if (of >= 0 && of < i && const_extent[of] == extent && layers[of].program.dram_init == p.dram_init) {
      const_base[i] = const_base[of];  // a stripe of the same node: one copy of its constants
      continue;
    }
    const_base[i] = addr;
    if (!p.dram_init.empty()) {
      out.dram_init.resize(addr, 0);
      out.dram_init.insert(out.dram_init.end(), p.dram_init.begin(), p.dram_init.end());
    }
    for (const DramRegion& r : p.regions)
      if (RegionOperand(r.name).second < 0) out.regions.push_back({r.name, addr + r.addr, r.bytes});
    addr = AlignUp(addr + extent, 64);
  }
  for (SegmentTensor& x : tensors) {
    if (x.in_sram || x.slice_of >= 0) continue;
    x.addr = addr;
    out.regions.push_back({x.name, addr, x.bytes});
    addr = AlignUp(addr + x.bytes, 64);
  }
  out.dram_bytes = addr;
  // Slices: where their tensor is; writers: every layer writing a tensor or a slice of it.
  const int T = static_cast<int>(tensors.size());
  auto root = [&](int x) { return tensors[x].slice_of >= 0 ? tensors[x].slice_of : x; };
  for (SegmentTensor& x : tensors) {
    if (x.slice_of < 0) continue;
    if (x.slice_of >= T || tensors[x.slice_of].slice_of >= 0 ||
        x.slice_offset + x.bytes > tensors[x.slice_of].bytes || x.slice_offset < 0)
      return InvalidArgument("segment '{}': '{}' is no slice of a tensor", task_name, x.name);
    x.in_sram = tensors[x.slice_of].in_sram;
    x.addr = tensors[x.slice_of].addr + x.slice_offset;
  }
  std::vector<std::vector<int>> writers(T);
  for (int i = 0; i < L; ++i)
    for (int x : layers[i].outputs) {
      if (x < 0 || x >= T) return InvalidArgument("segment '{}': layer '{}' writes no tensor", task_name, layers[i].name);
      writers[x].push_back(i);
      if (root(x) != x) writers[root(x)].push_back(i);
    }

  // Semaphores: each layer's own block, then its E (queue ends), V (vector done), D (done, for
  // the load queues), F (its weight slot filled), DP (done, for the prefetch queues) and one P
  // (stores done) per core.
  std::vector<int32_t> sem_base(L);
  int32_t sems = 0;
  for (int i = 0; i < L; ++i) {
    sem_base[i] = sems;
    sems += layers[i].program.semaphores + 5 + layers[i].program.cores_used;
  }
  out.semaphores = sems;
  auto sem_e = [&](int i) { return sem_base[i] + layers[i].program.semaphores; };
  auto sem_v = [&](int i) { return sem_e(i) + 1; };
  auto sem_d = [&](int i) { return sem_e(i) + 2; };
  auto sem_f = [&](int i) { return sem_e(i) + 3; };
  auto sem_dp = [&](int i) { return sem_e(i) + 4; };
  auto sem_p = [&](int i, int local_core) { return sem_e(i) + 5 + local_core; };
  // Weight slots: layer -> [addr, addr + constant extent), when it streams.
  auto streams = [&](int i) { return layers[i].weights_from >= 0 && const_extent[i] > 0; };
  auto resident = [&](int i) { return streams(i) && layers[i].weights_resident; };
  auto lead_in = [&](int i) { return streams(i) && layers[i].weights_bytes >= 0 && !layers[i].weights_resident; };
  auto slot_bytes = [&](int i) {
    return lead_in(i) ? std::min(layers[i].weights_bytes, const_extent[i]) : const_extent[i];
  };
  auto slot = [&](int i) { return Range{layers[i].weights_addr, layers[i].weights_addr + slot_bytes(i)}; };

  // SRAM each layer writes (working area, resident outputs) and uses (also resident inputs).
  std::vector<std::vector<Range>> writes(L), uses(L);
  for (int i = 0; i < L; ++i) {
    const SegmentLayer& l = layers[i];
    const int64_t fp = SramFootprint(l.program);
    if (fp > 0) writes[i].push_back({l.sram_base, l.sram_base + fp});
    for (int x : l.outputs)
      if (tensors[x].in_sram) writes[i].push_back({tensors[x].addr, tensors[x].addr + tensors[x].bytes});
    uses[i] = writes[i];
    for (int x : l.inputs)
      if (tensors[x].in_sram) uses[i].push_back({tensors[x].addr, tensors[x].addr + tensors[x].bytes});
    if (l.weights_from >= i && !l.weights_resident)
      return InvalidArgument("segment '{}': layer '{}' streams its weights from layer {}, not an earlier one",
                             task_name, l.name, l.weights_from);
    if (streams(i)) uses[i].push_back(slot(i));
    if (l.core_base < 0 || l.core_base + l.program.cores_used > N)
      return InvalidArgument("segment '{}': layer '{}' on cores {}..{}, the target has {}", task_name, l.name,
                             l.core_base, l.core_base + l.program.cores_used - 1, N);
    for (int x : l.inputs)
      if (x < 0 || x >= static_cast<int>(tensors.size()) || tensors[x].producer >= i)
        return InvalidArgument("segment '{}': layer '{}' reads a tensor not produced before it", task_name, l.name);
    for (const Instr& in : l.program.instrs)
      if ((in.op == Opcode::kDmaLoad || in.op == Opcode::kDmaStore) &&
          !(in.on_chip && in.region == kLocalSramRegion) &&
          (in.region < 0 || in.region >= static_cast<int>(l.program.regions.size())))
        return InvalidArgument("segment '{}': layer '{}': a DMA without its region (Instr::region)", task_name,
                               l.name);
  }

  // Layer pipelining: which loads may wait for the producer's stores they read instead of its D.
  const Progress progress = PlanProgress(layers, tensors, writers, uses, writes);

  std::vector<std::vector<Instr>> q(static_cast<size_t>(N) * kNumQueues);
  auto Q = [&](int core, QueueKind k) -> std::vector<Instr>& { return q[core * kNumQueues + static_cast<int>(k)]; };
  std::vector<std::set<int>> waited(N);  // D semaphores each core's load queue has taken
  std::vector<std::set<int>> waited_pf(N);  // DP semaphores each core's prefetch queue has taken
  std::map<std::tuple<int, int, int>, int> taken;  // (core, producer, its core) -> P tokens taken
  std::vector<int> last_matmul(N, -1);   // per core: the last layer with MATMULs there
  std::vector<int> fillers(L, 0);        // per streaming layer: the cores that fill its slot
  int rotation = 0;
  int used_cores = 1;  // the program's cores (Program::cores_used): chunks go to these only
  for (const SegmentLayer& l : layers) used_cores = std::max(used_cores, l.core_base + l.program.cores_used);
  auto control = [&](Opcode op, int c, int layer, int32_t sem, int32_t to, int32_t count) {
    Instr in{.op = op, .sem = sem, .to_core = to, .count = count};
    in.core = static_cast<uint8_t>(c);
    in.queue = QueueKind::kPrefetch;
    in.layer = layer;
    return in;
  };
  // A prefetch queue waits for layer j's end (its DP tokens) before writing a slot j used.
  auto wait_done_on = [&](int c, int j, int layer) {
    if (!waited_pf[c].insert(j).second) return;
    Q(c, QueueKind::kPrefetch)
        .push_back(control(Opcode::kWait, c, layer, sem_dp(j), -1, layers[j].program.cores_used));
  };
  constexpr int64_t kMinChunk = 4096, kMaxChunk = 65536;
  // The cores layer s leaves idle, else all of the program's.
  auto idle_cores = [&](int s) {
    std::vector<int> cands;
    for (int c = 0; c < used_cores; ++c)
      if (c < layers[s].core_base || c >= layers[s].core_base + layers[s].program.cores_used) cands.push_back(c);
    if (cands.empty())
      for (int c = 0; c < used_cores; ++c) cands.push_back(c);
    return cands;
  };
  // Lead-in slots (and ring slots with SegmentLayer::weights_spread): their chunks spread evenly
  // over the steps p + 1 .. j (a ring slot's over p .. j - 1), at the head of each step's loads
  // on the cores its layer leaves idle, so that no layer waits behind a whole image in its
  // in-order load queues. Guarded by NpuLeadInTest.LeadInSlotsReadWeightsOnChipBitForBit.
  struct LeadChunk {
    int slot, core;
    int64_t off, bytes;
    bool first = false, last = false;  // of its core, for this slot
  };
  std::vector<std::vector<LeadChunk>> lead_chunks(L);
  auto spread = [&](int j) { return lead_in(j) || (layers[j].weights_spread && streams(j) && !resident(j)); };
  for (int j = 1; j < L; ++j) {
    if (!spread(j)) continue;
    const int from = lead_in(j) ? layers[j].weights_from : layers[j].weights_from - 1, steps = j - from - (lead_in(j) ? 0 : 1);
    const int64_t bytes = slot_bytes(j);
    const int64_t chunk = AlignUp(std::clamp(CeilDiv(bytes, int64_t{16}), kMinChunk, kMaxChunk), 64);
    const int64_t n = CeilDiv(bytes, chunk);
    std::map<int, std::pair<int, size_t>> first, last;  // core -> (step, index)
    for (int64_t k = 0; k < n; ++k) {
      const int s = from + 1 + static_cast<int>(k * steps / n);
      const std::vector<int> cands = idle_cores(s);
      const int c = cands[(k + j) % cands.size()];
      lead_chunks[s].push_back({j, c, k * chunk, std::min(chunk, bytes - k * chunk)});
      if (!first.count(c)) first[c] = {s, lead_chunks[s].size() - 1};
      last[c] = {s, lead_chunks[s].size() - 1};
    }
    for (auto& [c, at] : first) lead_chunks[at.first][at.second].first = true;
    for (auto& [c, at] : last) lead_chunks[at.first][at.second].last = true;
    fillers[j] = static_cast<int>(first.size());
  }
  for (int i = 0; i < L; ++i) {
    const SegmentLayer& l = layers[i];
    const Program& p = l.program;
    for (const LeadChunk& ch : lead_chunks[i]) {
      if (ch.first)
        for (int h = 0; h < i; ++h)
          if (AnyOverlap(uses[h], {slot(ch.slot)})) wait_done_on(ch.core, h, ch.slot);
      Instr ld{.op = Opcode::kDmaLoad};
      ld.core = static_cast<uint8_t>(ch.core);
      ld.queue = QueueKind::kPrefetch;
      ld.layer = ch.slot;
      ld.dram_addr = const_base[ch.slot] + ch.off;
      ld.sram_addr = layers[ch.slot].weights_addr + ch.off;
      ld.row_bytes = ld.sram_row_bytes = static_cast<int32_t>(ch.bytes);
      Q(ch.core, QueueKind::kPrefetch).push_back(ld);
      if (ch.last)
        Q(ch.core, QueueKind::kPrefetch)
            .push_back(control(Opcode::kSignal, ch.core, ch.slot, sem_f(ch.slot), layers[ch.slot].core_base,
                               layers[ch.slot].program.cores_used));
    }
    // The weight slots filled from this step on: chunks over the cores this layer leaves idle.
    for (int j = i + 1; j < L; ++j) {
      if (!streams(j) || resident(j) || spread(j) || layers[j].weights_from != i) continue;
      const std::vector<int> cands = idle_cores(i);
      const int64_t bytes = slot_bytes(j);
      const int64_t chunk =
          AlignUp(std::clamp(CeilDiv(bytes, static_cast<int64_t>(cands.size())), kMinChunk, kMaxChunk), 64);
      std::vector<int> used;
      for (int64_t off = 0, k = 0; off < bytes; off += chunk, ++k) {
        const int c = cands[(rotation + k) % cands.size()];
        if (std::find(used.begin(), used.end(), c) == used.end()) {
          used.push_back(c);
          for (int h = 0; h < i; ++h)
            if (AnyOverlap(uses[h], {slot(j)})) wait_done_on(c, h, j);
        }
        Instr ld{.op = Opcode::kDmaLoad};
        ld.core = static_cast<uint8_t>(c);
        ld.queue = QueueKind::kPrefetch;
        ld.layer = j;
        ld.dram_addr = const_base[j] + off;
        ld.sram_addr = layers[j].weights_addr + off;
        ld.row_bytes = ld.sram_row_bytes = static_cast<int32_t>(std::min(chunk, bytes - off));
        Q(c, QueueKind::kPrefetch).push_back(ld);
      }
      rotation += static_cast<int>(used.size());
      for (int c : used)
        Q(c, QueueKind::kPrefetch)
            .push_back(control(Opcode::kSignal, c, j, sem_f(j), layers[j].core_base, layers[j].program.cores_used));
      fillers[j] = static_cast<int>(used.size());
    }
    // The region -> tensor binding.
    std::vector<int> region_tensor(p.regions.size(), -1);
    for (size_t r = 0; r < p.regions.size(); ++r) {
      auto [is_out, k] = RegionOperand(p.regions[r].name);
      if (k < 0) continue;
      const std::vector<int>& ops = is_out ? l.outputs : l.inputs;
      if (k >= static_cast<int>(ops.size()))
        return InvalidArgument("segment '{}': layer '{}': region '{}' has no tensor", task_name, l.name,
                               p.regions[r].name);
      region_tensor[r] = ops[k];
      if (tensors[ops[k]].bytes != p.regions[r].bytes)
        return InvalidArgument("segment '{}': layer '{}': region '{}' of {} bytes, tensor '{}' of {}", task_name,
                               l.name, p.regions[r].name, p.regions[r].bytes, tensors[ops[k]].name,
                               tensors[ops[k]].bytes);
    }
    std::vector<int> hazards;
    for (int j = 0; j < i; ++j)
      if (AnyOverlap(uses[j], writes[i])) hazards.push_back(j);
    std::vector<std::vector<Instr>> local(static_cast<size_t>(p.cores_used) * kNumQueues);
    std::vector<bool> has_matmul(p.cores_used, false);
    for (const Instr& src : p.instrs) {
      if (src.op == Opcode::kTaskBegin || src.op == Opcode::kTaskEnd) continue;
      if (src.core >= p.cores_used)
        return InvalidArgument("segment '{}': layer '{}': instruction on core {} of {}", task_name, l.name, src.core,
                               p.cores_used);
      Instr in = src;
      in.layer = i;
      in.core = static_cast<uint8_t>(src.core + l.core_base);
      switch (in.op) {
        case Opcode::kDmaLoad:
        case Opcode::kDmaStore: {
          in.sram_addr += l.sram_base;
          if (in.gather) in.index_addr += l.sram_base;
          if (src.region == kLocalSramRegion) {  // both sides in the layer's working area
            in.dram_addr += l.sram_base;
            break;
          }
          const DramRegion& r = p.regions[src.region];
          const int x = region_tensor[src.region];
          if (x < 0) {
            const Range far = FarRange(src);
            const int rows = streams(i) ? RowsWithin(src, slot_bytes(i)) : 0;
            if (streams(i) && far.lo >= 0 && far.hi <= slot_bytes(i)) {  // from the weight slot
              in.dram_addr += l.weights_addr;
              in.on_chip = true;
            } else if (rows > 0) {  // its first outer rows from the slot, the others from DRAM
              Instr head = in;
              head.dims[0].count = head.dims[0].valid_hi = rows;
              head.dram_addr += l.weights_addr;
              head.on_chip = true;
              local[src.core * kNumQueues + static_cast<int>(in.queue)].push_back(head);
              in.dims[0].count -= rows;
              in.dims[0].valid_hi = in.dims[0].count;
              in.dram_addr += const_base[i] + rows * in.dims[0].dram_stride;
              in.sram_addr += rows * in.dims[0].sram_stride;
            } else {
              in.dram_addr += const_base[i];
            }
          } else {
            in.dram_addr = in.dram_addr - r.addr + tensors[x].addr;
            in.on_chip = tensors[x].in_sram;
          }
          break;
        }
        case Opcode::kMatMul:
          in.a_addr += l.sram_base;
          in.b_addr += l.sram_base;
          has_matmul[src.core] = true;
          break;
        case Opcode::kVec:
        case Opcode::kCopy:
          if (IsSramOperand(in)) in.src += l.sram_base;
          in.src2 += l.sram_base;
          in.dst += l.sram_base;
          in.params += l.sram_base;
          break;
        case Opcode::kSignal:
          in.sem += sem_base[i];
          if (in.to_core >= 0) in.to_core += l.core_base;
          break;
        case Opcode::kWait: in.sem += sem_base[i]; break;
        default: break;
      }
      local[src.core * kNumQueues + static_cast<int>(in.queue)].push_back(in);
    }
    for (int lc = 0; lc < p.cores_used; ++lc) {
      const int c = lc + l.core_base;
      auto mk = [&](Opcode op, QueueKind k, int32_t sem, int32_t to = -1, int32_t count = 1) {
        Instr in{.op = op, .sem = sem, .to_core = to, .count = count};
        in.core = static_cast<uint8_t>(c);
        in.queue = k;
        in.layer = i;
        return in;
      };
      auto wait_done = [&](std::vector<Instr>& dst, int j) {
        if (!waited[c].insert(j).second) return;
        dst.push_back(mk(Opcode::kWait, QueueKind::kLoad, sem_d(j), -1, layers[j].program.cores_used));
      };
      std::vector<Instr>& ld = Q(c, QueueKind::kLoad);
      for (int j : hazards) wait_done(ld, j);
      if (streams(i) && !resident(i)) ld.push_back(mk(Opcode::kWait, QueueKind::kLoad, sem_f(i), -1, fillers[i]));
      for (const Instr& in : local[lc * kNumQueues + static_cast<int>(QueueKind::kLoad)]) {
        const int px = in.op == Opcode::kDmaLoad && in.region >= 0 ? region_tensor[in.region] : -1;
        if (px >= 0 && progress.pipelined[i].count(px) && !waited[c].count(tensors[px].producer)) {
          // The producer's stores this load reads: per producer core, its last one over these bytes.
          const int x = px;
          const int j = tensors[x].producer;
          const Range far = FarRange(in);  // relocated: the tensor's own address is its base
          const Range want{far.lo - tensors[x].addr, far.hi - tensors[x].addr};
          for (int pc = 0; pc < layers[j].program.cores_used; ++pc) {
            const auto& st = progress.stores[j][pc];
            int last = -1;
            for (int k = static_cast<int>(st.size()) - 1; k >= 0 && last < 0; --k)
              if (st[k].tensor == x && st[k].bytes.Overlaps(want)) last = st[k].ordinal;
            int& have = taken[{c, j, pc}];
            if (last + 1 > have) {
              ld.push_back(mk(Opcode::kWait, QueueKind::kLoad, sem_p(j, pc), -1, last + 1 - have));
              have = last + 1;
            }
          }
          ld.push_back(in);
          continue;
        }
        if (in.op == Opcode::kDmaLoad && in.region >= 0) {
          const int x = region_tensor[in.region];
          if (x >= 0 && tensors[x].producer >= 0) wait_done(ld, tensors[x].producer);
          if (x >= 0)
            for (int y : {x, root(x)})
              for (int w : writers[y])
                if (w < i) wait_done(ld, w);
        }
        ld.push_back(in);
      }
      ld.push_back(mk(Opcode::kSignal, QueueKind::kLoad, sem_e(i)));
      std::vector<Instr>& ex = Q(c, QueueKind::kExecute);
      if (has_matmul[lc] && last_matmul[c] >= 0)
        ex.push_back(mk(Opcode::kWait, QueueKind::kExecute, sem_v(last_matmul[c])));
      const auto& lex = local[lc * kNumQueues + static_cast<int>(QueueKind::kExecute)];
      ex.insert(ex.end(), lex.begin(), lex.end());
      ex.push_back(mk(Opcode::kSignal, QueueKind::kExecute, sem_e(i)));
      std::vector<Instr>& ve = Q(c, QueueKind::kVector);
      const auto& lve = local[lc * kNumQueues + static_cast<int>(QueueKind::kVector)];
      ve.insert(ve.end(), lve.begin(), lve.end());
      ve.push_back(mk(Opcode::kSignal, QueueKind::kVector, sem_e(i)));
      if (has_matmul[lc]) {
        ve.push_back(mk(Opcode::kSignal, QueueKind::kVector, sem_v(i)));
        last_matmul[c] = i;
      }
      std::vector<Instr>& st = Q(c, QueueKind::kStore);
      const auto& lst = local[lc * kNumQueues + static_cast<int>(QueueKind::kStore)];
      for (const Instr& in : lst) {
        st.push_back(in);
        if (in.op == Opcode::kDmaStore && progress.signal_to[i].second > 0)
          st.push_back(mk(Opcode::kSignal, QueueKind::kStore, sem_p(i, lc), progress.signal_to[i].first,
                          progress.signal_to[i].second));
      }
      st.push_back(mk(Opcode::kWait, QueueKind::kStore, sem_e(i), -1, 3));
      st.push_back(mk(Opcode::kSignal, QueueKind::kStore, sem_d(i), 0, N));
      st.push_back(mk(Opcode::kSignal, QueueKind::kStore, sem_dp(i), 0, N));
    }
    out.layer_names.push_back(l.name);
  }
  out.cores_used = 0;
  for (const SegmentLayer& l : layers) out.cores_used = std::max(out.cores_used, l.core_base + l.program.cores_used);
  // The resident weights' task: their images in chunks dealt round-robin over the cores.
  std::vector<Instr> fill;
  for (int i = 0, k = 0; i < L; ++i) {
    if (!resident(i)) continue;
    constexpr int64_t kChunk = 65536;
    for (int64_t off = 0; off < const_extent[i]; off += kChunk, ++k) {
      Instr ld{.op = Opcode::kDmaLoad};
      ld.core = static_cast<uint8_t>(k % used_cores);
      ld.queue = QueueKind::kLoad;
      ld.layer = i;
      ld.dram_addr = const_base[i] + off;
      ld.sram_addr = layers[i].weights_addr + off;
      ld.row_bytes = ld.sram_row_bytes = static_cast<int32_t>(std::min(kChunk, const_extent[i] - off));
      fill.push_back(ld);
    }
  }
  int32_t task = 0;
  if (!fill.empty()) {
    out.task_names.insert(out.task_names.begin(), task_name + ": resident weights");
    out.instrs.push_back(Instr{.op = Opcode::kTaskBegin, .sem = task++});
    out.instrs.insert(out.instrs.end(), fill.begin(), fill.end());
    out.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
  }
  out.instrs.push_back(Instr{.op = Opcode::kTaskBegin, .sem = task});
  for (const auto& v : q) out.instrs.insert(out.instrs.end(), v.begin(), v.end());
  out.instrs.push_back(Instr{.op = Opcode::kTaskEnd, .sem = 0});
  return out;
}

}  // namespace edgec::npu
