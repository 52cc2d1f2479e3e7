// The requantization rows of Int8Requant (kernels/cpu/int8_requant.h) on AVX2 and AVX-512:
// the float mode's formula, bit for bit the scalar path's (guarded by
// CpuInt8.RequantizationEqualsTheFormulaOnEveryIsa).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/vec/int8.h"

namespace edgec::cpu::vec {

// The float formula on 8 channels at a time, channels contiguous in y: the same f32
// operations as the scalar path (convert, multiply, round to nearest even, add, clamp).
__attribute__((target("avx2"))) int64_t RequantFloatAvx2(const RequantRows& rq, const int32_t* acc, int64_t channels,
                                                     int64_t begin, int64_t end, uint8_t* y, int64_t row_stride,
                                                     const int32_t* bias) {
  const int64_t vec_end = channels / 8 * 8;
  const __m256 lo = _mm256_set1_ps(static_cast<float>(rq.qmin)), hi = _mm256_set1_ps(static_cast<float>(rq.qmax));
  const __m256 zp = _mm256_set1_ps(static_cast<float>(rq.zero_point));
  uint8_t* y8 = y;
  for (int64_t r = begin; r < end; ++r) {
    const int32_t* a = acc + r * channels;
    uint8_t* out = y8 + r * row_stride;
    for (int64_t c = 0; c < vec_end; c += 8) {
      __m256i v = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + c)),
                                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + c)));
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_loadu_ps(rq.multiplier + c));
      f = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      f = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(f, zp), lo), hi);
      const __m256i q = _mm256_cvttps_epi32(f);
      const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
      const __m128i b8 = rq.u8 ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + c), b8);
    }
  }
  return vec_end;
}

namespace {

// 16 values: (acc + bias) · m clamped to [lo, hi] (qmin - zp, qmax - zp), rounded to nearest
// even, + zp: int32 in [qmin, qmax].
__attribute__((target("avx512f"), always_inline)) inline __m512i Quantize16(const int32_t* a, const int32_t* bias, const float* mult,
                                                            int64_t c, __mmask16 m, __m512 lo, __m512 hi, __m512i zp) {
  const __m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, a + c), _mm512_maskz_loadu_epi32(m, bias + c));
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_maskz_loadu_ps(m, mult + c));
  f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
  return _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
}

// Quantize16 of 16 consecutive values of a flat stream of dense rows, the first of them at
// channel c: lanes past the last channel wrap to channels 0.. of the next row (channels >= 16).
template <bool kMayWrap>
__attribute__((target("avx512f"), always_inline)) inline __m512i QuantizeGroup(const int32_t* a, const int32_t* bias, const float* mult,
                                                               int64_t channels, int64_t c, __m512 lo, __m512 hi,
                                                               __m512i zp) {
  if (!kMayWrap || c + 16 <= channels) return Quantize16(a - c, bias, mult, c, 0xffff, lo, hi, zp);
  const int64_t k = channels - c;  // lanes [0, k) are channels c.., lanes [k, 16) channels 0..
  const __mmask16 first = static_cast<__mmask16>((1u << k) - 1u), rest = static_cast<__mmask16>(~first);
  const __m512i b = _mm512_mask_loadu_epi32(_mm512_maskz_loadu_epi32(first, bias + c), rest, bias - k);
  const __m512 m = _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(first, mult + c), rest, mult - k);
  const __m512i v = _mm512_add_epi32(_mm512_loadu_si512(a), b);
  const __m512 f = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), m), lo), hi);
  return _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
}

// The 64-wide paths round first and offset and clamp after narrowing to 16 bits, per 32
// values instead of per 16: (acc + bias)·m capped above at 2^30 (so the conversion cannot
// overflow; a product below -2^31 converts to INT32_MIN and saturates the same way), rounded
// to nearest even by the conversion, packed to int16 with saturation, + zp and clamped to
// [qmin, qmax] in int16 (with saturation; the clamp is left to the byte packs when the bounds
// are the type's), then bytes. It equals clamp(round(f) + zp, qmin, qmax): a value that
// saturates 16 bits lies beyond [qmin, qmax] with or without the zero point.
struct Narrow16 {
  __m512 cap;
  __m512i zp, lo, hi;  // 16-bit lanes
  bool clamp, u8;
};

__attribute__((target("avx512f,avx512bw"))) inline Narrow16 MakeNarrow16(const RequantRows& rq) {
  const int32_t tmin = rq.u8 ? 0 : -128, tmax = rq.u8 ? 255 : 127;
  return {_mm512_set1_ps(0x1p30f), _mm512_set1_epi16(static_cast<int16_t>(rq.zero_point)),
          _mm512_set1_epi16(static_cast<int16_t>(rq.qmin)), _mm512_set1_epi16(static_cast<int16_t>(rq.qmax)),
          rq.qmin != tmin || rq.qmax != tmax, rq.u8};
}

// round(min((acc + bias)·m, 2^30)) of 16 channels from c, as int32 (no zero point, no clamp).
__attribute__((target("avx512f"), always_inline)) inline __m512i Round16(const int32_t* a, const int32_t* bias, const float* mult,
                                                                       int64_t c, __m512 cap) {
  const __m512i v = _mm512_add_epi32(_mm512_loadu_si512(a + c), _mm512_loadu_si512(bias + c));
  const __m512 f = _mm512_min_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_loadu_ps(mult + c)), cap);
  return _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// Round16 of a group of a flat stream (see QuantizeGroup).
template <bool kMayWrap>
__attribute__((target("avx512f"), always_inline)) inline __m512i RoundGroup(const int32_t* a, const int32_t* bias, const float* mult,
                                                                          int64_t channels, int64_t c, __m512 cap) {
  if (!kMayWrap || c + 16 <= channels) return Round16(a - c, bias, mult, c, cap);
  const int64_t k = channels - c;
  const __mmask16 first = static_cast<__mmask16>((1u << k) - 1u), rest = static_cast<__mmask16>(~first);
  const __m512i b = _mm512_mask_loadu_epi32(_mm512_maskz_loadu_epi32(first, bias + c), rest, bias - k);
  const __m512 m = _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(first, mult + c), rest, mult - k);
  const __m512 f = _mm512_min_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_loadu_si512(a), b)), m), cap);
  return _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// 64 rounded values r0..r3 (Round16) as bytes, in order: + zp and the clamp in int16; per
// 128-bit lane L the packs give [r0.L, r1.L, r2.L, r3.L] (4 bytes each) and the permute puts
// r0's 16 bytes first (vpmovdb takes two shuffles per 16).
__attribute__((target("avx512f,avx512bw"), always_inline)) inline void StoreRounded64(__m512i r0, __m512i r1, __m512i r2,
                                                                                      __m512i r3, const Narrow16& n,
                                                                                      uint8_t* out) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(r0, r1), n.zp), w23 = _mm512_adds_epi16(_mm512_packs_epi32(r2, r3), n.zp);
  if (n.clamp) {
    w01 = _mm512_min_epi16(_mm512_max_epi16(w01, n.lo), n.hi);
    w23 = _mm512_min_epi16(_mm512_max_epi16(w23, n.lo), n.hi);
  }
  const __m512i b = n.u8 ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
  _mm512_storeu_si512(out, _mm512_permutexvar_epi32(order, b));
}

// The requantization of n values of dense rows (n a multiple of channels, 16 <= channels < 64) as one flat
// stream, 64 at a time through the packs: a group of 16 starting at channel c takes the
// per-channel bias and multiplier of channels c... and, when it runs past the last channel
// (only when channels is not a multiple of 16), those of 0... for the rest.
template <bool kMayWrap>
__attribute__((target("avx512f,avx512bw"))) void FlatRows(const RequantRows& rq, const int32_t* a, int64_t channels,
                                                            int64_t n, uint8_t* out, const int32_t* bias, __m512 lo,
                                                            __m512 hi, __m512i zp) {
  const float* mult = rq.multiplier;
  const Narrow16 narrow = MakeNarrow16(rq);
  auto next = [&](int64_t c) { return c + 16 < channels ? c + 16 : c + 16 - channels; };
  const int64_t wide = n / 64 * 64;
  int64_t c = 0;  // the channel of element i
  for (int64_t i = 0; i < wide; i += 64) {
    const int64_t c1 = next(c), c2 = next(c1), c3 = next(c2);
    StoreRounded64(RoundGroup<kMayWrap>(a + i, bias, mult, channels, c, narrow.cap),
                   RoundGroup<kMayWrap>(a + i + 16, bias, mult, channels, c1, narrow.cap),
                   RoundGroup<kMayWrap>(a + i + 32, bias, mult, channels, c2, narrow.cap),
                   RoundGroup<kMayWrap>(a + i + 48, bias, mult, channels, c3, narrow.cap), narrow, out + i);
    c = next(c3);
  }
  for (int64_t i = wide; i < n; i += 16, c = next(c)) {
    if (n - i >= 16) {
      _mm512_mask_cvtepi32_storeu_epi8(out + i, 0xffff, QuantizeGroup<kMayWrap>(a + i, bias, mult, channels, c, lo, hi, zp));
    } else {  // the last < 16 values end a row: channels c.. only
      const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
      _mm512_mask_cvtepi32_storeu_epi8(out + i, m, Quantize16(a + i - c, bias, mult, c, m, lo, hi, zp));
    }
  }
}

}  // namespace

// The same on AVX-512, in an equivalent order of fewer operations: since qmin and qmax are
// integers, clamp(round(f) + zp, qmin, qmax) = round(clamp(f, qmin - zp, qmax - zp)) + zp,
// so the product is clamped in f32, rounded to nearest even by the conversion itself and the
// zero point added as an integer (Quantize16). 64 channels at a time are narrowed with two
// packs and one permute (vpmovdb takes two shuffles per 16); the last < 64 channels go 16 at
// a time, the tail under a mask (a layer of 24 or 40 channels has no scalar remainder).
__attribute__((target("avx512f,avx512bw"))) int64_t RequantFloatAvx512(const RequantRows& rq, const int32_t* acc,
                                                                   int64_t channels, int64_t begin, int64_t end,
                                                                   uint8_t* y, int64_t row_stride, const int32_t* bias) {
  const __m512 lo = _mm512_set1_ps(static_cast<float>(rq.qmin - rq.zero_point));
  const __m512 hi = _mm512_set1_ps(static_cast<float>(rq.qmax - rq.zero_point));
  const __m512i zp = _mm512_set1_epi32(rq.zero_point);
  const float* mult = rq.multiplier;
  const Narrow16 narrow = MakeNarrow16(rq);
  uint8_t* y8 = y;
  // (No lambdas here: a lambda does not inherit the target attribute, so what it calls would
  // not be inlined.)
  // Dense rows of 16 to 63 channels (mobilenets' 16, 24, 40, 48): one flat stream (FlatRows),
  // all of it through the packs; wider rows stay row by row (docs/cpu_runtime.md,
  // "Measurements behind the kernels' rules"; CpuInt8.RequantizationEqualsTheFormulaOnEveryIsa).
  if (row_stride == channels && channels >= 16 && channels < 64) {
    if (channels % 16 == 0) FlatRows<false>(rq, acc + begin * channels, channels, (end - begin) * channels, y8 + begin * channels, bias, lo, hi, zp);
    else FlatRows<true>(rq, acc + begin * channels, channels, (end - begin) * channels, y8 + begin * channels, bias, lo, hi, zp);
    return channels;
  }
  const int64_t wide_end = channels / 64 * 64;
  for (int64_t r = begin; r < end; ++r) {
    const int32_t* a = acc + r * channels;
    uint8_t* out = y8 + r * row_stride;
    for (int64_t c = 0; c < wide_end; c += 64) {
      StoreRounded64(Round16(a, bias, mult, c, narrow.cap), Round16(a, bias, mult, c + 16, narrow.cap),
                     Round16(a, bias, mult, c + 32, narrow.cap), Round16(a, bias, mult, c + 48, narrow.cap), narrow, out + c);
    }
    for (int64_t c = wide_end; c < channels; c += 16) {
      const __mmask16 m = channels - c >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (channels - c)) - 1u);
      _mm512_mask_cvtepi32_storeu_epi8(out + c, m, Quantize16(a, bias, mult, c, m, lo, hi, zp));  // in [qmin, qmax]: the low byte
    }
  }
  return channels;
}

}  // namespace edgec::cpu::vec
