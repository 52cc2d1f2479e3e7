// Reference kernels for the random family (see ops.def; shapes and the seed rule in
// ir/infer_random.cc). One 64-bit Mersenne Twister per run of a node, seeded by the bits of
// the float attribute `seed` (0 when absent); uniform values take its top 53 bits, normal
// values pair uniforms by Box-Muller.
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/ref/kernel.h"
#include "support/name_list.h"

namespace edgec::ref {

namespace {

class Draw {
 public:
  explicit Draw(const Attributes& a) : rng_(std::bit_cast<uint32_t>(a.GetFloat("seed", 0.f))) {}
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  double Normal() {
    const double u1 = 1.0 - Uniform(), u2 = Uniform();  // u1 in (0, 1]
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 rng_;
};

Status Uniform(KernelContext& ctx) {
  Draw draw(ctx.attrs);
  const double low = ctx.attrs.GetFloat("low", 0.f), high = ctx.attrs.GetFloat("high", 1.f);
  Tensor& y = ctx.outputs[0];
  for (int64_t i = 0; i < y.numel(); ++i) StoreFromDouble(y.dtype(), y.raw(), i, low + (high - low) * draw.Uniform());
  return Status::Ok();
}

Status Normal(KernelContext& ctx) {
  Draw draw(ctx.attrs);
  const double mean = ctx.attrs.GetFloat("mean", 0.f), scale = ctx.attrs.GetFloat("scale", 1.f);
  Tensor& y = ctx.outputs[0];
  for (int64_t i = 0; i < y.numel(); ++i) StoreFromDouble(y.dtype(), y.raw(), i, mean + scale * draw.Normal());
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(KernelContext, Uniform, RandomUniform, RandomUniformLike)
EDGEC_SHARED_RULE(KernelContext, Normal, RandomNormal, RandomNormalLike)

Status Bernoulli(KernelContext& ctx) {
  Draw draw(ctx.attrs);
  const Tensor& p = *ctx.input(0);
  Tensor& y = ctx.outputs[0];
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double pi = LoadAsDouble(p.dtype(), p.raw(), i);
    if (!(pi >= 0 && pi <= 1)) return ctx.Error("probability {} at index {} is outside [0, 1]", pi, i);
    StoreFromDouble(y.dtype(), y.raw(), i, draw.Uniform() < pi ? 1.0 : 0.0);
  }
  return Status::Ok();
}

// Input: unnormalized log-probabilities [batch, classes]; each sample is a class index.
Status Multinomial(KernelContext& ctx) {
  Draw draw(ctx.attrs);
  const Tensor& x = *ctx.input(0);
  Tensor& y = ctx.outputs[0];
  const int64_t batch = x.dim(0), classes = x.dim(1), samples = y.dim(1);
  std::vector<double> cumulative(classes);
  for (int64_t b = 0; b < batch; ++b) {
    double mx = -INFINITY;
    for (int64_t k = 0; k < classes; ++k) mx = std::max(mx, LoadAsDouble(x.dtype(), x.raw(), b * classes + k));
    double total = 0;
    for (int64_t k = 0; k < classes; ++k) {
      total += std::exp(LoadAsDouble(x.dtype(), x.raw(), b * classes + k) - mx);
      cumulative[k] = total;
    }
    for (int64_t s = 0; s < samples; ++s) {
      const double u = draw.Uniform() * total;
      int64_t k = 0;
      while (k + 1 < classes && cumulative[k] <= u) ++k;
      StoreFromDouble(y.dtype(), y.raw(), b * samples + s, static_cast<double>(k));
    }
  }
  return Status::Ok();
}

}  // namespace edgec::ref
