#include "npu/sim_wide_norm.h"

#include <algorithm>
#include <cstring>

#include "quant/int16_norm.h"
#include "quant/int_norm.h"

namespace edgec::npu {
namespace {

Status CheckSram(const Memories& m, int64_t addr, int64_t n, const char* what) {
  const int64_t size = static_cast<int64_t>(m.sram.size());
  if (n < 0 || addr < 0 || addr + n > size)
    return InvalidArgument("{} [0x{:x}, 0x{:x}) is outside SRAM of {} bytes", what, addr, addr + n, size);
  return Status::Ok();
}

template <typename T>
T Load(const Memories& m, int64_t addr) {
  T v;
  std::memcpy(&v, m.sram.data() + addr, sizeof(T));
  return v;
}

}  // namespace

StatusOr<Effect> WideNormOrSoftmax(const Instr& in, const Memories& mem) {
  Effect e{Space::kSram, in.core, {}};
  const int32_t* imm = in.imm;
  const int64_t row_bytes = 2 * int64_t{in.cols};
  for (int32_t r = 0; r < in.rows; ++r) {
    RETURN_IF_ERROR(CheckSram(mem, in.src + int64_t{r} * in.src_stride, row_bytes, "VEC source row"));
    RETURN_IF_ERROR(CheckSram(mem, in.dst + int64_t{r} * in.dst_stride, row_bytes, "VEC destination row"));
  }
  auto value = [&](int32_t r, int32_t c) {
    return int32_t{Load<int16_t>(mem, in.src + int64_t{r} * in.src_stride + 2 * int64_t{c})};
  };
  std::vector<std::vector<int32_t>> out(in.rows, std::vector<int32_t>(in.cols));
  if (in.vec == VecOp::kSoftmax) {
    RETURN_IF_ERROR(CheckSram(mem, in.params, kWideSoftmaxParamsBytes, "softmax exp tables"));
    quant::WideSoftmaxParams p;
    for (int j = 0; j < 256; ++j) {
      p.exp_hi[j] = Load<int32_t>(mem, in.params + 4 * j);
      p.exp_lo[j] = Load<int32_t>(mem, in.params + 1024 + 4 * j);
    }
    p.inv_y = {imm[0], static_cast<int>(imm[1])};
    p.y_zero_point = imm[2];
    p.qmin = imm[3];
    p.qmax = imm[4];
    quant::SoftmaxBlock(p, in.rows, in.cols, value, [&](int32_t r, int32_t c, int32_t y) { out[r][c] = y; });
  } else {
    RETURN_IF_ERROR(CheckSram(mem, in.params, WideNormParamsBytes(in.cols), "norm params"));
    const bool per_row = imm[4] == 1;
    quant::WideNormParams p;
    p.count = per_row ? in.cols : int64_t{in.rows} * in.cols;
    p.eps_term = Load<__int128>(mem, in.params);
    for (int32_t c = 0; c < in.cols; ++c) {
      p.mult.push_back(Load<int32_t>(mem, in.params + 16 + 4 * int64_t{c}));
      p.shift.push_back(Load<int32_t>(mem, in.params + 16 + 4 * (int64_t{in.cols} + c)));
      p.bias.push_back(Load<int64_t>(mem, in.params + 16 + 8 * int64_t{in.cols} + 8 * int64_t{c}));
    }
    p.x_zero_point = imm[0];
    p.y_zero_point = imm[1];
    p.qmin = imm[2];
    p.qmax = imm[3];
    quant::NormalizeBlock<quant::WideNormGroup>(p, in.rows, in.cols, per_row, value,
                                [&](int32_t r, int32_t c, int32_t y) { out[r][c] = y; });
  }
  for (int32_t r = 0; r < in.rows; ++r) {
    WriteChunk ch{in.dst + int64_t{r} * in.dst_stride, std::vector<uint8_t>(row_bytes)};
    for (int32_t c = 0; c < in.cols; ++c) {
      const int16_t v = static_cast<int16_t>(out[r][c]);
      std::memcpy(ch.bytes.data() + 2 * int64_t{c}, &v, 2);
    }
    e.chunks.push_back(std::move(ch));
  }
  return e;
}

}  // namespace edgec::npu
