// Shape inference shared by the conv-like ops: Conv, ConvInteger and QLinearConv take the
// same (X, W) layout and window attributes and differ only in where X and W sit among the
// inputs and in the output dtype.
#pragma once

#include "ir/infer.h"

namespace edgec::infer {

struct ConvInputs {
  int x = 0;
  int w = 1;
  int bias = -1;  // -1: the op has no bias input
};

// Validates X (N, C, D1, ...), W (M, C/group, k1, ...), the optional bias (M) and the window
// attributes, and sets output 0 to (N, M, out1, ...) with `out_dtype`.
Status InferConvLike(InferContext& ctx, const ConvInputs& in, DType out_dtype);

}  // namespace edgec::infer
