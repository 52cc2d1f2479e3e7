// Graph building shared by the quantization and compile tests.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace edgec::testing_quant {

// Seeded normal values with standard deviation `sd`.
inline Tensor Normal(Dims dims, uint32_t seed, double sd = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.f, static_cast<float>(sd));
  Tensor t(DType::kF32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = n(rng);
  return t;
}

// A node `name` with one output named "<name>:0".
inline Value* Add(Graph& g, OpKind op, std::vector<Value*> in, Attributes a, const std::string& name) {
  Node* n = g.AddNode(op, name, std::move(in), 1, {name + ":0"});
  n->attrs = std::move(a);
  return n->output(0);
}

}  // namespace edgec::testing_quant
