// Reference kernels for the loss family (see ops.def; shapes in ir/infer_loss.cc), in double:
//   loss[n, d] = -weight[c] · input[n, c, d] with c = target[n, d], 0 where c == ignore_index
//   reduction "sum": Σ loss; "mean": Σ loss / Σ weight[c] over the targets not ignored
//   (each weight 1 without a weight input); "none": loss itself.
// SoftmaxCrossEntropyLoss applies this to log_prob = log softmax(scores) along axis 1 and
// returns log_prob as its second output.
#include <cmath>
#include <vector>

#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

Status RunLoss(KernelContext& ctx, bool softmax) {
  const Tensor& x = *ctx.input(0);
  const Tensor& target = *ctx.input(1);
  const Tensor* weight = ctx.input(2);
  const int64_t n = x.dim(0), c = x.dim(1), inner = x.numel() / std::max<int64_t>(1, n * c);
  std::vector<double> in = x.ToDoubleVector();
  if (softmax) {
    // log softmax along axis 1: in[(b·C + k)·inner + d]
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t d = 0; d < inner; ++d) {
        double mx = -INFINITY;
        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, in[(b * c + k) * inner + d]);
        double sum = 0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(in[(b * c + k) * inner + d] - mx);
        const double log_sum = mx + std::log(sum);
        for (int64_t k = 0; k < c; ++k) in[(b * c + k) * inner + d] -= log_sum;
      }
    }
    if (ctx.outputs.size() > 1) {
      for (int64_t i = 0; i < x.numel(); ++i) StoreFromDouble(x.dtype(), ctx.outputs[1].raw(), i, in[i]);
    }
  }
  const std::vector<int64_t> tgt = target.ToInt64Vector();
  const std::vector<double> w = weight ? weight->ToDoubleVector() : std::vector<double>();
  const bool has_ignore = ctx.attrs.Has("ignore_index");
  const int64_t ignore = ctx.attrs.GetInt("ignore_index", 0);
  std::vector<double> loss(tgt.size());
  double total = 0, weight_sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t d = 0; d < inner; ++d) {
      const size_t i = static_cast<size_t>(b * inner + d);
      const int64_t k = tgt[i];
      if (has_ignore && k == ignore) continue;
      if (k < 0 || k >= c) return ctx.Error("target {} at index {} is outside [0, {})", k, i, c);
      const double wk = weight ? w[k] : 1.0;
      loss[i] = -wk * in[(b * c + k) * inner + d];
      total += loss[i];
      weight_sum += wk;
    }
  }
  const std::string reduction = ctx.attrs.GetString("reduction", "mean");
  Tensor& out = ctx.outputs[0];
  if (reduction == "none") {
    for (size_t i = 0; i < loss.size(); ++i) StoreFromDouble(out.dtype(), out.raw(), static_cast<int64_t>(i), loss[i]);
  } else {
    StoreFromDouble(out.dtype(), out.raw(), 0, reduction == "sum" ? total : total / weight_sum);
  }
  return Status::Ok();
}

}  // namespace

Status NegativeLogLikelihoodLoss(KernelContext& ctx) { return RunLoss(ctx, false); }
Status SoftmaxCrossEntropyLoss(KernelContext& ctx) { return RunLoss(ctx, true); }

}  // namespace edgec::ref
