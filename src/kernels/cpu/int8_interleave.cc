// A 3-channel (or 1-channel) row-major image interleaved into NHWC as the int8 convolution
// reads it, optionally quantizing the f32 values on the way (QuantizeLinear's arithmetic):
// AVX-512 VBMI byte permutes for three planes, plain loops elsewhere.
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_conv_util.h"

namespace edgec::cpu {

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

// dst[p * 3 + c] = src[c * pixels + p]: the 3 planes of a row-major 1-byte image
// interleaved into NHWC. oneDNN 2.6's reorder does this at ~9 GB/s (0.032 ms for 224x224);
// with AVX-512 VBMI each 64 output bytes are three byte permutes of the 64-pixel plane
// vectors (the r plane's bytes, then g's and b's merged under masks).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void InterleaveRgbVbmi(const uint8_t* src, int64_t pixels,
                                                                               uint8_t* dst, int64_t* done) {
  const RgbInterleave t = MakeRgbInterleave();
  int64_t p = 0;
  for (; p + 64 <= pixels; p += 64)
    StoreRgb64(t, _mm512_loadu_si512(src + p), _mm512_loadu_si512(src + pixels + p),
               _mm512_loadu_si512(src + 2 * pixels + p), dst + 3 * p);
  *done = p;
}

}  // namespace

void InterleavePlanes(const uint8_t* src, int64_t channels, int64_t pixels, uint8_t* dst) {
  int64_t p = 0;
  if (channels == 3 && OwnAvx512(Avx512Ext::kVbmi)) InterleaveRgbVbmi(src, pixels, dst, &p);
  for (; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c) dst[p * channels + c] = src[c * pixels + p];
}

// QuantizeLinear's arithmetic (the reference's and the fast kernel's): x / scale in f32,
// NaN -> 0, rounded half to even, + zp, saturated to the type.
namespace {

inline uint8_t QuantizeOne(float x, float scale, float zp, float lo, float hi) {
  float v = x / scale;
  if (std::isnan(v)) v = 0;
  const float r = std::min(std::max(std::nearbyint(v) + zp, lo), hi);
  return static_cast<uint8_t>(static_cast<int32_t>(r));  // the low byte: u8 or i8
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

// Pixels [p0, p1) of a row-major f32 image of `channels` planes, quantized and interleaved
// into NHWC: dst[p * channels + c] = Q(src[c * pixels + p]).
}  // namespace

void QuantizeInterleave(const float* src, int64_t channels, int64_t pixels, int64_t p0, int64_t p1, float scale,
                        int32_t zp, bool u8, uint8_t* dst) {
  const float z = static_cast<float>(zp), lo = u8 ? 0.f : -128.f, hi = u8 ? 255.f : 127.f;
  int64_t p = p0;
  if (channels == 3 && OwnAvx512(Avx512Ext::kVbmi)) p = QuantizeRgbVbmi(src, pixels, p, p1, scale, z, lo, hi, dst);
  if (channels == 1 && OwnAvx512(Avx512Ext::kBw)) p = QuantizeFlatAvx512(src, p, p1, scale, z, lo, hi, dst);
  for (; p < p1; ++p)
    for (int64_t c = 0; c < channels; ++c) dst[p * channels + c] = QuantizeOne(src[c * pixels + p], scale, z, lo, hi);
}

}  // namespace edgec::cpu
