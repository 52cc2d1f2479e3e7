// Reference kernels for the norm family (see ops.def). Statistics and arithmetic are in
// double for every float dtype; results are rounded to the output dtype once.
#include <algorithm>
#include <cmath>

#include "kernels/ref/kernel.h"
#include "kernels/ref/matmul_util.h"
#include "kernels/ref/norm_util.h"

namespace edgec::ref {

namespace {

// Mean and population (biased) variance of `count` values starting at `v` with `stride`,
// repeated for `blocks` blocks `block_step` apart: the statistics of one channel.
struct Moments {
  double mean = 0, var = 0;
};
Moments ChannelMoments(const std::vector<double>& x, int64_t first, int64_t blocks,
                       int64_t block_step, int64_t count) {
  Moments m;
  const double n = static_cast<double>(blocks * count);
  if (n == 0) return m;
  double sum = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t i = 0; i < count; ++i) sum += x[first + b * block_step + i];
  }
  m.mean = sum / n;
  double sq = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t i = 0; i < count; ++i) {
      const double d = x[first + b * block_step + i] - m.mean;
      sq += d * d;
    }
  }
  m.var = sq / n;
  return m;
}

void StoreDoubles(const std::vector<double>& v, Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i) StoreFromDouble(t.dtype(), t.raw(), i, v[i]);
}

}  // namespace

// --- batch and instance normalization: per-channel affine of normalized X ---

Status BatchNormalization(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<double> scale = ctx.inputs[1]->ToDoubleVector();
  const std::vector<double> bias = ctx.inputs[2]->ToDoubleVector();
  std::vector<double> mean = ctx.inputs[3]->ToDoubleVector();
  std::vector<double> var = ctx.inputs[4]->ToDoubleVector();
  const double epsilon = ctx.attrs.GetFloat("epsilon", 1e-5f);
  const double momentum = ctx.attrs.GetFloat("momentum", 0.9f);
  const bool training = ctx.attrs.GetInt("training_mode", 0) == 1;

  const int64_t batch = xt.dim(0);
  const int64_t channels = xt.rank() == 1 ? 1 : xt.dim(1);
  const int64_t plane = batch * channels == 0 ? 0 : xt.numel() / (batch * channels);
  std::vector<double> running_mean = mean, running_var = var;
  if (training) {
    // Y uses this batch's statistics; the running ones blend them in.
    for (int64_t c = 0; c < channels; ++c) {
      const Moments m = ChannelMoments(x, c * plane, batch, channels * plane, plane);
      running_mean[c] = mean[c] * momentum + m.mean * (1 - momentum);
      running_var[c] = var[c] * momentum + m.var * (1 - momentum);
      mean[c] = m.mean;
      var[c] = m.var;
    }
  }
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const double a = scale[c] / std::sqrt(var[c] + epsilon);
      const int64_t base = (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) y[base + i] = (x[base + i] - mean[c]) * a + bias[c];
    }
  }
  StoreDoubles(y, ctx.outputs[0]);
  if (ctx.outputs.size() > 1) StoreDoubles(running_mean, ctx.outputs[1]);
  if (ctx.outputs.size() > 2) StoreDoubles(running_var, ctx.outputs[2]);
  return Status::Ok();
}

Status InstanceNormalization(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<double> scale = ctx.inputs[1]->ToDoubleVector();
  const std::vector<double> bias = ctx.inputs[2]->ToDoubleVector();
  const double epsilon = ctx.attrs.GetFloat("epsilon", 1e-5f);
  const int64_t batch = xt.dim(0), channels = xt.dim(1);
  const int64_t plane = batch * channels == 0 ? 0 : xt.numel() / (batch * channels);
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t base = (n * channels + c) * plane;
      const Moments m = ChannelMoments(x, base, 1, 0, plane);
      const double a = scale[c] / std::sqrt(m.var + epsilon);
      for (int64_t i = 0; i < plane; ++i) y[base + i] = (x[base + i] - m.mean) * a + bias[c];
    }
  }
  StoreDoubles(y, ctx.outputs[0]);
  return Status::Ok();
}

// --- layer normalization: over the trailing dims from `axis` ---

Status LayerNormalization(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const int rank = xt.rank();
  const auto [axis, epsilon] = ReadNormAxisEpsilon(ctx, rank);
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<double> scale = ctx.inputs[1]->ToDoubleVector();
  const Tensor* bias_t = ctx.input(2);
  const std::vector<double> bias = bias_t ? bias_t->ToDoubleVector() : std::vector<double>();
  const BroadcastMap scale_at(ctx.inputs[1]->dims(), xt.dims());
  const BroadcastMap bias_at(bias_t ? bias_t->dims() : Dims{}, xt.dims());

  int64_t inner = 1;
  for (int d = axis; d < rank; ++d) inner *= xt.dim(d);
  const int64_t outer = inner == 0 ? 0 : xt.numel() / inner;
  std::vector<double> y(x.size()), means(outer), inv_std(outer);
  for (int64_t o = 0; o < outer; ++o) {
    const Moments m = ChannelMoments(x, o * inner, 1, 0, inner);
    means[o] = m.mean;
    inv_std[o] = 1.0 / std::sqrt(m.var + epsilon);
    for (int64_t i = o * inner; i < (o + 1) * inner; ++i) {
      y[i] = (x[i] - m.mean) * inv_std[o] * scale[scale_at(i)] + (bias_t ? bias[bias_at(i)] : 0.0);
    }
  }
  StoreDoubles(y, ctx.outputs[0]);
  if (ctx.outputs.size() > 1) StoreDoubles(means, ctx.outputs[1]);
  if (ctx.outputs.size() > 2) StoreDoubles(inv_std, ctx.outputs[2]);
  return Status::Ok();
}

// --- mean-variance normalization: over a set of axes ---

namespace {

// For every element of `dims`, the flat index of its group: the elements that share their
// indices on every axis not in `reduced` form one group.
std::vector<int64_t> GroupOfEachElement(const Dims& dims, const std::vector<bool>& reduced) {
  const int rank = static_cast<int>(dims.size());
  Dims kept(rank);
  for (int d = 0; d < rank; ++d) kept[d] = reduced[d] ? 1 : dims[d];
  std::vector<int64_t> strides = ContiguousStrides(kept);
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) strides[d] = 0;
  }
  std::vector<int64_t> group(NumElements(dims));
  std::vector<int64_t> index(rank, 0);
  int64_t g = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(group.size()); ++i) {
    group[i] = g;
    for (int d = rank - 1; d >= 0; --d) {  // odometer, last dim fastest
      g += strides[d];
      if (++index[d] < dims[d]) break;
      g -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
  return group;
}

}  // namespace

Status MeanVarianceNormalization(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const int rank = xt.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t a : ctx.attrs.GetInts("axes", {0, 2, 3})) reduced[a < 0 ? a + rank : a] = true;
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<int64_t> group = GroupOfEachElement(xt.dims(), reduced);
  int64_t groups = 1, group_size = 1;
  for (int d = 0; d < rank; ++d) (reduced[d] ? group_size : groups) *= xt.dim(d);
  std::vector<double> mean(groups, 0.0), var(groups, 0.0);
  for (size_t i = 0; i < x.size(); ++i) mean[group[i]] += x[i];
  for (double& m : mean) m /= static_cast<double>(group_size);
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - mean[group[i]];
    var[group[i]] += d * d;
  }
  for (double& v : var) v /= static_cast<double>(group_size);
  constexpr double kEpsilon = 1e-9;  // added to the standard deviation, as ONNX's definition
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    y[i] = (x[i] - mean[group[i]]) / (std::sqrt(var[group[i]]) + kEpsilon);
  }
  StoreDoubles(y, ctx.outputs[0]);
  return Status::Ok();
}

// --- local response normalization: across neighbouring channels ---

// y = x / (bias + alpha / size * sum of x^2 over channels [c - (size-1)/2, c + size/2])^beta,
// the window clipped to the channels that exist.
Status LRN(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const double alpha = ctx.attrs.GetFloat("alpha", 1e-4f);
  const double beta = ctx.attrs.GetFloat("beta", 0.75f);
  const double bias = ctx.attrs.GetFloat("bias", 1.0f);
  const int64_t size = ctx.attrs.GetInt("size", 1);
  const int64_t before = (size - 1) / 2, after = size / 2;  // floor and ceil of (size-1)/2
  const std::vector<double> x = xt.ToDoubleVector();
  const int64_t batch = xt.dim(0), channels = xt.dim(1);
  const int64_t plane = batch * channels == 0 ? 0 : xt.numel() / (batch * channels);
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min<int64_t>(channels - 1, c + after);
      for (int64_t i = 0; i < plane; ++i) {
        double square_sum = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          const double v = x[(n * channels + k) * plane + i];
          square_sum += v * v;
        }
        const int64_t at = (n * channels + c) * plane + i;
        y[at] = x[at] / std::pow(bias + alpha / static_cast<double>(size) * square_sum, beta);
      }
    }
  }
  StoreDoubles(y, ctx.outputs[0]);
  return Status::Ok();
}

}  // namespace edgec::ref
