// Fast QLinearGlobalAveragePool: the reference's arithmetic (ops.def) per channel, integer
// sums in 16-bit lanes where exact, row-major or NHWC.
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

// The f64 sums of a pool's float mode are exact, so their order does not matter: every term
// is an f32 v = (q − zx)·sx with |q − zx| ≤ 255, a whole multiple of g = ulp(sx) below
// 2^32·g, so fewer than 2^21 of them add up below 2^53·g, on the f64 grid.
constexpr int64_t kExactPoolPlane = int64_t{1} << 21;

// QLinearGlobalAveragePool in NHWC, channels [c0, c1) of one image: each channel's sums over
// the pixels (the f32 dequantized values in f64 for the float mode, exact in any order below
// kExactPoolPlane; the shifted integers for the fixed-point one), 8 channels at a time, two
// pixels in separate sums. Returns the first channel it did not do.
__attribute__((target("avx2"))) int64_t PoolSumsNhwcAvx2(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0,
                                                         int64_t c1, bool u8, int32_t zx, float sx, double* fsum,
                                                         int32_t* isum, bool fixed_point) {
  if (!fixed_point && plane >= kExactPoolPlane) return c0;
  const __m256i z = _mm256_set1_epi32(zx);
  const __m256 s = _mm256_set1_ps(sx);
  int64_t c = c0;
  for (; c + 8 <= c1; c += 8) {
    __m256d lo0 = _mm256_setzero_pd(), hi0 = _mm256_setzero_pd(), lo1 = _mm256_setzero_pd(), hi1 = _mm256_setzero_pd();
    __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
    const uint8_t* px = x + c;
    int64_t p = 0;
    for (; p < plane; p += 2, px += 2 * channels) {
      const __m256i q0 = _mm256_sub_epi32(Widen8(px, u8), z);
      const __m256i q1 = p + 1 < plane ? _mm256_sub_epi32(Widen8(px + channels, u8), z) : _mm256_setzero_si256();
      if (fixed_point) {
        i0 = _mm256_add_epi32(i0, q0);
        i1 = _mm256_add_epi32(i1, q1);
      } else {
        const __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(q0), s), v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(q1), s);
        lo0 = _mm256_add_pd(lo0, _mm256_cvtps_pd(_mm256_castps256_ps128(v0)));
        hi0 = _mm256_add_pd(hi0, _mm256_cvtps_pd(_mm256_extractf128_ps(v0, 1)));
        lo1 = _mm256_add_pd(lo1, _mm256_cvtps_pd(_mm256_castps256_ps128(v1)));
        hi1 = _mm256_add_pd(hi1, _mm256_cvtps_pd(_mm256_extractf128_ps(v1, 1)));
      }
    }
    _mm256_storeu_pd(fsum + c - c0, _mm256_add_pd(lo0, lo1));
    _mm256_storeu_pd(fsum + c - c0 + 4, _mm256_add_pd(hi0, hi1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(isum + c - c0), _mm256_add_epi32(i0, i1));
  }
  return c;
}

// The same sums 16 channels at a time with AVX-512 (channels left over go to the AVX2 loop).
__attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t PoolSumsNhwcAvx512(
    const uint8_t* x, int64_t plane, int64_t channels, int64_t c0, int64_t c1, bool u8, int32_t zx, float sx,
    double* fsum, int32_t* isum, bool fixed_point) {
  if (!fixed_point && plane >= kExactPoolPlane) return c0;
  const __m512i z = _mm512_set1_epi32(zx);
  const __m512 s = _mm512_set1_ps(sx);
  int64_t c = c0;
  for (; c + 16 <= c1; c += 16) {
    __m512d lo0 = _mm512_setzero_pd(), hi0 = _mm512_setzero_pd(), lo1 = _mm512_setzero_pd(), hi1 = _mm512_setzero_pd();
    __m512i i0 = _mm512_setzero_si512(), i1 = _mm512_setzero_si512();
    const uint8_t* px = x + c;
    for (int64_t p = 0; p < plane; p += 2, px += 2 * channels) {
      const __m512i q0 = _mm512_sub_epi32(Widen16(px, 0xFFFF, u8), z);
      const __m512i q1 = p + 1 < plane ? _mm512_sub_epi32(Widen16(px + channels, 0xFFFF, u8), z) : _mm512_setzero_si512();
      if (fixed_point) {
        i0 = _mm512_add_epi32(i0, q0);
        i1 = _mm512_add_epi32(i1, q1);
      } else {
        const __m512 v0 = _mm512_mul_ps(_mm512_cvtepi32_ps(q0), s), v1 = _mm512_mul_ps(_mm512_cvtepi32_ps(q1), s);
        lo0 = _mm512_add_pd(lo0, _mm512_cvtps_pd(_mm512_castps512_ps256(v0)));
        hi0 = _mm512_add_pd(hi0, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v0), 1))));
        lo1 = _mm512_add_pd(lo1, _mm512_cvtps_pd(_mm512_castps512_ps256(v1)));
        hi1 = _mm512_add_pd(hi1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v1), 1))));
      }
    }
    _mm512_storeu_pd(fsum + c - c0, _mm512_add_pd(lo0, lo1));
    _mm512_storeu_pd(fsum + c - c0 + 8, _mm512_add_pd(hi0, hi1));
    _mm512_storeu_si512(isum + c - c0, _mm512_add_epi32(i0, i1));
  }
  return c;
}

// The integer sums sum(q) of channels [c0, c1) over `plane` pixels of an NHWC image, added
// into isum[0, c1 - c0): 128 channels per pass over the pixels, 16-bit sums in four
// registers for up to 128 pixels at a time (|sum| <= 128 · 255 fits), then widened and
// added. A load, a widening and an add per 32 values; the f64 sums of the float mode take
// eight operations per 16.
template <bool kU8>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i Widen32(__m256i v) {
  return kU8 ? _mm512_cvtepu8_epi16(v) : _mm512_cvtepi8_epi16(v);
}

template <bool kU8>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void PoolIntegerSumsNhwcAvx512(const uint8_t* x, int64_t plane,
                                                                                   int64_t channels, int64_t c0,
                                                                                   int64_t c1, int32_t* isum) {
  constexpr int64_t kChunk = 128;
  for (int64_t c = c0; c < c1; c += 128) {
    const int64_t n = std::min<int64_t>(128, c1 - c);
    __mmask32 m[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t k = std::clamp<int64_t>(n - 32 * j, 0, 32);
      m[j] = k == 32 ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << k) - 1);
    }
    int32_t* sum = isum + (c - c0);
    for (int64_t p0 = 0; p0 < plane; p0 += kChunk) {
      __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
      const uint8_t* px = x + p0 * channels + c;
      for (int64_t p = p0, end = std::min(plane, p0 + kChunk); p < end; ++p, px += channels) {
        a0 = _mm512_add_epi16(a0, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[0], px)));
        a1 = _mm512_add_epi16(a1, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[1], px + 32)));
        a2 = _mm512_add_epi16(a2, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[2], px + 64)));
        a3 = _mm512_add_epi16(a3, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[3], px + 96)));
      }
      const __m512i acc[4] = {a0, a1, a2, a3};
      for (int j = 0; j < 4; ++j) {
        for (int h = 0; h < 2; ++h) {
          const __mmask16 mh = static_cast<__mmask16>(m[j] >> (16 * h));
          if (!mh) continue;
          const __m256i half = h ? _mm512_extracti64x4_epi64(acc[j], 1) : _mm512_castsi512_si256(acc[j]);
          int32_t* at = sum + 32 * j + 16 * h;
          _mm512_mask_storeu_epi32(at, mh, _mm512_add_epi32(_mm512_maskz_loadu_epi32(mh, at), _mm512_cvtepi16_epi32(half)));
        }
      }
    }
  }
}

// QLinearGlobalAveragePool over [N, C, spatial] in row-major or NHWC: the reference's arithmetic
// (see ops.def) per channel, the channels split between threads; the NHWC form walks pixels
// outermost so it reads memory in order.
class GlobalAveragePoolKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    // One f64 and one int32 sum per (image, channel): threads write disjoint ones.
    auto* fsum = static_cast<double*>(scratch);
    auto* isum = reinterpret_cast<int32_t*>(fsum + threads_ * n_ * c_);
    if (SplitsPixels()) {
      // NHWC with several threads: each sums a share of the pixels of every channel (split by
      // channels, both would read every cache line), then the shares are added. The f64 sums
      // are exact below kExactPoolPlane terms (see there), so the order does not matter.
      ParallelFor(threads_, threads_, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t t = lo; t < hi; ++t)
          for (int64_t b = 0; b < n_; ++b)
            Pool(x, b, plane_ * t / threads_, plane_ * (t + 1) / threads_, 0, c_, fsum + (t * n_ + b) * c_,
                 isum + (t * n_ + b) * c_);
      });
      for (int64_t i = 0; i < n_ * c_; ++i) {
        for (int64_t t = 1; t < threads_; ++t) fsum[i] += fsum[t * n_ * c_ + i], isum[i] += isum[t * n_ * c_ + i];
      }
      RequantizeSums(fsum, isum, n_ * c_, y);
      return Status::Ok();
    }
    ParallelFor(threads_, n_ * c_, std::max<int64_t>(1, kInt8Grain / plane_), [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo / c_; b * c_ < hi; ++b) {
        const int64_t c0 = std::max(lo - b * c_, int64_t{0}), c1 = std::min(hi - b * c_, c_);
        Pool(x, b, 0, plane_, c0, c1, fsum + b * c_ + c0, isum + b * c_ + c0);
        RequantizeSums(fsum + b * c_ + c0, isum + b * c_ + c0, c1 - c0, y + b * c_ + c0);
      }
    });
    return Status::Ok();
  }
  bool SplitsPixels() const {
    return nhwc_ && threads_ > 1 && plane_ >= 64 * threads_ && (exact_ || (plane_ < kExactPoolPlane && !fixed_point_));
  }
  size_t scratch_bytes() const override {
    return static_cast<size_t>(threads_ * n_ * c_) * (sizeof(double) + sizeof(int32_t));
  }
  // The sums over pixels [p0, p1) of channels [c0, c1) of image b into fsum[0, c1 - c0) and
  // isum alike.
  void Pool(const uint8_t* x, int64_t b, int64_t p0, int64_t p1, int64_t c0, int64_t c1, double* fsum,
            int32_t* isum) const {
    std::fill(fsum, fsum + (c1 - c0), 0.0);
    std::fill(isum, isum + (c1 - c0), 0);
    int64_t from = c0;
    const uint8_t* first = x + (b * plane_ + p0) * c_;  // NHWC: pixel p0 of image b
    if (nhwc_ && HasAvx512() && IntegerSums()) {
      if (x_u8_) PoolIntegerSumsNhwcAvx512<true>(first, p1 - p0, c_, c0, c1, isum);
      else PoolIntegerSumsNhwcAvx512<false>(first, p1 - p0, c_, c0, c1, isum);
      for (int64_t c = c0; c < c1; ++c) isum[c - c0] -= static_cast<int32_t>((p1 - p0) * zx_);
      return;
    }
    if (nhwc_ && HasAvx512())
      from = PoolSumsNhwcAvx512(first, p1 - p0, c_, c0, c1, x_u8_, zx_, sx_, fsum, isum, IntegerSums());
    if (nhwc_ && HasAvx2())
      from = PoolSumsNhwcAvx2(first, p1 - p0, c_, from, c1, x_u8_, zx_, sx_, fsum + (from - c0),
                              isum + (from - c0), IntegerSums());
    auto add = [&](int64_t c, int64_t at) {
      const int32_t q = (x_u8_ ? x[at] : static_cast<int8_t>(x[at])) - zx_;
      isum[c - c0] += q;
      fsum[c - c0] += static_cast<double>(static_cast<float>(q) * sx_);
    };
    if (nhwc_) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t c = from; c < c1; ++c) add(c, (b * plane_ + p) * c_ + c);
    } else {
      for (int64_t c = from; c < c1; ++c)
        for (int64_t p = p0; p < p1; ++p) add(c, (b * c_ + c) * plane_ + p);
    }
  }
  // The sums in integers: the fixed-point mode's, and the float mode's when every term
  // (q − zx)·sx is exact in f32. Their f64 sum is then exactly sx · sum(q − zx).
  bool IntegerSums() const { return fixed_point_ || exact_; }
  int32_t Requantize(double fsum, int32_t isum) const {
    if (fixed_point_) return quant::Requantize(isum, mult_, zy_, qmin_, qmax_);
    if (exact_) fsum = static_cast<double>(isum) * static_cast<double>(sx_);
    float f = static_cast<float>(fsum / static_cast<double>(plane_)) / sy_;
    if (std::isnan(f)) f = 0;
    return static_cast<int32_t>(
        std::min(std::max(std::nearbyint(f) + static_cast<float>(zy_), static_cast<float>(qmin_)), static_cast<float>(qmax_)));
  }
  // y[i] = Requantize(fsum[i], isum[i]) for i < n; in the float mode 8 at a time with
  // AVX-512, the same operations (f64 quotient, f32 conversion and quotient, round to even).
  void RequantizeSums(const double* fsum, const int32_t* isum, int64_t n, uint8_t* y) const {
    int64_t i = 0;
    if (!fixed_point_ && HasAvx512()) i = RequantizeSumsAvx512(fsum, isum, n, y);
    for (; i < n; ++i) y[i] = static_cast<uint8_t>(Requantize(fsum[i], isum[i]));
  }
  __attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t RequantizeSumsAvx512(const double* fsum,
                                                                                    const int32_t* isum, int64_t n,
                                                                                    uint8_t* y) const {
    const __m512d count = _mm512_set1_pd(static_cast<double>(plane_)), sx = _mm512_set1_pd(static_cast<double>(sx_));
    const __m256 sy = _mm256_set1_ps(sy_), zy = _mm256_set1_ps(static_cast<float>(zy_));
    const __m256 lo = _mm256_set1_ps(static_cast<float>(qmin_)), hi = _mm256_set1_ps(static_cast<float>(qmax_));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m512d sum = exact_ ? _mm512_mul_pd(_mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(isum + i))), sx)
                                 : _mm512_loadu_pd(fsum + i);
      __m256 f = _mm256_div_ps(_mm512_cvtpd_ps(_mm512_div_pd(sum, count)), sy);
      f = _mm256_mask_mov_ps(f, _mm256_cmp_ps_mask(f, f, _CMP_UNORD_Q), _mm256_setzero_ps());  // NaN -> 0
      f = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
      const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(f, lo), hi));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm256_cvtepi32_epi8(q));  // in [qmin, qmax]: the low byte
    }
    return i;
  }
  std::string Describe() const override {
    return fmt::format("own quantized global average pool{}{}{}", fixed_point_ ? " (fixed point)" : exact_ ? " (integer sums: exact scale)" : "",
                       !nhwc_ ? "" : HasAvx512() ? " avx512" : HasAvx2() ? " avx2" : "",
                       SplitsPixels() ? fmt::format(", pixels split between {} threads", threads_) : "");
  }
  float sx_ = 1, sy_ = 1;
  int32_t zx_ = 0, zy_ = 0, qmin_ = 0, qmax_ = 255;
  quant::FixedPointMultiplier mult_;
  bool fixed_point_ = false, exact_ = false, x_u8_ = true, nhwc_ = false;
  int64_t n_ = 1, c_ = 1, plane_ = 1;
  int threads_ = 1;
};

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
  // Integer sums in int32: at most 255 · plane in magnitude.
  k->exact_ = !k->fixed_point_ && quant::DequantizesExactly(k->sx_) && k->plane_ < (int64_t{1} << 23);
  if (k->fixed_point_) {
    auto m = quant::QuantizeMultiplier(static_cast<double>(k->sx_) / k->sy_ / static_cast<double>(k->plane_));
    if (!m.ok()) return Refuse(req, "{}", m.status().message());
    k->mult_ = *m;
  }
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
