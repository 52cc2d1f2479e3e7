// Fast QLinearGlobalAveragePool: the reference's arithmetic (ops.def) per channel, integer
// sums in 16-bit lanes where exact, row-major or NHWC.
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

// The f64 sums of a pool's float mode are exact, so their order does not matter: every term
// is an f32 v = (q − zx)·sx with |q − zx| ≤ 255, a whole multiple of g = ulp(sx) below
// 2^32·g, so fewer than 2^21 of them add up below 2^53·g, on the f64 grid.
constexpr int64_t kExactPoolPlane = int64_t{1} << 21;

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
    ParallelFor(threads_, n_ * c_, std::max<int64_t>(1, kInt8Grain / plane_), [&](int64_t lo, int64_t hi) {
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
      vec::PoolIntegerSumsNhwcAvx512(first, p1 - p0, c_, c0, c1, x_u8_, isum);
      for (int64_t c = c0; c < c1; ++c) isum[c - c0] -= static_cast<int32_t>((p1 - p0) * zx_);
      return;
    }
    // The f64 sums of the vector rows are exact (any order) below kExactPoolPlane terms.
    const bool vector_sums = nhwc_ && (IntegerSums() || p1 - p0 < kExactPoolPlane);
    if (vector_sums && HasAvx512())
      from = vec::PoolSumsNhwcAvx512(first, p1 - p0, c_, c0, c1, x_u8_, zx_, sx_, fsum, isum, IntegerSums());
    if (vector_sums && HasAvx2())
      from = vec::PoolSumsNhwcAvx2(first, p1 - p0, c_, from, c1, x_u8_, zx_, sx_, fsum + (from - c0),
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
    if (!fixed_point_ && HasAvx512()) i = vec::RequantizeSumsAvx512(fsum, isum, n, y, {plane_, sx_, sy_, zy_, qmin_, qmax_, exact_});
    for (; i < n; ++i) y[i] = static_cast<uint8_t>(Requantize(fsum[i], isum[i]));
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

}  // namespace edgec::cpu
