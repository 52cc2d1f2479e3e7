// The act x act QLinearMatMul's row of the vector layer (vec/int8.h): int16 dot products
// (values already minus their zero points, so within [-255, 255]) summed in int32 lanes by
// pairs (vpmaddwd): every product and pair sum is exact, and so is the int32 total while
// K <= 32768 (the kernel refuses larger K). The loop is written once (int8_dot_rows.inc).
// tests/kernels/cpu/int8_act_matmul_test.cc checks it against the reference on every ISA.
#include <immintrin.h>

#include "kernels/cpu/vec/int8.h"
#include "kernels/cpu/vec/isa_region.h"

namespace edgec::cpu::vec {

EDGEC_ISA_REGION_BEGIN("avx512f,avx512bw")
namespace avx512_dot {
using W = __m512i;
constexpr int64_t kStep = 32;
inline W Zero() { return _mm512_setzero_si512(); }
inline W Load(const int16_t* p) { return _mm512_loadu_si512(p); }
inline W MaddAdd(W s, W x, W y) { return _mm512_add_epi32(s, _mm512_madd_epi16(x, y)); }
inline int32_t Sum(W v) { return _mm512_reduce_add_epi32(v); }
#include "kernels/cpu/vec/int8_dot_rows.inc"
}  // namespace avx512_dot
void DotRowsI16Avx512(const int16_t* a, const int16_t* bt, int64_t kp, int64_t n, int32_t* acc) {
  avx512_dot::DotRows(a, bt, kp, n, acc);
}
EDGEC_ISA_REGION_END

EDGEC_ISA_REGION_BEGIN("avx2")
namespace avx2_dot {
using W = __m256i;
constexpr int64_t kStep = 16;
inline W Zero() { return _mm256_setzero_si256(); }
inline W Load(const int16_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline W MaddAdd(W s, W x, W y) { return _mm256_add_epi32(s, _mm256_madd_epi16(x, y)); }
inline int32_t Sum(W v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}
#include "kernels/cpu/vec/int8_dot_rows.inc"
}  // namespace avx2_dot
void DotRowsI16Avx2(const int16_t* a, const int16_t* bt, int64_t kp, int64_t n, int32_t* acc) {
  avx2_dot::DotRows(a, bt, kp, n, acc);
}
EDGEC_ISA_REGION_END

}  // namespace edgec::cpu::vec
