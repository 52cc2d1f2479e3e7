// Reference kernels for the training family (shapes in ir/infer_training.cc), in double,
// one update per tensor X with its gradient G (ONNX ai.onnx.preview.training, version 1):
//   every optimizer:  g = norm_coefficient · X + G                    (L2 regularization)
//   Adagrad:  r = R / (1 + T · decay_factor);  H' = H + g²;
//             X' = X − r · g / (√H' + epsilon)
//   Momentum: b = T > 0 ? beta : 1;  V' = alpha · V + b · g;
//             standard: X' = X − R · V';  nesterov: X' = X − R · (g + alpha · V')
//   Adam:     V' = alpha · V + (1 − alpha) · g;  H' = beta · H + (1 − beta) · g²;
//             r = T > 0 ? R · √(1 − betaᵀ) / (1 − alphaᵀ) : R;
//             X' = (1 − norm_coefficient_post) · (X − r · V' / (√H' + epsilon))
// Outputs: the n new X, then the n new V (Momentum, Adam), then the n new H (Adagrad, Adam).
#include <cmath>
#include <vector>

#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

double ScalarOf(const Tensor& t) { return t.ToDoubleVector().at(0); }

// The loop every optimizer shares: for each of the n updated tensors and each element,
// g = norm_coefficient · x + G, then step(x, g, s) updates x and the `states` state values s
// in place (s[0] the first state input's element, s[1] the second's). Writes outputs in the
// order of the inputs: the n new X, then the new states of each kind.
template <typename Step>
Status Update(KernelContext& ctx, int states, Step step) {
  const int n = (static_cast<int>(ctx.inputs.size()) - 2) / (2 + states);
  const double l2 = ctx.attrs.GetFloat("norm_coefficient", 0.f);
  for (int k = 0; k < n; ++k) {
    std::vector<double> x = ctx.input(2 + k)->ToDoubleVector();
    const std::vector<double> g = ctx.input(2 + n + k)->ToDoubleVector();
    std::vector<std::vector<double>> st;
    for (int j = 0; j < states; ++j) st.push_back(ctx.input(2 + (2 + j) * n + k)->ToDoubleVector());
    for (size_t i = 0; i < x.size(); ++i) {
      double s[2] = {st[0][i], states > 1 ? st[1][i] : 0.0};
      step(x[i], l2 * x[i] + g[i], s);
      for (int j = 0; j < states; ++j) st[j][i] = s[j];
    }
    for (int j = 0; j <= states; ++j) {
      Tensor& out = ctx.outputs[j * n + k];
      const std::vector<double>& v = j == 0 ? x : st[j - 1];
      for (size_t i = 0; i < v.size(); ++i) StoreFromDouble(out.dtype(), out.raw(), static_cast<int64_t>(i), v[i]);
    }
  }
  return Status::Ok();
}

}  // namespace

Status Adagrad(KernelContext& ctx) {
  const double t = ScalarOf(*ctx.input(1));
  const double r = ScalarOf(*ctx.input(0)) / (1 + t * ctx.attrs.GetFloat("decay_factor", 0.f));
  const double eps = ctx.attrs.GetFloat("epsilon", 1e-6f);
  return Update(ctx, 1, [&](double& x, double g, double* h) {
    h[0] += g * g;
    x -= r * g / (std::sqrt(h[0]) + eps);
  });
}

Status Momentum(KernelContext& ctx) {
  const double r = ScalarOf(*ctx.input(0));
  const double alpha = ctx.attrs.GetFloat("alpha");
  const double beta = ScalarOf(*ctx.input(1)) > 0 ? ctx.attrs.GetFloat("beta") : 1.0;
  const bool nesterov = ctx.attrs.GetString("mode") == "nesterov";
  return Update(ctx, 1, [&](double& x, double g, double* v) {
    v[0] = alpha * v[0] + beta * g;
    x -= r * (nesterov ? g + alpha * v[0] : v[0]);
  });
}

Status Adam(KernelContext& ctx) {
  const double t = ScalarOf(*ctx.input(1));
  const double alpha = ctx.attrs.GetFloat("alpha", 0.9f);
  const double beta = ctx.attrs.GetFloat("beta", 0.999f);
  const double eps = ctx.attrs.GetFloat("epsilon", 1e-6f);
  const double post = ctx.attrs.GetFloat("norm_coefficient_post", 0.f);
  double r = ScalarOf(*ctx.input(0));
  if (t > 0) r *= std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t));
  return Update(ctx, 2, [&](double& x, double g, double* vh) {
    vh[0] = alpha * vh[0] + (1 - alpha) * g;
    vh[1] = beta * vh[1] + (1 - beta) * g * g;
    x = (1 - post) * (x - r * vh[0] / (std::sqrt(vh[1]) + eps));
  });
}

}  // namespace edgec::ref
