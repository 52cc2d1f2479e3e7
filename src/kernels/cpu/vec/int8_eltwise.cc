// The int8 elementwise rows of the vector layer (vec/int8.h): QuantizeLinear and
// DequantizeLinear on AVX2, the 256-entry lookup on AVX-512 VBMI, and the ratio forms of
// QLinearAdd / QLinearMul on AVX2 and AVX-512. Bit for bit the scalar paths of the kernels
// (int8_quantize.cc, int8_lookup.cc, int8_binary.cc; CpuInt8 tests on every ISA).
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/vec/int8.h"
#include "kernels/cpu/vec/int8_simd.h"

namespace edgec::cpu::vec {

namespace {

// QuantizeLinear's last steps on 8 f32 values v (already divided by the scale): NaN -> 0,
// round half to even, + zero point, saturate to [lo, hi], store 8 bytes.
__attribute__((target("avx2"))) inline void StoreQuantizedAvx2(__m256 v, __m256 zp, __m256 lo, __m256 hi, uint8_t* out,
                                                               bool u8) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
  ClampStore8(_mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp), lo, hi, out, u8);
}

}  // namespace

__attribute__((target("avx2"))) int64_t QuantizeAvx2(const float* x, void* y, int64_t b, int64_t e, float scale,
                                                     float zp, bool u8) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp);
  const __m256 lo = _mm256_set1_ps(u8 ? 0.f : -128.f), hi = _mm256_set1_ps(u8 ? 255.f : 127.f);
  auto* out = static_cast<uint8_t*>(y);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) StoreQuantizedAvx2(_mm256_div_ps(_mm256_loadu_ps(x + i), s), z, lo, hi, out + i, u8);
  return i;
}

__attribute__((target("avx2"))) int64_t DequantizeAvx2(const void* x, float* y, int64_t b, int64_t e, float scale,
                                                       int32_t zp, bool u8) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(zp);
  const auto* in = static_cast<const uint8_t*>(x);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    const __m256i v = Widen8(in + i, u8);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(v, z)), s));
  }
  return i;
}

// 64 lookups at a time: two 128-entry byte permutes (AVX-512 VBMI), the index's top bit
// choosing between them. `table` is indexed by the raw byte.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t LookupVbmi(const uint8_t* table, const uint8_t* x,
                                                                           uint8_t* y, int64_t b, int64_t e) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = b;
  for (; i + 64 <= e; i += 64) {
    const __m512i idx = _mm512_loadu_si512(x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);  // entries 0..127 (bit 6 picks t0/t1)
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128..255
    const __mmask64 top = _mm512_movepi8_mask(idx);             // bit 7
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(top, lo, hi));
  }
  return i;
}

namespace {

__attribute__((target("avx2,fma"))) inline __m256 Ints8(const uint8_t* x, bool u8) {
  return _mm256_cvtepi32_ps(Widen8(x, u8));
}

// v -> round half to even, NaN -> the zero point, clamp, 8 bytes.
__attribute__((target("avx2,fma"))) inline void StoreRatio8(__m256 v, __m256 zy, __m256 lo, __m256 hi, uint8_t* out,
                                                            bool u8) {
  v = _mm256_blendv_ps(zy, v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
  ClampStore8(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), lo, hi, out, u8);
}

// The add's base with B folded in (as f32 bits), or the mul's B minus its zero point.
template <bool kMul>
__attribute__((target("avx2,fma"))) inline __m256i BTerm8(const uint8_t* bp, const BinaryForm& f, bool b_u8) {
  if constexpr (kMul) return _mm256_sub_epi32(Widen8(bp, b_u8), _mm256_set1_epi32(f.mul.zb));
  return _mm256_castps_si256(_mm256_fmadd_ps(Ints8(bp, b_u8), _mm256_set1_ps(f.add.rb), _mm256_set1_ps(f.add.base)));
}

template <bool kMul>
__attribute__((target("avx2,fma"))) inline void Ratio8(const uint8_t* ap, __m256i bt, uint8_t* yp, const BinaryForm& f,
                                                       bool a_u8, bool y_u8) {
  const __m256 zy = _mm256_set1_ps(f.mul.zy);
  __m256 v;
  if constexpr (kMul) {
    const __m256i qa = _mm256_sub_epi32(Widen8(ap, a_u8), _mm256_set1_epi32(f.mul.za));
    const __m256 product = _mm256_cvtepi32_ps(_mm256_mullo_epi32(qa, bt));
    v = _mm256_add_ps(_mm256_mul_ps(product, _mm256_set1_ps(f.mul.ratio)), zy);
  } else {
    v = _mm256_fmadd_ps(Ints8(ap, a_u8), _mm256_set1_ps(f.add.ra), _mm256_castsi256_ps(bt));
  }
  StoreRatio8(v, zy, _mm256_set1_ps(f.lo), _mm256_set1_ps(f.hi), yp, y_u8);
}

template <bool kMul>
__attribute__((target("avx2,fma"))) void BinaryRatioRowsAvx2(const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t lo,
                                                         int64_t hi, const RowWalk& walk, const BinaryForm& f, bool a_u8,
                                                         bool b_u8, bool y_u8) {
  for (RowCursor c(walk, lo); lo < hi; c.NextRow()) {
    const int64_t n = c.Length(hi - lo);
    const uint8_t* bp = b + c.BOffset();
    uint8_t one_b[8];
    if (walk.b_one) std::memset(one_b, bp[0], 8);
    const __m256i bt_one = walk.b_one ? BTerm8<kMul>(one_b, f, b_u8) : _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      Ratio8<kMul>(a + lo + i, walk.b_one ? bt_one : BTerm8<kMul>(bp + i, f, b_u8), y + lo + i, f, a_u8, y_u8);
    if (i < n) {
      uint8_t ta[8] = {}, tb[8] = {}, ty[8];
      std::memcpy(ta, a + lo + i, n - i);
      if (!walk.b_one) std::memcpy(tb, bp + i, n - i);
      Ratio8<kMul>(ta, walk.b_one ? bt_one : BTerm8<kMul>(tb, f, b_u8), ty, f, a_u8, y_u8);
      std::memcpy(y + lo + i, ty, n - i);
    }
    lo += n;
  }
}


// The mul's (qb - zb) as f32 (a whole number below 2^9: the product with qa - za is exact in
// f32, as the int32 product converted), or the add's base with B folded in, as 32-bit lanes.
template <bool kMul>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i BTerm16(__m512i qb, const BinaryForm& f) {
  if constexpr (kMul) return _mm512_castps_si512(_mm512_cvtepi32_ps(_mm512_sub_epi32(qb, _mm512_set1_epi32(f.mul.zb))));
  return _mm512_castps_si512(_mm512_fmadd_ps(_mm512_cvtepi32_ps(qb), _mm512_set1_ps(f.add.rb), _mm512_set1_ps(f.add.base)));
}

// The ratio form of 16 values: A's widened values qa with B's term bt, rounded half to even,
// NaN -> the zero point, clamped; int32 within the output type's range.
struct RatioConstants16 {
  __m512 ra, ratio, zy, lo, hi;
  __m512i za;
};

// kNaN: the ratios may make v NaN (an infinite ratio times a zero product, or overflowing
// terms of opposite signs); without, the check is left out. The clamp comes before the
// rounding, in the conversion (half to even, MXCSR's default): equal, as the bounds are whole.
template <bool kMul, bool kNaN>
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i Ratio16(__m512i qa, __m512i bt,
                                                                          const RatioConstants16& k) {
  __m512 v;
  if constexpr (kMul) {
    const __m512 product = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(qa, k.za)), _mm512_castsi512_ps(bt));
    v = _mm512_add_ps(_mm512_mul_ps(product, k.ratio), k.zy);
  } else {
    v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(qa), k.ra, _mm512_castsi512_ps(bt));
  }
  if constexpr (kNaN) v = _mm512_mask_mov_ps(k.zy, _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> the zero point
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, k.lo), k.hi));
}

template <bool kMul, bool kNaN>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void BinaryRatioRowsAvx512(const uint8_t* a, const uint8_t* b,
                                                                   uint8_t* y, int64_t lo, int64_t hi,
                                                                   const RowWalk& walk, const BinaryForm& f, bool a_u8,
                                                                   bool b_u8, bool y_u8) {
  const RatioConstants16 k{_mm512_set1_ps(f.add.ra), _mm512_set1_ps(f.mul.ratio), _mm512_set1_ps(f.mul.zy),
                           _mm512_set1_ps(f.lo),     _mm512_set1_ps(f.hi),        _mm512_set1_epi32(f.mul.za)};
  // Whole rows of a multiple of 16 elements (up to 1024) that share B's row (NHWC with one B
  // value per channel: the squeeze-excitation gate) take B's terms once for the run of rows
  // instead of per pixel.
  const bool runs = !walk.b_one && walk.row % 16 == 0 && walk.row <= 1024;
  for (RowCursor c(walk, lo); lo < hi; c.NextRow()) {
    if (runs && c.j == 0 && hi - lo >= walk.row) {
      const uint8_t* bp = b + c.BOffset();
      const int groups = static_cast<int>(walk.row / 16);
      __m512i bt[64];
      for (int g = 0; g < groups; ++g) bt[g] = BTerm16<kMul>(Widen16(bp + 16 * g, 0xFFFF, b_u8), f);
      // Rows until B's row changes (r reaches div) or the range ends.
      int64_t rows = std::min<int64_t>(walk.div - c.r, (hi - lo) / walk.row);
      for (int64_t r = 0; r < rows; ++r, lo += walk.row) {
        for (int g = 0; g < groups; ++g) {
          const __m512i q = Ratio16<kMul, kNaN>(Widen16(a + lo + 16 * g, 0xFFFF, a_u8), bt[g], k);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(y + lo + 16 * g), _mm512_cvtepi32_epi8(q));
        }
      }
      // The cursor stands at the last row done: NextRow moves it past.
      for (int64_t r = 1; r < rows; ++r) c.NextRow();
      continue;
    }
    const int64_t n = c.Length(hi - lo);
    const uint8_t* bp = b + c.BOffset();
    const __m512i bt_one = walk.b_one ? BTerm16<kMul>(_mm512_set1_epi32(b_u8 ? bp[0] : static_cast<int8_t>(bp[0])), f)
                                      : _mm512_setzero_si512();
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
      const __m512i bt = walk.b_one ? bt_one : BTerm16<kMul>(Widen16(bp + i, m, b_u8), f);
      const __m512i q = Ratio16<kMul, kNaN>(Widen16(a + lo + i, m, a_u8), bt, k);
      // q is within the output type's range: keep its low byte.
      _mm_mask_storeu_epi8(y + lo + i, m, _mm512_cvtepi32_epi8(q));
    }
    lo += n;
  }
}

}  // namespace

void BinaryRatioAvx2(bool mul, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t lo, int64_t hi,
                     const RowWalk& walk, const BinaryForm& f, bool a_u8, bool b_u8, bool y_u8) {
  if (mul) BinaryRatioRowsAvx2<true>(a, b, y, lo, hi, walk, f, a_u8, b_u8, y_u8);
  else BinaryRatioRowsAvx2<false>(a, b, y, lo, hi, walk, f, a_u8, b_u8, y_u8);
}

void BinaryRatioAvx512(bool mul, bool may_nan, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t lo,
                       int64_t hi, const RowWalk& walk, const BinaryForm& f, bool a_u8, bool b_u8, bool y_u8) {
  if (mul && may_nan) BinaryRatioRowsAvx512<true, true>(a, b, y, lo, hi, walk, f, a_u8, b_u8, y_u8);
  else if (mul) BinaryRatioRowsAvx512<true, false>(a, b, y, lo, hi, walk, f, a_u8, b_u8, y_u8);
  else if (may_nan) BinaryRatioRowsAvx512<false, true>(a, b, y, lo, hi, walk, f, a_u8, b_u8, y_u8);
  else BinaryRatioRowsAvx512<false, false>(a, b, y, lo, hi, walk, f, a_u8, b_u8, y_u8);
}

}  // namespace edgec::cpu::vec
