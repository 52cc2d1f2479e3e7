// The grouping Unique computes, shared by its shape inference (the output length depends on
// the values) and its reference kernel: X's slices along an axis (or its elements, X
// flattened) grouped by equal values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/tensor.h"

namespace edgec {

struct UniqueSlices {
  int64_t slice_count = 0;      // slices of X along the axis (elements when flattened)
  std::vector<int64_t> first;   // per unique slice, the index of its first occurrence in X
  std::vector<int64_t> inverse; // per slice of X, its unique slice
  std::vector<int64_t> counts;  // per unique slice, how often it occurs
};

// `axis` normalized, or nullopt for X flattened. Unique slices come sorted ascending
// (lexicographically over each slice's elements in row-major order) when `sorted`, else in
// the order of their first occurrence. Values compare as doubles (-0 equals 0).
UniqueSlices FindUniqueSlices(const Tensor& x, std::optional<int> axis, bool sorted);

}  // namespace edgec
