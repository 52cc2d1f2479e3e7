// The tile rows of the own 3x3 stride-2 Winograd convolution on AVX-512F (vec/wino_s2.h has
// the arithmetic): the 25 transformed positions of every tile of the rows go to scratch, then
// the positions' matrix products (tiles x C by C x M, in blocks of up to 6 tiles: the output
// channels in 16-lane vectors held across the block, each transformed input value broadcast),
// those feeding the same outputs summed in registers, are added to the outputs (the output
// buffer itself; scratch for the tiles the image's edge cuts).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/vec/wino_s2.h"

namespace edgec::cpu::vec {

namespace {

constexpr int kBlock = kWinoS2BlockTiles;
// The weight kind of a transformed position per axis (positions 3 and 4 share w1).
constexpr int kKind[5] = {0, 1, 2, 3, 3};
// The positions of an axis by the outputs they feed (feed classes): 0 and 3 feed output 0
// alone, 1 both, 2 and 4 output 1 alone (bit 0: output 0, bit 1: output 1).
constexpr int kClassSize[3] = {2, 1, 2};
constexpr int kClassMembers[3][2] = {{0, 3}, {1, 1}, {2, 4}};
constexpr int kClassFeeds[3] = {1, 3, 2};

// x0..x4 -> (x0 - x2, x2, x4 - x2, x1, x3).
__attribute__((target("avx512f"), always_inline)) inline void Transform5(const __m512* in, __m512* out) {
  out[0] = _mm512_sub_ps(in[0], in[2]);
  out[1] = in[2];
  out[2] = _mm512_sub_ps(in[4], in[2]);
  out[3] = in[1];
  out[4] = in[3];
}

// The 25 transformed positions of tile (ty, tx), every channel, into v[(slot * 25 + p) * c]: one
// tile's positions side by side, never 25 stores a power of two apart (one cache set).
// Inside: the tile's 5x5 input window lies in the image (no bounds checks).
template <bool Inside>
__attribute__((target("avx512f"))) void InputTile(const WinoS2Rows& r, int64_t ty, int64_t tx, int64_t slot, int64_t tiles) {
  const int64_t y0 = 4 * ty - r.pad_top, x0 = 4 * tx - r.pad_left;
  const int64_t c = r.c;
  for (int64_t cv = 0; cv < c; cv += 16) {
    __m512 t[5][5];  // [input row][transformed column]
    for (int i = 0; i < 5; ++i) {
      const int64_t iy = y0 + i;
      const float* px = r.x + (iy * r.iw + x0) * c + cv;
      __m512 row[5];
#pragma GCC unroll 5
      for (int j = 0; j < 5; ++j) {
        const bool in = Inside || (iy >= 0 && iy < r.ih && x0 + j >= 0 && x0 + j < r.iw);
        row[j] = in ? _mm512_loadu_ps(px + j * c) : _mm512_setzero_ps();
      }
      Transform5(row, t[i]);
    }
    float* pv = r.v + slot * 25 * c + cv;
#pragma GCC unroll 5
    for (int j = 0; j < 5; ++j) {
      const __m512 col[5] = {t[0][j], t[1][j], t[2][j], t[3][j], t[4][j]};
      __m512 out[5];
      Transform5(col, out);
#pragma GCC unroll 5
      for (int a = 0; a < 5; ++a) _mm512_storeu_ps(pv + (a * 5 + j) * c, out[a]);
    }
  }
}

// The tile rows of one call: tile t is (ty0 + t / tiles_x, t % tiles_x).
struct RowSpan {
  int64_t ty0, tiles_x, tiles;
};

// Where the sums of output (i, jj) of tile t build up: in the output itself when all four of
// the tile's outputs lie in the image, else in scratch (copied out at the end).
inline bool Whole(const WinoS2Rows& r, const RowSpan& rows, int64_t t) {
  return 2 * (rows.ty0 + t / rows.tiles_x) + 1 < r.oh && 2 * (t % rows.tiles_x) + 1 < r.ow;
}
inline float* SumsOf(const WinoS2Rows& r, const RowSpan& rows, int64_t t, int i, int jj) {
  if (Whole(r, rows, t)) {
    return r.y + ((2 * (rows.ty0 + t / rows.tiles_x) + i) * r.ow + 2 * (t % rows.tiles_x) + jj) * r.m;
  }
  return r.sums + ((t * 2 + i) * 2 + jj) * r.m;
}

// The products of feed class pair (ca, cb) for tiles [t0, t0 + B) and output channels
// [m0, m0 + 16 NV): its positions summed in registers, then added once to the sums of the
// outputs they all feed (16 additions per tile and channel vector instead of 36).
template <int B, int NV>
__attribute__((target("avx512f"))) void ClassPair(const WinoS2Rows& r, const RowSpan& rows, int ca, int cb, int64_t t0, int64_t m0) {
  __m512 acc[B][NV];
#pragma GCC unroll 8
  for (int b = 0; b < B; ++b) {
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) acc[b][j] = _mm512_setzero_ps();
  }
  for (int ia = 0; ia < kClassSize[ca]; ++ia) {
    for (int ib = 0; ib < kClassSize[cb]; ++ib) {
      const int a = kClassMembers[ca][ia], bc = kClassMembers[cb][ib];
      const float* w = r.weights + (kKind[a] * 4 + kKind[bc]) * r.c * r.m + m0;
      const float* v = r.v + (t0 * 25 + a * 5 + bc) * r.c;
      for (int64_t k = 0; k < r.c; ++k, w += r.m) {
        __m512 wv[NV];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) wv[j] = _mm512_loadu_ps(w + 16 * j);
#pragma GCC unroll 8
        for (int b = 0; b < B; ++b) {
          const __m512 xb = _mm512_set1_ps(v[b * 25 * r.c + k]);
#pragma GCC unroll 4
          for (int j = 0; j < NV; ++j) acc[b][j] = _mm512_fmadd_ps(xb, wv[j], acc[b][j]);
        }
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (!(kClassFeeds[ca] >> i & 1)) continue;
    for (int jj = 0; jj < 2; ++jj) {
      if (!(kClassFeeds[cb] >> jj & 1)) continue;
      // Output (i, jj) is first fed by class pair (i, jj): it starts from the bias there.
      const bool first = ca == i && cb == jj;
#pragma GCC unroll 8
      for (int b = 0; b < B; ++b) {
        float* s = SumsOf(r, rows, t0 + b, i, jj) + m0;
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
          const __m512 base = !first ? _mm512_loadu_ps(s + 16 * j)
                              : r.bias ? _mm512_loadu_ps(r.bias + m0 + 16 * j) : _mm512_setzero_ps();
          _mm512_storeu_ps(s + 16 * j, _mm512_add_ps(base, acc[b][j]));
        }
      }
    }
  }
}

template <int NV>
__attribute__((target("avx512f"))) void ClassPairBlock(const WinoS2Rows& r, const RowSpan& rows, int ca, int cb, int64_t t0, int n, int64_t m0) {
  switch (n) {
    case 1: return ClassPair<1, NV>(r, rows, ca, cb, t0, m0);
    case 2: return ClassPair<2, NV>(r, rows, ca, cb, t0, m0);
    case 3: return ClassPair<3, NV>(r, rows, ca, cb, t0, m0);
    case 4: return ClassPair<4, NV>(r, rows, ca, cb, t0, m0);
    case 5: return ClassPair<5, NV>(r, rows, ca, cb, t0, m0);
    default: return ClassPair<6, NV>(r, rows, ca, cb, t0, m0);
  }
}

// A class pair over every tile of the rows in blocks as even as 6 tiles at most allow (8
// tiles as 4 + 4, not 6 + 2: a block of 2 holds too few sums to keep the FMA units busy), its
// weight panels read again by each block.
template <int NV>
__attribute__((target("avx512f"))) void ClassPairRow(const WinoS2Rows& r, const RowSpan& rows, int ca, int cb, int64_t m0) {
  const int64_t tiles = rows.tiles, blocks = (tiles + kBlock - 1) / kBlock;
  for (int64_t i = 0, t = 0; i < blocks; ++i) {
    const int64_t end = tiles * (i + 1) / blocks;
    ClassPairBlock<NV>(r, rows, ca, cb, t, static_cast<int>(end - t), m0);
    t = end;
  }
}

}  // namespace

__attribute__((target("avx512f"))) void WinoS2TileRowsAvx512(const WinoS2Rows& r, int64_t ty0, int64_t rows) {
  const int64_t tiles_x = (r.ow + 1) / 2, tiles = rows * tiles_x;
  const RowSpan span{ty0, tiles_x, tiles};
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t ty = ty0 + t / tiles_x, tx = t % tiles_x;
    const int64_t y0 = 4 * ty - r.pad_top, x0 = 4 * tx - r.pad_left;
    if (y0 >= 0 && x0 >= 0 && y0 + 5 <= r.ih && x0 + 5 <= r.iw) InputTile<true>(r, ty, tx, t, tiles);
    else InputTile<false>(r, ty, tx, t, tiles);
  }
  for (int64_t m0 = 0; m0 < r.m; m0 += 64) {
    const int nv = static_cast<int>(std::min<int64_t>(4, (r.m - m0) / 16));
    for (int ca = 0; ca < 3; ++ca) {
      for (int cb = 0; cb < 3; ++cb) {
        switch (nv) {
          case 1: ClassPairRow<1>(r, span, ca, cb, m0); break;
          case 2: ClassPairRow<2>(r, span, ca, cb, m0); break;
          case 3: ClassPairRow<3>(r, span, ca, cb, m0); break;
          default: ClassPairRow<4>(r, span, ca, cb, m0); break;
        }
      }
    }
  }
  // The tiles cut by the image's edge: their outputs inside it, out of scratch.
  for (int64_t t = 0; t < tiles; ++t) {
    if (Whole(r, span, t)) continue;
    const int64_t ty = ty0 + t / tiles_x, tx = t % tiles_x;
    for (int i = 0; i < 2; ++i) {
      const int64_t oy = 2 * ty + i;
      if (oy >= r.oh) continue;
      for (int jj = 0; jj < 2; ++jj) {
        const int64_t ox = 2 * tx + jj;
        if (ox >= r.ow) continue;
        const float* s = r.sums + ((t * 2 + i) * 2 + jj) * r.m;
        float* y = r.y + (oy * r.ow + ox) * r.m;
        for (int64_t j = 0; j < r.m; j += 16) _mm512_storeu_ps(y + j, _mm512_loadu_ps(s + j));
      }
    }
  }
}

}  // namespace edgec::cpu::vec
