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

// The direct convolution loop nest, both directions. Each weight tap w[k] pairs a position
// s on the strided side with the position s*stride + k*dilation - pad on the dense side,
// skipping pairs whose dense position falls outside its tensor:
// - conv (kTranspose false): s runs over Y and gathers from X,
//   y[n, oc, s] += w[oc, c, k] * x[n, g*C/group + c, dense];
// - transposed (kTranspose true, the adjoint): s runs over X and scatters into Y,
//   y[n, g*M/group + m, dense] += w[c, m, k] * x[n, c, s].
// Skipping equals zero padding; the integer convs shift their inputs by the zero points
// first. T is both element and accumulator type (float, double, int32_t).
template <bool kTranspose, typename T>
void DirectConvAccumulate(const ConvProblem& p, const T* __restrict x, const T* __restrict w,
                          T* __restrict y) {
  const auto& strided = kTranspose ? p.in : p.out;
  const auto& dense = kTranspose ? p.out : p.in;
  const auto [kd_n, kh_n, kw_n] = p.kernel;
  const auto [sd, sh, sw] = p.stride;
  const auto [dd, dh, dw] = p.dilation;
  const auto [pd, ph, pw] = p.pad;
  // For each kernel index, the strided-side positions whose dense position is inside.
  std::array<std::vector<IndexRange>, 3> range;
  for (int axis = 0; axis < 3; ++axis) {
    range[axis].resize(p.kernel[axis]);
    for (int64_t k = 0; k < p.kernel[axis]; ++k) {
      range[axis][k] = StridedValidRange(strided[axis], p.stride[axis],
                                         k * p.dilation[axis] - p.pad[axis], dense[axis]);
    }
  }
  const int64_t sh_n = strided[1], sw_n = strided[2], dh_n = dense[1], dw_n = dense[2];

  // The weight's leading channel is Y's for a conv and X's for a transposed conv.
  const int64_t cin_g = p.in_channels / p.group, cout_g = p.out_channels / p.group;
  const int64_t lead_n = kTranspose ? p.in_channels : p.out_channels;
  const int64_t lead_g = kTranspose ? cin_g : cout_g, other_g = kTranspose ? cout_g : cin_g;
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane(), ksize = p.kernel_size();
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t lead = 0; lead < lead_n; ++lead) {
      const int64_t g = lead / lead_g;
      for (int64_t other = 0; other < other_g; ++other) {
        const int64_t xc = kTranspose ? lead : g * cin_g + other;
        const int64_t yc = kTranspose ? g * cout_g + other : lead;
        const T* xp = x + (n * p.in_channels + xc) * in_plane;
        T* yp = y + (n * p.out_channels + yc) * out_plane;
        const T* wp = w + (lead * other_g + other) * ksize;
        for (int64_t kd = 0; kd < kd_n; ++kd) {
          for (int64_t kh = 0; kh < kh_n; ++kh) {
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              const T wv = wp[(kd * kh_n + kh) * kw_n + kw];
              const IndexRange rw = range[2][kw];
              const int64_t count = rw.last - rw.first;
              if (count <= 0) continue;
              const int64_t dw0 = rw.first * sw + kw * dw - pw;
              for (int64_t s_d = range[0][kd].first; s_d < range[0][kd].last; ++s_d) {
                const int64_t d_d = s_d * sd + kd * dd - pd;
                for (int64_t s_h = range[1][kh].first; s_h < range[1][kh].last; ++s_h) {
                  const int64_t d_h = s_h * sh + kh * dh - ph;
                  const int64_t s_row = (s_d * sh_n + s_h) * sw_n + rw.first;
                  const int64_t d_row = (d_d * dh_n + d_h) * dw_n + dw0;
                  const T* __restrict xrow = xp + (kTranspose ? s_row : d_row);
                  T* __restrict yrow = yp + (kTranspose ? d_row : s_row);
                  if (sw == 1) {
                    AxpyRow(yrow, xrow, wv, count);
                  } else if (kTranspose) {
                    for (int64_t j = 0; j < count; ++j) yrow[j * sw] += wv * xrow[j];
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
    DirectConvAccumulate<true, T>(p, x, w, y);
  } else {
    DirectConvAccumulate<false, T>(p, x, w, y);
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
