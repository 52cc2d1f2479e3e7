// The AVX2+FMA build of the row kernels (vec/impl.inc). Everything between the pragmas is
// compiled for that target; Kernels() only hands this table out when the CPU has it.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/isa_region.h"

#pragma GCC diagnostic ignored "-Wpsabi"
EDGEC_ISA_REGION_BEGIN("avx2,fma")

namespace edgec::cpu::vec {
namespace avx2 {
namespace {

using V = __m256;
using M = __m256;
constexpr int kW = 8;

// Lane mask of the first n lanes (0 <= n <= 8).
inline __m256i FirstLanes(int64_t n) {
  alignas(32) static const int32_t kBits[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kBits + 8 - n));
}

inline V Load(const float* p) { return _mm256_loadu_ps(p); }
inline void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
inline V LoadN(const float* p, int64_t n) { return _mm256_maskload_ps(p, FirstLanes(n)); }
inline void StoreN(float* p, V v, int64_t n) { _mm256_maskstore_ps(p, FirstLanes(n), v); }
inline V Set(float f) { return _mm256_set1_ps(f); }
inline V TailFill(V v, int64_t n, float f) {
  return _mm256_blendv_ps(Set(f), v, _mm256_castsi256_ps(FirstLanes(n)));
}
inline V Add(V a, V b) { return _mm256_add_ps(a, b); }
inline V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
inline V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
inline V Div(V a, V b) { return _mm256_div_ps(a, b); }
inline V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline V Max(V a, V b) { return _mm256_max_ps(a, b); }
inline V Min(V a, V b) { return _mm256_min_ps(a, b); }
inline V Sqrt(V a) { return _mm256_sqrt_ps(a); }
inline V Floor(V a) { return _mm256_floor_ps(a); }
inline V Ceil(V a) { return _mm256_ceil_ps(a); }
inline V Round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline V Abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
inline V Neg(V a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }
inline M Lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
inline M Gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
inline M Ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
inline M Unordered(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
inline V Select(M m, V a, V b) { return _mm256_blendv_ps(b, a, m); }
inline float ReduceAdd(V v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float ReduceMax(V v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline V Frexp(V x, V* e) {
  const __m256i bits = _mm256_castps_si256(x);
  *e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
  const __m256i m = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                    _mm256_set1_epi32(0x3f000000));
  return _mm256_castsi256_ps(m);
}
inline V Pow2n(V n) {
  const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}
inline V ScalePow2(V p, V n) { return Mul(p, Pow2n(n)); }

#include "kernels/cpu/vec/impl.inc"

}  // namespace
}  // namespace avx2

const Table kAvx2Table = avx2::MakeTable("avx2");

}  // namespace edgec::cpu::vec

EDGEC_ISA_REGION_END
