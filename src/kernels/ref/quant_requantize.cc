// Reference kernel of QLinearRequantize (ops.def): Y = Q_Y(DQ_X(X)) between 8- and 16-bit
// quantizations, in the island's f32 arithmetic ("float") or quant/rescale.h's integers
// ("fixed_point", what the NPU's VEC rescale computes).
#include <algorithm>
#include <cmath>

#include "kernels/ref/kernel.h"
#include "quant/rescale.h"

namespace edgec::ref {
namespace {

int32_t Load(const Tensor& x, int64_t i) {
  if (x.dtype() == DType::kI16) return x.data<int16_t>()[i];
  return x.dtype() == DType::kU8 ? x.data<uint8_t>()[i] : x.data<int8_t>()[i];
}
void Store(Tensor& y, int64_t i, int32_t v) {
  if (y.dtype() == DType::kU8) y.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  else if (y.dtype() == DType::kI16) y.data<int16_t>()[i] = static_cast<int16_t>(v);
  else y.data<int8_t>()[i] = static_cast<int8_t>(v);
}

}  // namespace

Status QLinearRequantize(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  const DType yt = y.dtype();
  if (yt != DType::kU8 && yt != DType::kI8 && yt != DType::kI16)
    return ctx.Error("output dtype {} is not u8, i8 or i16", DTypeName(yt));
  const float sx = static_cast<float>(ctx.inputs[1]->ToDoubleVector().at(0));
  const float sy = static_cast<float>(ctx.inputs[3]->ToDoubleVector().at(0));
  const int32_t zx = ctx.input(2) ? static_cast<int32_t>(ctx.input(2)->ToInt64Vector().at(0)) : 0;
  const int32_t zy = ctx.input(4) ? static_cast<int32_t>(ctx.input(4)->ToInt64Vector().at(0)) : 0;
  const int32_t lo = yt == DType::kU8 ? 0 : yt == DType::kI16 ? -32768 : -128;
  const int32_t hi = yt == DType::kU8 ? 255 : yt == DType::kI16 ? 32767 : 127;
  const std::string mode = ctx.attrs.GetString("edgec_requant", "float");
  if (mode == "fixed_point") {
    auto p = quant::MakeRescale(sx, zx, sy, zy, lo, hi);
    if (!p.ok()) return ctx.Error("{}", p.status().message());
    for (int64_t i = 0; i < x.numel(); ++i) Store(y, i, quant::Rescale(Load(x, i), *p));
    return Status::Ok();
  }
  if (mode != "float") return ctx.Error("attribute edgec_requant is '{}', expected float or fixed_point", mode);
  // DequantizeLinear then QuantizeLinear, both in f32 (round half to even, then saturate).
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float f = static_cast<float>(Load(x, i) - zx) * sx;
    const float r = std::nearbyint(f / sy) + static_cast<float>(zy);
    Store(y, i, static_cast<int32_t>(std::clamp(r, static_cast<float>(lo), static_cast<float>(hi))));
  }
  return Status::Ok();
}

}  // namespace edgec::ref
