// Per-layer error between two forms of one model (the ONNX original, its optimized form, its
// QDQ form, or that folded to int8 ops): both run on the same inputs on the reference
// kernels, their tensors matched through node provenance (the ONNX node names every node came
// from, kept through fusion and renaming), B's error against A measured at every matched
// layer — what `edgec compare` prints.
//
//   auto b = a.Clone(); b.FoldQdq({}, nullptr);
//   auto c = edgec::CompareLayers(a, b, inputs);
//   if (c->first_jump >= 0) std::cout << c->layers[c->first_jump].source << "\n";
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "edgec/export.h"
#include "edgec/model.h"
#include "edgec/status.h"
#include "edgec/tensor.h"

namespace edgec {
inline namespace v1 {

struct LayerError {
  std::string source;   // the ONNX node name in A
  std::string a_value, b_value;
  std::string b_op;
  int64_t elements = 0;
  double max_abs = 0;
  double cosine = 1;
  double sqnr_db = 0;   // +inf when equal
  bool jump = false;    // the first layer whose SQNR falls more than `jump_db` below the previous
};

struct LayerComparison {
  std::vector<LayerError> layers;  // in A's order
  int first_jump = -1;             // index into layers, or -1
};

// Only f32 outputs of equal dims are compared; each value of A once.
EDGEC_API StatusOr<LayerComparison> CompareLayers(const Model& a, const Model& b,
                                                  const std::map<std::string, TensorView>& inputs,
                                                  double jump_db = 10.0);

}  // namespace v1
}  // namespace edgec
