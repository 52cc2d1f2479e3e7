// The epilogue of the fused ops FusedConv, FusedMatMul and FusedAdd (see ops.def): the
// activation applied last, its parameters, and how they are spelled as attributes. One
// description shared by shape inference (which validates it), the reference kernels
// (kernels/ref/activation.h applies it) and the passes that create and lower fused nodes.
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"
#include "ir/attributes.h"

namespace edgec {

enum class Activation {
  kNone,
  kRelu,
  kLeakyRelu,    // x < 0 ? alpha * x : x
  kClip,         // min(max(x, alpha), beta)
  kHardSigmoid,  // clamp(alpha * x + beta, 0, 1)
  kHardSwish,    // x * clamp(x / 6 + 1/2, 0, 1)
  kSigmoid,
  kTanh,
  kSilu,      // x * sigmoid(x)
  kGelu,      // x / 2 * (1 + erf(x / sqrt(2)))
  kGeluTanh,  // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
};

// An activation with its parameters resolved (the attribute defaults applied). alpha and
// beta mean what the comments above say; kinds without parameters keep them 0.
struct ActivationSpec {
  Activation kind = Activation::kNone;
  float alpha = 0.f;
  float beta = 0.f;
  bool operator==(const ActivationSpec&) const = default;
};

// The attribute spelling: "" for kNone, else "Relu", "LeakyRelu", ...
std::string_view ActivationName(Activation a);

// Reads the attributes `activation`, `activation_alpha`, `activation_beta` with the
// defaults: LeakyRelu alpha 0.01; Clip min -inf, max +inf; HardSigmoid alpha 0.2, beta 0.5.
// An unknown name fails, listing the known ones.
StatusOr<ActivationSpec> ReadActivation(const Attributes& attrs);

// Sets the three attributes for `spec` (parameters only for the kinds that have them);
// kNone erases them.
void WriteActivation(const ActivationSpec& spec, Attributes& attrs);

// "Relu", "Clip(0, 6)", "LeakyRelu(0.1)": for messages and statistics.
std::string ActivationToString(const ActivationSpec& spec);

}  // namespace edgec
