// The int8 rows of the vector layer: the inner loops of the own int8 kernels written with
// AVX2 / AVX-512 intrinsics (vec/int8_*.cc, each function compiled for its target only). A
// kernel keeps shapes, threads and planning, asks the one probe (cpu::OwnAvx512,
// vec::Kernels(), within the ISA cap) which of these may run, and finishes what a row
// function leaves (the returned index) with its scalar loop. Plain types only: no
// intrinsic types cross this header.
#pragma once

#include <algorithm>
#include <cstdint>

#include "quant/ratio_forms.h"

namespace edgec::cpu::vec {

// --- requantization (Int8Requant::Run, float mode) ---

// What the float requantization of one node needs: per-channel multipliers, the output's
// zero point, the clamp [qmin, qmax] and type (u8, else i8).
struct RequantRows {
  const float* multiplier;
  int32_t zero_point, qmin, qmax;
  bool u8;
};
// Rows [begin, end) of `channels` accumulators (plus bias[c]) into bytes at
// y + r * row_stride; returns the first channel not done (the rest: scalar).
int64_t RequantFloatAvx2(const RequantRows& rq, const int32_t* acc, int64_t channels, int64_t begin, int64_t end,
                         uint8_t* y, int64_t row_stride, const int32_t* bias);
int64_t RequantFloatAvx512(const RequantRows& rq, const int32_t* acc, int64_t channels, int64_t begin, int64_t end,
                           uint8_t* y, int64_t row_stride, const int32_t* bias);

// --- QuantizeLinear / DequantizeLinear / 256-entry lookup ---

// Elements [b, e) 8 at a time; return the first element not done.
int64_t QuantizeAvx2(const float* x, void* y, int64_t b, int64_t e, float scale, float zp, bool u8);
int64_t DequantizeAvx2(const void* x, float* y, int64_t b, int64_t e, float scale, int32_t zp, bool u8);
// y[i] = table[x[i]] for i in [b, e), 64 at a time (AVX-512 VBMI); returns the first not done.
int64_t LookupVbmi(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t b, int64_t e);

// --- QLinearAdd / QLinearMul ---

// How QLinearAdd / QLinearMul walk their operands: the flat output is cut into rows of `row`
// elements along which A and B advance together (NHWC: the C channels of one pixel) or B
// stays on one value (`b_one`; row-major: the H·W pixels of one channel); B's row for output
// row r starts at ((r / div) % mod) · step. Same shapes: one row, B alongside A.
struct RowWalk {
  int64_t row = 1, div = 1, mod = 1, step = 0;
  bool b_one = false;
};

// A position in the walk, advanced row by row without dividing.
struct RowCursor {
  RowCursor(const RowWalk& walk, int64_t at)
      : w(walk), j(at % walk.row), r(at / walk.row % walk.div), q(at / walk.row / walk.div % walk.mod) {}
  int64_t Length(int64_t left) const { return std::min(left, w.row - j); }  // of this row's segment
  int64_t BOffset() const { return q * w.step + (w.b_one ? 0 : j); }
  void NextRow() {
    j = 0;
    if (++r == w.div) {
      r = 0;
      if (++q == w.mod) q = 0;
    }
  }
  const RowWalk& w;
  int64_t j, r, q;
};

// QLinearAdd and QLinearMul, float mode: the ratio forms of quant/ratio_forms.h, 8 or 16
// at a time. The add's two FMAs are explicit; the mul's multiply and add stay apart (the int8
// files are compiled with -ffp-contract=off). B is the operand folded first. Row tails go
// through 8-byte buffers (AVX2) or masks (AVX-512), same arithmetic.
struct BinaryForm {
  quant::RatioAddParams add;
  quant::RatioMulParams mul;
  float lo = 0, hi = 255;  // the clamp [qmin, qmax]
};

// Output elements [lo, hi) of the float mode's ratio form; `mul` picks QLinearMul, `may_nan`
// keeps the NaN check (see Ratio16 in vec/int8_eltwise.cc).
void BinaryRatioAvx2(bool mul, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t lo, int64_t hi,
                     const RowWalk& walk, const BinaryForm& f, bool a_u8, bool b_u8, bool y_u8);
void BinaryRatioAvx512(bool mul, bool may_nan, const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t lo,
                       int64_t hi, const RowWalk& walk, const BinaryForm& f, bool a_u8, bool b_u8, bool y_u8);

// --- QLinearGlobalAveragePool ---

// Channels [c0, c1) of `plane` NHWC pixels (row stride `channels`): each channel's sum of
// (q - zx) into isum and of the f32 (q - zx)·sx into fsum (f64; not when `integer_only`),
// both indexed from c0. Return the first channel not done (AVX2: 8, AVX-512: 16 at a time).
int64_t PoolSumsNhwcAvx2(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0, int64_t c1, bool u8,
                         int32_t zx, float sx, double* fsum, int32_t* isum, bool integer_only);
int64_t PoolSumsNhwcAvx512(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0, int64_t c1, bool u8,
                           int32_t zx, float sx, double* fsum, int32_t* isum, bool integer_only);
// isum[c - c0] += sum of q (no zero point) over the pixels, channels [c0, c1), all of them.
void PoolIntegerSumsNhwcAvx512(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0, int64_t c1, bool u8,
                               int32_t* isum);
// The float mode's requantization of n sums: y = clamp(round((sum / plane) / sy) + zy), the
// sum being fsum[i], or isum[i]·sx when `exact`. Returns the first not done (8 at a time).
struct PoolRequant {
  int64_t plane;
  float sx, sy;
  int32_t zy, qmin, qmax;
  bool exact;
};
int64_t RequantizeSumsAvx512(const double* fsum, const int32_t* isum, int64_t n, uint8_t* y, const PoolRequant& p);

// --- QLinearAveragePool ---

// isum[c] += px[c] (u8 or i8) for the pixel's channels, 8 at a time (returns the first
// channel not done).
int64_t AddBytesAvx2(const uint8_t* px, int64_t channels, bool u8, int32_t* isum);
// isum[c] = the sum of a window's `rows` x `cols` NHWC pixels from `first` (rows `row_stride`
// bytes apart) for every channel: 16 channels in one register over the whole window.
void WindowSumsAvx512(const uint8_t* first, int64_t rows, int64_t cols, int64_t row_stride, int64_t channels, bool u8,
                      int32_t* isum);

// --- QLinearConv: the one-pixel GEMV and the image interleave ---

// acc[16 b + j] = sum over the row's 4·quads bytes of x times the packed s8 weights of
// output 16 b + j, for blocks b in [begin, end) (AVX-512 VNNI; packing: int8_gemv.cc).
void Int8GemvBlocks(const uint8_t* x, const int8_t* packed, int64_t quads, int64_t begin, int64_t end, int32_t* acc);
// dst[p * 3 + c] = src[c * pixels + p] for pixels [0, returned) (AVX-512 VBMI, 64 at a time).
int64_t InterleaveRgbVbmi(const uint8_t* src, int64_t pixels, uint8_t* dst);
// The same from f32 planes, each value quantized on the way (QuantizeLinear's arithmetic;
// lo/hi the type's range), pixels [p, returned) of [p, end).
int64_t QuantizeRgbVbmi(const float* src, int64_t pixels, int64_t p, int64_t end, float scale, float zp, float lo,
                        float hi, uint8_t* dst);
// One plane quantized, elements [p, returned) of [p, end) (AVX-512 BW, 16 at a time at least).
int64_t QuantizeFlatAvx512(const float* src, int64_t p, int64_t end, float scale, float zp, float lo, float hi,
                           uint8_t* dst);

// --- QLinearMatMul of two activations (int8_act_matmul.cc) ---

// acc[j] = sum over k < kp of a[k] · bt[j · kp + k] for j < n: int16 values (minus their zero
// points), int32 sums; kp a multiple of 32, the padding zeros (vec/int8_dot.cc).
void DotRowsI16Avx512(const int16_t* a, const int16_t* bt, int64_t kp, int64_t n, int32_t* acc);
void DotRowsI16Avx2(const int16_t* a, const int16_t* bt, int64_t kp, int64_t n, int32_t* acc);

}  // namespace edgec::cpu::vec
