// Fast QLinearAdd / QLinearMul: the reference's arithmetic (ops.def), per-tensor parameters,
// operands of one shape or B per channel (the squeeze-excitation gate), AVX-512 / AVX2.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"
#include "quant/ratio_forms.h"

namespace edgec::cpu {

namespace {

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

// QLinearAdd / QLinearMul on operands of one shape, or with B one value per channel (and per
// image, or shared by all) of A's [N, C, H, W] (the squeeze-excitation gate), in NHWC or
// row-major (see RowWalk).
class QuantizedBinaryKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* a = static_cast<const uint8_t*>(in[a_input_]);
    const auto* b = static_cast<const uint8_t*>(in[3 - a_input_]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kInt8Grain, [&](int64_t lo, int64_t hi) {
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

}  // namespace

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

}  // namespace edgec::cpu
