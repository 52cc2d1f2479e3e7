// The one data-movement primitive of the reference kernels: a strided copy of an n-d box of
// elements, by byte size, so that it serves every dtype. Transpose, Slice, Concat, Split,
// Tile, Expand, Pad and DepthToSpace/SpaceToDepth are each a choice of box and strides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ir/tensor.h"

namespace edgec::ref {

// Where the elements of a box live in a buffer: element (i_0, ..., i_{n-1}) is at element
// offset `offset + sum_k i_k * strides[k]`. Strides are in elements and may be zero
// (broadcast) or negative (reversed slice).
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

// Copies every element of the box `extent` (elements of `elem_size` bytes) from `src`
// to `dst`. A rank-0 box is one element; a box with a zero extent copies nothing.
// The source and destination elements must not overlap.
void CopyStrided(std::span<const int64_t> extent, size_t elem_size, const void* src,
                 const StridedView& src_view, void* dst, const StridedView& dst_view);

// The contiguous row-major view of `dims`, starting at element `offset`.
inline StridedView Contiguous(std::span<const int64_t> dims, int64_t offset = 0) {
  return {offset, ContiguousStrides(dims)};
}

// Writes into `dst` (contiguous) the transpose of `src` viewed as contiguous `src_dims`:
// dst dims are src_dims[perm[i]].
void PermuteCopy(const void* src, std::span<const int64_t> src_dims,
                 std::span<const int64_t> perm, size_t elem_size, void* dst);

// Sets every element of `t` to the bytes of `element` (DTypeSize(t.dtype()) bytes).
void FillWithElement(Tensor& t, const void* element);

}  // namespace edgec::ref
