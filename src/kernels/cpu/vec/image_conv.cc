// One output row of a convolution that reads a planar image of a few channels and writes
// NHWC (vec/image_conv.h), on AVX-512F: output channels in 16-lane vectors held across a
// block of pixels, each input value broadcast from its plane. The kernel (image_conv.cc)
// keeps the geometry, the rows in range and the threads.
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/vec/image_conv.h"

namespace edgec::cpu::vec {

namespace {

// Pixels [ox, ox + P) of the row, every tap of every input row in range for each of them.
// KW and S: the kernel width and stride when known at compile time (0: read from r).
template <int NB, int P, int KW, int S>
__attribute__((target("avx512f"), always_inline)) inline void Block(const ImageConvRow& r, int64_t ox, float* y) {
  const int kw = KW ? KW : r.kw;
  const int64_t stride = S ? S : r.stride;
  __m512 acc[P][NB];
#pragma GCC unroll 4
  for (int j = 0; j < NB; ++j) {
    const __m512 b = r.bias ? _mm512_loadu_ps(r.bias + 16 * j) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) acc[p][j] = b;
  }
  const int64_t x0 = ox * stride - r.pad;
  for (int t = 0; t < r.count; ++t) {
    const float* in = r.rows[t] + x0;
    const float* w = r.weights[t];
#pragma GCC unroll 4
    for (int kx = 0; kx < kw; ++kx, w += r.oc) {
      __m512 wv[NB];
#pragma GCC unroll 4
      for (int j = 0; j < NB; ++j) wv[j] = _mm512_loadu_ps(w + 16 * j);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        const __m512 xv = _mm512_set1_ps(in[p * stride + kx]);
#pragma GCC unroll 4
        for (int j = 0; j < NB; ++j) acc[p][j] = _mm512_fmadd_ps(xv, wv[j], acc[p][j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 4
    for (int j = 0; j < NB; ++j) _mm512_storeu_ps(y + (ox + p) * r.oc + 16 * j, acc[p][j]);
  }
}

// One pixel with the taps that fall inside the row (the edges, the tail).
template <int NB>
__attribute__((target("avx512f"))) void Edge(const ImageConvRow& r, int64_t ox, float* y) {
  __m512 acc[NB];
  for (int j = 0; j < NB; ++j) acc[j] = r.bias ? _mm512_loadu_ps(r.bias + 16 * j) : _mm512_setzero_ps();
  const int64_t x0 = ox * r.stride - r.pad;
  const int kx0 = static_cast<int>(std::max<int64_t>(0, -x0));
  const int kx1 = static_cast<int>(std::min<int64_t>(r.kw, r.iw - x0));
  for (int t = 0; t < r.count; ++t) {
    for (int kx = kx0; kx < kx1; ++kx) {
      const __m512 xv = _mm512_set1_ps(r.rows[t][x0 + kx]);
      const float* w = r.weights[t] + kx * r.oc;
      for (int j = 0; j < NB; ++j) acc[j] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w + 16 * j), acc[j]);
    }
  }
  for (int j = 0; j < NB; ++j) _mm512_storeu_ps(y + ox * r.oc + 16 * j, acc[j]);
}

template <int NB, int P, int KW = 0, int S = 0>
__attribute__((target("avx512f"))) void Row(const ImageConvRow& r, float* y) {
  // Pixels whose every tap is inside the row: x0 >= 0 and x0 + kw <= iw.
  int64_t lo = (r.pad + r.stride - 1) / r.stride;
  int64_t hi = r.iw - r.kw + r.pad >= 0 ? (r.iw - r.kw + r.pad) / r.stride + 1 : 0;
  lo = std::min(lo, r.ow);
  hi = std::clamp(hi, lo, r.ow);
  for (int64_t ox = 0; ox < lo; ++ox) Edge<NB>(r, ox, y);
  int64_t ox = lo;
  for (; ox + P <= hi; ox += P) Block<NB, P, KW, S>(r, ox, y);
  // The pixels left inside the row in narrower blocks, not one tap at a time: a 128-wide
  // stride-2 row leaves 7 of its 64 pixels after the blocks of 8. A block sums the taps in
  // Edge's order, so the bits do not depend on which one ran a pixel.
  if constexpr (P > 4) {
    for (; ox + 4 <= hi; ox += 4) Block<NB, 4, KW, S>(r, ox, y);
  }
  for (; ox + 2 <= hi; ox += 2) Block<NB, 2, KW, S>(r, ox, y);
  for (; ox < hi; ++ox) Block<NB, 1, KW, S>(r, ox, y);
  for (; ox < r.ow; ++ox) Edge<NB>(r, ox, y);
}

}  // namespace

void ImageConvRowAvx512(const ImageConvRow& r, float* y) {
  // A 3-wide stride-2 kernel (the usual stem) with its taps and offsets as constants.
  if (r.kw == 3 && r.stride == 2) {
    switch (r.oc / 16) {
      case 1: return Row<1, 8, 3, 2>(r, y);
      case 2: return Row<2, 8, 3, 2>(r, y);
      case 3: return Row<3, 6, 3, 2>(r, y);
      default: return Row<4, 4, 3, 2>(r, y);
    }
  }
  switch (r.oc / 16) {
    case 1: return Row<1, 8>(r, y);
    case 2: return Row<2, 8>(r, y);
    case 3: return Row<3, 6>(r, y);
    default: return Row<4, 4>(r, y);
  }
}

}  // namespace edgec::cpu::vec
