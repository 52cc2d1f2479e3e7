// The one direct convolution loop nest of the reference kernels, shared by Conv,
// ConvInteger and QLinearConv (quant.cc), plus the transposed form for ConvTranspose.
// Problems of 1, 2 or 3 spatial dims are all run as 3-D (missing leading dims are 1).
//
// Also the f16/bf16 route the conv, matmul, pool, norm and epilogue kernels share: 16-bit
// floats are computed in f32 and cast back.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/conv_geometry.h"
#include "ir/tensor.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

// A convolution with every size resolved, spatial dims padded to 3 (depth, height, width).
// For ConvTranspose, `in` is X's spatial size and `out` Y's, as for Conv.
struct ConvProblem {
  int64_t batch = 1, in_channels = 1, out_channels = 1, group = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};  // pad: begin side

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Builds the problem from X's and W's dims and the node's window attributes. W is
// (M, C/group, k...) for a conv and (C, M/group, k...) for a transposed conv. At most 3
// spatial dims. Errors are prefixed with `label`.
StatusOr<ConvProblem> MakeConvProblem(const std::string& label, const Attributes& attrs,
                                      const Dims& x, const Dims& w, bool transpose);

// y[j] += a * x[j] for j < n. The fixed-size inner block lets the compiler vectorize it
// at -O2; the tail is a plain loop.
template <typename T>
inline void AxpyRow(T* __restrict y, const T* __restrict x, T a, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int u = 0; u < 8; ++u) y[j + u] += a * x[j + u];
  }
  for (; j < n; ++j) y[j] += a * x[j];
}

// y[n, oc, o] += sum over (c, k) of w[oc, c, k] * x[n, g*C/group + c, o*stride + k*dilation - pad],
// with positions outside X skipped (zero padding; for the integer convs the inputs are
// already shifted by their zero points, so skipping equals padding with the zero point).
// T is both element and accumulator type (float, double, int32_t).
template <typename T>
void ConvAccumulate(const ConvProblem& p, const T* __restrict x, const T* __restrict w,
                    T* __restrict y) {
  const auto [kd_n, kh_n, kw_n] = p.kernel;
  const auto [id_n, ih_n, iw_n] = p.in;
  const auto [od_n, oh_n, ow_n] = p.out;
  const auto [sd, sh, sw] = p.stride;
  const auto [dd, dh, dw] = p.dilation;
  const auto [pd, ph, pw] = p.pad;
  // For each kernel index, the output positions whose input position is inside X.
  std::vector<IndexRange> range_d(kd_n), range_h(kh_n), range_w(kw_n);
  for (int64_t k = 0; k < kd_n; ++k) range_d[k] = StridedValidRange(od_n, sd, k * dd - pd, id_n);
  for (int64_t k = 0; k < kh_n; ++k) range_h[k] = StridedValidRange(oh_n, sh, k * dh - ph, ih_n);
  for (int64_t k = 0; k < kw_n; ++k) range_w[k] = StridedValidRange(ow_n, sw, k * dw - pw, iw_n);

  const int64_t cin_g = p.in_channels / p.group, cout_g = p.out_channels / p.group;
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane(), ksize = p.kernel_size();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t g = oc / cout_g;
      T* yp = y + (n * p.out_channels + oc) * out_plane;
      for (int64_t c = 0; c < cin_g; ++c) {
        const T* xp = x + (n * p.in_channels + g * cin_g + c) * in_plane;
        const T* wp = w + (oc * cin_g + c) * ksize;
        for (int64_t kd = 0; kd < kd_n; ++kd) {
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const T wv = wp[(kd * kh_n + kh) * kw_n + kw];
              const IndexRange rw = range_w[kw];
              const int64_t count = rw.last - rw.first;
              if (count <= 0) continue;
              const int64_t iw0 = rw.first * sw + kw * dw - pw;
              for (int64_t od = range_d[kd].first; od < range_d[kd].last; ++od) {
                const int64_t id = od * sd + kd * dd - pd;
                for (int64_t oh = range_h[kh].first; oh < range_h[kh].last; ++oh) {
                  const int64_t ih = oh * sh + kh * dh - ph;
                  T* __restrict yrow = yp + (od * oh_n + oh) * ow_n + rw.first;
                  const T* __restrict xrow = xp + (id * ih_n + ih) * iw_n + iw0;
                  if (sw == 1) {
                    AxpyRow(yrow, xrow, wv, count);
                  } else {
                    for (int64_t j = 0; j < count; ++j) yrow[j] += wv * xrow[j * sw];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

// The transposed convolution (the adjoint of ConvAccumulate): every x[n, c, i] scatters
// w[c, m, k] * x into y[n, g*M/group + m, i*stride + k*dilation - pad] when inside Y.
template <typename T>
void ConvTransposeAccumulate(const ConvProblem& p, const T* __restrict x, const T* __restrict w,
                             T* __restrict y) {
  const auto [kd_n, kh_n, kw_n] = p.kernel;
  const auto [id_n, ih_n, iw_n] = p.in;
  const auto [od_n, oh_n, ow_n] = p.out;
  const auto [sd, sh, sw] = p.stride;
  const auto [dd, dh, dw] = p.dilation;
  const auto [pd, ph, pw] = p.pad;
  // For each kernel index, the input positions that land inside Y.
  std::vector<IndexRange> range_d(kd_n), range_h(kh_n), range_w(kw_n);
  for (int64_t k = 0; k < kd_n; ++k) range_d[k] = StridedValidRange(id_n, sd, k * dd - pd, od_n);
  for (int64_t k = 0; k < kh_n; ++k) range_h[k] = StridedValidRange(ih_n, sh, k * dh - ph, oh_n);
  for (int64_t k = 0; k < kw_n; ++k) range_w[k] = StridedValidRange(iw_n, sw, k * dw - pw, ow_n);

  const int64_t cin_g = p.in_channels / p.group, cout_g = p.out_channels / p.group;
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane(), ksize = p.kernel_size();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t ic = 0; ic < p.in_channels; ++ic) {
      const int64_t g = ic / cin_g;
      const T* xp = x + (n * p.in_channels + ic) * in_plane;
      for (int64_t m = 0; m < cout_g; ++m) {
        T* yp = y + (n * p.out_channels + g * cout_g + m) * out_plane;
        const T* wp = w + (ic * cout_g + m) * ksize;
        for (int64_t kd = 0; kd < kd_n; ++kd) {
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const T wv = wp[(kd * kh_n + kh) * kw_n + kw];
              const IndexRange rw = range_w[kw];
              const int64_t count = rw.last - rw.first;
              if (count <= 0) continue;
              const int64_t ow0 = rw.first * sw + kw * dw - pw;
              for (int64_t id = range_d[kd].first; id < range_d[kd].last; ++id) {
                const int64_t od = id * sd + kd * dd - pd;
                for (int64_t ih = range_h[kh].first; ih < range_h[kh].last; ++ih) {
                  const int64_t oh = ih * sh + kh * dh - ph;
                  const T* __restrict xrow = xp + (id * ih_n + ih) * iw_n + rw.first;
                  T* __restrict yrow = yp + (od * oh_n + oh) * ow_n + ow0;
                  if (sw == 1) {
                    AxpyRow(yrow, xrow, wv, count);
                  } else {
                    for (int64_t j = 0; j < count; ++j) yrow[j * sw] += wv * xrow[j];
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

// y = the convolution (transposed when `transpose`) of x and w, plus bias[oc] on every
// output channel when `bias` is given. Conv, ConvTranspose and FusedConv run this.
template <typename T>
void ConvForward(const ConvProblem& p, bool transpose, const T* x, const T* w, const T* bias,
                 T* y) {
  const int64_t plane = p.out_plane();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      T* yp = y + (n * p.out_channels + oc) * plane;
      std::fill(yp, yp + plane, bias ? bias[oc] : T(0));
    }
  }
  if (transpose) {
    ConvTransposeAccumulate<T>(p, x, w, y);
  } else {
    ConvAccumulate<T>(p, x, w, y);
  }
}

// --- the f16/bf16 route ---

inline bool IsHalfFloat(DType t) { return t == DType::kF16 || t == DType::kBF16; }
// Converts `src` to dst's dtype and writes it into dst's existing buffer (same numel).
void StoreConverted(const Tensor& src, Tensor& dst);

// Calls fn(inputs, outputs) on f32 copies of the inputs that have input 0's dtype and of
// the outputs when input 0 is f16/bf16 (then stores the outputs back), else on ctx's own.
template <typename Fn>
Status WithHalfAsFloat(KernelContext& ctx, Fn fn) {
  const DType dt = ctx.inputs[0]->dtype();
  if (!IsHalfFloat(dt)) return fn(ctx.inputs, ctx.outputs);
  std::vector<Tensor> converted;
  converted.reserve(ctx.inputs.size());
  std::vector<const Tensor*> inputs;
  for (const Tensor* t : ctx.inputs) {
    if (t && t->dtype() == dt) {
      converted.push_back(t->CastTo(DType::kF32));
      inputs.push_back(&converted.back());
    } else {
      inputs.push_back(t);
    }
  }
  std::vector<Tensor> outputs;
  for (const Tensor& y : ctx.outputs) outputs.emplace_back(DType::kF32, y.dims());
  RETURN_IF_ERROR(fn(inputs, outputs));
  for (size_t i = 0; i < outputs.size(); ++i) StoreConverted(outputs[i], ctx.outputs[i]);
  return Status::Ok();
}

}  // namespace edgec::ref
