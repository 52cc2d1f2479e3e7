// Shape inference shared by the matmul-like ops: MatMul, MatMulInteger and QLinearMatMul
// follow numpy matmul semantics and differ only in input positions and output dtype.
#pragma once

#include "ir/infer.h"

namespace edgec::infer {

// Sets output 0 to the numpy matmul of inputs `a` and `b`: a 1-D A is (1, K) and a 1-D B
// is (K, 1) with the added dim removed afterwards; batch dims broadcast. Unknown dims stay
// unknown; a known inner-dim mismatch is an error naming both shapes.
Status InferMatMulLike(InferContext& ctx, int a, int b, DType out_dtype);

}  // namespace edgec::infer
