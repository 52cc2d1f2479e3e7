// Einsum equations: parsing ("bij,bjk->bik", implicit "ij,jk", "..." ellipses) and
// binding to the operands' dims. Shape inference and the reference kernel share it.
#pragma once

#include <string_view>
#include <vector>

#include "support/status.h"
#include "ir/tensor.h"

namespace edgec {

// An equation bound to its operands: every dim of every operand and of the output carries a
// label id in [0, num_labels). A letter repeated within one operand takes its diagonal;
// labels absent from the output are summed over. The dims an ellipsis covers get one label
// each, right-aligned across operands, and broadcast (a dim of 1 stretches).
struct EinsumBinding {
  std::vector<std::vector<int>> operand_labels;
  std::vector<int> output_labels;
  std::vector<int64_t> label_sizes;  // kUnknownDim when not known yet
  int num_labels() const { return static_cast<int>(label_sizes.size()); }
  Dims OutputDims() const;
};

// `operands` holds each operand's dims (entries may be kUnknownDim). Errors are plain
// messages (the caller adds the node label).
StatusOr<EinsumBinding> BindEinsum(std::string_view equation, const std::vector<Dims>& operands);

}  // namespace edgec
