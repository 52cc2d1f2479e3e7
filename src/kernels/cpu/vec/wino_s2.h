// The tile rows of the own 3x3 stride-2 Winograd convolution (kernels/cpu/conv3x3_s2_wino.cc)
// in the vector layer. Plain types only.
//
// Per axis, the two outputs of a tile read five inputs x0..x4:
//   y0 = w0 x0 + w1 x1 + w2 x2,  y1 = w0 x2 + w1 x3 + w2 x4.
// The even taps (w0, w2 on x0, x2, x4) are Winograd F(2, 2) and the odd tap (w1 on x1, x3)
// a plain product, so five products give both outputs:
//   t = (x0 - x2, x2, x4 - x2, x1, x3) times g = (w0, w0 + w2, w2, w1, w1),
//   y0 = t0 + t1 + t3,  y1 = t1 + t2 + t4.
// In 2-D a tile of 2x2 outputs takes 5x5 = 25 products per input and output channel
// instead of 36 (6.25 per output instead of 9). The products of one transformed position
// over the channels are a small matrix product: U[a][b] = V[a][b] (tiles x C) . G[a][b]
// (C x M); each output sums 9 of the 25 U.
#pragma once

#include <cstdint>

namespace edgec::cpu::vec {

// Tiles per block of the matrix product (its rows held in registers).
inline constexpr int kWinoS2BlockTiles = 6;

// Tile rows of one image (tile row ty: output rows 2 ty and 2 ty + 1), NHWC.
struct WinoS2Rows {
  const float* x;         // the image: [ih][iw][c]
  int64_t ih, iw, c;      // c a multiple of 16
  int64_t pad_top, pad_left;
  const float* weights;   // [4][4][c][m]: the transformed taps of row kind qa, column kind qb
                          // (kind of position 0, 1, 2, 3, 4: 0, 1, 2, 3, 3)
  const float* bias;      // [m] or nullptr (zeros)
  int64_t m;              // a multiple of 16
  float* y;               // the output: [oh][ow][m]
  int64_t oh, ow;
  float* v;               // scratch: tiles * 25 * c floats, [tile][position][c] (tiles = rows * ((ow + 1) / 2))
  float* sums;            // scratch: tiles * 4 * m floats (sums of tiles cut by the image's edge)
};

// Tile rows [ty0, ty0 + rows). AVX-512F: the caller asks cpu::OwnAvx512 (or the vector ISA)
// first. Every output is summed in the same order (bias, then the positions by feed class,
// wino_s2.cc) whatever the rows, block or thread it falls in.
void WinoS2TileRowsAvx512(const WinoS2Rows& r, int64_t ty0, int64_t rows);

}  // namespace edgec::cpu::vec
