// The QLinearGlobalAveragePool rows of the vector layer (vec/int8.h): per-channel sums over
// the pixels of an NHWC image (AVX2, AVX-512) and the float mode's requantization of the sums
// (AVX-512), the same operations as the kernel's scalar path (int8_global_pool.cc; guarded
// by the CpuInt8 global-pool tests on every ISA).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/vec/int8.h"
#include "kernels/cpu/vec/int8_simd.h"

namespace edgec::cpu::vec {

// QLinearGlobalAveragePool in NHWC, channels [c0, c1) of one image: each channel's sums over
// the pixels (the f32 dequantized values in f64 for the float mode, exact in any order below
// the kernel's kExactPoolPlane terms; the shifted integers for the fixed-point one), 8 channels at a time, two
// pixels in separate sums. Returns the first channel it did not do.
__attribute__((target("avx2"))) int64_t PoolSumsNhwcAvx2(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0,
                                                         int64_t c1, bool u8, int32_t zx, float sx, double* fsum,
                                                         int32_t* isum, bool integer_only) {
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
      if (integer_only) {
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
    double* fsum, int32_t* isum, bool integer_only) {
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
      if (integer_only) {
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

namespace {

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
__attribute__((target("avx512f,avx512bw,avx512vl"))) void PoolIntegerSumsRows(const uint8_t* x, int64_t plane,
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

}  // namespace

void PoolIntegerSumsNhwcAvx512(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0, int64_t c1, bool u8,
                               int32_t* isum) {
  if (u8) PoolIntegerSumsRows<true>(x, plane, channels, c0, c1, isum);
  else PoolIntegerSumsRows<false>(x, plane, channels, c0, c1, isum);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t RequantizeSumsAvx512(const double* fsum, const int32_t* isum,
                                                                                int64_t n, uint8_t* y,
                                                                                const PoolRequant& p) {
  const __m512d count = _mm512_set1_pd(static_cast<double>(p.plane)), sx = _mm512_set1_pd(static_cast<double>(p.sx));
  const __m256 sy = _mm256_set1_ps(p.sy), zy = _mm256_set1_ps(static_cast<float>(p.zy));
  const __m256 lo = _mm256_set1_ps(static_cast<float>(p.qmin)), hi = _mm256_set1_ps(static_cast<float>(p.qmax));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d sum = p.exact ? _mm512_mul_pd(_mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(isum + i))), sx)
                               : _mm512_loadu_pd(fsum + i);
    __m256 f = _mm256_div_ps(_mm512_cvtpd_ps(_mm512_div_pd(sum, count)), sy);
    f = _mm256_mask_mov_ps(f, _mm256_cmp_ps_mask(f, f, _CMP_UNORD_Q), _mm256_setzero_ps());  // NaN -> 0
    f = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
    const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(f, lo), hi));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm256_cvtepi32_epi8(q));  // in [qmin, qmax]: the low byte
  }
  return i;
}

}  // namespace edgec::cpu::vec
