// Reference kernel for the resize family (see ops.def).
//
// One separable n-dimensional sampler serves every mode: the taps of each resized axis come
// from ir/resize_geometry.h, and an output element is the sum over all combinations of one
// tap per axis of the product of the weights times the input element. Axes whose scale is 1
// get one tap of weight 1, so a 2-D resize of an NCHW tensor costs 2 (linear) or 4 (cubic)
// taps per output element and axis. tf_crop_and_resize returns extrapolation_value when x
// falls outside [0, in - 1] on any axis.
//
// 8-bit tensors resized over H and W only, nearest or linear, take the integer arithmetic of
// quant/int_resize.h instead (fixed-point weights), which the NPU's VEC resize runs bit for
// bit.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ir/resize_geometry.h"
#include "kernels/ref/kernel.h"
#include "quant/int_resize.h"

namespace edgec::ref {

namespace {

// Sum over the taps of axes [axis, rank) for the output position `out_index`.
double Sample(const std::vector<ResizeAxis>& axes, const std::vector<int64_t>& in_strides,
              const std::vector<double>& in, const std::vector<int64_t>& out_index, size_t axis,
              int64_t offset) {
  if (axis == axes.size()) return in[offset];
  const ResizeAxis& s = axes[axis];
  const int64_t o = out_index[axis];
  double sum = 0;
  for (size_t t = s.first[o]; t < s.first[o + 1]; ++t) {
    sum += s.taps[t].weight *
           Sample(axes, in_strides, in, out_index, axis + 1, offset + s.taps[t].index * in_strides[axis]);
  }
  return sum;
}

// Integer outputs round to nearest and saturate; floating ones convert.
void StoreSample(Tensor& out, int64_t i, double v) {
  if (IsFloat(out.dtype())) {
    StoreFromDouble(out.dtype(), out.raw(), i, v);
    return;
  }
  EDGEC_DISPATCH_NUMERIC(out.dtype(), {
    double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    double hi = static_cast<double>(std::numeric_limits<T>::max());
    double r = std::nearbyint(v);
    out.data<T>()[i] = r <= lo ? std::numeric_limits<T>::lowest()
                       : r >= hi ? std::numeric_limits<T>::max()
                                 : static_cast<T>(r);
  }, break)
}

// The integer form (quant/int_resize.h) of an 8-bit NCHW tensor.
template <typename T>
void IntResize8(const Tensor& in, const quant::IntResizePlan& plan, Tensor& out) {
  {
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const int64_t planes = in.dim(0) * in.dim(1), ih = in.dim(2), iw = in.dim(3), oh = out.dim(2), ow = out.dim(3);
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T* xp = x + pl * ih * iw;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const T* r0 = xp + plan.h.lo[oy] * iw;
        const T* r1 = xp + plan.h.hi[oy] * iw;
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int32_t lo = plan.w.lo[ox], hi = plan.w.hi[ox];
          y[(pl * oh + oy) * ow + ox] = static_cast<T>(
              quant::IntResizeValue(r0[lo], r0[hi], r1[lo], r1[hi], plan.h.w[oy], plan.w.w[ox]));
        }
      }
    }
  }
}

}  // namespace

Status Resize(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  if (out.numel() == 0) return Status::Ok();
  const int rank = in.rank();
  const ResizeRules p = ReadResizeRules(ctx.attrs);

  const Tensor* scales = ctx.input(2);
  std::vector<double> scale(rank);
  if (scales && scales->numel() > 0) {
    scale = scales->ToDoubleVector();
  } else {
    for (int k = 0; k < rank; ++k) scale[k] = static_cast<double>(out.dim(k)) / in.dim(k);
  }
  std::vector<double> roi(2 * rank);
  for (int k = 0; k < rank; ++k) roi[rank + k] = 1.0;
  if (ctx.input(1) && ctx.input(1)->numel() == 2 * rank) roi = ctx.input(1)->ToDoubleVector();

  if (in.dtype() == DType::kU8 || in.dtype() == DType::kI8) {
    const std::vector<double> given_scales = scales && scales->numel() > 0 ? scale : std::vector<double>{};
    const std::vector<double> given_roi = ctx.input(1) && ctx.input(1)->numel() == 2 * rank ? roi : std::vector<double>{};
    if (auto plan = quant::PlanIntResize(p, in.dims(), out.dims(), given_scales, given_roi); plan.ok()) {
      if (in.dtype() == DType::kU8) IntResize8<uint8_t>(in, *plan, out);
      else IntResize8<int8_t>(in, *plan, out);
      return Status::Ok();
    }
  }

  std::vector<ResizeAxis> axes;
  bool any_outside_possible = false;
  for (int k = 0; k < rank; ++k) {
    axes.push_back(BuildResizeAxis(p, in.dim(k), out.dim(k), scale[k], roi[k], roi[rank + k]));
    for (bool b : axes.back().outside) any_outside_possible |= b;
  }

  const std::vector<double> values = in.ToDoubleVector();
  const std::vector<int64_t> in_strides = ContiguousStrides(in.dims());
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    bool outside = false;
    if (any_outside_possible) {
      for (int k = 0; k < rank; ++k) outside |= axes[k].outside[index[k]];
    }
    StoreSample(out, i, outside ? p.extrapolation_value : Sample(axes, in_strides, values, index, 0, 0));
    for (int k = rank - 1; k >= 0 && ++index[k] == out.dim(k); --k) index[k] = 0;
  }
  return Status::Ok();
}

// GridSample. A grid coordinate g in [-1, 1] maps to the pixel coordinate ((g + 1)·size − 1)/2
// ((g + 1)/2·(size − 1) with align_corners). Bilinear and nearest (ties to even) first move
// the coordinate by the padding mode (border: clamped to [0, size − 1]; reflection: reflected
// at the borders — pixel centres with align_corners, the image edges without — then clamped);
// bicubic (A = −0.75, 4×4 taps) moves each tap's index that way instead. Taps outside the
// image read 0 (the only case left for "zeros").
namespace {

struct GridAxis {
  int64_t size;
  bool align_corners;
  int pad;  // 0 zeros, 1 border, 2 reflection

  double Unnormalize(double g) const {
    return align_corners ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
  }
  double Reflect(double v) const {
    const double lo = align_corners ? 0.0 : -0.5, hi = align_corners ? static_cast<double>(size - 1) : size - 0.5;
    const double span = hi - lo;
    if (span <= 0) return 0;
    const double d = std::fabs(v - lo);
    const double flips = std::floor(d / span), extra = std::fmod(d, span);
    return std::fmod(flips, 2.0) == 0 ? lo + extra : hi - extra;
  }
  double Pad(double v) const {
    if (pad == 1) return std::clamp(v, 0.0, static_cast<double>(size - 1));
    if (pad == 2) return std::clamp(Reflect(v), 0.0, static_cast<double>(size - 1));
    return v;
  }
};

double CubicWeight(double t) {  // |t| <= 2
  constexpr double a = -0.75;
  t = std::fabs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
}

}  // namespace

Status GridSample(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<double> grid = ctx.inputs[1]->ToDoubleVector();
  Tensor& y = ctx.outputs[0];
  const int64_t batch = xt.dim(0), channels = xt.dim(1), height = xt.dim(2), width = xt.dim(3);
  const int64_t oh = y.dim(2), ow = y.dim(3);
  const std::string mode = ctx.attrs.GetString("mode", "bilinear");
  const std::string pad_name = ctx.attrs.GetString("padding_mode", "zeros");
  const int pad = pad_name == "border" ? 1 : pad_name == "reflection" ? 2 : 0;
  const bool align = ctx.attrs.GetInt("align_corners", 0) != 0;
  const GridAxis ax{width, align, pad}, ay{height, align, pad};
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = x.data() + (n * channels + c) * height * width;
      auto at = [&](int64_t yy, int64_t xx) {
        return yy < 0 || yy >= height || xx < 0 || xx >= width ? 0.0 : plane[yy * width + xx];
      };
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          const double* g = grid.data() + ((n * oh + i) * ow + j) * 2;
          double sx = ax.Unnormalize(g[0]), sy = ay.Unnormalize(g[1]);
          double v = 0;
          if (mode == "bicubic") {
            const double fx = std::floor(sx), fy = std::floor(sy);
            for (int p = 0; p < 4; ++p) {
              for (int q = 0; q < 4; ++q) {
                const double ty = fy - 1 + p, tx = fx - 1 + q;
                const double w = CubicWeight(sy - ty) * CubicWeight(sx - tx);
                const auto py = static_cast<int64_t>(pad ? ay.Pad(ty) : ty);
                const auto px = static_cast<int64_t>(pad ? ax.Pad(tx) : tx);
                v += w * at(py, px);
              }
            }
          } else {
            sx = ax.Pad(sx);
            sy = ay.Pad(sy);
            if (mode == "nearest") {
              v = at(static_cast<int64_t>(std::nearbyint(sy)), static_cast<int64_t>(std::nearbyint(sx)));
            } else {
              const double fx = std::floor(sx), fy = std::floor(sy), lx = sx - fx, ly = sy - fy;
              const auto x0 = static_cast<int64_t>(fx), y0 = static_cast<int64_t>(fy);
              v = (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x0 + 1)) +
                  ly * ((1 - lx) * at(y0 + 1, x0) + lx * at(y0 + 1, x0 + 1));
            }
          }
          StoreFromDouble(y.dtype(), y.raw(), ((n * channels + c) * oh + i) * ow + j, v);
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace edgec::ref
