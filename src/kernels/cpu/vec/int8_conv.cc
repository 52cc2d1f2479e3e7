// The int8 convolution's rows of the vector layer (vec/int8.h): the AVX-512 VNNI GEMV
// blocks (int8_gemv.cc) and the AVX-512 VBMI interleave of three planes into NHWC, plain or
// quantizing on the way (int8_interleave.cc). Exact: the kernels' scalar loops give the same
// bytes (CpuInt8 conv and gemv tests on every ISA).
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/vec/int8.h"

namespace edgec::cpu::vec {

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void Int8GemvBlocks(const uint8_t* x, const int8_t* packed,
                                                                            int64_t quads, int64_t begin, int64_t end,
                                                                            int32_t* acc) {
  int64_t b = begin;
  for (; b + 4 <= end; b += 4) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    const int8_t* w = packed + b * quads * 64;
    const int64_t step = quads * 64;
    for (int64_t q = 0; q < quads; ++q) {
      int32_t xq;
      std::memcpy(&xq, x + 4 * q, 4);
      const __m512i v = _mm512_set1_epi32(xq);
      a0 = _mm512_dpbusd_epi32(a0, v, _mm512_loadu_si512(w + q * 64));
      a1 = _mm512_dpbusd_epi32(a1, v, _mm512_loadu_si512(w + step + q * 64));
      a2 = _mm512_dpbusd_epi32(a2, v, _mm512_loadu_si512(w + 2 * step + q * 64));
      a3 = _mm512_dpbusd_epi32(a3, v, _mm512_loadu_si512(w + 3 * step + q * 64));
    }
    _mm512_storeu_si512(acc + b * 16, a0);
    _mm512_storeu_si512(acc + (b + 1) * 16, a1);
    _mm512_storeu_si512(acc + (b + 2) * 16, a2);
    _mm512_storeu_si512(acc + (b + 3) * 16, a3);
  }
  for (; b < end; ++b) {
    __m512i a = _mm512_setzero_si512();
    const int8_t* w = packed + b * quads * 64;
    for (int64_t q = 0; q < quads; ++q) {
      int32_t xq;
      std::memcpy(&xq, x + 4 * q, 4);
      a = _mm512_dpbusd_epi32(a, _mm512_set1_epi32(xq), _mm512_loadu_si512(w + q * 64));
    }
    _mm512_storeu_si512(acc + b * 16, a);
  }
}

namespace {

// The byte permutes that interleave three planes of 64 pixels into NHWC (AVX-512 VBMI):
// output vector k takes pixel (64k + j) / 3's byte of plane (64k + j) % 3 at byte j.
struct RgbInterleave {
  __m512i idx[3];
  __mmask64 mask[3][3];
};

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) RgbInterleave MakeRgbInterleave() {
  RgbInterleave t;
  for (int k = 0; k < 3; ++k) {
    alignas(64) uint8_t bytes[64];
    uint64_t m[3] = {0, 0, 0};
    for (int j = 0; j < 64; ++j) {
      const int g = 64 * k + j;
      bytes[j] = static_cast<uint8_t>(g / 3);
      m[g % 3] |= uint64_t{1} << j;
    }
    t.idx[k] = _mm512_load_si512(bytes);
    for (int c = 0; c < 3; ++c) t.mask[k][c] = m[c];
  }
  return t;
}

// 64 pixels of the r, g, b planes as 192 interleaved bytes at dst.
__attribute__((target("avx512f,avx512bw,avx512vbmi"), always_inline)) inline void StoreRgb64(const RgbInterleave& t, __m512i r,
                                                                                           __m512i g, __m512i b,
                                                                                           uint8_t* dst) {
  for (int k = 0; k < 3; ++k) {
    __m512i o = _mm512_maskz_permutexvar_epi8(t.mask[k][0], t.idx[k], r);
    o = _mm512_mask_permutexvar_epi8(o, t.mask[k][1], t.idx[k], g);
    o = _mm512_mask_permutexvar_epi8(o, t.mask[k][2], t.idx[k], b);
    _mm512_storeu_si512(dst + 64 * k, o);
  }
}

// 16 values of QuantizeOne as int32.
__attribute__((target("avx512f"), always_inline)) inline __m512i Quantize16F(const float* x, __m512 scale, __m512 zp,
                                                                           __m512 lo, __m512 hi) {
  __m512 v = _mm512_div_ps(_mm512_loadu_ps(x), scale);
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
  v = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));  // whole values: exact
}

// 64 quantized values of one plane as 64 bytes in order.
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i Quantize64F(const float* x, __m512 scale,
                                                                                    __m512 zp, __m512 lo, __m512 hi) {
  __m512i b = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(Quantize16F(x, scale, zp, lo, hi)));
  b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(Quantize16F(x + 16, scale, zp, lo, hi)), 1);
  b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(Quantize16F(x + 32, scale, zp, lo, hi)), 2);
  return _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(Quantize16F(x + 48, scale, zp, lo, hi)), 3);
}

}  // namespace

// dst[p * 3 + c] = src[c * pixels + p]: the 3 planes of a row-major 1-byte image
// interleaved into NHWC. oneDNN 2.6's reorder does this at ~9 GB/s (0.032 ms for 224x224);
// with AVX-512 VBMI each 64 output bytes are three byte permutes of the 64-pixel plane
// vectors (the r plane's bytes, then g's and b's merged under masks).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t InterleaveRgbVbmi(const uint8_t* src, int64_t pixels,
                                                                                  uint8_t* dst) {
  const RgbInterleave t = MakeRgbInterleave();
  int64_t p = 0;
  for (; p + 64 <= pixels; p += 64)
    StoreRgb64(t, _mm512_loadu_si512(src + p), _mm512_loadu_si512(src + pixels + p),
               _mm512_loadu_si512(src + 2 * pixels + p), dst + 3 * p);
  return p;
}

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t QuantizeRgbVbmi(const float* src, int64_t pixels,
                                                                                int64_t p, int64_t end, float scale,
                                                                                float zp, float lo, float hi,
                                                                                uint8_t* dst) {
  const RgbInterleave t = MakeRgbInterleave();
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zp), l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  for (; p + 64 <= end; p += 64)
    StoreRgb64(t, Quantize64F(src + p, s, z, l, h), Quantize64F(src + pixels + p, s, z, l, h),
               Quantize64F(src + 2 * pixels + p, s, z, l, h), dst + 3 * p);
  return p;
}

__attribute__((target("avx512f,avx512bw"))) int64_t QuantizeFlatAvx512(const float* src, int64_t p, int64_t end,
                                                                        float scale, float zp, float lo, float hi,
                                                                        uint8_t* dst) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(zp), l = _mm512_set1_ps(lo), h = _mm512_set1_ps(hi);
  for (; p + 64 <= end; p += 64) _mm512_storeu_si512(dst + p, Quantize64F(src + p, s, z, l, h));
  for (; p + 16 <= end; p += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + p), _mm512_cvtepi32_epi8(Quantize16F(src + p, s, z, l, h)));
  return p;
}

}  // namespace edgec::cpu::vec
