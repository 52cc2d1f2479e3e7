// The activation of the fused epilogues (FusedConv, FusedMatMul, FusedAdd): one definition
// of every kind in ir/epilogue.h. WithActivation resolves the kind once and hands the loop a
// functor for it, so the per-element work has no switch.
#pragma once

#include <cmath>
#include <cstdint>

#include "ir/epilogue.h"

namespace edgec::ref {

template <Activation K>
struct ActivationFn {
  float alpha = 0.f, beta = 0.f;

  // M is the math type: float or double.
  template <typename M>
  M operator()(M x) const {
    if constexpr (K == Activation::kNone) {
      return x;
    } else if constexpr (K == Activation::kRelu) {
      return x < M(0) ? M(0) : x;  // NaN passes through
    } else if constexpr (K == Activation::kLeakyRelu) {
      return x < M(0) ? M(alpha) * x : x;
    } else if constexpr (K == Activation::kClip) {  // as numpy.clip: min(max(x, lo), hi)
      const M v = x < M(alpha) ? M(alpha) : x;
      return v > M(beta) ? M(beta) : v;
    } else if constexpr (K == Activation::kHardSigmoid) {
      return Clamp01(M(alpha) * x + M(beta));
    } else if constexpr (K == Activation::kHardSwish) {
      return x * Clamp01(x / M(6) + M(0.5));
    } else if constexpr (K == Activation::kSigmoid) {
      return Sigmoid(x);
    } else if constexpr (K == Activation::kTanh) {
      return std::tanh(x);
    } else if constexpr (K == Activation::kSilu) {
      return x * Sigmoid(x);
    } else if constexpr (K == Activation::kGelu) {
      return x * M(0.5) * (M(1) + std::erf(x / std::sqrt(M(2))));
    } else {
      static_assert(K == Activation::kGeluTanh);
      const M k = std::sqrt(M(2) / M(3.14159265358979323846));
      return x * M(0.5) * (M(1) + std::tanh(k * (x + M(0.044715) * x * x * x)));
    }
  }

 private:
  template <typename M>
  static M Clamp01(M v) {
    return v < M(0) ? M(0) : (v > M(1) ? M(1) : v);
  }
  template <typename M>
  static M Sigmoid(M x) {  // two forms so that exp never overflows
    if (x >= M(0)) return M(1) / (M(1) + std::exp(-x));
    const M e = std::exp(x);
    return e / (M(1) + e);
  }
};

// Calls fn(ActivationFn<kind>{alpha, beta}) for spec's kind and returns what it returns.
template <typename Fn>
decltype(auto) WithActivation(const ActivationSpec& spec, Fn&& fn) {
  const float a = spec.alpha, b = spec.beta;
  switch (spec.kind) {
    case Activation::kRelu: return fn(ActivationFn<Activation::kRelu>{a, b});
    case Activation::kLeakyRelu: return fn(ActivationFn<Activation::kLeakyRelu>{a, b});
    case Activation::kClip: return fn(ActivationFn<Activation::kClip>{a, b});
    case Activation::kHardSigmoid: return fn(ActivationFn<Activation::kHardSigmoid>{a, b});
    case Activation::kHardSwish: return fn(ActivationFn<Activation::kHardSwish>{a, b});
    case Activation::kSigmoid: return fn(ActivationFn<Activation::kSigmoid>{a, b});
    case Activation::kTanh: return fn(ActivationFn<Activation::kTanh>{a, b});
    case Activation::kSilu: return fn(ActivationFn<Activation::kSilu>{a, b});
    case Activation::kGelu: return fn(ActivationFn<Activation::kGelu>{a, b});
    case Activation::kGeluTanh: return fn(ActivationFn<Activation::kGeluTanh>{a, b});
    case Activation::kNone: break;
  }
  return fn(ActivationFn<Activation::kNone>{a, b});
}

// y[i] = act(y[i]) for i < n; T is float or double.
template <typename T>
void ApplyActivation(const ActivationSpec& spec, T* y, int64_t n) {
  if (spec.kind == Activation::kNone) return;
  WithActivation(spec, [&](auto act) {
    for (int64_t i = 0; i < n; ++i) y[i] = act(y[i]);
  });
}

}  // namespace edgec::ref
