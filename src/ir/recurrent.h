// The facts RNN, GRU and LSTM share between their shape inference and reference kernel: the
// gate count, and the activation functions named by the `activations` attribute with their
// alpha/beta parameters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/op.h"

namespace edgec {

// Gates per direction: RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c).
int RecurrentGates(OpKind op);

struct RecurrentActivation {
  std::string name;  // Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
                     // HardSigmoid, Elu, Softsign, Softplus
  double alpha = 0, beta = 0;
  double operator()(double x) const;
};

// The activations of every direction (per direction: RNN f; GRU f, g; LSTM f, g, h), from
// the attributes or the defaults (RNN Tanh; GRU Sigmoid, Tanh; LSTM Sigmoid, Tanh, Tanh).
// activation_alpha / activation_beta are consumed in order by the functions that take them;
// a function without a given value takes its ONNX operator's default.
StatusOr<std::vector<RecurrentActivation>> ReadRecurrentActivations(OpKind op, const Attributes& attrs, int directions);

}  // namespace edgec
