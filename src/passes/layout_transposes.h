// What the two files of the `layout` pass share: the transpose-cancelling patterns
// (layout_transposes.cc), run before layout assignment (layout.cc), and which elementwise
// ops may sit in an NHWC region or have a Transpose sunk through them.
#pragma once

#include <vector>

#include "ir/op.h"
#include "passes/pattern.h"

namespace edgec::passes {

// Elementwise ops the layout pass may put in an NHWC region (ops.def traits).
inline bool IsUnaryElementwise(OpKind op) { return HasTrait(op, op_trait::kUnary) && HasTrait(op, op_trait::kAnyLayout); }
inline bool IsBinaryElementwise(OpKind op) {
  return HasTrait(op, op_trait::kBroadcast) && HasTrait(op, op_trait::kAnyLayout);
}

// Cancel inverse Transpose pairs, merge other pairs, sink a Transpose through a single-use
// elementwise chain into its inverse (layout_transposes.cc).
std::vector<Pattern> TransposeCancelPatterns();

}  // namespace edgec::passes
