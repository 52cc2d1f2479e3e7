// Per-layer comparison of two forms of one model (the ONNX original, its optimized form,
// its QDQ form, or that form folded to int8 ops): runs both on the same inputs, matches
// tensors through node provenance (the ONNX node names every node came from, kept through
// fusion and renaming), and measures the error of B against A at every matched layer.
//
// Matching: in each graph, a source node name maps to the output of the *last* node (in
// topological order) whose provenance holds it: the value where that source's computation
// ends. A node of B is compared at the source of its provenance that ends latest in A, so
// a fused Conv+Relu in B meets A's Relu output, and a DequantizeLinear after a quantized
// Conv meets the Conv (or its Relu). Only f32 outputs of equal dims are compared; each A
// value is compared once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec::quant {

struct LayerError {
  std::string source;   // ONNX node name in A
  std::string a_value, b_value;
  std::string b_op;
  int64_t elements = 0;
  double max_abs = 0;
  double cosine = 1;
  double sqnr_db = 0;   // +inf when equal
  bool jump = false;    // the first layer whose SQNR falls > `jump_db` below the previous
};

struct LayerComparison {
  std::vector<LayerError> layers;  // in A's order
  int first_jump = -1;             // index into layers, or -1
};

StatusOr<LayerComparison> CompareLayers(const Graph& a, const Graph& b,
                                        const std::map<std::string, Tensor>& inputs,
                                        double jump_db = 10.0);

}  // namespace edgec::quant
