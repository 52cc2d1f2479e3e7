// The own image convolution: a 2-D f32 Conv/FusedConv whose source is a planar (row-major)
// image of at most 4 channels and whose output is dense NHWC with 16, 32, 48 or 64 channels
// (a network's stem). It reads the planes where they lie and writes NHWC rows directly, so
// neither the source nor the output goes through a reorder: oneDNN 2.6 has no direct kernel
// from an nchw source to an nhwc destination (its first-layer kernel writes its blocked
// format, reordered out; brgconv needs the source reordered in). Weights are packed once as
// [c][ky][kx][oc]; each output row accumulates the taps of the input rows in range (bias
// first), then the activation runs over the row while it is in cache. Threads split the
// output rows. Taken whenever it fits (PreferImageConv; KernelTuning::image_conv = kFirst
// keeps oneDNN's): not by timing, because its sums round differently from oneDNN's and two
// sessions of one model must give the same bits (ApiSession.FromBytesRunsAsFromFile).
// tests/kernels/cpu/image_conv_test.cc: against the reference conv over strides, pads,
// kernel sizes, channel counts and activations.
#include "kernels/cpu/context.h"
#include "kernels/cpu/own_conv.h"
#include "kernels/cpu/vec/image_conv.h"
#include "support/status.h"

namespace edgec::cpu {

namespace {

class ImageConvKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    UseThreads(threads_);
    ParallelFor(threads_, n_ * oh_, 1, [&](int64_t begin, int64_t end) {
      const float* rows[4 * kMaxKernelRows];
      const float* weights[4 * kMaxKernelRows];
      vec::ImageConvRow r{rows, weights, 0, static_cast<int>(kw_), iw_, ow_, oc_, sw_, pw_, epi_.bias_or_null()};
      for (int64_t row = begin; row < end; ++row) {
        const int64_t n = row / oh_, oy = row % oh_;
        r.count = 0;
        for (int64_t c = 0; c < c_; ++c) {
          for (int64_t ky = 0; ky < kh_; ++ky) {
            const int64_t iy = oy * sh_ - ph_ + ky;
            if (iy < 0 || iy >= ih_) continue;
            rows[r.count] = x + ((n * c_ + c) * ih_ + iy) * iw_;
            weights[r.count] = packed_.data() + (c * kh_ + ky) * kw_ * oc_;
            ++r.count;
          }
        }
        float* yr = y + row * ow_ * oc_;
        vec::ImageConvRowAvx512(r, yr);
        epi_.Activate(yr, ow_ * oc_);
      }
    });
    return Status::Ok();
  }
  std::string Describe() const override {
    return "own image conv nchw -> nhwc avx512 f32" + epi_.Words() + note_;
  }

  static constexpr int64_t kMaxKernelRows = 16;
  int64_t n_ = 0, c_ = 0, ih_ = 0, iw_ = 0, oc_ = 0, oh_ = 0, ow_ = 0, kh_ = 0, kw_ = 0, sh_ = 1, sw_ = 1, ph_ = 0, pw_ = 0;
  std::vector<float> packed_;
  OwnConvEpilogue epi_;
  int threads_ = 1;
  std::string note_;
};

}  // namespace

KernelOr CreateImageConvKernel(const KernelRequest& req) {
  if (VectorIsa() != "avx512") return Refuse(req, "the image conv needs AVX-512");
  ASSIGN_OR_RETURN(OwnConv conv, ReadOwnConv(req));
  const TensorDesc& x = *conv.x;
  const TensorDesc& y = *conv.y;
  if (x.layout != Layout::kRowMajor || !IsDense(x) || y.layout != Layout::kNHWC || !IsDense(y)) {
    return Refuse(req, "needs a dense row-major source and a dense NHWC output");
  }
  if (x.dims[1] > 4) return Refuse(req, "needs at most 4 input channels");
  if (y.dims[1] % 16 != 0 || y.dims[1] > 64) return Refuse(req, "needs 16, 32, 48 or 64 output channels");
  if (conv.geom.kernel[0] > ImageConvKernel::kMaxKernelRows) return Refuse(req, "a kernel of more than 16 rows");

  auto k = std::make_unique<ImageConvKernel>();
  k->n_ = x.dims[0], k->c_ = x.dims[1], k->ih_ = x.dims[2], k->iw_ = x.dims[3];
  k->oc_ = y.dims[1], k->oh_ = y.dims[2], k->ow_ = y.dims[3];
  k->kh_ = conv.geom.kernel[0], k->kw_ = conv.geom.kernel[1];
  k->sh_ = conv.geom.strides[0], k->sw_ = conv.geom.strides[1];
  k->ph_ = conv.geom.pad_begin[0], k->pw_ = conv.geom.pad_begin[1];
  k->threads_ = std::max(1, req.threads);
  // [oc][c][ky][kx] -> [c][ky][kx][oc]
  const float* src = conv.w->data<float>();
  const int64_t taps = k->c_ * k->kh_ * k->kw_;
  k->packed_.resize(taps * k->oc_);
  for (int64_t o = 0; o < k->oc_; ++o) {
    for (int64_t t = 0; t < taps; ++t) k->packed_[t * k->oc_ + o] = src[o * taps + t];
  }
  k->epi_ = std::move(conv.epilogue);
  return std::unique_ptr<Kernel>(std::move(k));
}

KernelOr PreferImageConv(const KernelRequest& req, std::unique_ptr<Kernel> onednn) {
  if (req.tuning.image_conv == MeasuredChoice::kFirst) return onednn;
  auto own = CreateImageConvKernel(req);
  if (!own.ok()) return onednn;
  static_cast<ImageConvKernel*>(own->get())->note_ = fmt::format("; in place of [{}]", onednn->Describe());
  return own;
}

}  // namespace edgec::cpu
