// Reference kernels for the softmax family (see ops.def): normalization along one axis,
// numerically stable (the row maximum is subtracted before exp), computed in double; and
// Hardmax, the one-hot of each slice's maximum.
#include <cmath>
#include <vector>

#include "kernels/ref/elementwise_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// The input viewed as [outer, n, inner] around the softmax axis.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

AxisView ViewAround(const Dims& dims, int axis) {
  AxisView v;
  for (int d = 0; d < axis; ++d) v.outer *= dims[d];
  v.n = dims[axis];
  for (size_t d = axis + 1; d < dims.size(); ++d) v.inner *= dims[d];
  return v;
}

Status SoftmaxAlongAxis(KernelContext& ctx, bool log) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  const int rank = x.rank();
  int64_t axis = ctx.attrs.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  const AxisView v = ViewAround(x.dims(), static_cast<int>(axis));
  return VisitFloat(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    std::vector<double> row(v.n);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.n * v.inner + i;
        double max = -INFINITY;
        for (int64_t k = 0; k < v.n; ++k) {
          row[k] = static_cast<double>(ToMath(in[base + k * v.inner]));
          if (row[k] > max) max = row[k];
        }
        double sum = 0.0;
        for (int64_t k = 0; k < v.n; ++k) sum += std::exp(row[k] - max);
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < v.n; ++k) {
          double r = log ? row[k] - max - log_sum : std::exp(row[k] - max) / sum;
          out[base + k * v.inner] = FromMath<T>(static_cast<MathT<T>>(r));
        }
      }
    }
    return Status::Ok();
  });
}

// Hardmax: 1 at the first maximum of each slice along the axis, 0 elsewhere. A NaN counts as
// the maximum (the first NaN wins), as numpy's argmax.
Status HardmaxAlongAxis(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  int64_t axis = ctx.attrs.GetInt("axis", -1);
  if (axis < 0) axis += x.rank();
  const AxisView v = ViewAround(x.dims(), static_cast<int>(axis));
  return VisitFloat(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t base = o * v.n * v.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < v.n; ++k) {
          const double cur = static_cast<double>(ToMath(in[base + best * v.inner]));
          const double cand = static_cast<double>(ToMath(in[base + k * v.inner]));
          if (!std::isnan(cur) && (std::isnan(cand) || cand > cur)) best = k;
        }
        for (int64_t k = 0; k < v.n; ++k) {
          out[base + k * v.inner] = FromMath<T>(static_cast<MathT<T>>(k == best ? 1 : 0));
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace

Status Softmax(KernelContext& ctx) { return SoftmaxAlongAxis(ctx, /*log=*/false); }
Status LogSoftmax(KernelContext& ctx) { return SoftmaxAlongAxis(ctx, /*log=*/true); }
Status Hardmax(KernelContext& ctx) { return HardmaxAlongAxis(ctx); }

}  // namespace edgec::ref
