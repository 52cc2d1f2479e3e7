// Own MaxPool for dense NHWC f32, u8 and i8 with two spatial dims (tried before oneDNN's).
// In NHWC the C channels of one pixel are contiguous, so an output pixel is the elementwise
// max of the rows of its valid window taps (f32: vec::Table::window_max; 1-byte: WindowMax8);
// pads never win, as in ONNX. oneDNN 2.6's NHWC max pools ran at about half the rate
// (resnet18's 112x112x64 stem pool, squeezenet1_1's int8 one; figures in docs/cpu_runtime.md).
//
// Own GlobalAveragePool for dense NHWC f32 with AVX-512: with several threads and fewer
// images than threads, each thread sums a contiguous share of the pixels (its partial sums
// in scratch), then each adds the partial sums of a share of the channels. The pixel split
// is the one the element-wise kernels around it use (RunUnary, the broadcast Mul): a
// squeeze-excitation block's pool then reads what its own core wrote, and the Mul after it
// writes lines no other core holds. oneDNN's pool splits by channels, so at 2 threads each
// core read half the tensor from the other's L2 and efficientnet_b0's 17 pools and 16 SE
// Muls took 0.36 and 0.71 ms against 0.20 and 0.33 at 1 thread.
#include <omp.h>

#include <algorithm>

#include "ir/conv_geometry.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/nhwc.h"

namespace edgec::cpu {

namespace {

constexpr int kMaxTaps = 64;

// y[i] = max over t < taps of x[t][i] for 1-byte elements (signed for i8), taps >= 1.
template <bool kSigned>
void WindowMax8Scalar(const uint8_t* const* x, int taps, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (kSigned) {
      int8_t best = static_cast<int8_t>(x[0][i]);
      for (int t = 1; t < taps; ++t) best = std::max(best, static_cast<int8_t>(x[t][i]));
      y[i] = static_cast<uint8_t>(best);
    } else {
      uint8_t best = x[0][i];
      for (int t = 1; t < taps; ++t) best = std::max(best, x[t][i]);
      y[i] = best;
    }
  }
}

void WindowMax8(bool is_signed, const uint8_t* const* x, int taps, uint8_t* y, int64_t n) {
  if (OwnAvx512(Avx512Ext::kBw)) {
    vec::WindowMax8Avx512(is_signed, x, taps, y, n);
  } else if (is_signed) {
    WindowMax8Scalar<true>(x, taps, y, n);
  } else {
    WindowMax8Scalar<false>(x, taps, y, n);
  }
}

class MaxPoolNhwcKernel final : public Kernel {
 public:
  MaxPoolNhwcKernel(DType dtype, const Dims& x, const Dims& y, const WindowGeometry& g, int threads)
      : dtype_(dtype), n_(x[0]), c_(x[1]), ih_(x[2]), iw_(x[3]), oh_(y[2]), ow_(y[3]), g_(g), threads_(threads) {
    // The valid taps of every output row and column, once (two 64-bit divisions each).
    for (int64_t r = 0; r < oh_; ++r)
      rows_.push_back(StridedValidRange(g.kernel[0], g.dilations[0], r * g.strides[0] - g.pad_begin[0], ih_));
    for (int64_t c = 0; c < ow_; ++c)
      cols_.push_back(StridedValidRange(g.kernel[1], g.dilations[1], c * g.strides[1] - g.pad_begin[1], iw_));
  }

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const std::byte*>(in[0]);
    auto* y = static_cast<std::byte*>(out[0]);
    const vec::Table& t = vec::Kernels();
    const int64_t es = dtype_ == DType::kF32 ? 4 : 1;
    const int64_t sh = g_.strides[0], sw = g_.strides[1], dh = g_.dilations[0], dw = g_.dilations[1];
    const int64_t ph = g_.pad_begin[0], pw = g_.pad_begin[1];
    ParallelFor(threads_, n_ * oh_, std::max<int64_t>(1, 8192 / std::max<int64_t>(ow_ * c_ * es / 4, 1)),
                [&](int64_t begin, int64_t end) {
                  const std::byte* src[kMaxTaps];
                  for (int64_t item = begin; item < end; ++item) {
                    const int64_t b = item / oh_, r = item % oh_;
                    const IndexRange rows = rows_[r];
                    std::byte* row = y + (b * oh_ + r) * ow_ * c_ * es;
                    for (int64_t col = 0; col < ow_; ++col) {
                      const IndexRange cols = cols_[col];
                      int taps = 0;
                      for (int64_t i = rows.first; i < rows.last; ++i) {
                        const std::byte* line = x + ((b * ih_ + r * sh - ph + i * dh) * iw_ + col * sw - pw) * c_ * es;
                        for (int64_t j = cols.first; j < cols.last; ++j) src[taps++] = line + j * dw * c_ * es;
                      }
                      std::byte* dst = row + col * c_ * es;
                      if (dtype_ == DType::kF32) {
                        t.window_max(reinterpret_cast<const float* const*>(src), taps, reinterpret_cast<float*>(dst), c_);
                      } else {
                        WindowMax8(dtype_ == DType::kI8, reinterpret_cast<const uint8_t* const*>(src), taps,
                                   reinterpret_cast<uint8_t*>(dst), c_);
                      }
                    }
                  }
                });
    return Status::Ok();
  }
  std::string Describe() const override {
    return fmt::format("own MaxPool nhwc {} [{}]", DTypeName(dtype_), vec::Kernels().isa);
  }

 private:
  DType dtype_;
  int64_t n_, c_, ih_, iw_, oh_, ow_;
  WindowGeometry g_;
  int threads_;
  std::vector<IndexRange> rows_, cols_;
};

class GlobalAveragePoolNhwcKernel final : public Kernel {
 public:
  GlobalAveragePoolNhwcKernel(int64_t images, int64_t pixels, int64_t channels, int threads)
      : n_(images), p_(pixels), c_(channels), threads_(threads) {
    // Split the pixels when there are fewer images than threads and enough pixels that a
    // share is worth a parallel region (as ParallelFor's grain for the elements around it).
    split_ = threads_ > 1 && n_ < threads_ && p_ * c_ >= 2 * kGrainElements;
  }

  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    if (!split_) {
      ParallelFor(threads_, n_, 1, [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
          float* s = y + n * c_;
          std::fill(s, s + c_, 0.0f);
          vec::SumPixelsAvx512(x + n * p_ * c_, p_, c_, s);
          for (int64_t c = 0; c < c_; ++c) s[c] /= static_cast<float>(p_);
        }
      });
      return Status::Ok();
    }
    auto* partial = static_cast<float*>(scratch);  // [threads][images][channels]
#pragma omp parallel num_threads(threads_)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t p0 = p_ * t / nt, p1 = p_ * (t + 1) / nt;
      for (int64_t n = 0; n < n_; ++n) {
        float* s = partial + (t * n_ + n) * c_;
        std::fill(s, s + c_, 0.0f);
        vec::SumPixelsAvx512(x + (n * p_ + p0) * c_, p1 - p0, c_, s);
      }
#pragma omp barrier
      const int64_t items = n_ * c_, i0 = items * t / nt, i1 = items * (t + 1) / nt;
      for (int64_t i = i0; i < i1; ++i) {
        float s = 0;
        for (int64_t u = 0; u < nt; ++u) s += partial[u * items + i];
        y[i] = s / static_cast<float>(p_);
      }
    }
    return Status::Ok();
  }
  size_t scratch_bytes() const override { return split_ ? static_cast<size_t>(threads_ * n_ * c_) * sizeof(float) : 0; }
  std::string Describe() const override {
    return fmt::format("own GlobalAveragePool nhwc f32 [avx512]{}",
                       split_ ? fmt::format(", pixels split between {} threads", threads_) : "");
  }

 private:
  static constexpr int64_t kGrainElements = 16384;
  int64_t n_, p_, c_;
  int threads_;
  bool split_ = false;
};

}  // namespace

KernelOr CreateGlobalAveragePoolNhwcKernel(const KernelRequest& req) {
  if (req.op != OpKind::kGlobalAveragePool) return Refuse(req, "not a GlobalAveragePool");
  if (req.inputs.empty() || req.outputs.empty()) return Refuse(req, "no input or output");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (x.dtype != DType::kF32 || y.dtype != DType::kF32) return Refuse(req, "not f32");
  if (x.dims.size() != 4 || x.layout != Layout::kNHWC) return Refuse(req, "not a 4-D NHWC tensor");
  if (!IsDense(x) || !IsDense(y)) return Refuse(req, "strided buffers");
  if (!OwnAvx512(Avx512Ext::kBw)) return Refuse(req, "the own kernels' ISA is not AVX-512");
  return std::unique_ptr<Kernel>(
      new GlobalAveragePoolNhwcKernel(x.dims[0], x.dims[2] * x.dims[3], x.dims[1], std::max(1, req.threads)));
}

KernelOr CreateMaxPoolNhwcKernel(const KernelRequest& req) {
  if (req.op != OpKind::kMaxPool) return Refuse(req, "not a MaxPool");
  if (req.inputs.empty() || req.outputs.empty()) return Refuse(req, "no input or output");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if ((x.dtype != DType::kF32 && x.dtype != DType::kU8 && x.dtype != DType::kI8) || y.dtype != x.dtype) {
    return Refuse(req, "not f32, u8 or i8 in and out alike");
  }
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
  return std::unique_ptr<Kernel>(new MaxPoolNhwcKernel(x.dtype, x.dims, y.dims, *g, std::max(1, req.threads)));
}

}  // namespace edgec::cpu
