// The AVX-512 build of the row kernels (vec/impl.inc): 16 lanes, masks for the tails.
// Everything between the pragmas is compiled for AVX-512F; Kernels() only hands this table
// out when the CPU (and the OS, for the zmm state) has it. Besides the width, a 512-bit
// operation is one scheduler entry where AVX2 needs two, which is what the long dependent
// chains of exp, sigmoid and erf are limited by.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/isa_region.h"

#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12's avx512fintrin.h builds masked intrinsics on a deliberately undefined vector.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
EDGEC_ISA_REGION_BEGIN("avx512f,avx2,fma")

namespace edgec::cpu::vec {
namespace avx512 {
namespace {

using V = __m512;
using M = __mmask16;
constexpr int kW = 16;

// Mask of the first n lanes (0 <= n <= 16).
inline M FirstLanes(int64_t n) { return static_cast<M>((1u << n) - 1u); }

inline V Load(const float* p) { return _mm512_loadu_ps(p); }
inline void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
inline V LoadN(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(FirstLanes(n), p); }
inline void StoreN(float* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, FirstLanes(n), v); }
inline V Set(float f) { return _mm512_set1_ps(f); }
inline V TailFill(V v, int64_t n, float f) { return _mm512_mask_blend_ps(FirstLanes(n), Set(f), v); }
inline V Add(V a, V b) { return _mm512_add_ps(a, b); }
inline V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
inline V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
inline V Div(V a, V b) { return _mm512_div_ps(a, b); }
inline V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
inline V Max(V a, V b) { return _mm512_max_ps(a, b); }
inline V Min(V a, V b) { return _mm512_min_ps(a, b); }
inline V Sqrt(V a) { return _mm512_sqrt_ps(a); }
inline V Floor(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
inline V Ceil(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
inline V Round(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline V Abs(V a) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x7fffffff)));
}
inline V Neg(V a) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
}
inline M Lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
inline M Gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
inline M Ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
inline M Unordered(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
inline V Select(M m, V a, V b) { return _mm512_mask_blend_ps(m, b, a); }
inline float ReduceAdd(V v) { return _mm512_reduce_add_ps(v); }
inline float ReduceMax(V v) { return _mm512_reduce_max_ps(v); }
inline V Frexp(V x, V* e) {
  const __m512i bits = _mm512_castps_si512(x);
  *e = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(126)));
  const __m512i m = _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)),
                                    _mm512_set1_epi32(0x3f000000));
  return _mm512_castsi512_ps(m);
}
inline V Pow2n(V n) {
  const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127));
  return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}
inline V ScalePow2(V p, V n) { return _mm512_scalef_ps(p, n); }

#include "kernels/cpu/vec/impl.inc"

}  // namespace
}  // namespace avx512

const Table kAvx512Table = avx512::MakeTable("avx512");

}  // namespace edgec::cpu::vec

EDGEC_ISA_REGION_END
