// Fast QLinearAdd / QLinearMul: the reference's arithmetic (ops.def), per-tensor parameters,
// operands of one shape or B per channel (the squeeze-excitation gate), AVX-512 / AVX2.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/int8.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"
#include "quant/ratio_forms.h"

namespace edgec::cpu {

namespace {

// QLinearAdd / QLinearMul on operands of one shape, or with B one value per channel (and per
// image, or shared by all) of A's [N, C, H, W] (the squeeze-excitation gate), in NHWC or
// row-major (see vec::RowWalk).
class QuantizedBinaryKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* a = static_cast<const uint8_t*>(in[a_input_]);
    const auto* b = static_cast<const uint8_t*>(in[3 - a_input_]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kInt8Grain, [&](int64_t lo, int64_t hi) {
      if (!fixed_point_ && HasAvx512()) {
        vec::BinaryRatioAvx512(mul_, may_nan_, a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        return;
      }
      if (!fixed_point_ && HasAvx2Fma()) {
        vec::BinaryRatioAvx2(mul_, a, b, y, lo, hi, walk_, form_, a_u8_, b_u8_, y_u8_);
        return;
      }
      for (vec::RowCursor c(walk_, lo); lo < hi; c.NextRow()) {
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
  vec::BinaryForm form_;
  quant::QuantizedAddParams fixed_add_;
  quant::QuantizedMulParams fixed_mul_;
  bool mul_ = false, fixed_point_ = false, a_u8_ = true, b_u8_ = true, y_u8_ = true;
  // Whether v can be NaN (see Ratio16): a ratio that is not finite or so large that terms of
  // |q| <= 255 (products <= 65025) may overflow.
  bool may_nan_ = true;
  int a_input_ = 0;
  vec::RowWalk walk_;
  int64_t numel_ = 0;
  int threads_ = 1;
};

}  // namespace

KernelOr CreateQuantizedBinaryKernel(const KernelRequest& req) {
  if (req.inputs.size() < 7 || req.outputs.size() != 1) return Refuse(req, "expected 7 or 8 inputs");
  const TensorDesc& y = req.outputs[0];
  auto is8 = [](DType t) { return t == DType::kU8 || t == DType::kI8; };
  if (!is8(req.inputs[0].dtype) || !is8(req.inputs[3].dtype) || !is8(y.dtype))
    return Refuse(req, "an int16 operand or result (runs on the reference)");
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
  vec::RowWalk& w = k->walk_;
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
