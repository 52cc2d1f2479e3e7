#include "ir/epilogue.h"

#include <array>
#include <cmath>
#include <limits>
#include <utility>

namespace edgec {

namespace {

constexpr std::array<std::pair<Activation, std::string_view>, 11> kNames = {{
    {Activation::kNone, ""},
    {Activation::kRelu, "Relu"},
    {Activation::kLeakyRelu, "LeakyRelu"},
    {Activation::kClip, "Clip"},
    {Activation::kHardSigmoid, "HardSigmoid"},
    {Activation::kHardSwish, "HardSwish"},
    {Activation::kSigmoid, "Sigmoid"},
    {Activation::kTanh, "Tanh"},
    {Activation::kSilu, "Silu"},
    {Activation::kGelu, "Gelu"},
    {Activation::kGeluTanh, "GeluTanh"},
}};

bool HasAlpha(Activation a) {
  return a == Activation::kLeakyRelu || a == Activation::kClip || a == Activation::kHardSigmoid;
}
bool HasBeta(Activation a) { return a == Activation::kClip || a == Activation::kHardSigmoid; }

}  // namespace

std::string_view ActivationName(Activation a) {
  for (const auto& [kind, name] : kNames) {
    if (kind == a) return name;
  }
  return "?";
}

StatusOr<ActivationSpec> ReadActivation(const Attributes& attrs) {
  const std::string name = attrs.GetString("activation", "");
  ActivationSpec spec;
  bool found = false;
  for (const auto& [kind, n] : kNames) {
    if (n == name) {
      spec.kind = kind;
      found = true;
    }
  }
  if (!found) {
    std::string known;
    for (const auto& [kind, n] : kNames) {
      if (kind != Activation::kNone) known += (known.empty() ? "" : ", ") + std::string(n);
    }
    return InvalidArgument("unknown activation '{}' (known: {}, or \"\" for none)", name, known);
  }
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (spec.kind) {
    case Activation::kLeakyRelu:
      spec.alpha = attrs.GetFloat("activation_alpha", 0.01f);
      break;
    case Activation::kClip:
      spec.alpha = attrs.GetFloat("activation_alpha", -kInf);
      spec.beta = attrs.GetFloat("activation_beta", kInf);
      break;
    case Activation::kHardSigmoid:
      spec.alpha = attrs.GetFloat("activation_alpha", 0.2f);
      spec.beta = attrs.GetFloat("activation_beta", 0.5f);
      break;
    default:
      if (attrs.Has("activation_alpha") || attrs.Has("activation_beta")) {
        return InvalidArgument("activation '{}' takes no activation_alpha/activation_beta", name);
      }
      break;
  }
  return spec;
}

void WriteActivation(const ActivationSpec& spec, Attributes& attrs) {
  attrs.Erase("activation");
  attrs.Erase("activation_alpha");
  attrs.Erase("activation_beta");
  if (spec.kind == Activation::kNone) return;
  attrs.Set("activation", std::string(ActivationName(spec.kind)));
  // An unbounded Clip side is left to the default (infinite bounds are not written).
  if (HasAlpha(spec.kind) && std::isfinite(spec.alpha)) attrs.Set("activation_alpha", spec.alpha);
  if (HasBeta(spec.kind) && std::isfinite(spec.beta)) attrs.Set("activation_beta", spec.beta);
}

std::string ActivationToString(const ActivationSpec& spec) {
  std::string s(ActivationName(spec.kind));
  if (HasBeta(spec.kind)) return fmt::format("{}({}, {})", s, spec.alpha, spec.beta);
  if (HasAlpha(spec.kind)) return fmt::format("{}({})", s, spec.alpha);
  return s;
}

}  // namespace edgec
