// Instruction names, listing, binary encoding and structural validation.
#include "npu/isa.h"

#include <fmt/format.h>

namespace edgec::npu {

const char* OpcodeName(Opcode op) {
  switch (op) {
    case Opcode::kDmaLoad: return "DMA_LD";
    case Opcode::kDmaStore: return "DMA_ST";
    case Opcode::kMatMul: return "MATMUL";
    case Opcode::kVec: return "VEC";
    case Opcode::kCopy: return "COPY";
    case Opcode::kSignal: return "SIGNAL";
    case Opcode::kWait: return "WAIT";
    case Opcode::kTaskBegin: return "TASK_BEGIN";
    case Opcode::kTaskEnd: return "TASK_END";
  }
  return "?";
}

const char* QueueName(QueueKind q) {
  switch (q) {
    case QueueKind::kLoad: return "load";
    case QueueKind::kExecute: return "exec";
    case QueueKind::kVector: return "vector";
    case QueueKind::kStore: return "store";
    case QueueKind::kPrefetch: return "prefetch";
  }
  return "?";
}

const char* VecOpName(VecOp op) {
  switch (op) {
    case VecOp::kRequantize: return "requantize";
    case VecOp::kAdd: return "add";
    case VecOp::kRelu: return "relu";
    case VecOp::kMaxPool: return "maxpool";
    case VecOp::kAvgPool: return "avgpool";
    case VecOp::kDwConv: return "dwconv";
    case VecOp::kMul: return "mul";
    case VecOp::kLut: return "lut";
    case VecOp::kNorm: return "norm";
    case VecOp::kSoftmax: return "softmax";
    case VecOp::kResize: return "resize";
    case VecOp::kQuantize: return "quantize";
    case VecOp::kDequantize: return "dequantize";
    case VecOp::kRescale: return "rescale";
    case VecOp::kArgMax: return "argmax";
  }
  return "?";
}

namespace {

// Calls f(field) for every field that instruction `in`'s opcode uses, in a fixed order: the
// one definition behind encoding, decoding and equality.
template <typename I, typename F>
void VisitFields(I& in, F&& f) {
  switch (in.op) {
    case Opcode::kDmaLoad:
    case Opcode::kDmaStore:
      f(in.dram_addr); f(in.sram_addr); f(in.row_bytes); f(in.sram_row_bytes); f(in.pad);
      f(in.ndims); f(in.on_chip); f(in.gather);
      if (in.gather) f(in.index_addr);
      for (int d = 0; d < in.ndims && d < kMaxDmaDims; ++d) {
        f(in.dims[d].count); f(in.dims[d].dram_stride); f(in.dims[d].sram_stride);
        f(in.dims[d].valid_lo); f(in.dims[d].valid_hi);
      }
      break;
    case Opcode::kMatMul:
      f(in.a_addr); f(in.b_addr); f(in.acc_addr); f(in.m); f(in.k); f(in.n);
      f(in.a_stride); f(in.b_stride); f(in.acc_stride); f(in.accumulate); f(in.fp16);
      f(in.a_zero); f(in.b_zero); f(in.b_trans);
      break;
    case Opcode::kVec:
    case Opcode::kCopy:
      f(in.vec); f(in.src); f(in.src2); f(in.dst); f(in.params);
      f(in.src_stride); f(in.src2_stride); f(in.dst_stride); f(in.rows); f(in.cols);
      for (auto& v : in.imm) f(v);
      f(in.in_h); f(in.in_w); f(in.win_h); f(in.win_w); f(in.stride_h); f(in.stride_w);
      break;
    case Opcode::kSignal:
      f(in.sem); f(in.to_core); f(in.count);
      break;
    case Opcode::kWait:
      f(in.sem); f(in.count);
      break;
    case Opcode::kTaskBegin:
    case Opcode::kTaskEnd:
      f(in.sem);
      break;
  }
}

template <typename T>
int64_t AsInt(const T& v) {
  if constexpr (std::is_enum_v<T>) return static_cast<int64_t>(v);
  else return static_cast<int64_t>(v);
}

class Writer {
 public:
  void U(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
  }
  void S(int64_t v) { U((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void Str(const std::string& s) {
    U(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& b) : b_(b) {}
  bool U(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return false;
      const uint8_t c = b_[pos_++];
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return true;
    }
    return false;
  }
  bool S(int64_t& v) {
    uint64_t u;
    if (!U(u)) return false;
    v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    return true;
  }
  bool Str(std::string& s) {
    uint64_t n;
    if (!U(n) || n > b_.size() - pos_) return false;
    s.assign(b_.begin() + pos_, b_.begin() + pos_ + n);
    pos_ += n;
    return true;
  }
  bool Bytes(std::vector<uint8_t>& v, uint64_t n) {
    if (n > b_.size() - pos_) return false;
    v.assign(b_.begin() + pos_, b_.begin() + pos_ + n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
};

constexpr uint32_t kMagic = 0x504e4445;  // "EDNP"
constexpr uint32_t kVersion = 3;  // 2: SIGNAL names its target core; 3: on-chip DMAs, layers

}  // namespace

int64_t Instr::dma_bytes() const {
  if (op != Opcode::kDmaLoad && op != Opcode::kDmaStore) return 0;
  int64_t rows = 1;
  for (int d = 0; d < ndims; ++d) {
    const int64_t lo = std::max(0, dims[d].valid_lo), hi = std::min(dims[d].count, dims[d].valid_hi);
    rows *= std::max<int64_t>(0, hi - lo);
  }
  return rows * row_bytes;
}

bool Instr::operator==(const Instr& o) const {
  if (op != o.op || core != o.core || queue != o.queue || layer != o.layer) return false;
  std::vector<int64_t> a, b;
  VisitFields(*this, [&](const auto& v) { a.push_back(AsInt(v)); });
  VisitFields(o, [&](const auto& v) { b.push_back(AsInt(v)); });
  return a == b;
}

std::string FormatInstr(const Instr& in) {
  std::string head = fmt::format("core {:<2} {:<6} {:<11}", in.core, QueueName(in.queue), OpcodeName(in.op));
  auto dims = [&] {
    std::string s;
    for (int d = 0; d < in.ndims; ++d) {
      const DmaDim& x = in.dims[d];
      s += fmt::format(" [{}x dram+{} sram+{}", x.count, x.dram_stride, x.sram_stride);
      if (x.valid_lo > 0 || x.valid_hi < x.count) s += fmt::format(" valid {}..{}", x.valid_lo, x.valid_hi);
      s += "]";
    }
    return s;
  };
  switch (in.op) {
    case Opcode::kDmaLoad:
      return head + fmt::format("{} 0x{:x} -> sram 0x{:x}{} row {}B", in.on_chip ? "sram" : "dram", in.dram_addr,
                                in.sram_addr, dims(), in.row_bytes) +
             (in.sram_row_bytes > in.row_bytes ? fmt::format(" padded to {}B", in.sram_row_bytes) : "") +
             fmt::format(" pad {}", in.pad);
    case Opcode::kDmaStore:
      return head + fmt::format("sram 0x{:x} -> {} 0x{:x}{} row {}B", in.sram_addr, in.on_chip ? "sram" : "dram",
                                in.dram_addr, dims(), in.row_bytes);
    case Opcode::kMatMul:
      return head + fmt::format("acc 0x{:x} {}= a 0x{:x} [{}x{}] * b 0x{:x} [{}x{}]", in.acc_addr,
                                in.accumulate ? "+" : "", in.a_addr, in.m, in.k, in.b_addr, in.k, in.n) +
             (in.b_trans ? " (b transposed)" : "") + (in.a_zero || in.b_zero ? fmt::format(" zero points {} {}", in.a_zero, in.b_zero) : "");
    case Opcode::kVec:
    case Opcode::kCopy:
      return head + fmt::format("{} src 0x{:x} src2 0x{:x} -> dst 0x{:x} [{}x{}] params 0x{:x}",
                                VecOpName(in.vec), in.src, in.src2, in.dst, in.rows, in.cols, in.params);
    case Opcode::kSignal:
      if (in.to_core < 0) return head + fmt::format("sem {}", in.sem);
      if (in.count == 1) return head + fmt::format("sem {} on core {}", in.sem, in.to_core);
      return head + fmt::format("sem {} on cores {}..{}", in.sem, in.to_core, in.to_core + in.count - 1);
    case Opcode::kWait:
      return head + fmt::format("sem {}", in.sem) + (in.count != 1 ? fmt::format(" x{}", in.count) : "");
    case Opcode::kTaskBegin:
    case Opcode::kTaskEnd:
      return head + fmt::format("task {}", in.sem);
  }
  return head;
}

std::string FormatProgram(const Program& p) {
  std::string s;
  for (const DramRegion& r : p.regions)
    s += fmt::format("; dram 0x{:08x} {:>10} B  {}\n", r.addr, r.bytes, r.name);
  int layer = -1;
  for (const Instr& in : p.instrs) {
    if (in.op == Opcode::kTaskBegin && in.sem >= 0 && in.sem < static_cast<int>(p.task_names.size()))
      s += fmt::format("; task {}: {}\n", in.sem, p.task_names[in.sem]);
    if (in.layer != layer && in.op != Opcode::kTaskBegin && in.op != Opcode::kTaskEnd &&
        in.layer < static_cast<int>(p.layer_names.size())) {
      layer = in.layer;
      s += fmt::format("; layer {}: {}\n", in.layer, p.layer_names[in.layer]);
    }
    s += FormatInstr(in);
    s += '\n';
  }
  return s;
}

std::vector<uint8_t> EncodeProgram(const Program& p) {
  Writer w;
  w.U(kMagic);
  w.U(kVersion);
  w.U(p.cores_used);
  w.U(p.semaphores);
  w.S(p.dram_bytes);
  w.U(p.task_names.size());
  for (const std::string& n : p.task_names) w.Str(n);
  w.U(p.layer_names.size());
  for (const std::string& n : p.layer_names) w.Str(n);
  w.U(p.regions.size());
  for (const DramRegion& r : p.regions) {
    w.Str(r.name);
    w.S(r.addr);
    w.S(r.bytes);
  }
  w.U(p.dram_init.size());
  w.out.insert(w.out.end(), p.dram_init.begin(), p.dram_init.end());
  w.U(p.instrs.size());
  for (const Instr& in : p.instrs) {
    w.U(static_cast<uint8_t>(in.op));
    w.U(in.core);
    w.U(static_cast<uint8_t>(in.queue));
    w.U(static_cast<uint64_t>(in.layer));
    VisitFields(in, [&](const auto& v) { w.S(AsInt(v)); });
  }
  return w.out;
}

StatusOr<Program> DecodeProgram(const std::vector<uint8_t>& bytes) {
  Reader r(bytes);
  Program p;
  uint64_t magic, version, u;
  const Status bad = InvalidArgument("NPU program: truncated or corrupt binary");
  if (!r.U(magic) || magic != kMagic) return InvalidArgument("NPU program: bad magic");
  if (!r.U(version) || version != kVersion)
    return InvalidArgument("NPU program: version {} not supported (expected {})", version, kVersion);
  if (!r.U(u)) return bad;
  p.cores_used = static_cast<int>(u);
  if (!r.U(u)) return bad;
  p.semaphores = static_cast<int>(u);
  if (!r.S(p.dram_bytes)) return bad;
  if (!r.U(u) || u > bytes.size()) return bad;
  p.task_names.resize(u);
  for (auto& n : p.task_names)
    if (!r.Str(n)) return bad;
  if (!r.U(u) || u > bytes.size()) return bad;
  p.layer_names.resize(u);
  for (auto& n : p.layer_names)
    if (!r.Str(n)) return bad;
  if (!r.U(u) || u > bytes.size()) return bad;
  p.regions.resize(u);
  for (auto& reg : p.regions)
    if (!r.Str(reg.name) || !r.S(reg.addr) || !r.S(reg.bytes)) return bad;
  if (!r.U(u) || !r.Bytes(p.dram_init, u)) return bad;
  if (!r.U(u) || u > bytes.size()) return bad;
  p.instrs.resize(u);
  for (Instr& in : p.instrs) {
    uint64_t op, core, queue, layer;
    if (!r.U(op) || op > static_cast<uint64_t>(Opcode::kTaskEnd) || !r.U(core) || core > 255 ||
        !r.U(queue) || queue >= kNumQueues || !r.U(layer) || layer > INT32_MAX)
      return bad;
    in.layer = static_cast<int32_t>(layer);
    in.op = static_cast<Opcode>(op);
    in.core = static_cast<uint8_t>(core);
    in.queue = static_cast<QueueKind>(queue);
    bool ok = true;
    VisitFields(in, [&](auto& v) {
      int64_t x = 0;
      if (!ok || !r.S(x)) {
        ok = false;
        return;
      }
      v = static_cast<std::remove_reference_t<decltype(v)>>(x);
    });
    if (!ok) return bad;
    if (in.ndims > kMaxDmaDims)
      return InvalidArgument("NPU program: DMA with {} strided dims (at most {})", in.ndims, kMaxDmaDims);
    if ((in.op == Opcode::kVec || in.op == Opcode::kCopy) && in.vec > VecOp::kArgMax)
      return InvalidArgument("NPU program: unknown vector operation {}", static_cast<int>(in.vec));
  }
  if (!r.done()) return InvalidArgument("NPU program: trailing bytes after the instructions");
  return p;
}

Status ValidateProgram(const Program& p, int num_cores) {
  bool in_task = false;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& in = p.instrs[i];
    auto err = [&](std::string_view what) {
      return InvalidArgument("NPU program: instruction {} ({}): {}", i, FormatInstr(in), what);
    };
    if (in.core >= num_cores) return err(fmt::format("core {} but the target has {}", in.core, num_cores));
    QueueKind want = in.queue;
    switch (in.op) {
      case Opcode::kDmaLoad: want = in.queue == QueueKind::kPrefetch ? in.queue : QueueKind::kLoad; break;
      case Opcode::kDmaStore: want = QueueKind::kStore; break;
      case Opcode::kMatMul: want = QueueKind::kExecute; break;
      case Opcode::kVec:
      case Opcode::kCopy: want = QueueKind::kVector; break;
      case Opcode::kTaskBegin:
        if (in_task) return err("TASK_BEGIN inside a task");
        in_task = true;
        break;
      case Opcode::kTaskEnd:
        if (!in_task) return err("TASK_END outside a task");
        in_task = false;
        break;
      case Opcode::kSignal:
      case Opcode::kWait:
        if (in.sem < 0 || in.sem >= p.semaphores) return err(fmt::format("semaphore {} out of range", in.sem));
        if (in.count < 1) return err(fmt::format("token count {} (must be >= 1)", in.count));
        if (in.op == Opcode::kSignal && in.to_core < 0 && (in.to_core != -1 || in.count != 1))
          return err("a SIGNAL to its own core has count 1");
        if (in.op == Opcode::kSignal && in.to_core >= 0 && int64_t{in.to_core} + in.count > num_cores)
          return err(fmt::format("signals cores {}..{} but the target has {}", in.to_core,
                                 int64_t{in.to_core} + in.count - 1, num_cores));
        break;
    }
    if (in.queue != want) return err(fmt::format("{} belongs on the {} queue", OpcodeName(in.op), QueueName(want)));
    if (!in_task && in.op != Opcode::kTaskEnd) return err("instruction outside a task");
    if ((in.op == Opcode::kDmaLoad || in.op == Opcode::kDmaStore) && (in.ndims > kMaxDmaDims || in.row_bytes <= 0))
      return err("bad DMA shape");
  }
  if (in_task) return InvalidArgument("NPU program: the last task has no TASK_END");
  return Status::Ok();
}

}  // namespace edgec::npu
