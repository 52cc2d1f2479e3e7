// Reference kernels for the composite family (see ops.def). Every element is computed in
// double from the input values and rounded once into the output dtype (ChannelShuffle only
// moves bytes).
#include <cmath>

#include "kernels/ref/kernel.h"
#include "kernels/ref/matmul_util.h"
#include "kernels/ref/norm_util.h"
#include "kernels/ref/movement_util.h"

namespace edgec::ref {

namespace {

void StoreDoubles(const std::vector<double>& v, Tensor& t) {
  for (size_t i = 0; i < v.size(); ++i) StoreFromDouble(t.dtype(), t.raw(), static_cast<int64_t>(i), v[i]);
}

Dims BatchOf(const Dims& d) { return Dims(d.begin(), d.end() - 2); }

}  // namespace

// --- Gelu ---

Status Gelu(KernelContext& ctx) {
  const bool tanh_form = ctx.attrs.GetString("approximate", "none") == "tanh";
  const double kSqrt2 = std::sqrt(2.0), kSqrt2OverPi = std::sqrt(2.0 / M_PI);
  std::vector<double> x = ctx.inputs[0]->ToDoubleVector();
  for (double& v : x) {
    v = tanh_form ? 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)))
                  : 0.5 * v * (1.0 + std::erf(v / kSqrt2));
  }
  StoreDoubles(x, ctx.outputs[0]);
  return Status::Ok();
}

// --- RmsNormalization: over the trailing dims from `axis` ---

Status RmsNormalization(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const Tensor& st = *ctx.inputs[1];
  const int rank = xt.rank();
  const auto [axis, epsilon] = ReadNormAxisEpsilon(ctx, rank);
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<double> scale = st.ToDoubleVector();
  const BroadcastMap scale_at(st.dims(), xt.dims());
  int64_t inner = 1;
  for (int d = axis; d < rank; ++d) inner *= xt.dim(d);
  const int64_t outer = inner == 0 ? 0 : xt.numel() / inner;
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    double sum_sq = 0;
    for (int64_t i = o * inner; i < (o + 1) * inner; ++i) sum_sq += x[i] * x[i];
    const double inv_rms = 1.0 / std::sqrt(sum_sq / static_cast<double>(inner) + epsilon);
    for (int64_t i = o * inner; i < (o + 1) * inner; ++i) y[i] = x[i] * inv_rms * scale[scale_at(i)];
  }
  StoreDoubles(y, ctx.outputs[0]);
  return Status::Ok();
}

// --- GroupNormalization: per item, num_groups groups of consecutive channels ---

Status GroupNormalization(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector(), scale = ctx.inputs[1]->ToDoubleVector(),
                            bias = ctx.inputs[2]->ToDoubleVector();
  const int64_t n = xt.dim(0), c = xt.dim(1), groups = ctx.attrs.GetInt("num_groups", 1);
  const double epsilon = ctx.attrs.GetFloat("epsilon", 1e-5f);
  const int64_t plane = n * c != 0 ? xt.numel() / (n * c) : 0, count = c / groups * plane;
  std::vector<double> y(x.size());
  for (int64_t g = 0; count > 0 && g < n * groups; ++g) {
    double sum = 0, sq = 0;
    for (int64_t i = g * count; i < (g + 1) * count; ++i) sum += x[i];
    const double mean = sum / static_cast<double>(count);
    for (int64_t i = g * count; i < (g + 1) * count; ++i) sq += (x[i] - mean) * (x[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(count) + epsilon);
    for (int64_t i = g * count; i < (g + 1) * count; ++i) {
      const int64_t ch = (i / plane) % c;
      y[i] = (x[i] - mean) * inv * scale[ch] + bias[ch];
    }
  }
  StoreDoubles(y, ctx.outputs[0]);
  return Status::Ok();
}

// --- Attention: softmax(Q·Kᵀ·scale + Mask)·V per batch matrix ---

Status Attention(KernelContext& ctx) {
  const Tensor &qt = *ctx.inputs[0], &kt = *ctx.inputs[1], &vt = *ctx.inputs[2];
  const Tensor* mt = ctx.input(3);
  const bool k_transposed = ctx.attrs.GetInt("k_transposed", 0) != 0;
  const int64_t sq = qt.dim(qt.rank() - 2), d = qt.dim(qt.rank() - 1);
  const int64_t sk = kt.dim(kt.rank() - (k_transposed ? 1 : 2));
  const int64_t dv = vt.dim(vt.rank() - 1);
  const double scale = ctx.attrs.Has("scale") ? ctx.attrs.GetFloat("scale")
                                              : 1.0 / std::sqrt(static_cast<double>(d));
  const Tensor& yt = ctx.outputs[0];
  const Dims batch_dims = BatchOf(yt.dims());
  const int64_t batches = NumElements(batch_dims);
  const BroadcastMap q_batch(BatchOf(qt.dims()), batch_dims);
  const BroadcastMap k_batch(BatchOf(kt.dims()), batch_dims);
  const BroadcastMap v_batch(BatchOf(vt.dims()), batch_dims);
  Dims scores_dims = batch_dims;
  scores_dims.push_back(sq);
  scores_dims.push_back(sk);
  const BroadcastMap mask_at(mt ? mt->dims() : Dims{}, scores_dims);

  const std::vector<double> q = qt.ToDoubleVector(), k = kt.ToDoubleVector(), v = vt.ToDoubleVector();
  const std::vector<double> mask = mt ? mt->ToDoubleVector() : std::vector<double>();
  std::vector<double> y(static_cast<size_t>(yt.numel())), p(sk);
  for (int64_t b = 0; b < batches; ++b) {
    const double* qb = q.data() + q_batch(b) * sq * d;
    const double* kb = k.data() + k_batch(b) * sk * d;
    const double* vb = v.data() + v_batch(b) * sk * dv;
    double* yb = y.data() + b * sq * dv;
    for (int64_t i = 0; i < sq; ++i) {
      double max = -INFINITY;
      for (int64_t j = 0; j < sk; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) {
          dot += qb[i * d + c] * (k_transposed ? kb[c * sk + j] : kb[j * d + c]);
        }
        p[j] = dot * scale + (mt ? mask[mask_at((b * sq + i) * sk + j)] : 0.0);
        max = std::max(max, p[j]);
      }
      // A row masked entirely with -inf gives NaN, as the decomposed softmax does.
      double sum = 0;
      for (int64_t j = 0; j < sk; ++j) sum += (p[j] = std::exp(p[j] - max));
      for (int64_t j = 0; j < sk; ++j) {
        const double w = p[j] / sum;
        for (int64_t c = 0; c < dv; ++c) yb[i * dv + c] += w * vb[j * dv + c];
      }
    }
  }
  StoreDoubles(y, ctx.outputs[0]);
  return Status::Ok();
}

// --- ChannelShuffle ---

// The Reshape [N, g, C/g, rest] -> Transpose(1, 2) it stands for, as one permuting copy.
Status ChannelShuffle(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t g = ctx.attrs.GetInt("group", 1);
  Dims view = {x.dim(0), g, x.dim(1) / g};
  std::vector<int64_t> perm = {0, 2, 1};
  for (int d = 2; d < x.rank(); ++d) {
    view.push_back(x.dim(d));
    perm.push_back(d + 1);
  }
  PermuteCopy(x.raw(), view, perm, DTypeSize(x.dtype()), ctx.outputs[0].raw());
  return Status::Ok();
}

}  // namespace edgec::ref
