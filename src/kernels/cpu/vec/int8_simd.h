// The byte-lane forms the int8 rows of the vector layer share (vec/int8_*.cc): widening
// 8 or 16 u8/i8 values to int32 lanes and narrowing 8 clamped f32 lanes to bytes. Internal to
// src/kernels/cpu/vec.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace edgec::cpu::vec {

// 8 u8/i8 values widened to int32.
__attribute__((target("avx2"))) inline __m256i Widen8(const uint8_t* x, bool u8) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
  return u8 ? _mm256_cvtepu8_epi32(raw) : _mm256_cvtepi8_epi32(raw);
}

// 8 whole f32 values clamped to [lo, hi] (within the output type's range) and stored as
// 8 bytes.
__attribute__((target("avx2"))) inline void ClampStore8(__m256 v, __m256 lo, __m256 hi, uint8_t* out, bool u8) {
  const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), u8 ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16));
}

// The same forms 16 at a time, row tails under a mask: twice the AVX2 path's width for the
// squeeze-excitation Muls that wrap every efficientnet_b0 block.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i Widen16(const uint8_t* x, __mmask16 m, bool u8) {
  const __m128i raw = _mm_maskz_loadu_epi8(m, x);
  return u8 ? _mm512_cvtepu8_epi32(raw) : _mm512_cvtepi8_epi32(raw);
}

}  // namespace edgec::cpu::vec
