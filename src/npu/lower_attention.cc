// Attention as one NPU layer (see lower_attention.h).
#include "npu/lower_attention.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "npu/emit.h"
#include "npu/sim.h"

namespace edgec::npu {
namespace {

// Semaphores of each core, in producer -> consumer pairs.
enum Sem : int32_t {
  kKvFree, kKvFull,  // K and V of a head: load -> exec
  kQFree, kQFull,    // a block's Q rows: load -> exec
  kS1Free, kS1Full,  // the scores' accumulators: exec -> vector
  kPFree, kPFull,    // the probabilities (int8; with an int16 softmax after its rescale): vector -> exec
  kS2Free, kS2Full,  // the context's accumulators: exec -> vector
  kOFree, kOFull,    // the output rows: vector -> store
  kNumSems
};
// Region indices (Instr::region), in the order of Program::regions.
constexpr int16_t kQRegion = 0, kKRegion = 1, kVRegion = 2, kParamsRegion = 3, kOutRegion = 4;
// Columns of one requantization parameter block (the multiplier is per tensor: a wider
// row is requantized in chunks of this many columns that all read one block, and a last
// narrower chunk reading a block of its own width: the VEC finds the multipliers and shifts
// `cols` entries after the biases). NpuAttentionTest's 300-key case guards it.
constexpr int64_t kRequantCols = 256;

template <typename T>
void Append(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void AppendRequant(std::vector<uint8_t>& out, int64_t cols, int32_t bias, const quant::FixedPointMultiplier& m) {
  for (int64_t c = 0; c < cols; ++c) Append<int32_t>(out, bias);
  for (int64_t c = 0; c < cols; ++c) Append<int32_t>(out, m.multiplier);
  for (int64_t c = 0; c < cols; ++c) Append<int32_t>(out, m.shift);
}

std::array<int64_t, 3> KStrides(const AttentionLayer& l) {
  const auto& s = l.k_strides;
  if (s[0] || s[1] || s[2]) return s;
  return {int64_t{l.depth} * l.keys, l.keys, 1};
}
std::array<int64_t, 3> VStrides(const AttentionLayer& l) {
  const auto& s = l.v_strides;
  if (s[0] || s[1] || s[2]) return s;
  return {int64_t{l.keys} * l.v_depth, l.v_depth, 1};
}

// The SRAM layout of one core (offsets from its base) and of the layer.
struct Layout {
  int nbuf = 1, cores = 1, blocks = 1;
  int64_t k_slot = 0, v_slot = 0, kv_slot = 0;
  // Per buffer slot: Q rows, scores, the int16 probabilities (an int16 softmax; else 0), the
  // 8-bit probabilities, output rows.
  int64_t q = 0, s = 0, p16 = 0, p = 0, o = 0, slot = 0;
  int64_t params = 0, params_bytes = 0, s_cols = 0, o_cols = 0;
  // Offsets in the parameter block: the exp table at 0, then the scores' and the output's
  // requantization blocks (full chunk, then the last chunk's when narrower).
  int64_t s_full = 0, s_tail = 0, o_full = 0, o_tail = 0;
  int64_t per_core = 0;
  int64_t acc1 = 0, acc2 = 0, acc_slot = 0;  // accumulator bytes
};

Layout LayoutOf(const AttentionLayer& l, const Target& t, const AttentionTiling& tl) {
  Layout y;
  const int64_t al = t.shared_sram.alignment, R = tl.block_rows;
  y.nbuf = tl.double_buffer ? 2 : 1;
  y.blocks = static_cast<int>(CeilDiv(l.rows, R));
  y.cores = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tl.cores, int64_t{l.heads} * y.blocks)));
  y.k_slot = AlignUp(int64_t{l.keys} * l.depth, al);
  y.v_slot = AlignUp(int64_t{l.keys} * l.v_depth, al);
  y.kv_slot = y.k_slot + y.v_slot;
  y.q = AlignUp(R * l.depth, al);
  const int64_t es = l.wide ? 2 : 1;  // bytes of a score
  y.s = AlignUp(R * l.keys * es, al);
  y.p16 = l.wide ? y.s : 0;
  y.p = AlignUp(R * l.keys, al);
  y.o = AlignUp(R * l.v_depth, al);
  y.slot = y.q + y.s + y.p16 + y.p + y.o;
  y.s_cols = std::min<int64_t>(l.keys, kRequantCols);
  y.o_cols = std::min<int64_t>(l.v_depth, kRequantCols);
  y.s_full = l.wide ? kWideSoftmaxParamsBytes : kSoftmaxParamsBytes;
  y.s_tail = y.s_full + 12 * y.s_cols;
  y.o_full = y.s_tail + 12 * (l.keys % y.s_cols);
  y.o_tail = y.o_full + 12 * y.o_cols;
  y.params_bytes = y.o_tail + 12 * (l.v_depth % y.o_cols);
  y.params = y.nbuf * (y.kv_slot + y.slot);
  y.per_core = y.params + AlignUp(y.params_bytes, al);
  y.acc1 = R * l.keys * 4;
  y.acc2 = R * l.v_depth * 4;
  y.acc_slot = y.acc1 + y.acc2;
  return y;
}

Status CheckShapes(const AttentionLayer& l) {
  if (l.heads < 1 || l.rows < 1 || l.keys < 1 || l.depth < 1 || l.v_depth < 1)
    return InvalidArgument("attention '{}': empty shape {}x{}x{} keys {} v {}", l.name, l.heads, l.rows, l.depth, l.keys,
                           l.v_depth);
  const auto ks = KStrides(l), vs = VStrides(l);
  if (ks[1] != 1 && ks[2] != 1) return InvalidArgument("attention '{}': K has no contiguous dim", l.name);
  if (vs[1] != 1 && vs[2] != 1) return InvalidArgument("attention '{}': V has no contiguous dim", l.name);
  return Status::Ok();
}

}  // namespace

std::string AttentionTiling::ToString() const {
  return fmt::format("attention rows {} {} x{} cores", block_rows, double_buffer ? "double" : "single", cores);
}

StatusOr<AttentionFootprint> CheckAttentionTiling(const AttentionLayer& l, const Target& t, const AttentionTiling& tl) {
  RETURN_IF_ERROR(CheckShapes(l));
  if (tl.block_rows < 1 || tl.cores < 1) return InvalidArgument("attention '{}': tiling {}", l.name, tl.ToString());
  if (l.wide && t.vector_cores.VecRate("i16") <= 0)
    return InvalidArgument("attention '{}': an int16 softmax, but the vector cores of {} take no i16", l.name, t.name);
  const Layout y = LayoutOf(l, t, tl);
  if (y.nbuf * y.acc_slot > t.ai_cores.accumulator_bytes)
    return InvalidArgument("attention '{}': {} rows x {} keys need {} accumulator bytes, the core has {}", l.name,
                           tl.block_rows, l.keys, y.nbuf * y.acc_slot, t.ai_cores.accumulator_bytes);
  if (y.per_core * y.cores > t.shared_sram.bytes)
    return InvalidArgument("attention '{}': {} bytes of SRAM per core x {} cores do not fit {} bytes", l.name,
                           y.per_core, y.cores, t.shared_sram.bytes);
  if (int64_t{tl.block_rows} * std::max(l.keys, l.v_depth) * 4 > INT32_MAX)
    return InvalidArgument("attention '{}': a block of {} rows is too large", l.name, tl.block_rows);
  return AttentionFootprint{y.per_core * y.cores, (y.s + y.p16 + y.p) * y.nbuf * y.cores};
}

StatusOr<Program> LowerAttention(const AttentionLayer& l, const Target& t, const AttentionTiling& tl) {
  RETURN_IF_ERROR(CheckAttentionTiling(l, t, tl).status());
  const Layout y = LayoutOf(l, t, tl);
  const int R = tl.block_rows;
  const auto ks = KStrides(l), vs = VStrides(l);
  const bool k_trans = ks[1] == 1 && ks[2] != 1;  // K's rows hold depth values: b read transposed
  const bool v_trans = vs[2] != 1;                // V's rows hold keys values
  Program p;
  {
    std::vector<uint8_t>& c = p.dram_init;
    if (l.wide) {
      for (int32_t v : l.wide_softmax.exp_hi) Append(c, v);
      for (int32_t v : l.wide_softmax.exp_lo) Append(c, v);
    } else {
      for (int32_t v : l.softmax.exp_table) Append(c, v);
    }
    AppendRequant(c, y.s_cols, l.s_bias, l.s_mult);
    AppendRequant(c, l.keys % y.s_cols, l.s_bias, l.s_mult);
    AppendRequant(c, y.o_cols, l.o_bias, l.o_mult);
    AppendRequant(c, l.v_depth % y.o_cols, l.o_bias, l.o_mult);
  }
  const int64_t k_bytes = int64_t{l.heads} * l.depth * l.keys, v_bytes = int64_t{l.heads} * l.keys * l.v_depth;
  const int64_t q_addr = AlignUp(static_cast<int64_t>(p.dram_init.size()), 64);
  const int64_t k_addr = q_addr + AlignUp(l.q_bytes(), 64);
  const int64_t v_addr = k_addr + AlignUp(k_bytes, 64);
  const int64_t o_addr = v_addr + AlignUp(v_bytes, 64);
  p.dram_bytes = o_addr + l.o_bytes();
  p.regions = {{l.name + ".input", q_addr, l.q_bytes()},
               {l.name + ".input1", k_addr, k_bytes},
               {l.name + ".input2", v_addr, v_bytes},
               {l.name + ".params", 0, static_cast<int64_t>(p.dram_init.size())},
               {l.name + ".output", o_addr, l.o_bytes()}};
  p.cores_used = y.cores;
  p.semaphores = kNumSems;
  const int64_t items = int64_t{l.heads} * y.blocks;
  const int nkv = y.nbuf;

  std::vector<CoreEmitter> emitters(y.cores);
  for (int c = 0; c < y.cores; ++c) {
    CoreEmitter& e = emitters[c];
    e.core = c;
    const int64_t base = c * y.per_core, params = base + y.params;
    const int64_t first = items * c / y.cores, last = items * (c + 1) / y.cores;
    const int64_t n = last - first;
    auto head = [&](int64_t j) { return static_cast<int>((first + j) / y.blocks); };
    auto row0 = [&](int64_t j) { return static_cast<int>((first + j) % y.blocks) * R; };
    auto nrows = [&](int64_t j) { return std::min(R, l.rows - row0(j)); };
    auto slot = [&](int64_t j) { return base + y.nbuf * y.kv_slot + (j % y.nbuf) * y.slot; };
    // Which K/V slot item j reads (heads are consecutive on a core).
    std::vector<int> kv(n, 0);
    for (int64_t j = 1, h = 0; j < n; ++j) {
      if (head(j) != head(j - 1)) ++h;
      kv[j] = static_cast<int>(h % nkv);
    }
    auto new_head = [&](int64_t j) { return j == 0 || head(j) != head(j - 1); };
    auto last_of_head = [&](int64_t j) { return j + 1 == n || head(j + 1) != head(j); };
    for (int s = 0; s < y.nbuf; ++s) {
      e.Signal(QueueKind::kLoad, kKvFree);
      e.Signal(QueueKind::kLoad, kQFree);
      e.Signal(QueueKind::kExecute, kS1Free);
      e.Signal(QueueKind::kVector, kPFree);
      e.Signal(QueueKind::kExecute, kS2Free);
      e.Signal(QueueKind::kVector, kOFree);
    }
    if (n == 0) continue;
    // Load queue: the parameters once, then per item its head's K and V (when new) and its Q rows.
    e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, 0, params, y.params_bytes, kParamsRegion));
    for (int64_t j = 0; j < n; ++j) {
      const int h = head(j);
      if (new_head(j)) {
        e.Wait(QueueKind::kLoad, kKvFree);
        const int64_t kdst = base + kv[j] * y.kv_slot, vdst = kdst + y.k_slot;
        Instr k{.op = Opcode::kDmaLoad};
        k.region = kKRegion;
        k.ndims = 1;
        k.dram_addr = k_addr + h * ks[0];
        k.sram_addr = kdst;
        if (k_trans) {  // [keys][depth]
          k.row_bytes = k.sram_row_bytes = l.depth;
          k.dims[0] = {l.keys, ks[2], l.depth, 0, l.keys};
        } else {  // [depth][keys]
          k.row_bytes = k.sram_row_bytes = l.keys;
          k.dims[0] = {l.depth, ks[1], l.keys, 0, l.depth};
        }
        EmitDma(e, t, k);
        Instr v{.op = Opcode::kDmaLoad};
        v.region = kVRegion;
        v.ndims = 1;
        v.dram_addr = v_addr + h * vs[0];
        v.sram_addr = vdst;
        if (v_trans) {  // [v_depth][keys]
          v.row_bytes = v.sram_row_bytes = l.keys;
          v.dims[0] = {l.v_depth, vs[2], l.keys, 0, l.v_depth};
        } else {  // [keys][v_depth]
          v.row_bytes = v.sram_row_bytes = l.v_depth;
          v.dims[0] = {l.keys, vs[1], l.v_depth, 0, l.keys};
        }
        EmitDma(e, t, v);
        e.Signal(QueueKind::kLoad, kKvFull);
      }
      e.Wait(QueueKind::kLoad, kQFree);
      e.Add(QueueKind::kLoad, ContiguousDma(Opcode::kDmaLoad, q_addr + (int64_t{h} * l.rows + row0(j)) * l.depth, slot(j),
                                            int64_t{nrows(j)} * l.depth, kQRegion));
      e.Signal(QueueKind::kLoad, kQFull);
    }
    // Execute and vector queues: the scores of item j + 1 go ahead of the context of item j
    // (the MAC array computes while the vector core runs the softmax), except across a head
    // change with one K/V slot (the next head's K/V load waits for this head's last context).
    auto acc1 = [&](int64_t j) { return (j % y.nbuf) * y.acc_slot; };
    auto acc2 = [&](int64_t j) { return (j % y.nbuf) * y.acc_slot + y.acc1; };
    auto scores = [&](int64_t j) {  // exec: S = Q·Kᵀ
      if (new_head(j)) e.Wait(QueueKind::kExecute, kKvFull);
      e.Wait(QueueKind::kExecute, kQFull);
      e.Wait(QueueKind::kExecute, kS1Free);
      const int64_t kb = base + kv[j] * y.kv_slot;
      Instr mm{.op = Opcode::kMatMul};
      mm.a_addr = slot(j);
      mm.a_stride = l.depth;
      mm.b_addr = kb;
      mm.b_trans = k_trans;
      mm.b_stride = k_trans ? l.depth : l.keys;
      mm.acc_addr = acc1(j);
      mm.acc_stride = l.keys * 4;
      mm.m = nrows(j);
      mm.k = l.depth;
      mm.n = l.keys;
      mm.a_zero = l.q_zero;
      mm.b_zero = l.k_zero;
      e.Add(QueueKind::kExecute, mm);
      e.Signal(QueueKind::kExecute, kQFree);
      e.Signal(QueueKind::kExecute, kS1Full);
    };
    auto context = [&](int64_t j) {  // exec: O = P·V
      e.Wait(QueueKind::kExecute, kPFull);
      e.Wait(QueueKind::kExecute, kS2Free);
      const int64_t vb = base + kv[j] * y.kv_slot + y.k_slot;
      Instr mm{.op = Opcode::kMatMul};
      mm.a_addr = slot(j) + y.q + y.s + y.p16;
      mm.a_stride = l.keys;
      mm.b_addr = vb;
      mm.b_trans = v_trans;
      mm.b_stride = v_trans ? l.keys : l.v_depth;
      mm.acc_addr = acc2(j);
      mm.acc_stride = l.v_depth * 4;
      mm.m = nrows(j);
      mm.k = l.keys;
      mm.n = l.v_depth;
      mm.a_zero = l.p_zero;
      mm.b_zero = l.v_zero;
      e.Add(QueueKind::kExecute, mm);
      e.Signal(QueueKind::kExecute, kPFree);
      e.Signal(QueueKind::kExecute, kS2Full);
      if (last_of_head(j)) e.Signal(QueueKind::kExecute, kKvFree);
    };
    auto requant = [&](int64_t src, int64_t dst, int rows, int64_t cols, int64_t pcols, int64_t full, int64_t tail,
                       int32_t zero, int32_t lo, int32_t hi, int64_t ey) {  // ey: bytes of a result
      for (int64_t c0 = 0; c0 < cols; c0 += pcols) {
        Instr rq{.op = Opcode::kVec, .vec = VecOp::kRequantize};
        rq.src = src + c0 * 4;
        rq.src_stride = static_cast<int32_t>(cols * 4);
        rq.dst = dst + c0 * ey;
        rq.dst_stride = static_cast<int32_t>(cols * ey);
        if (ey == 2) rq.imm[kRequantBytesImm] = 2;
        rq.params = params + (c0 + pcols <= cols ? full : tail);
        rq.rows = rows;
        rq.cols = static_cast<int32_t>(std::min(pcols, cols - c0));
        rq.imm[0] = zero;
        rq.imm[1] = lo;
        rq.imm[2] = hi;
        e.Add(QueueKind::kVector, rq);
      }
    };
    auto softmax = [&](int64_t j) {  // vector: requantize the scores, softmax them
      e.Wait(QueueKind::kVector, kS1Full);
      e.Wait(QueueKind::kVector, kPFree);
      const int64_t es = l.wide ? 2 : 1;
      const int64_t s = slot(j) + y.q, pb = s + y.s;
      requant(acc1(j), s, nrows(j), l.keys, y.s_cols, y.s_full, y.s_tail, l.s_zero, l.s_min, l.s_max, es);
      e.Signal(QueueKind::kVector, kS1Free);
      const quant::SoftmaxOutput& so = l.wide ? static_cast<const quant::SoftmaxOutput&>(l.wide_softmax) : l.softmax;
      Instr sm{.op = Opcode::kVec, .vec = VecOp::kSoftmax};
      sm.src = s;
      sm.dst = pb;
      sm.rows = nrows(j);
      sm.cols = l.keys;
      sm.src_stride = sm.dst_stride = static_cast<int32_t>(l.keys * es);
      sm.params = params;
      sm.imm[0] = so.inv_y.multiplier;
      sm.imm[1] = so.inv_y.shift;
      sm.imm[2] = so.y_zero_point;
      sm.imm[3] = so.qmin;
      sm.imm[4] = so.qmax;
      if (l.wide) sm.imm[kWideImm] = 1;
      e.Add(QueueKind::kVector, sm);
      if (l.wide) {  // the int16 probabilities to the 8-bit ones the context reads
        const quant::RescaleParams& r = l.narrow;
        Instr rs{.op = Opcode::kVec, .vec = VecOp::kRescale,
                 .imm = {r.x_zero_point, r.y_zero_point, r.m.multiplier, r.m.shift, r.qmin, r.qmax, 2, 1}};
        rs.src = pb;
        rs.dst = pb + y.p16;
        rs.rows = nrows(j);
        rs.cols = l.keys;
        rs.src_stride = static_cast<int32_t>(l.keys * 2);
        rs.dst_stride = l.keys;
        e.Add(QueueKind::kVector, rs);
      }
      e.Signal(QueueKind::kVector, kPFull);
    };
    auto output = [&](int64_t j) {  // vector: requantize the context; store it
      e.Wait(QueueKind::kVector, kS2Full);
      e.Wait(QueueKind::kVector, kOFree);
      const int64_t ob = slot(j) + y.q + y.s + y.p16 + y.p;
      requant(acc2(j), ob, nrows(j), l.v_depth, y.o_cols, y.o_full, y.o_tail, l.o_zero, l.o_min, l.o_max, 1);
      e.Signal(QueueKind::kVector, kS2Free);
      e.Signal(QueueKind::kVector, kOFull);
      e.Wait(QueueKind::kStore, kOFull);
      e.Add(QueueKind::kStore, ContiguousDma(Opcode::kDmaStore, o_addr + (int64_t{head(j)} * l.rows + row0(j)) * l.v_depth,
                                             ob, int64_t{nrows(j)} * l.v_depth, kOutRegion));
      e.Signal(QueueKind::kStore, kOFree);
    };
    scores(0);
    softmax(0);
    for (int64_t j = 0; j < n; ++j) {
      const bool ahead = j + 1 < n && (nkv > 1 || !new_head(j + 1));
      if (ahead) scores(j + 1), softmax(j + 1);
      context(j);
      output(j);
      if (j + 1 < n && !ahead) scores(j + 1), softmax(j + 1);
    }
  }
  AssembleTask(p, emitters);
  p.task_names = {fmt::format("{} (attention {} heads x {}x{} keys {} x{}, {})", l.name, l.heads, l.rows, l.depth,
                              l.keys, l.v_depth, tl.ToString())};
  return p;
}

StatusOr<AttentionChoice> ChooseAttentionTiling(const AttentionLayer& l, const Target& t, const TilerOptions& opt) {
  RETURN_IF_ERROR(CheckShapes(l));
  std::vector<int> rows;
  for (int r = 1; r < l.rows; r *= 2) rows.push_back(r);
  rows.push_back(l.rows);
  // Enough blocks for every core, when the rows allow it.
  const int64_t blocks = CeilDiv(t.ai_cores.count, l.heads);
  rows.push_back(static_cast<int>(CeilDiv(l.rows, std::min<int64_t>(blocks, l.rows))));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::optional<AttentionChoice> best;
  Status last = InvalidArgument("attention '{}': no tiling fits {}", l.name, t.name);
  constexpr int kMaxSimulated = 10;
  int simulated = 0;
  // Largest blocks first: they fit least often and issue the fewest instructions.
  for (auto it = rows.rbegin(); it != rows.rend() && simulated < kMaxSimulated; ++it) {
    for (bool db : {true, false}) {
      if (db && !opt.allow_double) continue;
      if (!db && opt.allow_double && !opt.allow_single && best) continue;
      AttentionTiling tl{*it, db, t.ai_cores.count};
      auto fp = CheckAttentionTiling(l, t, tl);
      if (!fp.ok()) {
        last = fp.status();
        continue;
      }
      auto p = LowerAttention(l, t, tl);
      if (!p.ok()) return p.status();
      MarkOnChip(*p, opt);
      ASSIGN_OR_RETURN(SimResult sim, Simulate(*p, t));
      ++simulated;
      if (!best || sim.total.cycles < best->cycles) best = AttentionChoice{tl, sim.total.cycles, *fp};
    }
  }
  if (!best) return last;
  return *best;
}

}  // namespace edgec::npu
