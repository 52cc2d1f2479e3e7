// Broadcasting elementwise loops over buffers in any of the kernels' layouts: the output
// is walked in its memory order, each input through its own strides (0 where it
// broadcasts), with adjacent dims merged whenever every operand allows. The binary
// kernels (elementwise.cc) and the own epilogues of the oneDNN kernels use it.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/epilogue.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

// The iteration of y = f(a, b): dims outermost first; per dim the element strides of the
// output (dense) and of the two inputs.
struct StridedLoop {
  std::vector<int64_t> dims;
  std::vector<int64_t> out, a, b;
  int64_t numel() const;
};

// The loop for output `out` and inputs `a`, `b` that broadcast to it (numpy rules,
// right-aligned; dims of 1 stretch). Layouts are taken from the descs.
StridedLoop MakeStridedLoop(const TensorDesc& out, const TensorDesc& a, const TensorDesc& b);

// y = act(a op b) over the loop, split over `threads`. y may alias a or b when that input
// has the output's shape and layout.
void RunBinaryLoop(const StridedLoop& loop, vec::Binary op, const vec::UnaryFn& act,
                   const float* a, const float* b, float* y, int threads);

// y = a ** b over the loop (std::pow per element).
void RunPowLoop(const StridedLoop& loop, const float* a, const float* b, float* y, int threads);

// y = f(x) for n contiguous elements, split over `threads`.
void RunUnary(const vec::UnaryFn& f, const float* x, float* y, int64_t n, int threads);

// The epilogue activation as a vector function.
vec::UnaryFn ToUnaryFn(const ActivationSpec& spec);

}  // namespace edgec::cpu
