// NHWC rows of the vector layer (vec/nhwc.h): the byte max of a pool window and the f32
// pixel sums on AVX-512, and the interleave of two channel halves on SSE2 (x86-64's
// baseline). The kernels (pool.cc, movement.cc) keep the windows, splits and threads.
#include <emmintrin.h>
#include <immintrin.h>

#include "kernels/cpu/vec/nhwc.h"

namespace edgec::cpu::vec {

namespace {

template <bool kSigned>
__attribute__((target("avx512f,avx512bw"))) void WindowMax8Rows(const uint8_t* const* x, int taps, uint8_t* y,
                                                                  int64_t n) {
  int64_t i = 0;
  for (; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    __m512i acc = _mm512_maskz_loadu_epi8(m, x[0] + i);
    for (int t = 1; t < taps; ++t) {
      const __m512i v = _mm512_maskz_loadu_epi8(m, x[t] + i);
      acc = kSigned ? _mm512_max_epi8(acc, v) : _mm512_max_epu8(acc, v);
    }
    _mm512_mask_storeu_epi8(y + i, m, acc);
  }
}

// d[2i] = a[i], d[2i + 1] = b[i] for i < n: SSE2 unpacks (x86-64's baseline) of 16 bytes
// at a time, the tail element by element.
template <typename E>
void Interleave2Rows(const E* a, const E* b, E* d, int64_t n) {
  constexpr int64_t kLanes = 16 / sizeof(E);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m128i va = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i vb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    __m128i lo, hi;
    if constexpr (sizeof(E) == 1) lo = _mm_unpacklo_epi8(va, vb), hi = _mm_unpackhi_epi8(va, vb);
    else if constexpr (sizeof(E) == 2) lo = _mm_unpacklo_epi16(va, vb), hi = _mm_unpackhi_epi16(va, vb);
    else if constexpr (sizeof(E) == 4) lo = _mm_unpacklo_epi32(va, vb), hi = _mm_unpackhi_epi32(va, vb);
    else lo = _mm_unpacklo_epi64(va, vb), hi = _mm_unpackhi_epi64(va, vb);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i), lo);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i + kLanes), hi);
  }
  for (; i < n; ++i) {
    d[2 * i] = a[i];
    d[2 * i + 1] = b[i];
  }
}

}  // namespace

void WindowMax8Avx512(bool is_signed, const uint8_t* const* x, int taps, uint8_t* y, int64_t n) {
  if (is_signed) WindowMax8Rows<true>(x, taps, y, n);
  else WindowMax8Rows<false>(x, taps, y, n);
}

// sum[c] += the f32 values of channels [0, channels) over `pixels` pixels of `channels`
// (row stride `channels`): 16 channels at a time, four pixels in separate sums.
__attribute__((target("avx512f"))) void SumPixelsAvx512(const float* x, int64_t pixels, int64_t channels, float* sum) {
  for (int64_t c = 0; c < channels; c += 16) {
    const __mmask16 m = channels - c >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (channels - c)) - 1);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const float* px = x + c;
    int64_t p = 0;
    for (; p + 4 <= pixels; p += 4, px += 4 * channels) {
      s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(m, px));
      s1 = _mm512_add_ps(s1, _mm512_maskz_loadu_ps(m, px + channels));
      s2 = _mm512_add_ps(s2, _mm512_maskz_loadu_ps(m, px + 2 * channels));
      s3 = _mm512_add_ps(s3, _mm512_maskz_loadu_ps(m, px + 3 * channels));
    }
    for (; p < pixels; ++p, px += channels) s0 = _mm512_add_ps(s0, _mm512_maskz_loadu_ps(m, px));
    const __m512 total = _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3));
    _mm512_mask_storeu_ps(sum + c, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, sum + c), total));
  }
}

void Interleave2(const uint8_t* a, const uint8_t* b, uint8_t* d, int64_t n) { Interleave2Rows(a, b, d, n); }
void Interleave2(const uint16_t* a, const uint16_t* b, uint16_t* d, int64_t n) { Interleave2Rows(a, b, d, n); }
void Interleave2(const uint32_t* a, const uint32_t* b, uint32_t* d, int64_t n) { Interleave2Rows(a, b, d, n); }
void Interleave2(const uint64_t* a, const uint64_t* b, uint64_t* d, int64_t n) { Interleave2Rows(a, b, d, n); }

}  // namespace edgec::cpu::vec
