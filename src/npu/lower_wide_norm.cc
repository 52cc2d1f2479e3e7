// The int16 (wide) VEC norm and softmax's parameters and immediates (isa.h kWideImm); the
// tiling and streaming are LowerNorm's (lower_norm.cc) with 2-byte elements.
#include <cstring>

#include "npu/lower_norm.h"

namespace edgec::npu {
namespace {

template <typename T>
void Append(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

}  // namespace

std::vector<uint8_t> WideNormParamBytes(const NormLayer& l) {
  std::vector<uint8_t> out;
  if (l.op == VecOp::kSoftmax) {
    for (int32_t v : l.wide_softmax.exp_hi) Append(out, v);
    for (int32_t v : l.wide_softmax.exp_lo) Append(out, v);
    return out;
  }
  const int64_t per = l.per_row ? l.cols : l.cols / l.groups, groups = l.per_row ? 1 : l.groups;
  const quant::WideNormParams& p = l.wide_norm;
  const bool data = static_cast<int64_t>(p.mult.size()) == l.cols;
  for (int64_t g = 0; g < groups; ++g) {
    Append<__int128>(out, p.eps_term);
    for (int64_t c = 0; c < per; ++c) Append<int32_t>(out, data ? p.mult[g * per + c] : 0);
    for (int64_t c = 0; c < per; ++c) Append<int32_t>(out, data ? p.shift[g * per + c] : 0);
    for (int64_t c = 0; c < per; ++c) Append<int64_t>(out, data ? p.bias[g * per + c] : 0);
  }
  return out;
}

void SetWideImms(const NormLayer& l, Instr& v) {
  if (l.op == VecOp::kSoftmax) {
    const quant::WideSoftmaxParams& p = l.wide_softmax;
    v.imm[0] = p.inv_y.multiplier;
    v.imm[1] = p.inv_y.shift;
    v.imm[2] = p.y_zero_point;
    v.imm[3] = p.qmin;
    v.imm[4] = p.qmax;
  } else {
    const quant::WideNormParams& p = l.wide_norm;
    v.imm[0] = p.x_zero_point;
    v.imm[1] = p.y_zero_point;
    v.imm[2] = p.qmin;
    v.imm[3] = p.qmax;
    v.imm[4] = l.per_row ? 1 : 0;
  }
  v.imm[kWideImm] = 1;
}

}  // namespace edgec::npu
