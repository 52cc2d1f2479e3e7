// The torch GroupNorm pattern (fuse_groupnorm.cc), also asked for by the quantizer so that it
// quantizes the whole pattern as one island (quant/qdq_rewrite.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace edgec::passes {

struct GroupNormMatch {
  Node* grouped = nullptr;  // Reshape [N, G, -1]
  Node* inorm = nullptr;
  std::vector<Node*> nodes;  // grouped Reshape, InstanceNormalization, Reshape back, Mul[, Add]
  Value* x = nullptr;        // the input [N, C, spatial...]
  Value* output = nullptr;   // the last node's output
  int64_t groups = 0;
  float epsilon = 1e-5f;
  std::optional<Tensor> gamma, beta;  // [C]
};
// Matches at the InstanceNormalization; `why` says why not.
std::optional<GroupNormMatch> MatchGroupNorm(const Node* inorm, std::string* why);

}  // namespace edgec::passes
