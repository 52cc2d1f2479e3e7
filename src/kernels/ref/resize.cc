// Reference kernel for the resize family (see ops.def).
//
// One separable n-dimensional sampler serves every mode. For each resized axis and each
// output coordinate it computes the original coordinate x (coordinate_transformation_mode)
// and a short list of taps (input index, weight): nearest and linear use the two inputs
// around x, cubic the four. An output element is the sum over all combinations of one
// tap per axis of the product of the weights times the input element. Axes whose scale
// is 1 get one tap of weight 1, so a 2-D resize of an NCHW tensor costs 2 (linear) or
// 4 (cubic) taps per output element and axis.
//
// The rules follow ONNX's reference resize (onnx/backend/test/case/node/resize.py): the
// "left" neighbour of x is the last integer strictly below it, so the fraction is in
// (0, 1]; indices past the border are clamped (edge padding); with exclude_outside the
// weights of outside taps are zeroed and the rest renormalized; tf_crop_and_resize
// returns extrapolation_value when x falls outside [0, in - 1] on any axis.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ir/resize_coordinate.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  std::string coordinate_mode;
  std::string nearest_mode;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
};

ResizeParams ReadParams(const Attributes& a) {
  ResizeParams p;
  std::string mode = a.GetString("mode", "nearest");
  p.mode = mode == "linear" ? Mode::kLinear : mode == "cubic" ? Mode::kCubic : Mode::kNearest;
  p.coordinate_mode = a.GetString("coordinate_transformation_mode", "half_pixel");
  p.nearest_mode = a.GetString("nearest_mode", "round_prefer_floor");
  p.cubic_a = a.GetFloat("cubic_coeff_a", -0.75f);
  p.exclude_outside = a.GetInt("exclude_outside", 0) != 0;
  p.extrapolation_value = a.GetFloat("extrapolation_value", 0.f);
  return p;
}

// Weights of the taps left, left + 1 (nearest, linear) or left - 1 .. left + 2 (cubic),
// where `ratio` = x - left is in (0, 1].
int Coefficients(const ResizeParams& p, double ratio, double* c) {
  switch (p.mode) {
    case Mode::kNearest: {
      const bool right = ResizeNearestTakesRight(p.nearest_mode, ratio);
      c[0] = right ? 0.0 : 1.0;
      c[1] = right ? 1.0 : 0.0;
      return 2;
    }
    case Mode::kLinear:
      c[0] = 1 - ratio;
      c[1] = ratio;
      return 2;
    case Mode::kCubic: {
      // Keys' cubic convolution kernel at distances 1 + r, r, 1 - r, 2 - r.
      const double a = p.cubic_a;
      auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };      // |d| <= 1
      auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
      c[0] = far(1 + ratio);
      c[1] = near(ratio);
      c[2] = near(1 - ratio);
      c[3] = far(2 - ratio);
      return 4;
    }
  }
  return 0;
}

struct Tap {
  int64_t index;
  double weight;
};

// Taps of every output coordinate along one axis: coordinate o uses
// taps[first[o] .. first[o + 1]); outside[o] means "extrapolate" (tf_crop_and_resize).
struct AxisSampler {
  std::vector<size_t> first;
  std::vector<Tap> taps;
  std::vector<bool> outside;
};

AxisSampler BuildAxis(const ResizeParams& p, int64_t in_len, int64_t out_len, double scale,
                      double roi_start, double roi_end) {
  AxisSampler s;
  const bool crop = p.coordinate_mode == "tf_crop_and_resize";
  for (int64_t o = 0; o < out_len; ++o) {
    s.first.push_back(s.taps.size());
    double x = ResizeSourceCoordinate(p.coordinate_mode, o, in_len, scale, roi_start, roi_end);
    bool outside = crop && (x < 0 || x > static_cast<double>(in_len - 1));
    s.outside.push_back(outside);
    if (outside) continue;
    double left = std::ceil(x) - 1;
    double c[4];
    int n = Coefficients(p, x - left, c);
    int64_t first_index = static_cast<int64_t>(left) - (n == 4 ? 1 : 0);
    if (p.exclude_outside) {
      double total = 0;
      for (int i = 0; i < n; ++i) {
        int64_t idx = first_index + i;
        if (idx < 0 || idx >= in_len) c[i] = 0;
        total += c[i];
      }
      for (int i = 0; i < n; ++i) c[i] /= total;
    }
    for (int i = 0; i < n; ++i) {
      if (c[i] == 0) continue;
      int64_t idx = std::clamp<int64_t>(first_index + i, 0, in_len - 1);
      s.taps.push_back({idx, c[i]});
    }
  }
  s.first.push_back(s.taps.size());
  return s;
}

// Sum over the taps of axes [axis, rank) for the output position `out_index`.
double Sample(const std::vector<AxisSampler>& axes, const std::vector<int64_t>& in_strides,
              const std::vector<double>& in, const std::vector<int64_t>& out_index, size_t axis,
              int64_t offset) {
  if (axis == axes.size()) return in[offset];
  const AxisSampler& s = axes[axis];
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

}  // namespace

Status Resize(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  if (out.numel() == 0) return Status::Ok();
  const int rank = in.rank();
  const ResizeParams p = ReadParams(ctx.attrs);

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

  std::vector<AxisSampler> axes;
  bool any_outside_possible = false;
  for (int k = 0; k < rank; ++k) {
    axes.push_back(BuildAxis(p, in.dim(k), out.dim(k), scale[k], roi[k], roi[rank + k]));
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
