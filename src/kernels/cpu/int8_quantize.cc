// Fast QuantizeLinear and DequantizeLinear with per-tensor parameters, in any layout (the
// output has the input's): the reference's arithmetic, vectorized with AVX2 where the CPU
// has it. Quantize: saturate(round_half_to_even(x / scale) + zp) in f32 (NaN → zp);
// dequantize: f32(q − zp) · scale.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/int8.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"
#include "quant/ratio_forms.h"

namespace edgec::cpu {

namespace {

template <typename Q>
void QuantizeScalar(const float* x, Q* y, int64_t b, int64_t e, float scale, float zp) {
  const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  for (int64_t i = b; i < e; ++i) {
    float v = x[i] / scale;
    if (std::isnan(v)) v = 0;
    const float r = std::nearbyint(v) + zp;
    y[i] = static_cast<Q>(std::min(std::max(r, lo), hi));
  }
}

template <typename Q>
void DequantizeScalar(const Q* x, float* y, int64_t b, int64_t e, float scale, int32_t zp) {
  for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
}

// QuantizeLinear (f32 -> u8/i8) or DequantizeLinear (u8/i8 -> f32) with per-tensor
// parameters, elements split between threads.
class QuantizeKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    ParallelFor(threads_, numel_, kInt8Grain, [&](int64_t b, int64_t e) {
      if (quantize_) Quantize(static_cast<const float*>(in[0]), out[0], b, e);
      else Dequantize(in[0], static_cast<float*>(out[0]), b, e);
    });
    return Status::Ok();
  }
  std::string Describe() const override {
    if (quantize_) return u8_ ? "own quantize f32->u8" : "own quantize f32->i8";
    return u8_ ? "own dequantize u8->f32" : "own dequantize i8->f32";
  }
  void Quantize(const float* x, void* y, int64_t b, int64_t e) const {
    if (HasAvx2()) b = vec::QuantizeAvx2(x, y, b, e, scale_, static_cast<float>(zp_), u8_);
    if (u8_) QuantizeScalar(x, static_cast<uint8_t*>(y), b, e, scale_, static_cast<float>(zp_));
    else QuantizeScalar(x, static_cast<int8_t*>(y), b, e, scale_, static_cast<float>(zp_));
  }
  void Dequantize(const void* x, float* y, int64_t b, int64_t e) const {
    if (HasAvx2()) b = vec::DequantizeAvx2(x, y, b, e, scale_, zp_, u8_);
    if (u8_) DequantizeScalar(static_cast<const uint8_t*>(x), y, b, e, scale_, zp_);
    else DequantizeScalar(static_cast<const int8_t*>(x), y, b, e, scale_, zp_);
  }
  bool quantize_ = true;
  float scale_ = 1;
  int32_t zp_ = 0;
  bool u8_ = true;
  int64_t numel_ = 0;
  int threads_ = 1;
};

}  // namespace

KernelOr CreateQuantizeKernel(const KernelRequest& req) {
  const bool quantize = req.op == OpKind::kQuantizeLinear;
  if (req.inputs.size() < 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 or 3 inputs");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const DType q = quantize ? y.dtype : x.dtype;
  if ((quantize ? x.dtype : y.dtype) != DType::kF32 || (q != DType::kU8 && q != DType::kI8))
    return Refuse(req, "{} -> {}: only f32 <-> u8/i8", DTypeName(x.dtype), DTypeName(y.dtype));
  if (x.layout != y.layout && x.dims.size() == 4) return Refuse(req, "input and output layouts differ");
  const Tensor* s = ConstantOrNull(req, 1);
  if (!s || s->numel() != 1) return Refuse(req, "the scale is not a constant scalar (per-axis runs on the reference)");
  int32_t zp = 0;
  if (InputOrNull(req, 2)) {
    const Tensor* z = ConstantOrNull(req, 2);
    if (!z || z->numel() != 1) return Refuse(req, "the zero point is not a constant scalar");
    zp = static_cast<int32_t>(z->ToInt64Vector()[0]);
  }
  auto k = std::make_unique<QuantizeKernel>();
  k->quantize_ = quantize;
  k->scale_ = static_cast<float>(s->ToDoubleVector()[0]);
  k->zp_ = zp;
  k->u8_ = q == DType::kU8;
  k->numel_ = NumElements(x.dims);
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
