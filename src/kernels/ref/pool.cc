// Reference kernels for the pool family (see ops.def).
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ir/conv_geometry.h"
#include "kernels/ref/conv_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// A window pool with sizes resolved; spatial dims padded to 3 (depth, height, width).
struct PoolProblem {
  int64_t planes = 1;  // N * C
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1}, pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

StatusOr<PoolProblem> MakePoolProblem(const KernelContext& ctx, const Dims& x) {
  const int spatial = static_cast<int>(x.size()) - 2;
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(ctx.attrs, spatial, options);
  if (!attrs.ok()) return attrs.status().WithContext(ctx.label);
  auto g = ForwardWindowGeometry(*attrs, Dims(x.begin() + 2, x.end()));
  if (!g.ok()) return g.status().WithContext(ctx.label);
  PoolProblem p;
  p.planes = x[0] * x[1];
  const int lead = 3 - spatial;
  for (int i = 0; i < spatial; ++i) {
    p.in[lead + i] = g->in[i];
    p.out[lead + i] = g->out[i];
    p.kernel[lead + i] = g->kernel[i];
    p.stride[lead + i] = g->strides[i];
    p.dilation[lead + i] = g->dilations[i];
    p.pad_begin[lead + i] = g->pad_begin[i];
    p.pad_end[lead + i] = g->pad_end[i];
  }
  return p;
}

// Visits every output position with its window origin: fn(out_index, start[3]).
template <typename Fn>
void ForEachWindow(const PoolProblem& p, Fn fn) {
  int64_t o = 0;
  for (int64_t od = 0; od < p.out[0]; ++od) {
    for (int64_t oh = 0; oh < p.out[1]; ++oh) {
      for (int64_t ow = 0; ow < p.out[2]; ++ow) {
        const std::array<int64_t, 3> start = {od * p.stride[0] - p.pad_begin[0],
                                              oh * p.stride[1] - p.pad_begin[1],
                                              ow * p.stride[2] - p.pad_begin[2]};
        fn(o++, start);
      }
    }
  }
}

// MaxPool: padding never wins. `indices` (optional) gets the flat index into X of the
// first maximum, row-major or (storage_order 1) column-major over the spatial dims.
template <typename T>
void RunMaxPool(const PoolProblem& p, const T* x, T* y, int64_t* indices, bool column_major) {
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  for (int64_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    ForEachWindow(p, [&](int64_t o, const std::array<int64_t, 3>& s) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_at = -1;
      for (int64_t kd = 0; kd < p.kernel[0]; ++kd) {
        const int64_t id = s[0] + kd * p.dilation[0];
        if (id < 0 || id >= p.in[0]) continue;
        for (int64_t kh = 0; kh < p.kernel[1]; ++kh) {
          const int64_t ih = s[1] + kh * p.dilation[1];
          if (ih < 0 || ih >= p.in[1]) continue;
          for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
            const int64_t iw = s[2] + kw * p.dilation[2];
            if (iw < 0 || iw >= p.in[2]) continue;
            const int64_t at = (id * p.in[1] + ih) * p.in[2] + iw;
            if (best_at < 0 || xp[at] > best) {
              best = xp[at];
              best_at = column_major ? id + ih * p.in[0] + iw * p.in[0] * p.in[1] : at;
            }
          }
        }
      }
      y[c * out_plane + o] = best;
      if (indices) indices[c * out_plane + o] = best_at < 0 ? -1 : c * in_plane + best_at;
    });
  }
}

// AveragePool: the divisor counts the window positions inside X, or with
// count_include_pad also those in the pads (but never those past the end pads, which
// ceil_mode can reach).
template <typename T>
void RunAveragePool(const PoolProblem& p, const T* x, T* y, bool count_include_pad) {
  const int64_t in_plane = p.in_plane(), out_plane = p.out_plane();
  for (int64_t c = 0; c < p.planes; ++c) {
    const T* xp = x + c * in_plane;
    ForEachWindow(p, [&](int64_t o, const std::array<int64_t, 3>& s) {
      double sum = 0;
      int64_t inside = 0, padded = 0;
      for (int64_t kd = 0; kd < p.kernel[0]; ++kd) {
        const int64_t id = s[0] + kd * p.dilation[0];
        if (id >= p.in[0] + p.pad_end[0]) continue;
        const bool d_in = id >= 0 && id < p.in[0];
        for (int64_t kh = 0; kh < p.kernel[1]; ++kh) {
          const int64_t ih = s[1] + kh * p.dilation[1];
          if (ih >= p.in[1] + p.pad_end[1]) continue;
          const bool h_in = ih >= 0 && ih < p.in[1];
          for (int64_t kw = 0; kw < p.kernel[2]; ++kw) {
            const int64_t iw = s[2] + kw * p.dilation[2];
            if (iw >= p.in[2] + p.pad_end[2]) continue;
            ++padded;
            if (!d_in || !h_in || iw < 0 || iw >= p.in[2]) continue;
            ++inside;
            sum += static_cast<double>(xp[(id * p.in[1] + ih) * p.in[2] + iw]);
          }
        }
      }
      const int64_t count = count_include_pad ? padded : inside;
      y[c * out_plane + o] = count > 0 ? static_cast<T>(sum / static_cast<double>(count)) : T(0);
    });
  }
}

template <typename T>
void RunGlobalPool(const Tensor& x, Tensor& y, bool is_max) {
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t plane = planes ? x.numel() / planes : 0;
  const T* xp = x.data<T>();
  T* yp = y.data<T>();
  for (int64_t c = 0; c < planes; ++c) {
    const T* v = xp + c * plane;
    if (is_max) {
      T best = std::numeric_limits<T>::lowest();
      for (int64_t i = 0; i < plane; ++i) best = v[i] > best ? v[i] : best;
      yp[c] = best;
    } else {
      double sum = 0;
      for (int64_t i = 0; i < plane; ++i) sum += static_cast<double>(v[i]);
      yp[c] = static_cast<T>(plane ? sum / static_cast<double>(plane) : 0.0);
    }
  }
}

// Runs `body(tag, x, y)` with the element type; f16/bf16 run in f32 and are converted back.
template <typename Body>
Status DispatchPoolType(KernelContext& ctx, Body body) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  switch (x.dtype()) {
    case DType::kF32: body(float{}, x, y); return Status::Ok();
    case DType::kF64: body(double{}, x, y); return Status::Ok();
    case DType::kI8: body(int8_t{}, x, y); return Status::Ok();
    case DType::kU8: body(uint8_t{}, x, y); return Status::Ok();
    case DType::kF16:
    case DType::kBF16: {
      Tensor y32(DType::kF32, y.dims());
      body(float{}, x.CastTo(DType::kF32), y32);
      StoreConverted(y32, y);
      return Status::Ok();
    }
    default: return Unimplemented("{}: dtype {} is not supported", ctx.label, DTypeName(x.dtype()));
  }
}

}  // namespace

Status MaxPool(KernelContext& ctx) {
  ASSIGN_OR_RETURN(PoolProblem p, MakePoolProblem(ctx, ctx.inputs[0]->dims()));
  const bool column_major = ctx.attrs.GetInt("storage_order", 0) == 1;
  int64_t* indices = ctx.outputs.size() > 1 ? ctx.outputs[1].data<int64_t>() : nullptr;
  return DispatchPoolType(ctx, [&](auto tag, const Tensor& x, Tensor& y) {
    using T = decltype(tag);
    RunMaxPool<T>(p, x.data<T>(), y.data<T>(), indices, column_major);
  });
}

Status AveragePool(KernelContext& ctx) {
  ASSIGN_OR_RETURN(PoolProblem p, MakePoolProblem(ctx, ctx.inputs[0]->dims()));
  const bool include_pad = ctx.attrs.GetInt("count_include_pad", 0) == 1;
  return DispatchPoolType(ctx, [&](auto tag, const Tensor& x, Tensor& y) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      RunAveragePool<T>(p, x.data<T>(), y.data<T>(), include_pad);
    }
  });
}

Status GlobalAveragePool(KernelContext& ctx) {
  return DispatchPoolType(ctx, [&](auto tag, const Tensor& x, Tensor& y) {
    using T = decltype(tag);
    RunGlobalPool<T>(x, y, /*is_max=*/false);
  });
}

Status GlobalMaxPool(KernelContext& ctx) {
  return DispatchPoolType(ctx, [&](auto tag, const Tensor& x, Tensor& y) {
    using T = decltype(tag);
    RunGlobalPool<T>(x, y, /*is_max=*/true);
  });
}

// MaxUnpool: Y starts at zero; Y[position of I[i]] = X[i]. Indices are flat over the
// default output [N, C, (D - 1) · stride − pads + kernel ...] as MaxPool writes them; with
// output_shape given they keep their coordinates in that default shape (ONNX's test data).
Status MaxUnpool(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t* index = ctx.inputs[1]->data<int64_t>();
  if (ctx.inputs[1]->numel() != x.numel()) {
    return ctx.Error("indices {} do not match X {}", ctx.inputs[1]->TypeString(), x.TypeString());
  }
  Tensor& y = ctx.outputs[0];
  const std::vector<int64_t> kernel = ctx.attrs.GetInts("kernel_shape");
  const size_t spatial = kernel.size();
  const std::vector<int64_t> strides = ctx.attrs.GetInts("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = ctx.attrs.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  Dims def = {x.dim(0), x.dim(1)};
  for (size_t d = 0; d < spatial; ++d) {
    def.push_back((x.dim(static_cast<int>(d) + 2) - 1) * strides[d] - pads[d] - pads[d + spatial] + kernel[d]);
  }
  std::memset(y.raw(), 0, y.nbytes());
  const size_t e = DTypeSize(x.dtype());
  const int64_t total = NumElements(def);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (index[i] < 0 || index[i] >= total) {
      return ctx.Error("index {} at flat position {} is outside the unpooled shape {}", index[i], i, DimsToString(def));
    }
    int64_t rest = index[i], at = 0, step = 1;
    for (size_t d = def.size(); d-- > 0;) {
      const int64_t coord = rest % def[d];
      rest /= def[d];
      if (coord >= y.dim(static_cast<int>(d))) {
        return ctx.Error("index {} lands outside the output {}", index[i], y.TypeString());
      }
      at += coord * step;
      step *= y.dim(static_cast<int>(d));
    }
    std::memcpy(static_cast<std::byte*>(y.raw()) + at * e, static_cast<const std::byte*>(x.raw()) + i * e, e);
  }
  return Status::Ok();
}

}  // namespace edgec::ref
