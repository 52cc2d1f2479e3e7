// The greedy selection NonMaxSuppression computes, shared by its shape inference (the number
// of selected boxes depends on the values) and its reference kernel.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/tensor.h"

namespace edgec {

struct BoxSelectionParams {
  bool center_point_box = false;  // boxes are [x_center, y_center, w, h], else two corners [y1, x1, y2, x2]
  int64_t max_per_class = 0;      // 0 selects nothing
  float iou_threshold = 0;        // a box overlapping a selected one by more is suppressed
  bool has_score_threshold = false;
  float score_threshold = 0;      // boxes must score above it
};

// boxes f32 [B, N, 4], scores f32 [B, C, N] (checked by the caller): per batch and class, in
// that order, the boxes of decreasing score (ties: lower index first) that pass the score
// threshold and overlap no box already selected by more than the IoU threshold, at most
// max_per_class of them. Each entry is {batch, class, box}.
std::vector<std::array<int64_t, 3>> SelectBoxes(const Tensor& boxes, const Tensor& scores, const BoxSelectionParams& p);

}  // namespace edgec
