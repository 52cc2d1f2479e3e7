// Fast QuantizeLinear and DequantizeLinear with per-tensor parameters, in any layout (the
// output has the input's): the reference's arithmetic, vectorized with AVX2 where the CPU
// has it. Quantize: saturate(round_half_to_even(x / scale) + zp) in f32 (NaN → zp);
// dequantize: f32(q − zp) · scale.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
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

// QuantizeLinear's last steps on 8 f32 values v (already divided by the scale): NaN -> 0,
// round half to even, + zero point, saturate to [lo, hi], store 8 bytes.
__attribute__((target("avx2"))) inline void StoreQuantizedAvx2(__m256 v, __m256 zp, __m256 lo, __m256 hi, uint8_t* out,
                                                               bool u8) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
  ClampStore8(_mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp), lo, hi, out, u8);
}

__attribute__((target("avx2"))) int64_t QuantizeAvx2(const float* x, void* y, int64_t b, int64_t e, float scale,
                                                     float zp, bool u8) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp);
  const __m256 lo = _mm256_set1_ps(u8 ? 0.f : -128.f), hi = _mm256_set1_ps(u8 ? 255.f : 127.f);
  auto* out = static_cast<uint8_t*>(y);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) StoreQuantizedAvx2(_mm256_div_ps(_mm256_loadu_ps(x + i), s), z, lo, hi, out + i, u8);
  return i;
}

template <typename Q>
void DequantizeScalar(const Q* x, float* y, int64_t b, int64_t e, float scale, int32_t zp) {
  for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
}

__attribute__((target("avx2"))) int64_t DequantizeAvx2(const void* x, float* y, int64_t b, int64_t e, float scale,
                                                       int32_t zp, bool u8) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(zp);
  const auto* in = static_cast<const uint8_t*>(x);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    const __m256i v = Widen8(in + i, u8);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, z)), s));
  }
  return i;
}

class QuantizeKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    ParallelFor(threads_, numel_, kInt8Grain, [&](int64_t b, int64_t e) {
      if (HasAvx2()) b = QuantizeAvx2(x, out[0], b, e, scale_, static_cast<float>(zp_), u8_);
      if (u8_) QuantizeScalar(x, static_cast<uint8_t*>(out[0]), b, e, scale_, static_cast<float>(zp_));
      else QuantizeScalar(x, static_cast<int8_t*>(out[0]), b, e, scale_, static_cast<float>(zp_));
    });
    return Status::Ok();
  }
  std::string Describe() const override { return u8_ ? "own quantize f32->u8" : "own quantize f32->i8"; }
  float scale_ = 1;
  int32_t zp_ = 0;
  bool u8_ = true;
  int64_t numel_ = 0;
  int threads_ = 1;
};

class DequantizeKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    auto* y = static_cast<float*>(out[0]);
    ParallelFor(threads_, numel_, kInt8Grain, [&](int64_t b, int64_t e) {
      if (HasAvx2()) b = DequantizeAvx2(in[0], y, b, e, scale_, zp_, u8_);
      if (u8_) DequantizeScalar(static_cast<const uint8_t*>(in[0]), y, b, e, scale_, zp_);
      else DequantizeScalar(static_cast<const int8_t*>(in[0]), y, b, e, scale_, zp_);
    });
    return Status::Ok();
  }
  std::string Describe() const override { return u8_ ? "own dequantize u8->f32" : "own dequantize i8->f32"; }
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
  auto fill = [&](auto k) -> KernelOr {
    k->scale_ = static_cast<float>(s->ToDoubleVector()[0]);
    k->zp_ = zp;
    k->u8_ = q == DType::kU8;
    k->numel_ = NumElements(x.dims);
    k->threads_ = std::max(1, req.threads);
    return std::unique_ptr<Kernel>(std::move(k));
  };
  if (quantize) return fill(std::make_unique<QuantizeKernel>());
  return fill(std::make_unique<DequantizeKernel>());
}

}  // namespace edgec::cpu
