// Own MaxPool for dense NHWC f32 with two spatial dims (tried before oneDNN's). In NHWC the
// C channels of one pixel are contiguous, so an output pixel is the elementwise max of the
// rows of its valid window taps (vec::Table::window_max); pads never win, as in ONNX.
// oneDNN 2.6's NHWC max pool ran at about half the read bandwidth this reaches (resnet18's
// 112x112x64 stem pool; figures in docs/cpu_runtime.md).
#include <algorithm>

#include "ir/conv_geometry.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

constexpr int kMaxTaps = 64;

class MaxPoolNhwcKernel final : public Kernel {
 public:
  MaxPoolNhwcKernel(const Dims& x, const Dims& y, const WindowGeometry& g, int threads)
      : n_(x[0]), c_(x[1]), ih_(x[2]), iw_(x[3]), oh_(y[2]), ow_(y[3]), g_(g), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const float* x = static_cast<const float*>(in[0]);
    float* y = static_cast<float*>(out[0]);
    const vec::Table& t = vec::Kernels();
    const int64_t sh = g_.strides[0], sw = g_.strides[1], dh = g_.dilations[0], dw = g_.dilations[1];
    const int64_t kh = g_.kernel[0], kw = g_.kernel[1], ph = g_.pad_begin[0], pw = g_.pad_begin[1];
    ParallelFor(threads_, n_ * oh_, std::max<int64_t>(1, 8192 / std::max<int64_t>(ow_ * c_, 1)),
                [&](int64_t begin, int64_t end) {
                  const float* src[kMaxTaps];
                  for (int64_t item = begin; item < end; ++item) {
                    const int64_t b = item / oh_, r = item % oh_;
                    const IndexRange rows = StridedValidRange(kh, dh, r * sh - ph, ih_);
                    float* row = y + (b * oh_ + r) * ow_ * c_;
                    for (int64_t col = 0; col < ow_; ++col) {
                      const IndexRange cols = StridedValidRange(kw, dw, col * sw - pw, iw_);
                      int taps = 0;
                      for (int64_t i = rows.first; i < rows.last; ++i) {
                        const float* line = x + ((b * ih_ + r * sh - ph + i * dh) * iw_ + col * sw - pw) * c_;
                        for (int64_t j = cols.first; j < cols.last; ++j) src[taps++] = line + j * dw * c_;
                      }
                      t.window_max(src, taps, row + col * c_, c_);
                    }
                  }
                });
    return Status::Ok();
  }
  std::string Describe() const override { return fmt::format("own MaxPool nhwc f32 [{}]", vec::Kernels().isa); }

 private:
  int64_t n_, c_, ih_, iw_, oh_, ow_;
  WindowGeometry g_;
  int threads_;
};

}  // namespace

KernelOr CreateMaxPoolNhwcKernel(const KernelRequest& req) {
  if (req.op != OpKind::kMaxPool) return Refuse(req, "not a MaxPool");
  if (req.inputs.empty() || req.outputs.empty()) return Refuse(req, "no input or output");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (x.dtype != DType::kF32 || y.dtype != DType::kF32) return Refuse(req, "not f32");
  if (x.dims.size() != 4 || x.layout != Layout::kNHWC || y.layout != Layout::kNHWC) {
    return Refuse(req, "not a 4-D NHWC tensor");
  }
  if (!IsDense(x) || !IsDense(y)) return Refuse(req, "strided buffers");
  if (req.outputs.size() > 1 && Present(req.outputs[1])) return Refuse(req, "the Indices output is requested");
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(*req.attrs, 2, options);
  if (!attrs.ok()) return attrs.status().WithContext(req.label);
  auto g = ForwardWindowGeometry(*attrs, Dims(x.dims.begin() + 2, x.dims.end()));
  if (!g.ok()) return g.status().WithContext(req.label);
  if (g->kernel[0] * g->kernel[1] > kMaxTaps) return Refuse(req, "window of more than {} taps", kMaxTaps);
  for (int i = 0; i < 2; ++i) {
    if (g->out[i] != y.dims[2 + i]) return Refuse(req, "output dims disagree with the window geometry");
    // Every window must hold at least one input position (else the reference's lowest()).
    for (int64_t o = 0; o < g->out[i]; ++o) {
      const IndexRange r = StridedValidRange(g->kernel[i], g->dilations[i], o * g->strides[i] - g->pad_begin[i], g->in[i]);
      if (r.first >= r.last) return Refuse(req, "window {} of spatial dim {} lies entirely in the padding", o, i);
    }
  }
  return std::unique_ptr<Kernel>(new MaxPoolNhwcKernel(x.dims, y.dims, *g, std::max(1, req.threads)));
}

}  // namespace edgec::cpu
