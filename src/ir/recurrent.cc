#include "ir/recurrent.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace edgec {

int RecurrentGates(OpKind op) { return op == OpKind::kLSTM ? 4 : op == OpKind::kGRU ? 3 : 1; }

double RecurrentActivation::operator()(double x) const {
  if (name == "Relu") return std::max(x, 0.0);
  if (name == "Tanh") return std::tanh(x);
  if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (name == "Affine") return alpha * x + beta;
  if (name == "LeakyRelu") return x < 0 ? alpha * x : x;
  if (name == "ThresholdedRelu") return x > alpha ? x : 0;
  if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
  if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0, 1.0);
  if (name == "Elu") return x < 0 ? alpha * (std::exp(x) - 1) : x;
  if (name == "Softsign") return x / (1 + std::fabs(x));
  return std::log1p(std::exp(x));  // Softplus
}

StatusOr<std::vector<RecurrentActivation>> ReadRecurrentActivations(OpKind op, const Attributes& attrs, int directions) {
  std::vector<std::string> names = attrs.GetStrings("activations");
  const std::vector<std::string> defaults = op == OpKind::kLSTM  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                            : op == OpKind::kGRU ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                 : std::vector<std::string>{"Tanh"};
  const size_t want = defaults.size() * static_cast<size_t>(directions);
  if (names.empty()) {
    for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != want) {
    return InvalidArgument("attribute activations has {} entries, expected {} ({} per direction)", names.size(), want,
                           defaults.size());
  }
  const std::vector<float> alphas = attrs.GetFloats("activation_alpha"), betas = attrs.GetFloats("activation_beta");
  size_t ai = 0, bi = 0;
  std::vector<RecurrentActivation> out;
  for (const std::string& n : names) {
    RecurrentActivation a;
    // Case as ONNX spells the names; other spellings are accepted ("tanh", "TANH").
    for (const char* known : {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                              "HardSigmoid", "Elu", "Softsign", "Softplus"}) {
      if (std::equal(n.begin(), n.end(), known, known + std::char_traits<char>::length(known),
                     [](char x, char y) { return std::tolower(x) == std::tolower(y); })) {
        a.name = known;
      }
    }
    if (a.name.empty()) return Unimplemented("activation '{}' is not supported", n);
    double def_alpha = 0, def_beta = 0;
    bool uses_alpha = true, uses_beta = false;
    if (a.name == "Affine" || a.name == "ScaledTanh") def_alpha = 1, def_beta = a.name == "Affine" ? 0 : 1, uses_beta = true;
    else if (a.name == "LeakyRelu") def_alpha = 0.01;
    else if (a.name == "ThresholdedRelu" || a.name == "Elu") def_alpha = 1;
    else if (a.name == "HardSigmoid") def_alpha = 0.2, def_beta = 0.5, uses_beta = true;
    else uses_alpha = false;
    a.alpha = uses_alpha && ai < alphas.size() ? alphas[ai++] : def_alpha;
    a.beta = uses_beta && bi < betas.size() ? betas[bi++] : def_beta;
    out.push_back(a);
  }
  return out;
}

}  // namespace edgec
