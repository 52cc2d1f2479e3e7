// Fast QLinearAveragePool (2-d, row-major or NHWC): the reference's arithmetic (ops.def,
// quant/avg_pool.h) per output pixel, integer window sums where exact, output rows split
// between threads.
#include <cmath>
#include <map>
#include <set>

#include "ir/conv_geometry.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/vec/int8.h"
#include "quant/avg_pool.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"

namespace edgec::cpu {

namespace {

// A window's f64 sum of f32 terms (q − zx)·sx is exact in any order (the terms are whole
// multiples of ulp(sx) and a window holds far fewer than 2^21 of them: int8_global_pool.cc),
// so integer sums times sx give its bits when every term is exact in f32.
class AveragePoolKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, n_ * oh_, std::max<int64_t>(1, kInt8Grain / std::max<int64_t>(1, ow_ * c_ * window_)),
                [&](int64_t lo, int64_t hi) {
                  // One int32 and one f64 sum per channel (NHWC), this range's own.
                  std::vector<int32_t> isum(c_);
                  std::vector<double> fsum(c_);
                  for (int64_t r = lo; r < hi; ++r) Row(x, y, r / oh_, r % oh_, isum.data(), fsum.data());
                });
    return Status::Ok();
  }

  // Output row oh of image b.
  void Row(const uint8_t* x, uint8_t* y, int64_t b, int64_t oh, int32_t* isum, double* fsum) const {
    const int64_t h0 = std::max<int64_t>(0, oh * sh_ - pt_), h1 = std::min(h_, oh * sh_ - pt_ + kh_);
    for (int64_t ow = 0; ow < ow_; ++ow) {
      const int64_t w0 = std::max<int64_t>(0, ow * sw_ - pl_), w1 = std::min(w_, ow * sw_ - pl_ + kw_);
      const int64_t at = oh * ow_ + ow, inside = std::max<int64_t>(0, h1 - h0) * std::max<int64_t>(0, w1 - w0);
      if (!nhwc_) {
        for (int64_t c = 0; c < c_; ++c) {
          const uint8_t* plane = x + (b * c_ + c) * h_ * w_;
          int32_t s = 0;
          double f = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) {
              const int32_t q = Load(plane[ih * w_ + iw]) - zx_;
              s += q;
              if (!IntegerSums()) f += static_cast<double>(static_cast<float>(q) * sx_);
            }
          y[((b * c_ + c) * oh_ + oh) * ow_ + ow] =
              table_.empty() ? Requantize(s, f, at) : table_[table_of_[at] * table_size() + s + 255 * window_];
        }
        continue;
      }
      if (IntegerSums() && avx512_ && h1 > h0 && w1 > w0) {
        vec::WindowSumsAvx512(x + ((b * h_ + h0) * w_ + w0) * c_, h1 - h0, w1 - w0, w_ * c_, c_, x_u8_, isum);
      } else {
        std::fill(isum, isum + c_, 0);
        if (!IntegerSums()) std::fill(fsum, fsum + c_, 0.0);
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) {
            const uint8_t* px = x + ((b * h_ + ih) * w_ + iw) * c_;
            if (!IntegerSums()) {
              for (int64_t c = 0; c < c_; ++c) fsum[c] += static_cast<double>(static_cast<float>(Load(px[c]) - zx_) * sx_);
              continue;
            }
            const int64_t c0 = HasAvx2() ? vec::AddBytesAvx2(px, c_, x_u8_, isum) : 0;
            for (int64_t c = c0; c < c_; ++c) isum[c] += Load(px[c]);
          }
      }
      uint8_t* py = y + ((b * oh_ + oh) * ow_ + ow) * c_;
      const int32_t shift = static_cast<int32_t>(inside) * zx_;  // the window's zero points
      const int64_t channels = c_;  // a local: the byte stores below may alias the members
      if (!table_.empty()) {  // the requantized value of every possible sum of this divisor
        const uint8_t* t = table_.data() + table_of_[at] * table_size() + 255 * window_ - shift;
        for (int64_t c = 0; c < channels; ++c) py[c] = t[isum[c]];
        continue;
      }
      for (int64_t c = 0; c < channels; ++c) isum[c] -= shift;
      int64_t c = 0;
      // The float mode's requantization of the pixel's channels 8 at a time (the global pool's
      // AVX-512 row: the same operations, this window's divisor as the count).
      if (!fixed_point_ && avx512_ && divisor_[at] > 0)
        c = vec::RequantizeSumsAvx512(fsum, isum, c_, py, {divisor_[at], sx_, sy_, zy_, qmin_, qmax_, exact_});
      for (; c < c_; ++c) py[c] = Requantize(isum[c], fsum[c], at);
    }
  }
  int32_t Load(uint8_t v) const { return x_u8_ ? v : static_cast<int8_t>(v); }
  bool IntegerSums() const { return fixed_point_ || exact_; }
  // Output position `at`'s value from its window's sums (the reference's two modes).
  uint8_t Requantize(int32_t isum, double fsum, int64_t at) const { return Requantize(isum, fsum, divisor_[at], mult_.empty() ? quant::FixedPointMultiplier{} : mult_[at]); }
  uint8_t Requantize(int32_t isum, double fsum, int64_t d, const quant::FixedPointMultiplier& m) const {
    int32_t r;
    if (fixed_point_) {
      r = d > 0 ? quant::Requantize(isum, m, zy_, qmin_, qmax_) : std::clamp(zy_, qmin_, qmax_);
    } else {
      if (exact_) fsum = static_cast<double>(isum) * static_cast<double>(sx_);
      float f = d > 0 ? static_cast<float>(fsum / static_cast<double>(d)) / sy_ : 0.f;
      if (std::isnan(f)) f = 0;
      r = static_cast<int32_t>(
          std::min(std::max(std::nearbyint(f) + static_cast<float>(zy_), static_cast<float>(qmin_)), static_cast<float>(qmax_)));
    }
    return static_cast<uint8_t>(r);
  }
  std::string Describe() const override {
    return fmt::format("own quantized average pool {}x{}{}{}{}", kh_, kw_,
                       fixed_point_ ? " (fixed point)" : exact_ ? " (integer sums: exact scale)" : "",
                       !nhwc_ || !IntegerSums() ? "" : HasAvx512() ? " avx512" : HasAvx2() ? " avx2" : "",
                       table_.empty() ? "" : ", requantized by lookup");
  }
  float sx_ = 1, sy_ = 1;
  int32_t zx_ = 0, zy_ = 0, qmin_ = 0, qmax_ = 255;
  bool fixed_point_ = false, exact_ = false, x_u8_ = true, nhwc_ = false;
  int64_t n_ = 1, c_ = 1, h_ = 1, w_ = 1, oh_ = 1, ow_ = 1, kh_ = 1, kw_ = 1, sh_ = 1, sw_ = 1, pt_ = 0, pl_ = 0;
  int64_t window_ = 1;
  std::vector<int64_t> divisor_;                   // per output position of a plane
  std::vector<quant::FixedPointMultiplier> mult_;  // per output position (fixed point)
  int threads_ = 1;
  bool avx512_ = false;  // HasAvx512() when the kernel was made
  // With integer sums, the output of every possible window sum s in [-255·window, 255·window]
  // per distinct divisor, computed by Requantize itself (so the same bits): a lookup per
  // output instead of the requantization's divisions. table_of_: the table of each position.
  std::vector<uint8_t> table_;
  std::vector<int32_t> table_of_;
  int64_t table_size() const { return 2 * 255 * window_ + 1; }
  void BuildTables() {
    std::map<int64_t, int32_t> index;
    for (size_t at = 0; at < divisor_.size(); ++at) {
      auto [it, fresh] = index.emplace(divisor_[at], static_cast<int32_t>(index.size()));
      table_of_.push_back(it->second);
      if (!fresh) continue;
      for (int64_t s = -255 * window_; s <= 255 * window_; ++s)
        table_.push_back(Requantize(static_cast<int32_t>(s), 0.0, static_cast<int64_t>(at)));
    }
  }
};

}  // namespace

KernelOr CreateQuantizedAveragePoolKernel(const KernelRequest& req) {
  if (req.inputs.size() < 4 || req.outputs.size() != 1) return Refuse(req, "expected 4 or 5 inputs");
  const TensorDesc &x = req.inputs[0], &y = req.outputs[0];
  if (x.dims.size() != 4) return Refuse(req, "{}-d input (4-d only)", x.dims.size());
  if (!IsDense(x) || !IsDense(y) || (x.layout != Layout::kRowMajor && x.layout != Layout::kNHWC) || y.layout != x.layout)
    return Refuse(req, "input or output is not dense row-major/NHWC");
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(*req.attrs, 2, options);
  if (!attrs.ok()) return Refuse(req, "{}", attrs.status().message());
  auto g = ForwardWindowGeometry(*attrs, Dims{x.dims[2], x.dims[3]});
  if (!g.ok()) return Refuse(req, "{}", g.status().message());
  if (g->dilations[0] != 1 || g->dilations[1] != 1) return Refuse(req, "dilations {}", DimsToString(g->dilations));
  auto k = std::make_unique<AveragePoolKernel>();
  double sx, sy;
  RETURN_IF_ERROR(ScalarParams(req, 1, &sx, &k->zx_));
  RETURN_IF_ERROR(ScalarParams(req, 3, &sy, &k->zy_));
  RETURN_IF_ERROR(ModeAndClamp(req, y.dtype, &k->fixed_point_, &k->qmin_, &k->qmax_));
  k->sx_ = static_cast<float>(sx);
  k->sy_ = static_cast<float>(sy);
  k->x_u8_ = x.dtype == DType::kU8;
  k->nhwc_ = x.layout == Layout::kNHWC;
  k->n_ = x.dims[0], k->c_ = x.dims[1], k->h_ = x.dims[2], k->w_ = x.dims[3];
  k->oh_ = g->out[0], k->ow_ = g->out[1], k->kh_ = g->kernel[0], k->kw_ = g->kernel[1];
  k->sh_ = g->strides[0], k->sw_ = g->strides[1], k->pt_ = g->pad_begin[0], k->pl_ = g->pad_begin[1];
  k->window_ = k->kh_ * k->kw_;
  k->exact_ = !k->fixed_point_ && quant::DequantizesExactly(k->sx_);
  k->divisor_ = quant::AveragePoolDivisors(*g, req.attrs->GetInt("count_include_pad", 0) != 0);
  if (k->fixed_point_) {
    std::map<int64_t, quant::FixedPointMultiplier> by_divisor;
    for (int64_t d : k->divisor_) {
      if (d > 0 && !by_divisor.count(d)) {
        auto m = quant::AveragePoolMultiplier(k->sx_, k->sy_, d);
        if (!m.ok()) return Refuse(req, "{}", m.status().message());
        by_divisor[d] = *m;
      }
      k->mult_.push_back(d > 0 ? by_divisor[d] : quant::FixedPointMultiplier{});
    }
  }
  k->threads_ = std::max(1, req.threads);
  k->avx512_ = HasAvx512();
  // Tables when they are small (at most 1 MiB: a 3x3 window's is 4591 bytes per divisor).
  std::set<int64_t> divisors(k->divisor_.begin(), k->divisor_.end());
  if (k->IntegerSums() && static_cast<int64_t>(divisors.size()) * k->table_size() <= (int64_t{1} << 20)) k->BuildTables();
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
