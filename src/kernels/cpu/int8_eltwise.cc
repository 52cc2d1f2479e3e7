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
#include "quant/fixed_point.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kGrain = 16384;

// AVX2 unless the CPU lacks it or the scalar path is forced (cpu::ForceScalarKernels,
// EDGEC_CPU_SCALAR=1), as for the other own kernels.
bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has && VectorIsa() != "scalar";
}

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

// 8 u8/i8 values widened to int32.
__attribute__((target("avx2"))) inline __m256i Widen8(const uint8_t* x, bool u8) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
  return u8 ? _mm256_cvtepu8_epi32(raw) : _mm256_cvtepi8_epi32(raw);
}

// QuantizeLinear's last steps on 8 f32 values v (already divided by the scale): NaN -> 0,
// round half to even, + zero point, saturate to [lo, hi], store 8 bytes.
__attribute__((target("avx2"))) inline void StoreQuantizedAvx2(__m256 v, __m256 zp, __m256 lo, __m256 hi, uint8_t* out,
                                                               bool u8) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
  v = _mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), u8 ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16));
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
    ParallelFor(threads_, numel_, kGrain, [&](int64_t b, int64_t e) {
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
    ParallelFor(threads_, numel_, kGrain, [&](int64_t b, int64_t e) {
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

// 64 lookups at a time: two 128-entry byte permutes (AVX-512 VBMI), the index's top bit
// choosing between them. `table` is indexed by the raw byte.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t LookupVbmi(const uint8_t* table, const uint8_t* x,
                                                                           uint8_t* y, int64_t b, int64_t e) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = b;
  for (; i + 64 <= e; i += 64) {
    const __m512i idx = _mm512_loadu_si512(x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);  // entries 0..127 (bit 6 picks t0/t1)
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128..255
    const __mmask64 top = _mm512_movepi8_mask(idx);             // bit 7
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(top, lo, hi));
  }
  return i;
}

bool HasVbmi() {
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return has && VectorIsa() != "scalar";
}

class LookupKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kGrain, [&](int64_t b, int64_t e) {
      if (HasVbmi()) b = LookupVbmi(by_byte_, x, y, b, e);
      for (int64_t i = b; i < e; ++i) y[i] = by_byte_[x[i]];
    });
    return Status::Ok();
  }
  std::string Describe() const override { return HasVbmi() ? "own 256-entry lookup avx512vbmi" : "own 256-entry lookup"; }
  uint8_t by_byte_[256] = {};  // the table indexed by the input's raw byte
  int64_t numel_ = 0;
  int threads_ = 1;
};

// QLinearAdd and QLinearMul, float mode: the island's f32 arithmetic (two dequantizes, the
// sum or product, a quantize), 8 at a time with separate multiplies and adds (no FMA: the
// island rounds the products first). Elements [0, n) of a and y; b alike, or its one value
// b[0] for all (`b_one`). Returns how many it did.
template <bool kMul>
__attribute__((target("avx2"))) int64_t BinaryFloatAvx2(const uint8_t* a, const uint8_t* b, bool b_one, uint8_t* y,
                                                        int64_t n, const float* p, bool a_u8, bool b_u8, bool y_u8) {
  const __m256 sa = _mm256_set1_ps(p[0]), sb = _mm256_set1_ps(p[1]), sy = _mm256_set1_ps(p[2]);
  const __m256i za = _mm256_set1_epi32(static_cast<int32_t>(p[3])), zb = _mm256_set1_epi32(static_cast<int32_t>(p[4]));
  const __m256 zy = _mm256_set1_ps(p[5]), lo = _mm256_set1_ps(p[6]), hi = _mm256_set1_ps(p[7]);
  const __m256i b0 = _mm256_set1_epi32(b_u8 ? b[0] : static_cast<int8_t>(b[0]));
  const __m256 fb_one = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(b0, zb)), sb);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 fa = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(Widen8(a + i, a_u8), za)), sa);
    const __m256 fb = b_one ? fb_one : _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(Widen8(b + i, b_u8), zb)), sb);
    StoreQuantizedAvx2(_mm256_div_ps(kMul ? _mm256_mul_ps(fa, fb) : _mm256_add_ps(fa, fb), sy), zy, lo, hi, y + i, y_u8);
  }
  return i;
}

// QLinearAdd / QLinearMul on operands of one shape, or with B one value per channel (and per
// image, or shared by all) of A's [N, C, H, W] (the squeeze-excitation gate), in NHWC or
// row-major: the flat output is cut into rows along which A and B advance together (NHWC: the
// C channels of one pixel) or B stays (row-major: the H·W pixels of one channel).
class QuantizedBinaryKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* a = static_cast<const uint8_t*>(in[a_input_]);
    const auto* b = static_cast<const uint8_t*>(in[3 - a_input_]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kGrain, [&](int64_t lo, int64_t hi) {
      const bool avx2 = !fixed_point_ && HasAvx2();
      while (lo < hi) {
        const int64_t r = lo / row_, j = lo % row_, n = std::min(hi - lo, row_ - j);
        const uint8_t* bp = b + ((r / b_div_) % b_mod_) * b_mul_ + (b_one_ ? 0 : j);
        int64_t k = 0;
        if (avx2) {
          k = mul_ ? BinaryFloatAvx2<true>(a + lo, bp, b_one_, y + lo, n, p_, a_u8_, b_u8_, y_u8_)
                   : BinaryFloatAvx2<false>(a + lo, bp, b_one_, y + lo, n, p_, a_u8_, b_u8_, y_u8_);
        }
        for (; k < n; ++k) y[lo + k] = static_cast<uint8_t>(One(a[lo + k], bp[b_one_ ? 0 : k]));
        lo += n;
      }
    });
    return Status::Ok();
  }
  int32_t One(uint8_t a, uint8_t b) const {
    const int32_t qa = a_u8_ ? a : static_cast<int8_t>(a), qb = b_u8_ ? b : static_cast<int8_t>(b);
    if (fixed_point_) return mul_ ? quant::QuantizedMul(qa, qb, fixed_mul_) : quant::QuantizedAdd(qa, qb, fixed_add_);
    const float fa = static_cast<float>(qa - static_cast<int32_t>(p_[3])) * p_[0];
    const float fb = static_cast<float>(qb - static_cast<int32_t>(p_[4])) * p_[1];
    float f = (mul_ ? fa * fb : fa + fb) / p_[2];
    if (std::isnan(f)) f = 0;
    return static_cast<int32_t>(std::min(std::max(std::nearbyint(f) + p_[5], p_[6]), p_[7]));
  }
  std::string Describe() const override {
    return fmt::format("own quantized {}{}{}", mul_ ? "mul" : "add",
                       fixed_point_ ? " (fixed point)" : HasAvx2() ? " avx2" : "",
                       b_mul_ || b_one_ ? ", one operand per channel" : "");
  }
  // p_ and the fixed-point parameters are A's and B's as the kernel reads them: the node's
  // inputs 0 and 3, swapped when input 0 is the per-channel one (a_input_ = 3).
  float p_[8] = {};  // sa, sb, sy, za, zb, zy, qmin, qmax
  quant::QuantizedAddParams fixed_add_;
  quant::QuantizedMulParams fixed_mul_;
  bool mul_ = false, fixed_point_ = false, a_u8_ = true, b_u8_ = true, y_u8_ = true, b_one_ = false;
  int a_input_ = 0;
  int64_t numel_ = 0, row_ = 1, b_div_ = 1, b_mod_ = 1, b_mul_ = 0;
  int threads_ = 1;
};

// QLinearGlobalAveragePool over [N, C, spatial] in row-major or NHWC: the reference's arithmetic
// (see ops.def) per channel; the NHWC form walks pixels outermost so it reads memory in order.
class GlobalAveragePoolKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    const int64_t planes = n_ * c_;
    ParallelFor(threads_, n_, 1, [&](int64_t b0, int64_t b1) {
      std::vector<double> fsum(c_);
      std::vector<int32_t> isum(c_);
      for (int64_t b = b0; b < b1; ++b) {
        std::fill(fsum.begin(), fsum.end(), 0.0);
        std::fill(isum.begin(), isum.end(), 0);
        for (int64_t p = 0; p < plane_; ++p) {
          for (int64_t c = 0; c < c_; ++c) {
            const int64_t at = nhwc_ ? (b * plane_ + p) * c_ + c : (b * c_ + c) * plane_ + p;
            const int32_t q = (x_u8_ ? x[at] : static_cast<int8_t>(x[at])) - zx_;
            isum[c] += q;
            fsum[c] += static_cast<double>(static_cast<float>(q) * sx_);
          }
        }
        for (int64_t c = 0; c < c_; ++c) {
          int32_t v;
          if (fixed_point_) {
            v = quant::Requantize(isum[c], mult_, zy_, qmin_, qmax_);
          } else {
            float f = static_cast<float>(fsum[c] / static_cast<double>(plane_)) / sy_;
            if (std::isnan(f)) f = 0;
            v = static_cast<int32_t>(std::min(std::max(std::nearbyint(f) + static_cast<float>(zy_), static_cast<float>(qmin_)),
                                              static_cast<float>(qmax_)));
          }
          y[b * c_ + c] = static_cast<uint8_t>(v);
        }
      }
    });
    (void)planes;
    return Status::Ok();
  }
  std::string Describe() const override { return fixed_point_ ? "own quantized global average pool (fixed point)" : "own quantized global average pool"; }
  float sx_ = 1, sy_ = 1;
  int32_t zx_ = 0, zy_ = 0, qmin_ = 0, qmax_ = 255;
  quant::FixedPointMultiplier mult_;
  bool fixed_point_ = false, x_u8_ = true, nhwc_ = false;
  int64_t n_ = 1, c_ = 1, plane_ = 1;
  int threads_ = 1;
};

// Scale and zero point inputs at (s, s + 1) as constant scalars, or a refusal.
Status ScalarParams(const KernelRequest& req, int s, double* scale, int32_t* zp) {
  const Tensor* st = ConstantOrNull(req, s);
  if (!st || st->numel() != 1) return Refuse(req, "input {} (scale) is not a constant scalar", s);
  *scale = st->ToDoubleVector()[0];
  *zp = 0;
  if (InputOrNull(req, s + 1)) {
    const Tensor* z = ConstantOrNull(req, s + 1);
    if (!z || z->numel() != 1) return Refuse(req, "input {} (zero point) is not a constant scalar", s + 1);
    *zp = static_cast<int32_t>(z->ToInt64Vector()[0]);
  }
  return Status::Ok();
}

// The requantization mode and output clamp of a QLinear* node, as the reference reads them.
Status ModeAndClamp(const KernelRequest& req, DType out, bool* fixed_point, int32_t* qmin, int32_t* qmax) {
  const std::string mode = req.attrs ? req.attrs->GetString("edgec_requant", "float") : "float";
  if (mode != "float" && mode != "fixed_point") return Refuse(req, "edgec_requant '{}'", mode);
  *fixed_point = mode == "fixed_point";
  const int64_t tmin = out == DType::kU8 ? 0 : -128, tmax = out == DType::kU8 ? 255 : 127;
  *qmin = static_cast<int32_t>(std::max(tmin, req.attrs ? req.attrs->GetInt("edgec_qmin", tmin) : tmin));
  *qmax = static_cast<int32_t>(std::min(tmax, req.attrs ? req.attrs->GetInt("edgec_qmax", tmax) : tmax));
  if (*qmin > *qmax) return Refuse(req, "edgec_qmin {} > edgec_qmax {}", *qmin, *qmax);
  return Status::Ok();
}

}  // namespace

KernelOr CreateQuantizedGlobalAveragePoolKernel(const KernelRequest& req) {
  if (req.inputs.size() < 4 || req.outputs.size() != 1) return Refuse(req, "expected 4 or 5 inputs");
  const TensorDesc &x = req.inputs[0], &y = req.outputs[0];
  if (x.dims.size() != 4) return Refuse(req, "{}-d input (4-d only)", x.dims.size());
  if (!IsDense(x) || !IsDense(y) || (x.layout != Layout::kRowMajor && x.layout != Layout::kNHWC))
    return Refuse(req, "input or output is not dense row-major/NHWC");
  auto k = std::make_unique<GlobalAveragePoolKernel>();
  double sx, sy;
  RETURN_IF_ERROR(ScalarParams(req, 1, &sx, &k->zx_));
  RETURN_IF_ERROR(ScalarParams(req, 3, &sy, &k->zy_));
  RETURN_IF_ERROR(ModeAndClamp(req, y.dtype, &k->fixed_point_, &k->qmin_, &k->qmax_));
  k->sx_ = static_cast<float>(sx);
  k->sy_ = static_cast<float>(sy);
  k->x_u8_ = x.dtype == DType::kU8;
  k->nhwc_ = x.layout == Layout::kNHWC;
  k->n_ = x.dims[0];
  k->c_ = x.dims[1];
  k->plane_ = x.dims[2] * x.dims[3];
  if (k->plane_ < 1) return Refuse(req, "empty spatial plane");
  if (k->fixed_point_) {
    auto m = quant::QuantizeMultiplier(static_cast<double>(k->sx_) / k->sy_ / static_cast<double>(k->plane_));
    if (!m.ok()) return Refuse(req, "{}", m.status().message());
    k->mult_ = *m;
  }
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

KernelOr CreateQuantizedBinaryKernel(const KernelRequest& req) {
  if (req.inputs.size() < 7 || req.outputs.size() != 1) return Refuse(req, "expected 7 or 8 inputs");
  const TensorDesc& y = req.outputs[0];
  // A: the operand of the output's shape; B: the same, or [N or 1, C, 1, 1] of a 4-d output.
  auto per_channel = [&](const TensorDesc& d) {
    return y.dims.size() == 4 && d.dims.size() == 4 && (d.dims[0] == y.dims[0] || d.dims[0] == 1) &&
           d.dims[1] == y.dims[1] && d.dims[2] == 1 && d.dims[3] == 1;
  };
  auto k = std::make_unique<QuantizedBinaryKernel>();
  k->a_input_ = req.inputs[0].dims == y.dims ? 0 : 3;
  const TensorDesc &a = req.inputs[k->a_input_], &b = req.inputs[3 - k->a_input_];
  if (a.dims != y.dims || (b.dims != y.dims && !per_channel(b)))
    return Refuse(req, "broadcasting {} {} by {} other than one operand per channel (runs on the reference)",
                  OpName(req.op), DimsToString(req.inputs[0].dims), DimsToString(req.inputs[3].dims));
  const bool same = b.dims == y.dims;
  // A [n, C, 1, 1] operand has one memory order in either layout.
  if (a.layout != y.layout || (same && b.layout != y.layout) || !IsDense(a) || !IsDense(b) || !IsDense(y))
    return Refuse(req, "inputs and output are not dense in one layout");
  const int a_params = k->a_input_ + 1, b_params = 4 - k->a_input_;
  double scale[3];
  int32_t zp[3];
  for (int j : {0, 1, 2}) RETURN_IF_ERROR(ScalarParams(req, j == 0 ? a_params : j == 1 ? b_params : 6, &scale[j], &zp[j]));
  k->mul_ = req.op == OpKind::kQLinearMul;
  k->a_u8_ = a.dtype == DType::kU8;
  k->b_u8_ = b.dtype == DType::kU8;
  k->y_u8_ = y.dtype == DType::kU8;
  int32_t qmin, qmax;
  RETURN_IF_ERROR(ModeAndClamp(req, y.dtype, &k->fixed_point_, &qmin, &qmax));
  const float p[8] = {static_cast<float>(scale[0]), static_cast<float>(scale[1]), static_cast<float>(scale[2]),
                      static_cast<float>(zp[0]), static_cast<float>(zp[1]), static_cast<float>(zp[2]),
                      static_cast<float>(qmin), static_cast<float>(qmax)};
  std::copy(p, p + 8, k->p_);
  if (k->fixed_point_) {
    // The reference reads the scales as f32; so does the fixed-point form.
    if (k->mul_) {
      auto fp = quant::MakeQuantizedMul(p[0], zp[0], p[1], zp[1], p[2], zp[2], qmin, qmax);
      if (!fp.ok()) return Refuse(req, "{}", fp.status().message());
      k->fixed_mul_ = *fp;
    } else {
      auto fp = quant::MakeQuantizedAdd(p[0], zp[0], p[1], zp[1], p[2], zp[2], qmin, qmax);
      if (!fp.ok()) return Refuse(req, "{}", fp.status().message());
      k->fixed_add_ = *fp;
    }
  }
  k->numel_ = NumElements(y.dims);
  k->row_ = std::max<int64_t>(k->numel_, 1);
  if (!same) {
    const int64_t n = y.dims[0], c = y.dims[1], hw = y.dims[2] * y.dims[3];
    const int64_t images = b.dims[0] == n ? n : 1;  // B per image, or one for all
    if (y.layout == Layout::kNHWC) {  // rows: the C channels of a pixel; B's row of image r / hw
      k->row_ = std::max<int64_t>(c, 1);
      k->b_div_ = std::max<int64_t>(hw, 1);
      k->b_mod_ = images;
      k->b_mul_ = c;
    } else {  // rows: the hw pixels of a channel; B's value for channel r
      k->row_ = std::max<int64_t>(hw, 1);
      k->b_mod_ = images * c;
      k->b_mul_ = 1;
      k->b_one_ = true;
    }
  }
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

KernelOr CreateLookupKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs");
  const Tensor* t = ConstantOrNull(req, 1);
  if (!t || t->numel() != 256) return Refuse(req, "the table is not a constant of 256 values");
  if (req.inputs[0].layout != req.outputs[0].layout && req.inputs[0].dims.size() == 4)
    return Refuse(req, "input and output layouts differ");
  auto k = std::make_unique<LookupKernel>();
  const uint8_t flip = req.inputs[0].dtype == DType::kI8 ? 0x80 : 0;  // i8 byte b is entry b ^ 0x80
  for (int b = 0; b < 256; ++b) k->by_byte_[b] = static_cast<const uint8_t*>(t->raw())[b ^ flip];
  k->numel_ = NumElements(req.inputs[0].dims);
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

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
