// Fast QuantizeLinear and DequantizeLinear with per-tensor parameters, in any layout (the
// output has the input's): the reference's arithmetic, vectorized with AVX2 where the CPU
// has it. Quantize: saturate(round_half_to_even(x / scale) + zp) in f32 (NaN → zp);
// dequantize: f32(q − zp) · scale. Then the other own int8 kernels, each the reference's
// arithmetic: the 256-entry lookup, QLinearAdd / QLinearMul, QLinearGlobalAveragePool.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"
#include "quant/ratio_forms.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kGrain = 16384;

// AVX2 unless the CPU lacks it or the own kernels are capped to scalar (cpu::CapVectorIsa,
// EDGEC_CPU_ISA=scalar), as for the other own kernels.
bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has && &vec::Kernels() != &vec::kScalarTable;
}

bool HasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("fma");
  return has && HasAvx2();
}

template <typename Q>
void QuantizeScalar(const float* x, Q* y, int64_t b, int64_t e, float scale, float zp) {
  const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  for (int64_t i = b; i < e; ++i) {
    float v = x[i] / scale;
    if (std::isnan(v)) v = 0;
    const float r = std::nearbyint(v) + zp;
    y[i] = static_cast<Q>(std::min(std::max(r, lo), hi));
  }
}

// 8 u8/i8 values widened to int32.
__attribute__((target("avx2"))) inline __m256i Widen8(const uint8_t* x, bool u8) {
  const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
  return u8 ? _mm256_cvtepu8_epi32(raw) : _mm256_cvtepi8_epi32(raw);
}

// 8 whole f32 values clamped to [lo, hi] (within the output type's range) and stored as
// 8 bytes.
__attribute__((target("avx2"))) inline void ClampStore8(__m256 v, __m256 lo, __m256 hi, uint8_t* out, bool u8) {
  const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), u8 ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16));
}

// QuantizeLinear's last steps on 8 f32 values v (already divided by the scale): NaN -> 0,
// round half to even, + zero point, saturate to [lo, hi], store 8 bytes.
__attribute__((target("avx2"))) inline void StoreQuantizedAvx2(__m256 v, __m256 zp, __m256 lo, __m256 hi, uint8_t* out,
                                                               bool u8) {
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
  ClampStore8(_mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp), lo, hi, out, u8);
}

__attribute__((target("avx2"))) int64_t QuantizeAvx2(const float* x, void* y, int64_t b, int64_t e, float scale,
                                                     float zp, bool u8) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zp);
  const __m256 lo = _mm256_set1_ps(u8 ? 0.f : -128.f), hi = _mm256_set1_ps(u8 ? 255.f : 127.f);
  auto* out = static_cast<uint8_t*>(y);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) StoreQuantizedAvx2(_mm256_div_ps(_mm256_loadu_ps(x + i), s), z, lo, hi, out + i, u8);
  return i;
}

template <typename Q>
void DequantizeScalar(const Q* x, float* y, int64_t b, int64_t e, float scale, int32_t zp) {
  for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * scale;
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

class QuantizeKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    ParallelFor(threads_, numel_, kGrain, [&](int64_t b, int64_t e) {
      if (HasAvx2()) b = QuantizeAvx2(x, out[0], b, e, scale_, static_cast<float>(zp_), u8_);
      if (u8_) QuantizeScalar(x, static_cast<uint8_t*>(out[0]), b, e, scale_, static_cast<float>(zp_));
      else QuantizeScalar(x, static_cast<int8_t*>(out[0]), b, e, scale_, static_cast<float>(zp_));
    });
    return Status::Ok();
  }
  std::string Describe() const override { return u8_ ? "own quantize f32->u8" : "own quantize f32->i8"; }
  float scale_ = 1;
  int32_t zp_ = 0;
  bool u8_ = true;
  int64_t numel_ = 0;
  int threads_ = 1;
};

class DequantizeKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    auto* y = static_cast<float*>(out[0]);
    ParallelFor(threads_, numel_, kGrain, [&](int64_t b, int64_t e) {
      if (HasAvx2()) b = DequantizeAvx2(in[0], y, b, e, scale_, zp_, u8_);
      if (u8_) DequantizeScalar(static_cast<const uint8_t*>(in[0]), y, b, e, scale_, zp_);
      else DequantizeScalar(static_cast<const int8_t*>(in[0]), y, b, e, scale_, zp_);
    });
    return Status::Ok();
  }
  std::string Describe() const override { return u8_ ? "own dequantize u8->f32" : "own dequantize i8->f32"; }
  float scale_ = 1;
  int32_t zp_ = 0;
  bool u8_ = true;
  int64_t numel_ = 0;
  int threads_ = 1;
};

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

bool HasVbmi() {
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return has && &vec::Kernels() != &vec::kScalarTable;
}

}  // namespace

void LookupBytes(const uint8_t* by_byte, const uint8_t* x, uint8_t* y, int64_t n) {
  int64_t i = HasVbmi() ? LookupVbmi(by_byte, x, y, 0, n) : 0;
  for (; i < n; ++i) y[i] = by_byte[x[i]];
}

namespace {

class LookupKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kGrain, [&](int64_t b, int64_t e) {
      LookupBytes(by_byte_, x + b, y + b, e - b);
    });
    return Status::Ok();
  }
  std::string Describe() const override { return HasVbmi() ? "own 256-entry lookup avx512vbmi" : "own 256-entry lookup"; }
  uint8_t by_byte_[256] = {};  // the table indexed by the input's raw byte
  int64_t numel_ = 0;
  int threads_ = 1;
};

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
// at a time. The add's two FMAs are explicit; the mul's multiply and add stay apart (this
// file is compiled with -ffp-contract=off). B is the operand folded first. Row tails go
// through 8-byte buffers (AVX2) or masks (AVX-512), same arithmetic.
struct BinaryForm {
  quant::RatioAddParams add;
  quant::RatioMulParams mul;
  float lo = 0, hi = 255;  // the clamp [qmin, qmax]
};

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
__attribute__((target("avx2,fma"))) void BinaryRatioAvx2(const uint8_t* a, const uint8_t* b, uint8_t* y, int64_t lo,
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

// The same forms 16 at a time, row tails under a mask: twice the AVX2 path's width for the
// squeeze-excitation Muls that wrap every efficientnet_b0 block.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m512i Widen16(const uint8_t* x, __mmask16 m, bool u8) {
  const __m128i raw = _mm_maskz_loadu_epi8(m, x);
  return u8 ? _mm512_cvtepu8_epi32(raw) : _mm512_cvtepi8_epi32(raw);
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
__attribute__((target("avx512f,avx512bw,avx512vl"))) void BinaryRatioAvx512(const uint8_t* a, const uint8_t* b,
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

bool HasAvx512() {
  return OwnAvx512(Avx512Ext::kBwVl);
}

// QLinearAdd / QLinearMul on operands of one shape, or with B one value per channel (and per
// image, or shared by all) of A's [N, C, H, W] (the squeeze-excitation gate), in NHWC or
// row-major (see RowWalk).
class QuantizedBinaryKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* a = static_cast<const uint8_t*>(in[a_input_]);
    const auto* b = static_cast<const uint8_t*>(in[3 - a_input_]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kGrain, [&](int64_t lo, int64_t hi) {
      if (!fixed_point_ && HasAvx512()) {
        if (mul_ && may_nan_) BinaryRatioAvx512<true, true>(a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        else if (mul_) BinaryRatioAvx512<true, false>(a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        else if (may_nan_) BinaryRatioAvx512<false, true>(a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        else BinaryRatioAvx512<false, false>(a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        return;
      }
      if (!fixed_point_ && HasAvx2Fma()) {
        if (mul_) BinaryRatioAvx2<true>(a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        else BinaryRatioAvx2<false>(a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        return;
      }
      for (RowCursor c(walk_, lo); lo < hi; c.NextRow()) {
        const int64_t n = c.Length(hi - lo);
        const uint8_t* bp = b + c.BOffset();
        for (int64_t k = 0; k < n; ++k) y[lo + k] = static_cast<uint8_t>(One(a[lo + k], bp[walk_.b_one ? 0 : k]));
        lo += n;
      }
    });
    return Status::Ok();
  }
  int32_t One(uint8_t a, uint8_t b) const {
    const int32_t qa = a_u8_ ? a : static_cast<int8_t>(a), qb = b_u8_ ? b : static_cast<int8_t>(b);
    if (fixed_point_) return mul_ ? quant::QuantizedMul(qa, qb, fixed_mul_) : quant::QuantizedAdd(qa, qb, fixed_add_);
    const float v = mul_ ? quant::RatioMul(qa, qb, form_.mul) : quant::RatioAdd(qa, qb, form_.add);
    return quant::RoundAndClamp(v, form_.mul.zy, static_cast<int32_t>(form_.lo), static_cast<int32_t>(form_.hi));
  }
  std::string Describe() const override {
    return fmt::format("own quantized {}{}{}", mul_ ? "mul" : "add",
                       fixed_point_ ? " (fixed point)" : HasAvx512() ? " avx512" : HasAvx2Fma() ? " avx2" : "",
                       walk_.step || walk_.b_one ? ", one operand per channel" : "");
  }
  // form_ and the fixed-point parameters are A's and B's as the kernel reads them: the node's
  // inputs 0 and 3, swapped when input 0 is the per-channel one (a_input_ = 3).
  BinaryForm form_;
  quant::QuantizedAddParams fixed_add_;
  quant::QuantizedMulParams fixed_mul_;
  bool mul_ = false, fixed_point_ = false, a_u8_ = true, b_u8_ = true, y_u8_ = true;
  // Whether v can be NaN (see Ratio16): a ratio that is not finite or so large that terms of
  // |q| <= 255 (products <= 65025) may overflow.
  bool may_nan_ = true;
  int a_input_ = 0;
  RowWalk walk_;
  int64_t numel_ = 0;
  int threads_ = 1;
};

// The f64 sums of a pool's float mode are exact, so their order does not matter: every term
// is an f32 v = (q − zx)·sx with |q − zx| ≤ 255, a whole multiple of g = ulp(sx) below
// 2^32·g, so fewer than 2^21 of them add up below 2^53·g, on the f64 grid.
constexpr int64_t kExactPoolPlane = int64_t{1} << 21;

// QLinearGlobalAveragePool in NHWC, channels [c0, c1) of one image: each channel's sums over
// the pixels (the f32 dequantized values in f64 for the float mode, exact in any order below
// kExactPoolPlane; the shifted integers for the fixed-point one), 8 channels at a time, two
// pixels in separate sums. Returns the first channel it did not do.
__attribute__((target("avx2"))) int64_t PoolSumsNhwcAvx2(const uint8_t* x, int64_t plane, int64_t channels, int64_t c0,
                                                         int64_t c1, bool u8, int32_t zx, float sx, double* fsum,
                                                         int32_t* isum, bool fixed_point) {
  if (!fixed_point && plane >= kExactPoolPlane) return c0;
  const __m256i z = _mm256_set1_epi32(zx);
  const __m256 s = _mm256_set1_ps(sx);
  int64_t c = c0;
  for (; c + 8 <= c1; c += 8) {
    __m256d lo0 = _mm256_setzero_pd(), hi0 = _mm256_setzero_pd(), lo1 = _mm256_setzero_pd(), hi1 = _mm256_setzero_pd();
    __m256i i0 = _mm256_setzero_si256(), i1 = _mm256_setzero_si256();
    const uint8_t* px = x + c;
    int64_t p = 0;
    for (; p < plane; p += 2, px += 2 * channels) {
      const __m256i q0 = _mm256_sub_epi32(Widen8(px, u8), z);
      const __m256i q1 = p + 1 < plane ? _mm256_sub_epi32(Widen8(px + channels, u8), z) : _mm256_setzero_si256();
      if (fixed_point) {
        i0 = _mm256_add_epi32(i0, q0);
        i1 = _mm256_add_epi32(i1, q1);
      } else {
        const __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(q0), s), v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(q1), s);
        lo0 = _mm256_add_pd(lo0, _mm256_cvtps_pd(_mm256_castps256_ps128(v0)));
        hi0 = _mm256_add_pd(hi0, _mm256_cvtps_pd(_mm256_extractf128_ps(v0, 1)));
        lo1 = _mm256_add_pd(lo1, _mm256_cvtps_pd(_mm256_castps256_ps128(v1)));
        hi1 = _mm256_add_pd(hi1, _mm256_cvtps_pd(_mm256_extractf128_ps(v1, 1)));
      }
    }
    _mm256_storeu_pd(fsum + c - c0, _mm256_add_pd(lo0, lo1));
    _mm256_storeu_pd(fsum + c - c0 + 4, _mm256_add_pd(hi0, hi1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(isum + c - c0), _mm256_add_epi32(i0, i1));
  }
  return c;
}

// The same sums 16 channels at a time with AVX-512 (channels left over go to the AVX2 loop).
__attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t PoolSumsNhwcAvx512(
    const uint8_t* x, int64_t plane, int64_t channels, int64_t c0, int64_t c1, bool u8, int32_t zx, float sx,
    double* fsum, int32_t* isum, bool fixed_point) {
  if (!fixed_point && plane >= kExactPoolPlane) return c0;
  const __m512i z = _mm512_set1_epi32(zx);
  const __m512 s = _mm512_set1_ps(sx);
  int64_t c = c0;
  for (; c + 16 <= c1; c += 16) {
    __m512d lo0 = _mm512_setzero_pd(), hi0 = _mm512_setzero_pd(), lo1 = _mm512_setzero_pd(), hi1 = _mm512_setzero_pd();
    __m512i i0 = _mm512_setzero_si512(), i1 = _mm512_setzero_si512();
    const uint8_t* px = x + c;
    for (int64_t p = 0; p < plane; p += 2, px += 2 * channels) {
      const __m512i q0 = _mm512_sub_epi32(Widen16(px, 0xFFFF, u8), z);
      const __m512i q1 = p + 1 < plane ? _mm512_sub_epi32(Widen16(px + channels, 0xFFFF, u8), z) : _mm512_setzero_si512();
      if (fixed_point) {
        i0 = _mm512_add_epi32(i0, q0);
        i1 = _mm512_add_epi32(i1, q1);
      } else {
        const __m512 v0 = _mm512_mul_ps(_mm512_cvtepi32_ps(q0), s), v1 = _mm512_mul_ps(_mm512_cvtepi32_ps(q1), s);
        lo0 = _mm512_add_pd(lo0, _mm512_cvtps_pd(_mm512_castps512_ps256(v0)));
        hi0 = _mm512_add_pd(hi0, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v0), 1))));
        lo1 = _mm512_add_pd(lo1, _mm512_cvtps_pd(_mm512_castps512_ps256(v1)));
        hi1 = _mm512_add_pd(hi1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v1), 1))));
      }
    }
    _mm512_storeu_pd(fsum + c - c0, _mm512_add_pd(lo0, lo1));
    _mm512_storeu_pd(fsum + c - c0 + 8, _mm512_add_pd(hi0, hi1));
    _mm512_storeu_si512(isum + c - c0, _mm512_add_epi32(i0, i1));
  }
  return c;
}

// The integer sums sum(q) of channels [c0, c1) over `plane` pixels of an NHWC image, added
// into isum[0, c1 - c0): 128 channels per pass over the pixels, 16-bit sums in four
// registers for up to 128 pixels at a time (|sum| <= 128 · 255 fits), then widened and
// added. A load, a widening and an add per 32 values; the f64 sums of the float mode take
// eight operations per 16.
template <bool kU8>
__attribute__((target("avx512f,avx512bw"), always_inline)) inline __m512i Widen32(__m256i v) {
  return kU8 ? _mm512_cvtepu8_epi16(v) : _mm512_cvtepi8_epi16(v);
}

template <bool kU8>
__attribute__((target("avx512f,avx512bw,avx512vl"))) void PoolIntegerSumsNhwcAvx512(const uint8_t* x, int64_t plane,
                                                                                   int64_t channels, int64_t c0,
                                                                                   int64_t c1, int32_t* isum) {
  constexpr int64_t kChunk = 128;
  for (int64_t c = c0; c < c1; c += 128) {
    const int64_t n = std::min<int64_t>(128, c1 - c);
    __mmask32 m[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t k = std::clamp<int64_t>(n - 32 * j, 0, 32);
      m[j] = k == 32 ? ~__mmask32{0} : static_cast<__mmask32>((uint64_t{1} << k) - 1);
    }
    int32_t* sum = isum + (c - c0);
    for (int64_t p0 = 0; p0 < plane; p0 += kChunk) {
      __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
      const uint8_t* px = x + p0 * channels + c;
      for (int64_t p = p0, end = std::min(plane, p0 + kChunk); p < end; ++p, px += channels) {
        a0 = _mm512_add_epi16(a0, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[0], px)));
        a1 = _mm512_add_epi16(a1, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[1], px + 32)));
        a2 = _mm512_add_epi16(a2, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[2], px + 64)));
        a3 = _mm512_add_epi16(a3, Widen32<kU8>(_mm256_maskz_loadu_epi8(m[3], px + 96)));
      }
      const __m512i acc[4] = {a0, a1, a2, a3};
      for (int j = 0; j < 4; ++j) {
        for (int h = 0; h < 2; ++h) {
          const __mmask16 mh = static_cast<__mmask16>(m[j] >> (16 * h));
          if (!mh) continue;
          const __m256i half = h ? _mm512_extracti64x4_epi64(acc[j], 1) : _mm512_castsi512_si256(acc[j]);
          int32_t* at = sum + 32 * j + 16 * h;
          _mm512_mask_storeu_epi32(at, mh, _mm512_add_epi32(_mm512_maskz_loadu_epi32(mh, at), _mm512_cvtepi16_epi32(half)));
        }
      }
    }
  }
}

// QLinearGlobalAveragePool over [N, C, spatial] in row-major or NHWC: the reference's arithmetic
// (see ops.def) per channel, the channels split between threads; the NHWC form walks pixels
// outermost so it reads memory in order.
class GlobalAveragePoolKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    // One f64 and one int32 sum per (image, channel): threads write disjoint ones.
    auto* fsum = static_cast<double*>(scratch);
    auto* isum = reinterpret_cast<int32_t*>(fsum + threads_ * n_ * c_);
    if (SplitsPixels()) {
      // NHWC with several threads: each sums a share of the pixels of every channel (split by
      // channels, both would read every cache line), then the shares are added. The f64 sums
      // are exact below kExactPoolPlane terms (see there), so the order does not matter.
      ParallelFor(threads_, threads_, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t t = lo; t < hi; ++t)
          for (int64_t b = 0; b < n_; ++b)
            Pool(x, b, plane_ * t / threads_, plane_ * (t + 1) / threads_, 0, c_, fsum + (t * n_ + b) * c_,
                 isum + (t * n_ + b) * c_);
      });
      for (int64_t i = 0; i < n_ * c_; ++i) {
        for (int64_t t = 1; t < threads_; ++t) fsum[i] += fsum[t * n_ * c_ + i], isum[i] += isum[t * n_ * c_ + i];
      }
      RequantizeSums(fsum, isum, n_ * c_, y);
      return Status::Ok();
    }
    ParallelFor(threads_, n_ * c_, std::max<int64_t>(1, kGrain / plane_), [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo / c_; b * c_ < hi; ++b) {
        const int64_t c0 = std::max(lo - b * c_, int64_t{0}), c1 = std::min(hi - b * c_, c_);
        Pool(x, b, 0, plane_, c0, c1, fsum + b * c_ + c0, isum + b * c_ + c0);
        RequantizeSums(fsum + b * c_ + c0, isum + b * c_ + c0, c1 - c0, y + b * c_ + c0);
      }
    });
    return Status::Ok();
  }
  bool SplitsPixels() const {
    return nhwc_ && threads_ > 1 && plane_ >= 64 * threads_ && (exact_ || (plane_ < kExactPoolPlane && !fixed_point_));
  }
  size_t scratch_bytes() const override {
    return static_cast<size_t>(threads_ * n_ * c_) * (sizeof(double) + sizeof(int32_t));
  }
  // The sums over pixels [p0, p1) of channels [c0, c1) of image b into fsum[0, c1 - c0) and
  // isum alike.
  void Pool(const uint8_t* x, int64_t b, int64_t p0, int64_t p1, int64_t c0, int64_t c1, double* fsum,
            int32_t* isum) const {
    std::fill(fsum, fsum + (c1 - c0), 0.0);
    std::fill(isum, isum + (c1 - c0), 0);
    int64_t from = c0;
    const uint8_t* first = x + (b * plane_ + p0) * c_;  // NHWC: pixel p0 of image b
    if (nhwc_ && HasAvx512() && IntegerSums()) {
      if (x_u8_) PoolIntegerSumsNhwcAvx512<true>(first, p1 - p0, c_, c0, c1, isum);
      else PoolIntegerSumsNhwcAvx512<false>(first, p1 - p0, c_, c0, c1, isum);
      for (int64_t c = c0; c < c1; ++c) isum[c - c0] -= static_cast<int32_t>((p1 - p0) * zx_);
      return;
    }
    if (nhwc_ && HasAvx512())
      from = PoolSumsNhwcAvx512(first, p1 - p0, c_, c0, c1, x_u8_, zx_, sx_, fsum, isum, IntegerSums());
    if (nhwc_ && HasAvx2())
      from = PoolSumsNhwcAvx2(first, p1 - p0, c_, from, c1, x_u8_, zx_, sx_, fsum + (from - c0),
                              isum + (from - c0), IntegerSums());
    auto add = [&](int64_t c, int64_t at) {
      const int32_t q = (x_u8_ ? x[at] : static_cast<int8_t>(x[at])) - zx_;
      isum[c - c0] += q;
      fsum[c - c0] += static_cast<double>(static_cast<float>(q) * sx_);
    };
    if (nhwc_) {
      for (int64_t p = p0; p < p1; ++p)
        for (int64_t c = from; c < c1; ++c) add(c, (b * plane_ + p) * c_ + c);
    } else {
      for (int64_t c = from; c < c1; ++c)
        for (int64_t p = p0; p < p1; ++p) add(c, (b * c_ + c) * plane_ + p);
    }
  }
  // The sums in integers: the fixed-point mode's, and the float mode's when every term
  // (q − zx)·sx is exact in f32. Their f64 sum is then exactly sx · sum(q − zx).
  bool IntegerSums() const { return fixed_point_ || exact_; }
  int32_t Requantize(double fsum, int32_t isum) const {
    if (fixed_point_) return quant::Requantize(isum, mult_, zy_, qmin_, qmax_);
    if (exact_) fsum = static_cast<double>(isum) * static_cast<double>(sx_);
    float f = static_cast<float>(fsum / static_cast<double>(plane_)) / sy_;
    if (std::isnan(f)) f = 0;
    return static_cast<int32_t>(
        std::min(std::max(std::nearbyint(f) + static_cast<float>(zy_), static_cast<float>(qmin_)), static_cast<float>(qmax_)));
  }
  // y[i] = Requantize(fsum[i], isum[i]) for i < n; in the float mode 8 at a time with
  // AVX-512, the same operations (f64 quotient, f32 conversion and quotient, round to even).
  void RequantizeSums(const double* fsum, const int32_t* isum, int64_t n, uint8_t* y) const {
    int64_t i = 0;
    if (!fixed_point_ && HasAvx512()) i = RequantizeSumsAvx512(fsum, isum, n, y);
    for (; i < n; ++i) y[i] = static_cast<uint8_t>(Requantize(fsum[i], isum[i]));
  }
  __attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t RequantizeSumsAvx512(const double* fsum,
                                                                                    const int32_t* isum, int64_t n,
                                                                                    uint8_t* y) const {
    const __m512d count = _mm512_set1_pd(static_cast<double>(plane_)), sx = _mm512_set1_pd(static_cast<double>(sx_));
    const __m256 sy = _mm256_set1_ps(sy_), zy = _mm256_set1_ps(static_cast<float>(zy_));
    const __m256 lo = _mm256_set1_ps(static_cast<float>(qmin_)), hi = _mm256_set1_ps(static_cast<float>(qmax_));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m512d sum = exact_ ? _mm512_mul_pd(_mm512_cvtepi32_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(isum + i))), sx)
                                 : _mm512_loadu_pd(fsum + i);
      __m256 f = _mm256_div_ps(_mm512_cvtpd_ps(_mm512_div_pd(sum, count)), sy);
      f = _mm256_mask_mov_ps(f, _mm256_cmp_ps_mask(f, f, _CMP_UNORD_Q), _mm256_setzero_ps());  // NaN -> 0
      f = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zy);
      const __m256i q = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(f, lo), hi));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm256_cvtepi32_epi8(q));  // in [qmin, qmax]: the low byte
    }
    return i;
  }
  std::string Describe() const override {
    return fmt::format("own quantized global average pool{}{}{}", fixed_point_ ? " (fixed point)" : exact_ ? " (integer sums: exact scale)" : "",
                       !nhwc_ ? "" : HasAvx512() ? " avx512" : HasAvx2() ? " avx2" : "",
                       SplitsPixels() ? fmt::format(", pixels split between {} threads", threads_) : "");
  }
  float sx_ = 1, sy_ = 1;
  int32_t zx_ = 0, zy_ = 0, qmin_ = 0, qmax_ = 255;
  quant::FixedPointMultiplier mult_;
  bool fixed_point_ = false, exact_ = false, x_u8_ = true, nhwc_ = false;
  int64_t n_ = 1, c_ = 1, plane_ = 1;
  int threads_ = 1;
};

// Scale and zero point inputs at (s, s + 1) as constant scalars, or a refusal.
Status ScalarParams(const KernelRequest& req, int s, double* scale, int32_t* zp) {
  const Tensor* st = ConstantOrNull(req, s);
  if (!st || st->numel() != 1) return Refuse(req, "input {} (scale) is not a constant scalar", s);
  *scale = st->ToDoubleVector()[0];
  *zp = 0;
  if (InputOrNull(req, s + 1)) {
    const Tensor* z = ConstantOrNull(req, s + 1);
    if (!z || z->numel() != 1) return Refuse(req, "input {} (zero point) is not a constant scalar", s + 1);
    *zp = static_cast<int32_t>(z->ToInt64Vector()[0]);
  }
  return Status::Ok();
}

// The requantization mode and output clamp of a QLinear* node, as the reference reads them.
Status ModeAndClamp(const KernelRequest& req, DType out, bool* fixed_point, int32_t* qmin, int32_t* qmax) {
  const std::string mode = req.attrs ? req.attrs->GetString("edgec_requant", "float") : "float";
  if (mode != "float" && mode != "fixed_point") return Refuse(req, "edgec_requant '{}'", mode);
  *fixed_point = mode == "fixed_point";
  const int64_t tmin = out == DType::kU8 ? 0 : -128, tmax = out == DType::kU8 ? 255 : 127;
  *qmin = static_cast<int32_t>(std::max(tmin, req.attrs ? req.attrs->GetInt("edgec_qmin", tmin) : tmin));
  *qmax = static_cast<int32_t>(std::min(tmax, req.attrs ? req.attrs->GetInt("edgec_qmax", tmax) : tmax));
  if (*qmin > *qmax) return Refuse(req, "edgec_qmin {} > edgec_qmax {}", *qmin, *qmax);
  return Status::Ok();
}

}  // namespace

KernelOr CreateQuantizedGlobalAveragePoolKernel(const KernelRequest& req) {
  if (req.inputs.size() < 4 || req.outputs.size() != 1) return Refuse(req, "expected 4 or 5 inputs");
  const TensorDesc &x = req.inputs[0], &y = req.outputs[0];
  if (x.dims.size() != 4) return Refuse(req, "{}-d input (4-d only)", x.dims.size());
  if (!IsDense(x) || !IsDense(y) || (x.layout != Layout::kRowMajor && x.layout != Layout::kNHWC))
    return Refuse(req, "input or output is not dense row-major/NHWC");
  auto k = std::make_unique<GlobalAveragePoolKernel>();
  double sx, sy;
  RETURN_IF_ERROR(ScalarParams(req, 1, &sx, &k->zx_));
  RETURN_IF_ERROR(ScalarParams(req, 3, &sy, &k->zy_));
  RETURN_IF_ERROR(ModeAndClamp(req, y.dtype, &k->fixed_point_, &k->qmin_, &k->qmax_));
  k->sx_ = static_cast<float>(sx);
  k->sy_ = static_cast<float>(sy);
  k->x_u8_ = x.dtype == DType::kU8;
  k->nhwc_ = x.layout == Layout::kNHWC;
  k->n_ = x.dims[0];
  k->c_ = x.dims[1];
  k->plane_ = x.dims[2] * x.dims[3];
  if (k->plane_ < 1) return Refuse(req, "empty spatial plane");
  // Integer sums in int32: at most 255 · plane in magnitude.
  k->exact_ = !k->fixed_point_ && quant::DequantizesExactly(k->sx_) && k->plane_ < (int64_t{1} << 23);
  if (k->fixed_point_) {
    auto m = quant::QuantizeMultiplier(static_cast<double>(k->sx_) / k->sy_ / static_cast<double>(k->plane_));
    if (!m.ok()) return Refuse(req, "{}", m.status().message());
    k->mult_ = *m;
  }
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

KernelOr CreateQuantizedBinaryKernel(const KernelRequest& req) {
  if (req.inputs.size() < 7 || req.outputs.size() != 1) return Refuse(req, "expected 7 or 8 inputs");
  const TensorDesc& y = req.outputs[0];
  // A: the operand of the output's shape; B: the same, or [N or 1, C, 1, 1] of a 4-d output.
  auto per_channel = [&](const TensorDesc& d) {
    return y.dims.size() == 4 && d.dims.size() == 4 && (d.dims[0] == y.dims[0] || d.dims[0] == 1) &&
           d.dims[1] == y.dims[1] && d.dims[2] == 1 && d.dims[3] == 1;
  };
  auto k = std::make_unique<QuantizedBinaryKernel>();
  k->a_input_ = req.inputs[0].dims == y.dims ? 0 : 3;
  const TensorDesc &a = req.inputs[k->a_input_], &b = req.inputs[3 - k->a_input_];
  if (a.dims != y.dims || (b.dims != y.dims && !per_channel(b)))
    return Refuse(req, "broadcasting {} {} by {} other than one operand per channel (runs on the reference)",
                  OpName(req.op), DimsToString(req.inputs[0].dims), DimsToString(req.inputs[3].dims));
  const bool same = b.dims == y.dims;
  // A [n, C, 1, 1] operand has one memory order in either layout.
  if (a.layout != y.layout || (same && b.layout != y.layout) || !IsDense(a) || !IsDense(b) || !IsDense(y))
    return Refuse(req, "inputs and output are not dense in one layout");
  const int a_params = k->a_input_ + 1, b_params = 4 - k->a_input_;
  double scale[3];
  int32_t zp[3];
  for (int j : {0, 1, 2}) RETURN_IF_ERROR(ScalarParams(req, j == 0 ? a_params : j == 1 ? b_params : 6, &scale[j], &zp[j]));
  k->mul_ = req.op == OpKind::kQLinearMul;
  k->a_u8_ = a.dtype == DType::kU8;
  k->b_u8_ = b.dtype == DType::kU8;
  k->y_u8_ = y.dtype == DType::kU8;
  int32_t qmin, qmax;
  RETURN_IF_ERROR(ModeAndClamp(req, y.dtype, &k->fixed_point_, &qmin, &qmax));
  // The reference reads the scales as f32; so do both modes here.
  const float p[3] = {static_cast<float>(scale[0]), static_cast<float>(scale[1]), static_cast<float>(scale[2])};
  k->form_.add = quant::MakeRatioAdd(p[0], zp[0], p[1], zp[1], p[2], zp[2]);
  k->form_.mul = quant::MakeRatioMul(p[0], zp[0], p[1], zp[1], p[2], zp[2]);
  k->form_.lo = static_cast<float>(qmin);
  k->form_.hi = static_cast<float>(qmax);
  auto small = [](float r) { return std::isfinite(r) && std::fabs(r) < 1e30f; };
  k->may_nan_ = k->mul_ ? !small(k->form_.mul.ratio)
                        : !(small(k->form_.add.ra) && small(k->form_.add.rb) && small(k->form_.add.base));
  if (k->fixed_point_) {
    if (k->mul_) {
      auto fp = quant::MakeQuantizedMul(p[0], zp[0], p[1], zp[1], p[2], zp[2], qmin, qmax);
      if (!fp.ok()) return Refuse(req, "{}", fp.status().message());
      k->fixed_mul_ = *fp;
    } else {
      auto fp = quant::MakeQuantizedAdd(p[0], zp[0], p[1], zp[1], p[2], zp[2], qmin, qmax);
      if (!fp.ok()) return Refuse(req, "{}", fp.status().message());
      k->fixed_add_ = *fp;
    }
  }
  k->numel_ = NumElements(y.dims);
  RowWalk& w = k->walk_;
  w.row = std::max<int64_t>(k->numel_, 1);
  if (!same) {
    const int64_t n = y.dims[0], c = y.dims[1], hw = y.dims[2] * y.dims[3];
    const int64_t images = b.dims[0] == n ? n : 1;  // B per image, or one for all
    if (y.layout == Layout::kNHWC) {  // rows: the C channels of a pixel; B's row of image r / hw
      w.row = std::max<int64_t>(c, 1);
      w.div = std::max<int64_t>(hw, 1);
      w.mod = images;
      w.step = c;
    } else {  // rows: the hw pixels of a channel; B's value for channel r
      w.row = std::max<int64_t>(hw, 1);
      w.mod = images * c;
      w.step = 1;
      w.b_one = true;
    }
  }
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

KernelOr CreateLookupKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs");
  const Tensor* t = ConstantOrNull(req, 1);
  if (!t || t->numel() != 256) return Refuse(req, "the table is not a constant of 256 values");
  if (req.inputs[0].layout != req.outputs[0].layout && req.inputs[0].dims.size() == 4)
    return Refuse(req, "input and output layouts differ");
  auto k = std::make_unique<LookupKernel>();
  const uint8_t flip = req.inputs[0].dtype == DType::kI8 ? 0x80 : 0;  // i8 byte b is entry b ^ 0x80
  for (int b = 0; b < 256; ++b) k->by_byte_[b] = static_cast<const uint8_t*>(t->raw())[b ^ flip];
  k->numel_ = NumElements(req.inputs[0].dims);
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

KernelOr CreateQuantizeKernel(const KernelRequest& req) {
  const bool quantize = req.op == OpKind::kQuantizeLinear;
  if (req.inputs.size() < 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 or 3 inputs");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const DType q = quantize ? y.dtype : x.dtype;
  if ((quantize ? x.dtype : y.dtype) != DType::kF32 || (q != DType::kU8 && q != DType::kI8))
    return Refuse(req, "{} -> {}: only f32 <-> u8/i8", DTypeName(x.dtype), DTypeName(y.dtype));
  if (x.layout != y.layout && x.dims.size() == 4) return Refuse(req, "input and output layouts differ");
  const Tensor* s = ConstantOrNull(req, 1);
  if (!s || s->numel() != 1) return Refuse(req, "the scale is not a constant scalar (per-axis runs on the reference)");
  int32_t zp = 0;
  if (InputOrNull(req, 2)) {
    const Tensor* z = ConstantOrNull(req, 2);
    if (!z || z->numel() != 1) return Refuse(req, "the zero point is not a constant scalar");
    zp = static_cast<int32_t>(z->ToInt64Vector()[0]);
  }
  auto fill = [&](auto k) -> KernelOr {
    k->scale_ = static_cast<float>(s->ToDoubleVector()[0]);
    k->zp_ = zp;
    k->u8_ = q == DType::kU8;
    k->numel_ = NumElements(x.dims);
    k->threads_ = std::max(1, req.threads);
    return std::unique_ptr<Kernel>(std::move(k));
  };
  if (quantize) return fill(std::make_unique<QuantizeKernel>());
  return fill(std::make_unique<DequantizeKernel>());
}

}  // namespace edgec::cpu
