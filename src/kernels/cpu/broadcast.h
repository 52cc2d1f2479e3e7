// Broadcasting elementwise loops over buffers in any of the kernels' layouts: the output
// is walked in its memory order, each input through its own strides (0 where it
// broadcasts), with adjacent dims merged whenever every operand allows. The binary
// kernels (elementwise.cc) and the own epilogues of the oneDNN kernels use it.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/epilogue.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

// The iteration of y = f(a, b): dims outermost first; per dim the element strides of the
// output (dense) and of the two inputs.
// Appends an axis of extent d to a loop nest: `dims` holds the nest's extents, strides[k] the
// strides of operand k, step[k] that operand's stride along the new axis. The axis merges into
// the innermost dim so far when every operand steps through both evenly.
template <size_t K>
void AppendLoopAxis(std::vector<int64_t>& dims, const std::array<std::vector<int64_t>*, K>& strides, int64_t d,
                    const std::array<int64_t, K>& step) {
  const size_t last = dims.size();
  bool merge = last > 0;
  for (size_t k = 0; merge && k < K; ++k) merge = (*strides[k])[last - 1] == step[k] * d;
  if (merge) {
    dims[last - 1] *= d;
    for (size_t k = 0; k < K; ++k) (*strides[k])[last - 1] = step[k];
    return;
  }
  dims.push_back(d);
  for (size_t k = 0; k < K; ++k) strides[k]->push_back(step[k]);
}

struct StridedLoop {
  std::vector<int64_t> dims;
  std::vector<int64_t> out, a, b;
  int64_t numel() const;
};

// Calls f(ia, ib, iy) for every element of the loop, outermost dim first, with the element
// offsets into a, b and the output (any element type; tests/kernels/cpu/cast_compare_test.cc).
template <typename F>
void ForEachStridedElement(const StridedLoop& loop, F&& f) {
  const int rank = static_cast<int>(loop.dims.size());
  if (rank == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{0});
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = loop.dims.back();
  const int64_t sa = loop.a.back(), sb = loop.b.back(), so = loop.out.back();
  for (;;) {
    int64_t oa = 0, ob = 0, oo = 0;
    for (int d = 0; d + 1 < rank; ++d) {
      oa += index[d] * loop.a[d];
      ob += index[d] * loop.b[d];
      oo += index[d] * loop.out[d];
    }
    for (int64_t i = 0; i < inner; ++i) f(oa + i * sa, ob + i * sb, oo + i * so);
    int d = rank - 2;
    while (d >= 0 && ++index[d] == loop.dims[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

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
