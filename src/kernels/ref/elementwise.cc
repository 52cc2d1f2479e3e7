// Reference kernels for the elementwise family, part 1: one-input ops (see ops.def).
// The broadcasting ops are in elementwise_binary.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/ref/elementwise_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// y[i] = fn(x[i]) computed in the math type of T.
template <typename T, typename Fn>
void Map(const Tensor& x, Tensor& y, Fn& fn) {
  const T* in = x.data<T>();
  T* out = y.data<T>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = FromMath<T>(fn(ToMath(in[i])));
}

// Applies fn to every element of input 0 for a float dtype (fn sees float or double).
template <typename Fn>
Status MapFloat(KernelContext& ctx, Fn fn) {
  return VisitFloat(ctx.inputs[0]->dtype(), [&](auto tag) {
    Map<typename decltype(tag)::type>(*ctx.inputs[0], ctx.outputs[0], fn);
    return Status::Ok();
  });
}

// Same for any numeric dtype (fn also sees the integer types).
template <typename Fn>
Status MapNumeric(KernelContext& ctx, Fn fn) {
  return VisitNumeric(ctx.inputs[0]->dtype(), [&](auto tag) {
    Map<typename decltype(tag)::type>(*ctx.inputs[0], ctx.outputs[0], fn);
    return Status::Ok();
  });
}

void CopyInputToOutput(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  if (x.nbytes() > 0) std::memcpy(ctx.outputs[0].raw(), x.raw(), x.nbytes());
}

template <typename V>
V Clamp01(V v) {
  return v < V(0) ? V(0) : (v > V(1) ? V(1) : v);
}

// out[i] = pred(x[i]) for a float input and a bool output.
template <typename Pred>
Status ClassifyFloat(KernelContext& ctx, Pred pred) {
  return VisitFloat(ctx.inputs[0]->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = ctx.inputs[0]->data<T>();
    bool* out = ctx.outputs[0].data<bool>();
    for (int64_t i = 0; i < ctx.inputs[0]->numel(); ++i) out[i] = pred(ToMath(in[i]));
    return Status::Ok();
  });
}

// Rounds to the nearest integer, halfway cases to the even one (0.5 -> 0, 1.5 -> 2,
// -2.5 -> -2); infinities and NaN pass through.
template <typename M>
M RoundHalfToEven(M x) {
  if (!std::isfinite(x)) return x;
  const M lower = std::floor(x);
  const M above = x - lower;  // in [0, 1)
  if (above < M(0.5)) return lower;
  if (above > M(0.5)) return lower + M(1);
  return std::fmod(lower, M(2)) == M(0) ? lower : lower + M(1);
}

}  // namespace

// activations
Status Relu(KernelContext& ctx) {
  return MapNumeric(ctx, [](auto x) {
    using M = decltype(x);
    if constexpr (std::is_unsigned_v<M>) return x;
    else return x < M(0) ? M(0) : x;  // NaN passes through
  });
}

Status LeakyRelu(KernelContext& ctx) {
  const float alpha = ctx.attrs.GetFloat("alpha", 0.01f);
  return MapFloat(ctx, [alpha](auto x) {
    using M = decltype(x);
    return x < M(0) ? M(alpha) * x : x;
  });
}

Status Sigmoid(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) {
    using M = decltype(x);
    // Two forms so that exp never overflows.
    if (x >= M(0)) return M(1) / (M(1) + std::exp(-x));
    M e = std::exp(x);
    return e / (M(1) + e);
  });
}

Status HardSigmoid(KernelContext& ctx) {
  const float alpha = ctx.attrs.GetFloat("alpha", 0.2f);
  const float beta = ctx.attrs.GetFloat("beta", 0.5f);
  return MapFloat(ctx, [alpha, beta](auto x) {
    using M = decltype(x);
    return Clamp01(M(alpha) * x + M(beta));
  });
}

Status HardSwish(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) {
    using M = decltype(x);
    return x * Clamp01(x / M(6) + M(0.5));
  });
}

Status Tanh(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return std::tanh(x); });
}

Status Elu(KernelContext& ctx) {
  const float alpha = ctx.attrs.GetFloat("alpha", 1.0f);
  return MapFloat(ctx, [alpha](auto x) {
    using M = decltype(x);
    return x < M(0) ? M(alpha) * (std::exp(x) - M(1)) : x;
  });
}

Status Selu(KernelContext& ctx) {
  const float alpha = ctx.attrs.GetFloat("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.attrs.GetFloat("gamma", 1.05070102214813232421875f);
  return MapFloat(ctx, [alpha, gamma](auto x) {
    using M = decltype(x);
    return M(gamma) * (x > M(0) ? x : M(alpha) * (std::exp(x) - M(1)));
  });
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Status Celu(KernelContext& ctx) {
  const float alpha = ctx.attrs.GetFloat("alpha", 1.0f);
  return MapFloat(ctx, [alpha](auto x) {
    using M = decltype(x);
    const M a = M(alpha);
    return std::max(M(0), x) + std::min(M(0), a * (std::exp(x / a) - M(1)));
  });
}

// Softplus: log(1 + exp(x)), written so that exp never overflows.
Status Softplus(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) {
    using M = decltype(x);
    return x > M(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  });
}

Status Softsign(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return x / (decltype(x)(1) + std::fabs(x)); });
}

Status ThresholdedRelu(KernelContext& ctx) {
  const float alpha = ctx.attrs.GetFloat("alpha", 1.0f);
  return MapFloat(ctx, [alpha](auto x) {
    using M = decltype(x);
    return x > M(alpha) ? x : M(0);
  });
}

// Shrink: x < -lambd -> x + bias; x > lambd -> x - bias; else 0. Integer inputs compute in
// double and convert back as Cast does.
Status Shrink(KernelContext& ctx) {
  const double lambd = ctx.attrs.GetFloat("lambd", 0.5f);
  const double bias = ctx.attrs.GetFloat("bias", 0.0f);
  return MapNumeric(ctx, [lambd, bias](auto x) {
    using M = decltype(x);
    const double v = static_cast<double>(x);
    const double r = v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
    if constexpr (std::is_integral_v<M>) return FloatToInt<M>(r);
    else return static_cast<M>(r);
  });
}

// Clip(x, min?, max?): an absent bound does not bound.
Status Clip(KernelContext& ctx) {
  return VisitNumeric(ctx.inputs[0]->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = MathT<T>;
    M lo = std::numeric_limits<M>::lowest(), hi = std::numeric_limits<M>::max();
    if constexpr (std::is_floating_point_v<M>) {
      lo = -std::numeric_limits<M>::infinity();
      hi = std::numeric_limits<M>::infinity();
    }
    if (const Tensor* t = ctx.input(1)) lo = ToMath(t->data<T>()[0]);
    if (const Tensor* t = ctx.input(2)) hi = ToMath(t->data<T>()[0]);
    auto clip = [lo, hi](M v) {  // as numpy.clip: min(max(v, lo), hi); NaN passes
      v = v < lo ? lo : v;
      return v > hi ? hi : v;
    };
    Map<T>(*ctx.inputs[0], ctx.outputs[0], clip);
    return Status::Ok();
  });
}

// unary math
Status Erf(KernelContext& ctx) {
  return MapNumeric(ctx, [](auto x) { return std::erf(x); });
}
Status Exp(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return std::exp(x); });
}
Status Log(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return std::log(x); });
}
Status Sqrt(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return std::sqrt(x); });
}
Status Reciprocal(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return decltype(x)(1) / x; });
}
Status Floor(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return std::floor(x); });
}
Status Ceil(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return std::ceil(x); });
}

Status Round(KernelContext& ctx) {
  return MapFloat(ctx, [](auto x) { return RoundHalfToEven(x); });
}

// Sign: -1, 0 or 1 in the input's dtype; NaN stays NaN.
Status Sign(KernelContext& ctx) {
  return MapNumeric(ctx, [](auto x) {
    using M = decltype(x);
    if constexpr (std::is_floating_point_v<M>) {
      if (std::isnan(x)) return x;
    }
    return x > M(0) ? M(1) : (x < M(0) ? M(-1) : M(0));
  });
}

// trigonometric and hyperbolic functions
Status Sin(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::sin(x); }); }
Status Cos(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::cos(x); }); }
Status Tan(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::tan(x); }); }
Status Asin(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::asin(x); }); }
Status Acos(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::acos(x); }); }
Status Atan(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::atan(x); }); }
Status Sinh(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::sinh(x); }); }
Status Cosh(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::cosh(x); }); }
Status Asinh(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::asinh(x); }); }
Status Acosh(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::acosh(x); }); }
Status Atanh(KernelContext& ctx) { return MapFloat(ctx, [](auto x) { return std::atanh(x); }); }

// float classification
Status IsNaN(KernelContext& ctx) {
  return ClassifyFloat(ctx, [](auto x) { return std::isnan(x); });
}

Status IsInf(KernelContext& ctx) {
  const bool positive = ctx.attrs.GetInt("detect_positive", 1) != 0;
  const bool negative = ctx.attrs.GetInt("detect_negative", 1) != 0;
  return ClassifyFloat(ctx, [positive, negative](auto x) {
    return std::isinf(x) && (x > 0 ? positive : negative);
  });
}

Status Neg(KernelContext& ctx) {
  return MapNumeric(ctx, [](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>) return WrapNeg(x);  // -lowest wraps
    else return -x;
  });
}

Status Abs(KernelContext& ctx) {
  return MapNumeric(ctx, [](auto x) {
    using M = decltype(x);
    if constexpr (std::is_unsigned_v<M>) return x;
    else if constexpr (std::is_integral_v<M>) return x < M(0) ? WrapNeg(x) : x;
    else return std::fabs(x);
  });
}

// logic
Status Not(KernelContext& ctx) {
  const bool* in = ctx.inputs[0]->data<bool>();
  bool* out = ctx.outputs[0].data<bool>();
  for (int64_t i = 0; i < ctx.inputs[0]->numel(); ++i) out[i] = !in[i];
  return Status::Ok();
}

// identity-like
Status Identity(KernelContext& ctx) {
  // A sequence or optional passes on as it is (its items are never written in place).
  if (!ctx.inputs[0]->is_dense()) {
    ctx.outputs[0] = *ctx.inputs[0];
    return Status::Ok();
  }
  CopyInputToOutput(ctx);
  return Status::Ok();
}

// Inference-mode Dropout: y = x, and the optional mask is all true.
Status Dropout(KernelContext& ctx) {
  const Tensor* training = ctx.input(2);
  if (training && training->numel() == 1 && training->data<bool>()[0]) {
    const Tensor* ratio = ctx.input(1);
    double r = ratio ? ratio->ToDoubleVector()[0] : 0.5;
    if (r > 0.0) {
      return Unimplemented("{}: training-mode Dropout with ratio {} is random; edgec runs "
                           "inference only", ctx.label, r);
    }
  }
  CopyInputToOutput(ctx);
  if (ctx.outputs.size() > 1) {
    Tensor& mask = ctx.outputs[1];
    std::fill_n(mask.data<bool>(), mask.numel(), true);
  }
  return Status::Ok();
}

// Cast: every pair of dtypes (see CastElement for the conversion rules).
Status Cast(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  if (x.dtype() == y.dtype()) {
    CopyInputToOutput(ctx);
    return Status::Ok();
  }
  return VisitAll(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    return VisitAll(y.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* in = x.data<From>();
      To* out = y.data<To>();
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = CastElement<To>(in[i]);
      return Status::Ok();
    });
  });
}

// CastLike(input, target_type): Cast to input 1's dtype, which inference gave the output.
Status CastLike(KernelContext& ctx) { return Cast(ctx); }

}  // namespace edgec::ref
