// What the own int8 elementwise kernels (int8_quantize, int8_lookup, int8_binary,
// int8_global_pool) share: the ISA checks and the reading of QLinear* parameters.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/kernel.h"

namespace edgec::cpu {

// Elements per thread below which a kernel stays on one thread.
constexpr int64_t kInt8Grain = 16384;

// AVX2 (and FMA) unless the CPU lacks it or the own kernels are capped to scalar
// (cpu::CapVectorIsa), as for the other own kernels.
bool HasAvx2();
bool HasAvx2Fma();
// AVX-512 BW + VL within the cap (OwnAvx512).
bool HasAvx512();

// Scale and zero point inputs at (s, s + 1) as constant scalars, or a refusal.
Status ScalarParams(const KernelRequest& req, int s, double* scale, int32_t* zp);
// The requantization mode and output clamp of a QLinear* node, as the reference reads them.
Status ModeAndClamp(const KernelRequest& req, DType out, bool* fixed_point, int32_t* qmin, int32_t* qmax);

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

}  // namespace edgec::cpu
