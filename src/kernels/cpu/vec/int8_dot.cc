// The act x act QLinearMatMul's row of the vector layer (vec/int8.h): int16 dot products
// (values already minus their zero points, so within [-255, 255]) summed in int32 lanes by
// pairs (vpmaddwd): every product and pair sum is exact, and so is the int32 total while
// K <= 32768 (the kernel refuses larger K). tests/kernels/cpu/int8_act_matmul_test.cc checks
// it against the reference on every ISA.
#include <immintrin.h>

#include "kernels/cpu/vec/int8.h"

namespace edgec::cpu::vec {

__attribute__((target("avx512f,avx512bw"))) void DotRowsI16Avx512(const int16_t* a, const int16_t* bt, int64_t kp,
                                                                   int64_t n, int32_t* acc) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    __m512i s0 = _mm512_setzero_si512(), s1 = s0, s2 = s0, s3 = s0;
    const int16_t* b0 = bt + j * kp;
    for (int64_t k = 0; k < kp; k += 32) {
      const __m512i x = _mm512_loadu_si512(a + k);
      s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x, _mm512_loadu_si512(b0 + k)));
      s1 = _mm512_add_epi32(s1, _mm512_madd_epi16(x, _mm512_loadu_si512(b0 + kp + k)));
      s2 = _mm512_add_epi32(s2, _mm512_madd_epi16(x, _mm512_loadu_si512(b0 + 2 * kp + k)));
      s3 = _mm512_add_epi32(s3, _mm512_madd_epi16(x, _mm512_loadu_si512(b0 + 3 * kp + k)));
    }
    acc[j] = _mm512_reduce_add_epi32(s0);
    acc[j + 1] = _mm512_reduce_add_epi32(s1);
    acc[j + 2] = _mm512_reduce_add_epi32(s2);
    acc[j + 3] = _mm512_reduce_add_epi32(s3);
  }
  for (; j < n; ++j) {
    __m512i s = _mm512_setzero_si512();
    for (int64_t k = 0; k < kp; k += 32) {
      s = _mm512_add_epi32(s, _mm512_madd_epi16(_mm512_loadu_si512(a + k), _mm512_loadu_si512(bt + j * kp + k)));
    }
    acc[j] = _mm512_reduce_add_epi32(s);
  }
}

namespace {
__attribute__((target("avx2"))) inline __m256i Load16(const int16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

__attribute__((target("avx2"))) inline int32_t Sum8(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}
}  // namespace

__attribute__((target("avx2"))) void DotRowsI16Avx2(const int16_t* a, const int16_t* bt, int64_t kp, int64_t n,
                                                     int32_t* acc) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
    const int16_t* b0 = bt + j * kp;
    for (int64_t k = 0; k < kp; k += 16) {
      const __m256i x = Load16(a + k);
      s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x, Load16(b0 + k)));
      s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(x, Load16(b0 + kp + k)));
      s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(x, Load16(b0 + 2 * kp + k)));
      s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(x, Load16(b0 + 3 * kp + k)));
    }
    acc[j] = Sum8(s0);
    acc[j + 1] = Sum8(s1);
    acc[j + 2] = Sum8(s2);
    acc[j + 3] = Sum8(s3);
  }
  for (; j < n; ++j) {
    __m256i s = _mm256_setzero_si256();
    for (int64_t k = 0; k < kp; k += 16) s = _mm256_add_epi32(s, _mm256_madd_epi16(Load16(a + k), Load16(bt + j * kp + k)));
    acc[j] = Sum8(s);
  }
}

}  // namespace edgec::cpu::vec
