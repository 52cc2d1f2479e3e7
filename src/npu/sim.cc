// Event-driven NPU timing (see sim.h), with the functional model hooked in at each
// instruction's start (read operands) and end (write results).
#include "npu/sim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "npu/sim_functional.h"

namespace edgec::npu {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = 1e-6;


double CyclesPerElement(const Target& t, VecOp op, bool copy) {
  // A resize output value is four multiply-accumulates on a lane, as a depthwise tap.
  auto it = t.vector_cores.cycles_per_element.find(copy                      ? "copy"
                                                     : op == VecOp::kResize ? "dwconv"
                                                     : op == VecOp::kArgMax ? "maxpool"
                                                                            : VecOpName(op));
  return it == t.vector_cores.cycles_per_element.end() ? 1.0 : it->second;
}

// Pools and the depthwise convolution: a window slid over an HWC tile.
bool IsWindowOp(const Instr& in) {
  return in.op == Opcode::kVec && (in.vec == VecOp::kMaxPool || in.vec == VecOp::kAvgPool || in.vec == VecOp::kDwConv);
}

// Output rows / columns of a window op's tile (a dilated window spans WindowExtent pixels).
int64_t WindowOutH(const Instr& in) {
  return in.stride_h ? (in.in_h - WindowExtent(in.win_h, WindowDilation(in.imm, 0))) / in.stride_h + 1 : 0;
}
int64_t WindowOutW(const Instr& in) {
  return in.stride_w ? (in.in_w - WindowExtent(in.win_w, WindowDilation(in.imm, 1))) / in.stride_w + 1 : 0;
}

// Output pixels x channels x window positions of a window op (the taps, not the extent).
int64_t WindowElements(const Instr& in) { return WindowOutH(in) * WindowOutW(in) * in.cols * in.win_h * in.win_w; }

}  // namespace

int64_t SramEnd(const Instr& in) {
  switch (in.op) {
    case Opcode::kDmaLoad:
    case Opcode::kDmaStore: {
      int64_t end = in.sram_addr + std::max(in.row_bytes, in.sram_row_bytes);
      for (int d = 0; d < in.ndims; ++d) end += int64_t{in.dims[d].count - 1} * in.dims[d].sram_stride;
      if (in.gather && in.ndims >= 1) end = std::max(end, in.index_addr + int64_t{8} * in.dims[0].count);
      if (in.on_chip) {  // the far side: the rows in the valid box
        int64_t far = in.dram_addr + in.row_bytes;
        for (int d = 0; d < in.ndims; ++d)
          if (in.dims[d].valid_hi > in.dims[d].valid_lo)
            far += int64_t{in.dims[d].valid_hi - 1} * in.dims[d].dram_stride;
        end = std::max(end, far);
      }
      return end;
    }
    case Opcode::kMatMul:
      return std::max(in.a_addr + int64_t{in.m - 1} * in.a_stride + in.k,
                      in.b_trans ? in.b_addr + int64_t{in.n - 1} * in.b_stride + in.k
                                 : in.b_addr + int64_t{in.k - 1} * in.b_stride + in.n);
    case Opcode::kVec:
    case Opcode::kCopy: {
      const bool wide = in.op == Opcode::kVec && (in.vec == VecOp::kNorm || in.vec == VecOp::kSoftmax) &&
                        in.imm[kWideImm] == 1;
      int64_t end = in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride + in.cols * (wide ? 2 : 1);
      if (IsWindowOp(in)) {
        const int64_t oh = WindowOutH(in), ow = WindowOutW(in);
        end = std::max(in.src + (int64_t{in.in_h} * in.in_w) * in.src_stride,
                       in.dst + oh * ow * in.dst_stride);
        if (in.vec == VecOp::kDwConv)
          end = std::max(end, in.params + DwParamsOffset(int64_t{in.win_h} * in.win_w, in.cols) + int64_t{12} * in.cols);
        if (in.vec == VecOp::kAvgPool && in.imm[kPoolPixelMultImm] == 1)
          end = std::max(end, in.params + PoolPixelParamsBytes(oh * ow));
      }
      if (in.op == Opcode::kCopy && in.imm[kPitchImm] > 1)  // a transposing copy
        end = std::max(end, in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride +
                                int64_t{std::max(in.cols, 1) - 1} * in.imm[kPitchImm] + 1);
      if (in.vec == VecOp::kRequantize && in.op == Opcode::kVec) {
        end = std::max(end, in.params + int64_t{12} * in.cols);
        if (in.imm[kRequantBytesImm] == 2)  // int16 destination
          end = std::max(end, in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride + 2 * int64_t{in.cols});
      }
      if ((in.vec == VecOp::kAdd || in.vec == VecOp::kMul) && in.op == Opcode::kVec) {  // int16 sides (kAddBytesImm)
        auto bytes = [&](int i) { return int64_t{in.imm[kAddBytesImm + i] == 2 ? 2 : 1}; };
        end = std::max({end, in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride + bytes(2) * in.cols,
                        in.src + int64_t{std::max(in.rows, 1) - 1} * in.src_stride + bytes(0) * in.cols,
                        in.src2 + int64_t{std::max(in.rows, 1) - 1} * in.src2_stride +
                            bytes(1) * (in.imm[kBroadcastImm] == 1 ? 1 : in.cols)});
      }
      if (in.vec == VecOp::kLut && in.op == Opcode::kVec) {
        const bool wide_lut = in.imm[kLutBytesImm] == 2;
        const int64_t tables = in.imm[kLutPerColumnImm] == 1 ? std::max(in.cols, 1) : 1;  // one per column
        end = std::max(end, in.params + (wide_lut ? 65536 : 256 * tables));
        if (wide_lut) end = std::max(end, in.src + int64_t{std::max(in.rows, 1) - 1} * in.src_stride + 2 * int64_t{in.cols});
      }
      if (in.vec == VecOp::kQuantize && in.op == Opcode::kVec)  // f32 source rows
        end = std::max(end, in.src + int64_t{std::max(in.rows, 1) - 1} * in.src_stride + 4 * int64_t{in.cols});
      if ((in.vec == VecOp::kQuantize || in.vec == VecOp::kDequantize) && in.op == Opcode::kVec &&
          in.imm[kPitchImm] > 1)  // the interleaved i8 side
        end = std::max(end, (in.vec == VecOp::kQuantize ? in.dst : in.src) +
                                int64_t{std::max(in.rows, 1) - 1} *
                                    (in.vec == VecOp::kQuantize ? in.dst_stride : in.src_stride) +
                                int64_t{std::max(in.cols, 1) - 1} * in.imm[kPitchImm] +
                                (in.vec == VecOp::kDequantize && in.imm[kDequantBytesImm] == 2 ? 2 : 1));
      if (in.vec == VecOp::kDequantize && in.op == Opcode::kVec && in.imm[kDequantBytesImm] == 2)  // int16 rows
        end = std::max(end, in.src + int64_t{std::max(in.rows, 1) - 1} * in.src_stride + 2 * int64_t{in.cols});
      if (in.vec == VecOp::kDequantize && in.op == Opcode::kVec)  // f32 destination rows
        end = std::max(end, in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride + 4 * int64_t{in.cols});
      if (in.vec == VecOp::kRescale && in.op == Opcode::kVec)  // 1- or 2-byte elements
        end = std::max(in.src + int64_t{std::max(in.rows, 1) - 1} * in.src_stride + int64_t{in.imm[6]} * in.cols,
                       in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride + int64_t{in.imm[7]} * in.cols);
      if (in.vec == VecOp::kNorm && in.op == Opcode::kVec)
        end = std::max(end, in.params + (wide ? WideNormParamsBytes(in.cols) : NormParamsBytes(in.cols)));
      if (in.vec == VecOp::kSoftmax && in.op == Opcode::kVec)
        end = std::max(end, in.params + (wide ? kWideSoftmaxParamsBytes : kSoftmaxParamsBytes));
      if (in.vec == VecOp::kArgMax && in.op == Opcode::kVec)  // int64 indices (isa.h kArgMax)
        end = std::max(in.src + int64_t{std::max(in.rows, 1) - 1} * in.src_stride + in.cols,
                       in.dst + int64_t{std::max(in.rows, 1) - 1} * in.dst_stride + 8);
      if (in.vec == VecOp::kResize && in.op == Opcode::kVec) {
        end = std::max({end, in.src + int64_t{in.in_h} * in.src_stride,
                        in.params + (int64_t{in.imm[0]} + in.rows) * kResizeTapBytes,
                        in.src2 + int64_t{in.win_w} * kResizeTapBytes});
      }
      return end;
    }
    default: return 0;
  }
}

int64_t SramFootprint(const Program& p) {
  int64_t end = 0;
  for (const Instr& in : p.instrs) end = std::max(end, SramEnd(in));
  return end;
}

double MatMulCycles(const Target& t, int64_t m, int64_t k, int64_t n, bool fp16) {
  const int64_t r = t.ai_cores.mac_rows, c = t.ai_cores.mac_cols;
  const double rate = fp16 ? t.ai_cores.fp16_rate : t.ai_cores.int8_rate;
  if (t.ai_cores.dataflow == Dataflow::kOutputStationary)  // M on the rows, K streamed
    return static_cast<double>(CeilDiv(m, r) * CeilDiv(n, c) * (r + c + k - 2)) / rate;
  return static_cast<double>(CeilDiv(k, r) * CeilDiv(n, c) * (2 * r + c + m - 2)) / rate;
}

int64_t MappedMacs(const Target& t, int64_t m, int64_t k, int64_t n) {
  const int64_t r = t.ai_cores.mac_rows, c = t.ai_cores.mac_cols;
  if (t.ai_cores.dataflow == Dataflow::kOutputStationary) return CeilDiv(m, r) * r * CeilDiv(n, c) * c * k;
  return CeilDiv(k, r) * r * CeilDiv(n, c) * c * m;
}

double VecCycles(const Target& t, const Instr& in) {
  int64_t elems = int64_t{in.rows} * in.cols;
  if (IsWindowOp(in)) elems = WindowElements(in);
  if (in.op == Opcode::kVec && in.vec == VecOp::kResize) elems = int64_t{in.rows} * in.win_w * in.cols * 4;
  // An int16 norm / softmax runs at the vector cores' declared i16 rate (isa.h kWideImm).
  // So does a rescale with a 2-byte side (isa.h kRescale), a requantize writing int16 and an
  // add or multiply with an int16 side (kRequantBytesImm, kAddBytesImm).
  const bool wide = in.op == Opcode::kVec &&
                    (((in.vec == VecOp::kNorm || in.vec == VecOp::kSoftmax) && in.imm[kWideImm] == 1) ||
                     (in.vec == VecOp::kRescale && (in.imm[6] == 2 || in.imm[7] == 2)) ||
                     (in.vec == VecOp::kRequantize && in.imm[kRequantBytesImm] == 2) ||
                     (in.vec == VecOp::kLut && in.imm[kLutBytesImm] == 2) ||
                     ((in.vec == VecOp::kAdd || in.vec == VecOp::kMul) &&
                      (in.imm[kAddBytesImm] == 2 || in.imm[kAddBytesImm + 1] == 2 || in.imm[kAddBytesImm + 2] == 2)));
  const bool f32 = in.op == Opcode::kVec && (in.vec == VecOp::kQuantize || in.vec == VecOp::kDequantize);
  const double rate = wide  ? std::max(t.vector_cores.VecRate("i16"), 1e-9)
                      : f32 ? std::max(t.vector_cores.VecRate("f32"), 1e-9)
                            : 1.0;
  return t.vector_cores.pipeline_latency +
         static_cast<double>(CeilDiv(elems, t.vector_cores.lanes)) *
             CyclesPerElement(t, in.vec, in.op == Opcode::kCopy) / rate;
}

int64_t BurstBytes(const Target& t, const Instr& dma) {
  if (dma.on_chip) return 0;
  const int64_t rows = dma.row_bytes ? dma.dma_bytes() / dma.row_bytes : 0;
  return rows * CeilDiv(dma.row_bytes, t.dram.burst_bytes) * t.dram.burst_bytes;
}

double DmaCycles(const Target& t, const Instr& dma) {
  if (dma.on_chip)
    return t.dma.setup_cycles + static_cast<double>(dma.dma_bytes()) / t.shared_sram.bandwidth_bytes_per_cycle;
  const int latency = dma.op == Opcode::kDmaLoad ? t.dram.read_latency_cycles : t.dram.write_latency_cycles;
  return t.dma.setup_cycles + latency + BurstBytes(t, dma) / t.dram_bytes_per_cycle();
}

double Stats::mac_utilization(const Target& t) const {
  return cycles > 0 ? static_cast<double>(macs) / (cycles * t.peak_int8_macs_per_cycle()) : 0;
}
double Stats::roofline_cycles(const Target& t) const {
  return std::max(macs / t.peak_int8_macs_per_cycle(), (dram_read + dram_written) / t.dram_bytes_per_cycle());
}
bool Stats::compute_bound(const Target& t) const {
  return macs / t.peak_int8_macs_per_cycle() >= (dram_read + dram_written) / t.dram_bytes_per_cycle();
}
void Stats::Add(const Stats& o) {
  // Every counter that sums; sram_peak is a maximum.
  static constexpr int64_t Stats::*kCounts[] = {
      &Stats::macs,         &Stats::mapped_macs, &Stats::dram_read, &Stats::dram_written,
      &Stats::dram_burst_bytes, &Stats::onchip_bytes, &Stats::instructions, &Stats::dmas,
      &Stats::matmuls,      &Stats::vecs,        &Stats::copies,    &Stats::copy_bytes};
  for (int64_t Stats::*count : kCounts) this->*count += o.*count;
  cycles += o.cycles;
  compute_cycles += o.compute_cycles;
  sram_peak = std::max(sram_peak, o.sram_peak);
  for (auto& [k, v] : o.stalls) stalls[k] += v;
  for (int q = 0; q < kNumQueues; ++q) busy[q] += o.busy[q];
}

namespace {

// Runs one task (instructions [begin, end) of the program) starting at time `t0`.
class TaskSim {
 public:
  TaskSim(const Program& p, const Target& t, const SimOptions& opt, Memories* mem, SimResult* result)
      : p_(p), t_(t), opt_(opt), mem_(mem), result_(result) {}

  StatusOr<Stats> Run(size_t begin, size_t end, double t0) {
    const int cores = t_.ai_cores.count;
    queues_.assign(cores * kNumQueues, Queue{});
    tokens_.assign(cores * std::max(p_.semaphores, 1), std::multiset<double>{});
    vec_busy_.assign(t_.vector_cores.count, t0);
    dma_active_.assign(cores, 0);
    for (size_t i = begin; i < end; ++i) {
      const Instr& in = p_.instrs[i];
      if (in.op == Opcode::kTaskBegin || in.op == Opcode::kTaskEnd) continue;
      queues_[in.core * kNumQueues + static_cast<int>(in.queue)].list.push_back(static_cast<int>(i));
      Account(in);
    }
    now_ = t0;
    const double bw = t_.dram_bytes_per_cycle();
    while (true) {
      RETURN_IF_ERROR(StartReady());
      bool all_done = true;
      double next = kInf;
      // Processor sharing of the DRAM bandwidth; a prefetch-queue transfer takes only what the
      // layers' own loads and stores leave (sim.h).
      int fore = 0, back = 0;
      for (auto& d : dmas_)
        if (d.transferring) (d.background ? back : fore)++;
      auto rate = [&](const ActiveDma& d) { return d.background ? (fore ? 0.0 : bw / back) : bw / fore; };
      for (size_t qi = 0; qi < queues_.size(); ++qi) {
        Queue& q = queues_[qi];
        if (q.running || q.next < q.list.size()) all_done = false;
        if (q.running && !q.dma) next = std::min(next, q.end);
        if (!q.running && q.next < q.list.size()) next = std::min(next, WakeTime(qi));
      }
      for (auto& d : dmas_) {
        if (!d.transferring) next = std::min(next, d.phase1_end);
        else if (rate(d) > 0) next = std::min(next, now_ + d.remaining / rate(d));
      }
      if (all_done) break;
      if (next == kInf) return Deadlock();
      const double dt = next - now_;
      for (auto& d : dmas_)
        if (d.transferring) d.remaining -= dt * rate(d);
      Attribute(dt);
      now_ = next;
      RETURN_IF_ERROR(CompleteFinished());
    }
    stats_.cycles = now_ - t0;
    return stats_;
  }

 private:
  struct Queue {
    std::vector<int> list;
    size_t next = 0;
    bool running = false, dma = false;
    double end = 0;
    double blocked_since = -1;
    double effect_start = 0;
    std::string blocked_cause;
    int blocked_layer = 0;
    Effect effect;
  };
  struct ActiveDma {
    int queue;
    double phase1_end, remaining, ideal, transfer_start = 0;
    bool transferring = false;
    bool background = false;  // from a prefetch queue
  };

  void Account(const Instr& in) {
    AccountInto(stats_, in);
    AccountInto(Layer(in).stats, in);
  }
  LayerSpan& Layer(const Instr& in) {
    auto& layers = result_->layers;
    if (in.layer >= static_cast<int>(layers.size())) layers.resize(in.layer + 1);
    return layers[in.layer];
  }
  void AccountInto(Stats& st, const Instr& in) {
    st.instructions++;
    st.sram_peak = std::max(st.sram_peak, SramEnd(in));
    switch (in.op) {
      case Opcode::kDmaLoad:
      case Opcode::kDmaStore:
        st.dmas++;
        if (in.on_chip) {
          st.onchip_bytes += in.dma_bytes();
          break;
        }
        (in.op == Opcode::kDmaLoad ? st.dram_read : st.dram_written) += in.dma_bytes();
        st.dram_burst_bytes += BurstBytes(t_, in);
        break;
      case Opcode::kMatMul:
        st.matmuls++;
        st.macs += in.macs();
        st.mapped_macs += MappedMacs(t_, in.m, in.k, in.n);
        break;
      case Opcode::kVec:
        st.vecs++;
        if (in.vec == VecOp::kDwConv) {  // MACs on the lanes: a partial lane group still costs a full one
          st.macs += WindowElements(in);
          st.mapped_macs += WindowElements(in) / std::max(in.cols, 1) *
                            CeilDiv(in.cols, t_.vector_cores.lanes) * t_.vector_cores.lanes;
        }
        break;
      case Opcode::kCopy:
        st.copies++;
        st.copy_bytes += int64_t{in.rows} * in.cols;
        break;
      default: break;
    }
  }

  std::multiset<double>& Tokens(int core, int sem) { return tokens_[core * std::max(p_.semaphores, 1) + sem]; }
  std::multiset<double>& Tokens(const Instr& in) { return Tokens(in.core, in.sem); }
  // When a WAIT could take its tokens (infinity: not enough signalled yet).
  double TokensReady(const Instr& in) {
    auto& tk = Tokens(in);
    if (static_cast<int64_t>(tk.size()) < in.count) return kInf;
    return *std::next(tk.begin(), in.count - 1);
  }

  // When a blocked queue could next make progress by itself (a token or a resource coming).
  double WakeTime(size_t qi) {
    const Instr& in = p_.instrs[queues_[qi].list[queues_[qi].next]];
    if (in.op == Opcode::kWait) return std::max(TokensReady(in), now_);
    if (in.op == Opcode::kVec || in.op == Opcode::kCopy) return vec_busy_[in.core % t_.vector_cores.count];
    return kInf;  // DMA engines free up at DMA completions, which are events anyway
  }

  // `cause` names the stall; a token wait is named after its queue (built only when the
  // stall begins: TryStart runs for every attempt).
  void Block(Queue& q, const char* cause, const Instr& in, bool token = false) {
    if (q.blocked_since < 0) {
      q.blocked_since = now_;
      q.blocked_cause = token ? std::string(QueueName(in.queue)) + cause : cause;
      q.blocked_layer = in.layer;
    }
  }
  void Unblock(Queue& q) {
    if (q.blocked_since >= 0) {
      const double d = now_ - q.blocked_since;
      if (d > kEps) {
        stats_.stalls[q.blocked_cause] += d;
        if (q.blocked_layer < static_cast<int>(result_->layers.size()))
          result_->layers[q.blocked_layer].stats.stalls[q.blocked_cause] += d;
      }
      q.blocked_since = -1;
    }
  }

  Status StartReady() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t qi = 0; qi < queues_.size(); ++qi) {
        Queue& q = queues_[qi];
        while (!q.running && q.next < q.list.size()) {
          const int idx = q.list[q.next];
          const Instr& in = p_.instrs[idx];
          ASSIGN_OR_RETURN(bool started, TryStart(qi, idx, in));
          if (!started) break;
          progress = true;
        }
      }
    }
    return Status::Ok();
  }

  // Starts (or, for zero-time instructions, completes) the queue's next instruction.
  StatusOr<bool> TryStart(size_t qi, int idx, const Instr& in) {
    Queue& q = queues_[qi];
    switch (in.op) {
      case Opcode::kWait: {
        if (TokensReady(in) > now_ + kEps) {
          Block(q, " waits on a token", in, true);
          return false;
        }
        auto& tk = Tokens(in);
        tk.erase(tk.begin(), std::next(tk.begin(), in.count));
        Unblock(q);
        Trace(idx, now_, now_);
        q.next++;
        return true;
      }
      case Opcode::kSignal:
        if (in.to_core < 0) Tokens(in).insert(now_ + t_.token_latency_cycles);
        for (int k = 0; in.to_core >= 0 && k < in.count; ++k)
          Tokens(in.to_core + k, in.sem).insert(now_ + t_.token_latency_cycles);
        Trace(idx, now_, now_);
        q.next++;
        return true;
      case Opcode::kMatMul: {
        RETURN_IF_ERROR(Begin(q, idx, in));
        const double c = MatMulCycles(t_, in.m, in.k, in.n, in.fp16);
        stats_.compute_cycles += c;
        Launch(q, c, in);
        return true;
      }
      case Opcode::kVec:
      case Opcode::kCopy: {
        double& busy = vec_busy_[in.core % t_.vector_cores.count];
        if (busy > now_ + kEps) {
          Block(q, "vector core busy", in);
          return false;
        }
        RETURN_IF_ERROR(Begin(q, idx, in));
        const double c = VecCycles(t_, in);
        busy = now_ + c;
        Launch(q, c, in);
        return true;
      }
      case Opcode::kDmaLoad:
      case Opcode::kDmaStore: {
        if (dma_active_[in.core] >= t_.dma.engines) {
          Block(q, "dma engine busy", in);
          return false;
        }
        RETURN_IF_ERROR(Begin(q, idx, in));
        dma_active_[in.core]++;
        if (in.on_chip) {  // no DRAM transfer: done after its own cost
          dmas_.push_back({static_cast<int>(qi), now_ + DmaCycles(t_, in), 0, 0});
        } else {
          const int latency = in.op == Opcode::kDmaLoad ? t_.dram.read_latency_cycles : t_.dram.write_latency_cycles;
          const double bytes = static_cast<double>(BurstBytes(t_, in));
          dmas_.push_back({static_cast<int>(qi), now_ + t_.dma.setup_cycles + latency, bytes,
                           bytes / t_.dram_bytes_per_cycle()});
          dmas_.back().background = in.queue == QueueKind::kPrefetch;
        }
        q.running = true;
        q.dma = true;
        q.end = now_;  // start time until it completes
        return true;
      }
      default:
        q.next++;
        return true;
    }
  }

  Status Begin(Queue& q, int idx, const Instr& in) {
    Unblock(q);
    if (opt_.functional) {
      auto e = BeginInstr(in, *mem_);
      if (!e.ok()) return e.status().WithContext(fmt::format("NPU instruction {} ({})", idx, FormatInstr(in)));
      q.effect = std::move(*e);
    }
    return Status::Ok();
  }

  void Launch(Queue& q, double cycles, const Instr& in) {
    q.running = true;
    q.dma = false;
    q.end = now_ + cycles;
    q.effect_start = now_;
    stats_.busy[static_cast<int>(in.queue)] += cycles;
    Layer(in).stats.busy[static_cast<int>(in.queue)] += cycles;
  }

  // Splits `dt` cycles equally among the layers with an instruction running (LayerSpan).
  void Attribute(double dt) {
    if (dt <= 0) return;
    running_layers_.clear();
    ++attribute_step_;
    for (const Queue& q : queues_) {
      if (!q.running) continue;
      const Instr& in = p_.instrs[q.list[q.next]];
      Layer(in);  // the layer's entry exists (it may grow the list: indices are kept)
      if (in.layer >= static_cast<int>(counted_in_.size())) counted_in_.resize(in.layer + 1, 0);
      if (counted_in_[in.layer] == attribute_step_) continue;  // once per interval
      counted_in_[in.layer] = attribute_step_;
      running_layers_.push_back(in.layer);
    }
    for (int l : running_layers_) result_->layers[l].attributed += dt / static_cast<double>(running_layers_.size());
  }

  void Finish(Queue& q, double start) {
    const int idx = q.list[q.next];
    LayerSpan& span = Layer(p_.instrs[idx]);
    span.start = span.ran ? std::min(span.start, start) : start;
    span.end = span.ran ? std::max(span.end, now_) : now_;
    span.ran = true;
    if (opt_.functional) CommitEffect(q.effect, *mem_);
    q.effect = Effect{};
    Trace(idx, start, now_);
    q.running = false;
    q.next++;
  }

  Status CompleteFinished() {
    for (Queue& q : queues_)
      if (q.running && !q.dma && q.end <= now_ + kEps) Finish(q, q.effect_start);
    for (size_t i = 0; i < dmas_.size();) {
      ActiveDma& d = dmas_[i];
      if (!d.transferring && d.phase1_end <= now_ + kEps) {
        d.transferring = true;
        d.transfer_start = now_;
      }
      if (d.transferring && d.remaining <= kEps * std::max(1.0, d.ideal)) {
        Queue& q = queues_[d.queue];
        const Instr& in = p_.instrs[q.list[q.next]];
        const double contention = (now_ - d.transfer_start) - d.ideal;
        if (contention > kEps) {
          stats_.stalls["dram contention"] += contention;
          Layer(in).stats.stalls["dram contention"] += contention;
        }
        stats_.busy[static_cast<int>(in.queue)] += now_ - q.end;
        Layer(in).stats.busy[static_cast<int>(in.queue)] += now_ - q.end;
        dma_active_[in.core]--;
        Finish(q, q.end);
        if (opt_.trace) result_->trace.back().transfer_start = d.transfer_start;
        dmas_.erase(dmas_.begin() + i);
        continue;
      }
      ++i;
    }
    return Status::Ok();
  }

  void Trace(int idx, double s, double e) {
    if (opt_.trace) result_->trace.push_back({idx, s, e});
  }

  Status Deadlock() {
    for (Queue& q : queues_) {
      if (q.next < q.list.size()) {
        const int idx = q.list[q.next];
        return InvalidArgument("NPU program deadlocks: instruction {} ({}) can never start", idx,
                               FormatInstr(p_.instrs[idx]));
      }
    }
    return Internal("NPU simulator: no event but work left");
  }

  const Program& p_;
  const Target& t_;
  const SimOptions& opt_;
  Memories* mem_;
  SimResult* result_;
  std::vector<Queue> queues_;
  std::vector<std::multiset<double>> tokens_;
  std::vector<double> vec_busy_;
  std::vector<int> dma_active_;
  std::vector<ActiveDma> dmas_;
  double now_ = 0;
  std::vector<int> running_layers_;
  std::vector<int64_t> counted_in_;  // per layer: the last interval Attribute counted it in
  int64_t attribute_step_ = 0;
  Stats stats_;
};

}  // namespace

StatusOr<SimResult> Simulate(const Program& p, const Target& t, const SimOptions& opt) {
  RETURN_IF_ERROR(ValidateProgram(p, t.ai_cores.count));
  SimResult r;
  Memories mem;
  if (opt.functional) {
    if (!opt.dram || static_cast<int64_t>(opt.dram->size()) < p.dram_bytes)
      return InvalidArgument("functional simulation needs a DRAM image of {} bytes", p.dram_bytes);
    mem.dram = opt.dram;
    std::copy(p.dram_init.begin(), p.dram_init.end(), opt.dram->begin());
    if (opt.sram) opt.sram->resize(t.shared_sram.bytes, 0);
    mem.sram = opt.sram ? *opt.sram : std::vector<uint8_t>(t.shared_sram.bytes, 0);
    mem.acc.assign(t.ai_cores.count, std::vector<uint8_t>(t.ai_cores.accumulator_bytes, 0));
  }
  double now = 0;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (p.instrs[i].op != Opcode::kTaskBegin) continue;
    size_t j = i + 1;
    while (p.instrs[j].op != Opcode::kTaskEnd) ++j;
    TaskSim sim(p, t, opt, &mem, &r);
    ASSIGN_OR_RETURN(Stats s, sim.Run(i + 1, j, now + t.dispatch_overhead_cycles));
    s.cycles += t.dispatch_overhead_cycles;
    s.stalls["dispatch"] += t.dispatch_overhead_cycles;
    now += s.cycles;
    r.tasks.push_back(s);
    r.total.Add(s);
    i = j;
  }
  for (LayerSpan& l : r.layers) l.stats.cycles = l.ran ? l.end - l.start : 0;
  if (opt.functional && opt.sram) *opt.sram = std::move(mem.sram);
  return r;
}

std::string FormatStats(const Program& p, const Target& t, const SimResult& r) {
  std::string s = fmt::format("{:<28} {:>11} {:>11} {:>6} {:>6} {:>10} {:>9} {:>11} {:>9} {:>7}\n", "task",
                              "cycles", "MACs", "util", "map", "DRAM B", "SRAM pk", "roofline", "bound",
                              "stall%");
  auto row = [&](const std::string& name, const Stats& st) {
    double stall = 0;
    for (auto& [k, v] : st.stalls)
      if (k != "dispatch") stall += v;
    const double queue_time = st.cycles * std::max(p.cores_used, 1) * kNumQueues;
    s += fmt::format("{:<28} {:>11.0f} {:>11} {:>5.1f}% {:>5.1f}% {:>10} {:>9} {:>11.0f} {:>9} {:>6.1f}%\n",
                     name.substr(0, 28), st.cycles, st.macs, 100 * st.mac_utilization(t),
                     100 * st.mapping_efficiency(), st.dram_read + st.dram_written, st.sram_peak,
                     st.roofline_cycles(t), st.compute_bound(t) ? "compute" : "memory",
                     queue_time > 0 ? 100 * stall / queue_time : 0);
  };
  for (size_t i = 0; i < r.tasks.size(); ++i)
    row(i < p.task_names.size() ? p.task_names[i] : fmt::format("task {}", i), r.tasks[i]);
  row("total", r.total);
  s += fmt::format("latency {:.3f} ms at {:.2f} GHz; stalls:", r.total.cycles / t.clock_hz * 1e3, t.clock_hz / 1e9);
  for (auto& [k, v] : r.total.stalls) s += fmt::format(" {} {:.0f}", k, v);
  s += "\n";
  return s;
}

}  // namespace edgec::npu
