#include "kernels/cpu/int8_requant.h"

#include "kernels/cpu/context.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/int8.h"
#include "quant/output_table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace edgec::cpu {

namespace {

template <typename Q>
void RunScalar(const Int8Requant& rq, const int32_t* acc, int64_t channels, int64_t begin, int64_t end, Q* y,
               int64_t row_stride, int64_t channel_stride, int64_t c_begin, const int32_t* bias) {
  const float lo = static_cast<float>(rq.qmin), hi = static_cast<float>(rq.qmax);
  const float zp = static_cast<float>(rq.zero_point);
  for (int64_t r = begin; r < end; ++r) {
    const int32_t* a = acc + r * channels;
    Q* out = y + r * row_stride;
    for (int64_t c = c_begin; c < channels; ++c) {
      const int32_t v = a[c] + bias[c];
      int32_t q;
      if (rq.fixed_point) {
        q = quant::Requantize(v, rq.fixed[c], rq.zero_point, rq.qmin, rq.qmax);
      } else {
        const float f = std::nearbyint(static_cast<float>(v) * rq.multiplier[c]) + zp;
        q = static_cast<int32_t>(std::min(std::max(f, lo), hi));
      }
      out[c * channel_stride] = static_cast<Q>(q);
    }
  }
}

}  // namespace

void Int8Requant::Run(const int32_t* acc, int64_t channels, int64_t begin, int64_t end, void* y, int64_t row_stride,
                      int64_t channel_stride, const int32_t* bias_override) const {
  const int32_t* b = bias_override ? bias_override : bias.data();
  int64_t c_begin = 0;
  if (!fixed_point && channel_stride == 1) {
    // The own kernels' ISA, with its cap (table pointers: this runs once per row run).
    const vec::RequantRows rows{multiplier.data(), zero_point, qmin, qmax, u8};
    auto* y8 = static_cast<uint8_t*>(y);
    if (OwnAvx512(Avx512Ext::kBw)) c_begin = vec::RequantFloatAvx512(rows, acc, channels, begin, end, y8, row_stride, b);
    else if (&vec::Kernels() == &vec::kAvx2Table) c_begin = vec::RequantFloatAvx2(rows, acc, channels, begin, end, y8, row_stride, b);
  }
  if (c_begin < channels) {
    if (u8) RunScalar(*this, acc, channels, begin, end, static_cast<uint8_t*>(y), row_stride, channel_stride, c_begin, b);
    else RunScalar(*this, acc, channels, begin, end, static_cast<int8_t*>(y), row_stride, channel_stride, c_begin, b);
  }
  if (table.empty()) return;
  // The fused lookup over the rows just written, while they are in L1.
  auto* y8 = static_cast<uint8_t*>(y);
  if (channel_stride == 1 && row_stride == channels) {
    LookupBytes(table.data(), y8 + begin * channels, y8 + begin * channels, (end - begin) * channels);
  } else {
    for (int64_t r = begin; r < end; ++r) {
      uint8_t* row = y8 + r * row_stride;
      if (channel_stride == 1) LookupBytes(table.data(), row, row, channels);
      else
        for (int64_t c = 0; c < channels; ++c) row[c * channel_stride] = table[row[c * channel_stride]];
    }
  }
}

std::string Int8Requant::Word() const {
  std::string s = fixed_point ? "fixed-point requant" : "float requant";
  const int32_t tmin = u8 ? 0 : -128, tmax = u8 ? 255 : 127;
  if (qmin != tmin || qmax != tmax) s += fmt::format(", clamp [{}, {}]", qmin, qmax);
  if (!table.empty()) s += ", fused 256-entry lookup";
  return s;
}

StatusOr<Int8Requant> MakeInt8Requant(const Attributes& attrs, const std::string& label, float x_scale,
                                      const std::vector<float>& w_scale, int64_t channels, float y_scale,
                                      int32_t y_zp, DType out, const int32_t* bias) {
  Int8Requant rq;
  const std::string mode = attrs.GetString("edgec_requant", "float");
  if (mode != "float" && mode != "fixed_point")
    return InvalidArgument("{}: edgec_requant is '{}', expected 'float' or 'fixed_point'", label, mode);
  rq.fixed_point = mode == "fixed_point";
  if (out != DType::kU8 && out != DType::kI8) return Unimplemented("{}: output is {}, not u8/i8", label, DTypeName(out));
  rq.u8 = out == DType::kU8;
  const int32_t tmin = rq.u8 ? 0 : -128, tmax = rq.u8 ? 255 : 127;
  rq.qmin = static_cast<int32_t>(std::max<int64_t>(attrs.GetInt("edgec_qmin", tmin), tmin));
  rq.qmax = static_cast<int32_t>(std::min<int64_t>(attrs.GetInt("edgec_qmax", tmax), tmax));
  if (rq.qmin > rq.qmax) return InvalidArgument("{}: edgec_qmin {} > edgec_qmax {}", label, rq.qmin, rq.qmax);
  rq.zero_point = y_zp;
  auto table = quant::ReadOutputTable(attrs, out);
  if (!table.ok()) return InvalidArgument("{}: {}", label, table.status().message());
  if (!table->empty()) {
    rq.table.resize(256);
    for (int raw = 0; raw < 256; ++raw)  // entry (value - lowest) of the value with this byte
      rq.table[raw] = static_cast<uint8_t>((*table)[rq.u8 ? raw : raw ^ 0x80]);
  }
  for (int64_t c = 0; c < channels; ++c) {
    const float ws = w_scale.size() == 1 ? w_scale[0] : w_scale[c];
    rq.multiplier.push_back(x_scale * ws / y_scale);
    if (rq.fixed_point) {
      auto fm = quant::QuantizeMultiplier(static_cast<double>(x_scale) * ws / y_scale);
      if (!fm.ok()) return InvalidArgument("{}: requantization multiplier: {}", label, fm.status().message());
      rq.fixed.push_back(*fm);
    }
    rq.bias.push_back(bias ? bias[c] : 0);
  }
  // Nothing past the last channel is read: the AVX2 loop stops at a multiple of 8 and the
  // AVX-512 one masks its tail.
  return rq;
}

}  // namespace edgec::cpu
