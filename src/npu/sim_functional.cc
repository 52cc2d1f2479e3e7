// What each instruction computes, on simulated memories. Every access is bounds-checked:
// a program that reaches outside a memory is an error naming the instruction's operand.
#include "npu/sim_functional.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/fixed_point.h"
#include "quant/int_norm.h"
#include "quant/int_resize.h"
#include "quant/rescale.h"
#include "npu/sim_wide_norm.h"

namespace edgec::npu {
namespace {

const char* SpaceName(Space s) {
  switch (s) {
    case Space::kDram: return "DRAM";
    case Space::kSram: return "SRAM";
    case Space::kAcc: return "accumulator";
  }
  return "?";
}

const std::vector<uint8_t>& Bytes(const Memories& m, Space s, int core) {
  switch (s) {
    case Space::kDram: return *m.dram;
    case Space::kSram: return m.sram;
    case Space::kAcc: return m.acc[core];
  }
  return m.sram;
}

Status Check(const Memories& m, Space s, int core, int64_t addr, int64_t n, const char* what) {
  const int64_t size = static_cast<int64_t>(Bytes(m, s, core).size());
  if (n < 0 || addr < 0 || addr + n > size)
    return InvalidArgument("{} [0x{:x}, 0x{:x}) is outside {} of {} bytes", what, addr, addr + n,
                           SpaceName(s), size);
  return Status::Ok();
}

template <typename T>
T Load(const Memories& m, Space s, int core, int64_t addr) {
  T v;
  std::memcpy(&v, Bytes(m, s, core).data() + addr, sizeof(T));
  return v;
}

template <typename T>
void Put(std::vector<uint8_t>& buf, int64_t off, T v) {
  std::memcpy(buf.data() + off, &v, sizeof(T));
}

int8_t Sat8(int32_t v, int32_t lo, int32_t hi) { return static_cast<int8_t>(std::clamp(v, lo, hi)); }

quant::FixedPointMultiplier Mult(int32_t m, int32_t s) { return {m, static_cast<int>(s)}; }

StatusOr<Effect> Dma(const Instr& in, const Memories& mem) {
  const bool load = in.op == Opcode::kDmaLoad;
  Effect e;
  const Space far = in.on_chip ? Space::kSram : Space::kDram;  // the side dram_addr addresses
  e.space = load ? Space::kSram : far;
  const DmaDim one{};
  const DmaDim& d0 = in.ndims >= 1 ? in.dims[0] : one;
  const DmaDim& d1 = in.ndims >= 2 ? in.dims[1] : one;
  const DmaDim& d2 = in.ndims >= 3 ? in.dims[2] : one;
  const int32_t width = load ? std::max(in.sram_row_bytes, in.row_bytes) : in.row_bytes;
  if (in.gather) {  // isa.h Instr::gather: rows of a table selected by the int64 index list
    if (!load || in.ndims != 1) return InvalidArgument("a gather DMA is a load with one dim");
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.index_addr, int64_t{8} * d0.count, "DMA gather index list"));
    for (int32_t i = 0; i < d0.count; ++i) {
      int64_t idx = Load<int64_t>(mem, Space::kSram, 0, in.index_addr + int64_t{8} * i);
      if (idx < 0) idx += d0.valid_hi;
      if (idx < 0 || idx >= d0.valid_hi)
        return InvalidArgument("DMA gather index {} outside the table's {} rows", Load<int64_t>(mem, Space::kSram, 0, in.index_addr + int64_t{8} * i), d0.valid_hi);
      const int64_t src = in.dram_addr + idx * d0.dram_stride;
      RETURN_IF_ERROR(Check(mem, far, 0, src, in.row_bytes, "DMA source row"));
      WriteChunk c{in.sram_addr + i * d0.sram_stride, std::vector<uint8_t>(width, static_cast<uint8_t>(in.pad))};
      const auto& b = Bytes(mem, far, 0);
      std::copy(b.begin() + src, b.begin() + src + in.row_bytes, c.bytes.begin());
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, c.addr, width, "DMA destination row"));
      e.chunks.push_back(std::move(c));
    }
    return e;
  }
  for (int32_t i = 0; i < d0.count; ++i) {
    for (int32_t j = 0; j < d1.count; ++j) {
      for (int32_t k = 0; k < d2.count; ++k) {
        const bool valid = i >= d0.valid_lo && i < d0.valid_hi && j >= d1.valid_lo && j < d1.valid_hi &&
                           k >= d2.valid_lo && k < d2.valid_hi;
        const int64_t dram = in.dram_addr + i * d0.dram_stride + j * d1.dram_stride + k * d2.dram_stride;
        const int64_t sram = in.sram_addr + i * d0.sram_stride + j * d1.sram_stride + k * d2.sram_stride;
        if (!valid && !load) continue;  // a store skips rows outside the valid box
        WriteChunk c{load ? sram : dram, std::vector<uint8_t>(width, static_cast<uint8_t>(in.pad))};
        if (valid) {
          const Space from = load ? far : Space::kSram;
          const int64_t src = load ? dram : sram;
          RETURN_IF_ERROR(Check(mem, from, 0, src, in.row_bytes, "DMA source row"));
          const auto& b = Bytes(mem, from, 0);
          std::copy(b.begin() + src, b.begin() + src + in.row_bytes, c.bytes.begin());
        }
        RETURN_IF_ERROR(Check(mem, e.space, 0, c.addr, width, "DMA destination row"));
        e.chunks.push_back(std::move(c));
      }
    }
  }
  return e;
}

StatusOr<Effect> MatMul(const Instr& in, const Memories& mem) {
  Effect e{Space::kAcc, in.core, {}};
  if (in.fp16) return Unimplemented("the functional model computes int8 MATMULs only (this one is fp16)");
  for (int32_t r = 0; r < in.m; ++r)
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.a_addr + int64_t{r} * in.a_stride, in.k, "MATMUL a row"));
  const int32_t b_rows = in.b_trans ? in.n : in.k, b_cols = in.b_trans ? in.k : in.n;
  for (int32_t r = 0; r < b_rows; ++r)
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.b_addr + int64_t{r} * in.b_stride, b_cols, "MATMUL b row"));
  const auto& s = mem.sram;
  for (int32_t r = 0; r < in.m; ++r) {
    const int64_t acc_row = in.acc_addr + int64_t{r} * in.acc_stride;
    RETURN_IF_ERROR(Check(mem, Space::kAcc, in.core, acc_row, int64_t{4} * in.n, "MATMUL acc row"));
    std::vector<int32_t> row(in.n, 0);
    if (in.accumulate)
      for (int32_t c = 0; c < in.n; ++c) row[c] = Load<int32_t>(mem, Space::kAcc, in.core, acc_row + 4 * c);
    const int8_t* a = reinterpret_cast<const int8_t*>(s.data() + in.a_addr + int64_t{r} * in.a_stride);
    for (int32_t kk = 0; kk < in.k; ++kk) {
      const int32_t av = a[kk] - in.a_zero;
      if (in.b_trans) {
        const int8_t* b = reinterpret_cast<const int8_t*>(s.data() + in.b_addr + kk);
        for (int32_t c = 0; c < in.n; ++c) row[c] += av * (b[int64_t{c} * in.b_stride] - in.b_zero);
        continue;
      }
      const int8_t* b = reinterpret_cast<const int8_t*>(s.data() + in.b_addr + int64_t{kk} * in.b_stride);
      for (int32_t c = 0; c < in.n; ++c) row[c] += av * (b[c] - in.b_zero);
    }
    WriteChunk ch{acc_row, std::vector<uint8_t>(4 * in.n)};
    std::memcpy(ch.bytes.data(), row.data(), 4 * in.n);
    e.chunks.push_back(std::move(ch));
  }
  return e;
}

// The VEC resize: quant::IntResizeValue over each output row's and column's taps.
StatusOr<Effect> Resize(const Instr& in, const Memories& mem) {
  Effect e{Space::kSram, in.core, {}};
  RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params + int64_t{in.imm[0]} * kResizeTapBytes,
                        int64_t{in.rows} * kResizeTapBytes, "resize row taps"));
  RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.src2, int64_t{in.win_w} * kResizeTapBytes, "resize column taps"));
  RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.src, int64_t{in.in_h} * in.src_stride, "resize source band"));
  auto tap = [&](int64_t base, int64_t i, int k) { return Load<int32_t>(mem, Space::kSram, 0, base + i * kResizeTapBytes + 4 * k); };
  auto inside = [](int32_t v, int32_t n) { return v >= 0 && v < n; };
  for (int32_t r = 0; r < in.rows; ++r) {
    const int64_t oy = int64_t{in.imm[0]} + r;
    const int32_t y0 = tap(in.params, oy, 0) - in.imm[1], y1 = tap(in.params, oy, 1) - in.imm[1];
    const int32_t wy = tap(in.params, oy, 2);
    if (!inside(y0, in.in_h) || !inside(y1, in.in_h))
      return InvalidArgument("resize output row {} reads band rows {}, {} of {}", oy, y0, y1, in.in_h);
    const int64_t dst = in.dst + int64_t{r} * in.dst_stride;
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, dst, int64_t{in.win_w} * in.cols, "resize destination row"));
    WriteChunk ch{dst, std::vector<uint8_t>(static_cast<size_t>(in.win_w) * in.cols)};
    for (int32_t ox = 0; ox < in.win_w; ++ox) {
      const int32_t x0 = tap(in.src2, ox, 0), x1 = tap(in.src2, ox, 1), wx = tap(in.src2, ox, 2);
      if (!inside(x0, in.in_w) || !inside(x1, in.in_w))
        return InvalidArgument("resize output column {} reads columns {}, {} of {}", ox, x0, x1, in.in_w);
      auto at = [&](int32_t y, int32_t x, int32_t c) {
        return int32_t{Load<int8_t>(mem, Space::kSram, 0, in.src + int64_t{y} * in.src_stride + int64_t{x} * in.cols + c)};
      };
      for (int32_t c = 0; c < in.cols; ++c) {
        const int32_t v = quant::IntResizeValue(at(y0, x0, c), at(y0, x1, c), at(y1, x0, c), at(y1, x1, c), wy, wx);
        ch.bytes[static_cast<size_t>(ox) * in.cols + c] = static_cast<uint8_t>(Sat8(v, -128, 127));
      }
    }
    e.chunks.push_back(std::move(ch));
  }
  return e;
}

// The VEC norm and softmax: quant/int_norm.h on the tile's rows, parameters read from SRAM.
StatusOr<Effect> NormOrSoftmax(const Instr& in, const Memories& mem) {
  if (in.imm[kWideImm] == 1) return WideNormOrSoftmax(in, mem);  // int16 (sim_wide_norm.h)
  Effect e{Space::kSram, in.core, {}};
  const int32_t* imm = in.imm;
  for (int32_t r = 0; r < in.rows; ++r) {
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.src + int64_t{r} * in.src_stride, in.cols, "VEC source row"));
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.dst + int64_t{r} * in.dst_stride, in.cols, "VEC destination row"));
  }
  auto value = [&](int32_t r, int32_t c) { return int32_t{Load<int8_t>(mem, Space::kSram, 0, in.src + int64_t{r} * in.src_stride + c)}; };
  std::vector<std::vector<int32_t>> out(in.rows, std::vector<int32_t>(in.cols));
  if (in.vec == VecOp::kSoftmax) {
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params, kSoftmaxParamsBytes, "softmax exp table"));
    quant::SoftmaxParams p;
    for (int j = 0; j < 256; ++j) p.exp_table[j] = Load<int32_t>(mem, Space::kSram, 0, in.params + 4 * j);
    p.inv_y = Mult(imm[0], imm[1]);
    p.y_zero_point = imm[2];
    p.qmin = imm[3];
    p.qmax = imm[4];
    quant::SoftmaxBlock(p, in.rows, in.cols, value, [&](int32_t r, int32_t c, int32_t y) { out[r][c] = y; });
  } else {
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params, NormParamsBytes(in.cols), "norm params"));
    const bool per_row = imm[4] == 1;
    quant::NormParams p;
    p.count = per_row ? in.cols : int64_t{in.rows} * in.cols;
    p.eps_term = Load<int64_t>(mem, Space::kSram, 0, in.params);
    for (int32_t c = 0; c < in.cols; ++c) {
      p.mult.push_back(Load<int32_t>(mem, Space::kSram, 0, in.params + 8 + 4 * int64_t{c}));
      p.shift.push_back(Load<int32_t>(mem, Space::kSram, 0, in.params + 8 + 4 * (int64_t{in.cols} + c)));
      p.bias.push_back(Load<int32_t>(mem, Space::kSram, 0, in.params + 8 + 4 * (2 * int64_t{in.cols} + c)));
    }
    p.x_zero_point = imm[0];
    p.y_zero_point = imm[1];
    p.qmin = imm[2];
    p.qmax = imm[3];
    quant::NormalizeBlock<quant::NormGroup>(p, in.rows, in.cols, per_row, value,
                                [&](int32_t r, int32_t c, int32_t y) { out[r][c] = y; });
  }
  for (int32_t r = 0; r < in.rows; ++r) {
    WriteChunk ch{in.dst + int64_t{r} * in.dst_stride, std::vector<uint8_t>(in.cols)};
    for (int32_t c = 0; c < in.cols; ++c) ch.bytes[c] = static_cast<uint8_t>(static_cast<int8_t>(out[r][c]));
    e.chunks.push_back(std::move(ch));
  }
  return e;
}

StatusOr<Effect> Vec(const Instr& in, const Memories& mem) {
  if (in.op == Opcode::kVec && in.vec == VecOp::kArgMax) {  // isa.h kArgMax: an int64 index per row
    Effect e{Space::kSram, in.core, {}};
    for (int32_t r = 0; r < in.rows; ++r) {
      const int64_t src = in.src + int64_t{r} * in.src_stride, dst = in.dst + int64_t{r} * in.dst_stride;
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, src, in.cols, "ARGMAX source row"));
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, dst, 8, "ARGMAX destination"));
      int64_t best = 0;
      int32_t bv = Load<int8_t>(mem, Space::kSram, 0, src);
      for (int32_t c = 1; c < in.cols; ++c) {
        const int32_t v = Load<int8_t>(mem, Space::kSram, 0, src + c);
        const bool better = in.imm[0] == 1 ? (in.imm[1] == 1 ? v <= bv : v < bv) : (in.imm[1] == 1 ? v >= bv : v > bv);
        if (better) best = c, bv = v;
      }
      WriteChunk ch{dst, std::vector<uint8_t>(8)};
      std::memcpy(ch.bytes.data(), &best, 8);
      e.chunks.push_back(std::move(ch));
    }
    return e;
  }
  Effect e{Space::kSram, in.core, {}};
  const int32_t* imm = in.imm;
  if (in.op == Opcode::kVec && in.vec == VecOp::kRescale) {
    // quant/rescale.h on 1- or 2-byte elements (imm[6], imm[7]).
    const int64_t ex = imm[6], ey = imm[7];
    if ((ex != 1 && ex != 2) || (ey != 1 && ey != 2))
      return InvalidArgument("VEC rescale: element bytes {} -> {} (1 or 2)", ex, ey);
    quant::RescaleParams p;
    p.x_zero_point = imm[0];
    p.y_zero_point = imm[1];
    p.m = Mult(imm[2], imm[3]);
    p.qmin = imm[4];
    p.qmax = imm[5];
    for (int32_t r = 0; r < in.rows; ++r) {
      const int64_t src = in.src + int64_t{r} * in.src_stride, dst = in.dst + int64_t{r} * in.dst_stride;
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, src, ex * in.cols, "VEC source row"));
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, dst, ey * in.cols, "VEC destination row"));
      WriteChunk ch{dst, std::vector<uint8_t>(ey * in.cols)};
      for (int32_t c = 0; c < in.cols; ++c) {
        const int32_t x = ex == 2 ? int32_t{Load<int16_t>(mem, Space::kSram, 0, src + 2 * c)}
                                  : int32_t{Load<int8_t>(mem, Space::kSram, 0, src + c)};
        const int32_t y = quant::Rescale(x, p);
        if (ey == 2) Put(ch.bytes, 2 * c, static_cast<int16_t>(y));
        else ch.bytes[c] = static_cast<uint8_t>(static_cast<int8_t>(y));
      }
      e.chunks.push_back(std::move(ch));
    }
    return e;
  }
  if (in.op == Opcode::kVec && (in.vec == VecOp::kQuantize || in.vec == VecOp::kDequantize)) {
    // QuantizeLinear's / DequantizeLinear's f32 arithmetic (kernels/ref/quant.cc).
    const bool q = in.vec == VecOp::kQuantize;
    float scale;
    std::memcpy(&scale, &imm[0], sizeof scale);
    const bool wide = !q && imm[kDequantBytesImm] == 2;  // an int16 source (rows, or interleaved by the pitch)
    const int64_t in_elem = q ? 4 : wide ? 2 : 1, out_elem = q ? 1 : 4;
    const int64_t pitch = imm[kPitchImm];
    if (pitch > 1) {  // the i8 side interleaved: element c of row r at base + r * stride + c * pitch
      const int64_t i8_base = q ? in.dst : in.src, i8_stride = q ? in.dst_stride : in.src_stride;
      const int64_t span = int64_t{in.rows - 1} * i8_stride + int64_t{in.cols - 1} * pitch + (q ? 1 : in_elem);
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, i8_base, span, q ? "VEC destination tile" : "VEC source tile"));
      // One chunk when the rows interleave densely (stride 1, pitch = rows), else one per element.
      const bool dense = q && i8_stride == 1 && pitch == in.rows;
      WriteChunk all{in.dst, std::vector<uint8_t>(dense ? span : 0)};
      for (int32_t r = 0; r < in.rows; ++r) {
        const int64_t f32_row = q ? in.src + int64_t{r} * in.src_stride : in.dst + int64_t{r} * in.dst_stride;
        RETURN_IF_ERROR(Check(mem, Space::kSram, 0, f32_row, 4 * int64_t{in.cols}, "VEC f32 row"));
        WriteChunk row{f32_row, std::vector<uint8_t>(q ? 0 : 4 * in.cols)};
        for (int32_t c = 0; c < in.cols; ++c) {
          const int64_t at = int64_t{r} * i8_stride + int64_t{c} * pitch;
          if (q) {
            float v = Load<float>(mem, Space::kSram, 0, f32_row + 4 * c) / scale;
            if (std::isnan(v)) v = 0;
            const float y = std::clamp(std::nearbyint(v) + static_cast<float>(imm[1]), static_cast<float>(imm[2]),
                                       static_cast<float>(imm[3]));
            const auto b = static_cast<uint8_t>(static_cast<int8_t>(y));
            if (dense) all.bytes[at] = b;
            else e.chunks.push_back(WriteChunk{in.dst + at, {b}});
          } else {
            const int32_t v = wide ? int32_t{Load<int16_t>(mem, Space::kSram, 0, in.src + at)}
                                   : int32_t{Load<int8_t>(mem, Space::kSram, 0, in.src + at)};
            const float y = static_cast<float>(v - imm[1]) * scale;
            std::memcpy(row.bytes.data() + 4 * c, &y, sizeof y);
          }
        }
        if (!q) e.chunks.push_back(std::move(row));
      }
      if (dense) e.chunks.push_back(std::move(all));
      return e;
    }
    for (int32_t r = 0; r < in.rows; ++r) {
      const int64_t src = in.src + int64_t{r} * in.src_stride, dst = in.dst + int64_t{r} * in.dst_stride;
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, src, in_elem * in.cols, "VEC source row"));
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, dst, out_elem * in.cols, "VEC destination row"));
      WriteChunk ch{dst, std::vector<uint8_t>(out_elem * in.cols)};
      for (int32_t c = 0; c < in.cols; ++c) {
        if (q) {
          float v = Load<float>(mem, Space::kSram, 0, src + 4 * c) / scale;
          if (std::isnan(v)) v = 0;
          const float y = std::clamp(std::nearbyint(v) + static_cast<float>(imm[1]), static_cast<float>(imm[2]),
                                     static_cast<float>(imm[3]));
          ch.bytes[c] = static_cast<uint8_t>(static_cast<int8_t>(y));
        } else {
          const int32_t v = wide ? int32_t{Load<int16_t>(mem, Space::kSram, 0, src + 2 * c)}
                                 : int32_t{Load<int8_t>(mem, Space::kSram, 0, src + c)};
          const float y = static_cast<float>(v - imm[1]) * scale;
          std::memcpy(ch.bytes.data() + 4 * c, &y, sizeof y);
        }
      }
      e.chunks.push_back(std::move(ch));
    }
    return e;
  }
  if (in.op == Opcode::kCopy && imm[kPitchImm] > 1) {  // a transposing copy (isa.h kPitchImm)
    const int64_t pitch = imm[kPitchImm];
    const int64_t span = int64_t{in.rows - 1} * in.dst_stride + int64_t{in.cols - 1} * pitch + 1;
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.dst, span, "COPY destination tile"));
    // One chunk when the rows interleave densely (stride 1, pitch = rows), else one per byte.
    const bool dense = in.dst_stride == 1 && pitch == in.rows;
    WriteChunk all{in.dst, std::vector<uint8_t>(dense ? span : 0)};
    for (int32_t r = 0; r < in.rows; ++r) {
      const int64_t src = in.src + int64_t{r} * in.src_stride;
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, src, in.cols, "COPY source row"));
      for (int32_t c = 0; c < in.cols; ++c) {
        const int64_t at = int64_t{r} * in.dst_stride + int64_t{c} * pitch;
        if (dense) all.bytes[at] = mem.sram[src + c];
        else e.chunks.push_back(WriteChunk{in.dst + at, {mem.sram[src + c]}});
      }
    }
    if (dense) e.chunks.push_back(std::move(all));
    return e;
  }
  if (in.op == Opcode::kCopy || in.vec == VecOp::kRelu || in.vec == VecOp::kAdd || in.vec == VecOp::kMul ||
      in.vec == VecOp::kLut || in.vec == VecOp::kRequantize) {
    const bool from_acc = in.op == Opcode::kVec && in.vec == VecOp::kRequantize;
    // Element bytes: an int16 destination of a requantize, int16 operands or result of an add
    // or a multiply (isa.h kRequantBytesImm, kAddBytesImm); 1 otherwise.
    const bool add = in.op == Opcode::kVec && (in.vec == VecOp::kAdd || in.vec == VecOp::kMul);
    auto width = [](int32_t v) -> int64_t { return v == 2 ? 2 : 1; };
    const int64_t ea = add ? width(imm[kAddBytesImm]) : 1, eb = add ? width(imm[kAddBytesImm + 1]) : 1;
    const int64_t ey = from_acc ? width(imm[kRequantBytesImm]) : add ? width(imm[kAddBytesImm + 2]) : 1;
    const bool wide_lut = in.op == Opcode::kVec && in.vec == VecOp::kLut && imm[kLutBytesImm] == 2;
    const int64_t elem = from_acc ? 4 : wide_lut ? 2 : ea;
    auto load = [&](int64_t bytes, int64_t at) -> int32_t {
      return bytes == 2 ? int32_t{Load<int16_t>(mem, Space::kSram, 0, at)} : int32_t{Load<int8_t>(mem, Space::kSram, 0, at)};
    };
    auto put = [&](std::vector<uint8_t>& out, int32_t c, int32_t y) {
      if (ey == 2) Put(out, 2 * c, static_cast<int16_t>(y));
      else out[c] = static_cast<uint8_t>(static_cast<int8_t>(y));
    };
    if (in.op == Opcode::kVec && in.vec == VecOp::kRequantize)
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params, int64_t{12} * in.cols, "requantize params"));
    // A table per column (isa.h kLutPerColumnImm): column c's 256 bytes at params + 256 c.
    const int64_t column_table = in.op == Opcode::kVec && in.vec == VecOp::kLut && imm[kLutPerColumnImm] == 1 ? 256 : 0;
    if (column_table && wide_lut) return InvalidArgument("VEC lut: a table per column of an int16 source");
    if (in.op == Opcode::kVec && in.vec == VecOp::kLut)
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params,
                            wide_lut ? 65536 : column_table ? column_table * std::max(in.cols, 1) : 256, "lookup table"));
    const bool scalar_b = imm[kBroadcastImm] == 1;
    for (int32_t r = 0; r < in.rows; ++r) {
      const int64_t src = in.src + int64_t{r} * in.src_stride, dst = in.dst + int64_t{r} * in.dst_stride;
      RETURN_IF_ERROR(Check(mem, from_acc ? Space::kAcc : Space::kSram, in.core, src, elem * in.cols, "VEC source row"));
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, dst, ey * in.cols, "VEC destination row"));
      WriteChunk ch{dst, std::vector<uint8_t>(ey * in.cols)};
      if (in.op == Opcode::kCopy) {
        std::copy(mem.sram.begin() + src, mem.sram.begin() + src + in.cols, ch.bytes.begin());
      } else if (in.vec == VecOp::kRelu) {
        for (int32_t c = 0; c < in.cols; ++c)
          ch.bytes[c] = static_cast<uint8_t>(std::max<int8_t>(Load<int8_t>(mem, Space::kSram, 0, src + c), static_cast<int8_t>(imm[0])));
      } else if (in.vec == VecOp::kRequantize) {
        for (int32_t c = 0; c < in.cols; ++c) {
          const int32_t acc = Load<int32_t>(mem, Space::kAcc, in.core, src + 4 * c);
          const int32_t bias = Load<int32_t>(mem, Space::kSram, 0, in.params + 4 * c);
          const int32_t mult = Load<int32_t>(mem, Space::kSram, 0, in.params + 4 * (in.cols + c));
          const int32_t shift = Load<int32_t>(mem, Space::kSram, 0, in.params + 4 * (2 * in.cols + c));
          put(ch.bytes, c, quant::Requantize(acc + bias, Mult(mult, shift), imm[0], imm[1], imm[2]));
        }
      } else if (in.vec == VecOp::kLut && wide_lut) {
        for (int32_t c = 0; c < in.cols; ++c)  // index = value + 32768
          ch.bytes[c] = mem.sram[in.params + int32_t{Load<int16_t>(mem, Space::kSram, 0, src + 2 * c)} + 32768];
      } else if (in.vec == VecOp::kLut) {
        for (int32_t c = 0; c < in.cols; ++c)
          ch.bytes[c] = mem.sram[in.params + column_table * c + (mem.sram[src + c] ^ 0x80)];  // index = value + 128
      } else {  // add, mul
        const int64_t src2 = in.src2 + int64_t{r} * in.src2_stride;
        RETURN_IF_ERROR(Check(mem, Space::kSram, 0, src2, eb * (scalar_b ? 1 : in.cols), "VEC second source row"));
        auto b_at = [&](int32_t c) { return load(eb, src2 + eb * (scalar_b ? 0 : c)); };
        if (in.vec == VecOp::kAdd) {
          quant::QuantizedAddParams p{imm[0], imm[1], imm[2], Mult(imm[3], imm[4]), Mult(imm[5], imm[6]),
                                      Mult(imm[7], imm[8]), imm[9], imm[10]};
          if (imm[kAddShiftImm]) p.left_shift = imm[kAddShiftImm];
          if (p.left_shift != quant::kAddLeftShift && p.left_shift != quant::kWideAddLeftShift)
            return InvalidArgument("VEC add: left shift {}", p.left_shift);
          if ((ea == 2 || eb == 2) && p.left_shift != quant::kWideAddLeftShift)
            return InvalidArgument("VEC add: int16 operands need the left shift {}", quant::kWideAddLeftShift);
          for (int32_t c = 0; c < in.cols; ++c) put(ch.bytes, c, quant::QuantizedAdd(load(ea, src + ea * c), b_at(c), p));
        } else {
          const quant::QuantizedMulParams mul{imm[0], imm[1], imm[2], Mult(imm[3], imm[4]), imm[5], imm[6]};
          if (ea == 2 && eb == 2) return InvalidArgument("VEC mul: two int16 operands (the product passes int32)");
          for (int32_t c = 0; c < in.cols; ++c) put(ch.bytes, c, quant::QuantizedMul(load(ea, src + ea * c), b_at(c), mul));
        }
      }
      e.chunks.push_back(std::move(ch));
    }
    return e;
  }
  if (in.vec == VecOp::kNorm || in.vec == VecOp::kSoftmax) return NormOrSoftmax(in, mem);
  if (in.vec == VecOp::kResize) return Resize(in, mem);
  // Pools.
  const int32_t dil_h = WindowDilation(imm, 0), dil_w = WindowDilation(imm, 1);
  const int64_t ext_h = WindowExtent(in.win_h, dil_h), ext_w = WindowExtent(in.win_w, dil_w);
  if (in.win_h <= 0 || in.win_w <= 0 || in.stride_h <= 0 || in.stride_w <= 0 || in.in_h < ext_h || in.in_w < ext_w)
    return InvalidArgument("pool window {}x{} dilation {}x{} stride {}x{} does not fit the {}x{} tile", in.win_h,
                           in.win_w, dil_h, dil_w, in.stride_h, in.stride_w, in.in_h, in.in_w);
  const int32_t oh = static_cast<int32_t>((in.in_h - ext_h) / in.stride_h + 1),
                ow = static_cast<int32_t>((in.in_w - ext_w) / in.stride_w + 1);
  // A depthwise multiplier m: output column c reads source column c / m (isa.h kDwMultiplierImm).
  const int32_t mult = in.vec == VecOp::kDwConv ? DwMultiplier(imm) : 1;
  RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.src, (int64_t{in.in_h} * in.in_w - 1) * in.src_stride + in.cols / mult,
                        "pool source tile"));
  const int64_t window = int64_t{in.win_h} * in.win_w, poff = DwParamsOffset(window, in.cols);
  if (in.vec == VecOp::kDwConv)
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params, poff + int64_t{12} * in.cols, "depthwise params"));
  const bool pixel_mult = in.vec == VecOp::kAvgPool && imm[kPoolPixelMultImm] == 1;
  if (pixel_mult)
    RETURN_IF_ERROR(Check(mem, Space::kSram, 0, in.params, PoolPixelParamsBytes(int64_t{oh} * ow), "avgpool multipliers"));
  for (int32_t y = 0; y < oh; ++y) {
    for (int32_t x = 0; x < ow; ++x) {
      const int64_t dst = in.dst + (int64_t{y} * ow + x) * in.dst_stride;
      RETURN_IF_ERROR(Check(mem, Space::kSram, 0, dst, in.cols, "pool destination pixel"));
      WriteChunk ch{dst, std::vector<uint8_t>(in.cols)};
      quant::FixedPointMultiplier avg = Mult(imm[2], imm[3]);
      if (pixel_mult) {
        const int64_t q = int64_t{y} * ow + x;
        avg = Mult(Load<int32_t>(mem, Space::kSram, 0, in.params + 4 * q),
                   Load<int32_t>(mem, Space::kSram, 0, in.params + 4 * (int64_t{oh} * ow + q)));
      }
      for (int32_t c = 0; c < in.cols; ++c) {
        const bool least = in.vec == VecOp::kMaxPool && imm[kPoolMinImm] == 1;  // isa.h kPoolMinImm
        int32_t best = least ? 127 : -128, sum = 0, dot = 0;
        for (int32_t i = 0; i < in.win_h; ++i) {
          for (int32_t j = 0; j < in.win_w; ++j) {
            const int64_t p = int64_t{y * in.stride_h + i * dil_h} * in.in_w + x * in.stride_w + j * dil_w;
            const int32_t v = Load<int8_t>(mem, Space::kSram, 0, in.src + p * in.src_stride + c / mult);
            best = least ? std::min(best, v) : std::max(best, v);
            sum += v - imm[0];
            if (in.vec == VecOp::kDwConv)
              dot += (v - imm[0]) * Load<int8_t>(mem, Space::kSram, 0, in.params + (int64_t{i} * in.win_w + j) * in.cols + c);
          }
        }
        int32_t out;
        if (in.vec == VecOp::kMaxPool) {
          out = best;
        } else if (in.vec == VecOp::kAvgPool) {
          out = quant::Requantize(sum, avg, imm[1], imm[4], imm[5]);
        } else {
          const int64_t pc = in.params + poff + 4 * int64_t{c};
          const int32_t bias = Load<int32_t>(mem, Space::kSram, 0, pc);
          const int32_t mult = Load<int32_t>(mem, Space::kSram, 0, pc + 4 * int64_t{in.cols});
          const int32_t shift = Load<int32_t>(mem, Space::kSram, 0, pc + 8 * int64_t{in.cols});
          out = quant::Requantize(dot + bias, Mult(mult, shift), imm[1], imm[2], imm[3]);
        }
        ch.bytes[c] = static_cast<uint8_t>(static_cast<int8_t>(out));
      }
      e.chunks.push_back(std::move(ch));
    }
  }
  return e;
}

}  // namespace

StatusOr<Effect> BeginInstr(const Instr& in, const Memories& mem) {
  switch (in.op) {
    case Opcode::kDmaLoad:
    case Opcode::kDmaStore: return Dma(in, mem);
    case Opcode::kMatMul: return MatMul(in, mem);
    case Opcode::kVec:
    case Opcode::kCopy: return Vec(in, mem);
    default: return Effect{};
  }
}

void CommitEffect(const Effect& e, Memories& mem) {
  std::vector<uint8_t>& buf = e.space == Space::kDram  ? *mem.dram
                              : e.space == Space::kSram ? mem.sram
                                                        : mem.acc[e.core];
  for (const WriteChunk& c : e.chunks) std::copy(c.bytes.begin(), c.bytes.end(), buf.begin() + c.addr);
}

}  // namespace edgec::npu
