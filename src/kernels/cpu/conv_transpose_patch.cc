// Own ConvTranspose for kernels that equal their strides (2-d, no pads, no output_padding,
// dilation 1, group 1; f32, NHWC input and output, constant weights and bias): the patches
// do not overlap, so every input pixel writes its own kh x kw block of output pixels,
// x[p, :] · W[:, :, i, j] + b for tap (i, j). That is one product X [pixels, Cin] · Wp
// [Cin, kh·kw·Cout] (Wp packed once, the taps side by side, padded to vec::kGemmAccAlign;
// vec::Table::gemm_acc, 4 pixels at a time) into a thread's scratch block, then each tap's
// Cout values copied to their output pixel. oneDNN 2.6's NHWC deconvolution ran these
// (the FPN head's 2x upsamplers) at a few GFLOP/s. Other ConvTransposes go to oneDNN.
// Guarded by tests/kernels/cpu/conv_transpose_patch_test.cc.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"
#include "support/status.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kPixelBlock = 64;  // input pixels per product (and per parallel job)

class ConvTransposePatchKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    const vec::Table& t = vec::Kernels();
    const int64_t pixels = batch_ * h_ * w_, blocks = (pixels + kPixelBlock - 1) / kPixelBlock;
    const int64_t wo = w_ * kw_, ho = h_ * kh_;
    ParallelFor(threads_, blocks, 1, [&](int64_t begin, int64_t end) {
      float* s = static_cast<float*>(scratch) + omp_get_thread_num() * kPixelBlock * np_;
      for (int64_t blk = begin; blk < end; ++blk) {
        const int64_t p0 = blk * kPixelBlock, m = std::min(kPixelBlock, pixels - p0);
        for (int64_t r = 0; r < m; ++r) std::memcpy(s + r * np_, bias_.data(), static_cast<size_t>(np_) * sizeof(float));
        t.gemm_acc(x + p0 * cin_, m, cin_, w_packed_.data(), np_, s);
        for (int64_t r = 0; r < m; ++r) {
          const int64_t p = p0 + r, n = p / (h_ * w_), hh = p / w_ % h_, ww = p % w_;
          for (int64_t i = 0; i < kh_; ++i) {
            float* row = y + ((n * ho + hh * kh_ + i) * wo + ww * kw_) * cout_;
            const float* src = s + r * np_ + i * kw_ * cout_;
            std::copy(src, src + kw_ * cout_, row);  // the kw taps of row i are adjacent pixels
          }
        }
      }
    });
    return Status::Ok();
  }

  size_t scratch_bytes() const override { return static_cast<size_t>(threads_ * kPixelBlock * np_) * sizeof(float); }
  std::string Describe() const override {
    return fmt::format("own conv-transpose nhwc {} f32 ({}x{} patches, {} -> {} channels)", vec::Kernels().isa, kh_,
                       kw_, cin_, cout_);
  }

  int64_t batch_ = 0, h_ = 0, w_ = 0, cin_ = 0, cout_ = 0, kh_ = 0, kw_ = 0, np_ = 0;
  int threads_ = 1;
  std::vector<float> w_packed_, bias_;
};

bool AllEqual(const std::vector<int64_t>& v, int64_t value) {
  return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == value; });
}

}  // namespace

KernelOr CreateConvTransposePatchKernel(const KernelRequest& req) {
  if (req.op != OpKind::kConvTranspose) return Refuse(req, "not a ConvTranspose");
  RETURN_IF_ERROR(ExpectF32(req));
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (x.dims.size() != 4 || x.layout != Layout::kNHWC || y.layout != Layout::kNHWC || !IsDense(x) || !IsDense(y)) {
    return Refuse(req, "the patch kernel takes dense 2-d NHWC input and output");
  }
  const Tensor* w = ConstantOrNull(req, 1);
  if (!w || w->rank() != 4) return Refuse(req, "weights are not constant (or not 2-d)");
  const TensorDesc* b = InputOrNull(req, 2);
  const Tensor* bias = ConstantOrNull(req, 2);
  if (b && !bias) return Refuse(req, "bias is not constant");
  const Attributes& a = *req.attrs;
  const std::vector<int64_t> strides = a.GetInts("strides"), kernel = a.GetInts("kernel_shape");
  const int64_t kh = w->dim(2), kw = w->dim(3);
  if (a.GetInt("group", 1) != 1) return Refuse(req, "group > 1");
  if (strides != std::vector<int64_t>{kh, kw} || (!kernel.empty() && kernel != strides)) {
    return Refuse(req, "kernel {}x{} differs from the strides (patches overlap or leave gaps)", kh, kw);
  }
  if (!AllEqual(a.GetInts("pads"), 0) || !AllEqual(a.GetInts("output_padding"), 0) ||
      !AllEqual(a.GetInts("dilations"), 1) || a.GetString("auto_pad", "NOTSET") != "NOTSET") {
    return Refuse(req, "pads, output_padding, dilations or auto_pad");
  }
  auto k = std::make_unique<ConvTransposePatchKernel>();
  k->batch_ = x.dims[0], k->cin_ = x.dims[1], k->h_ = x.dims[2], k->w_ = x.dims[3];
  k->cout_ = w->dim(1), k->kh_ = kh, k->kw_ = kw;
  if (w->dim(0) != k->cin_ || y.dims != Dims{k->batch_, k->cout_, k->h_ * kh, k->w_ * kw}) {
    return Refuse(req, "output {} is not the input's patches", DimsToString(y.dims));
  }
  const int64_t cols = kh * kw * k->cout_;
  k->np_ = (cols + vec::kGemmAccAlign - 1) / vec::kGemmAccAlign * vec::kGemmAccAlign;
  k->w_packed_.assign(static_cast<size_t>(k->cin_ * k->np_), 0.0f);
  k->bias_.assign(static_cast<size_t>(k->np_), 0.0f);
  const float* wd = w->data<float>();  // [Cin, Cout, kh, kw]
  for (int64_t ci = 0; ci < k->cin_; ++ci) {
    for (int64_t co = 0; co < k->cout_; ++co) {
      for (int64_t tap = 0; tap < kh * kw; ++tap) {
        k->w_packed_[ci * k->np_ + tap * k->cout_ + co] = wd[(ci * k->cout_ + co) * kh * kw + tap];
      }
    }
  }
  for (int64_t tap = 0; bias && tap < kh * kw; ++tap) {
    std::copy(bias->data<float>(), bias->data<float>() + k->cout_, k->bias_.begin() + tap * k->cout_);
  }
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
