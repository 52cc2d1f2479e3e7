// Resize's sampling geometry, shared by the reference kernel (float and integer) and the
// NPU lowering so that the taps they use cannot disagree: for each resized axis and output
// coordinate, the original coordinate x (coordinate_transformation_mode) and the taps
// (input index, weight) around it — nearest and linear two, cubic four.
//
// The rules follow ONNX's reference resize (onnx/backend/test/case/node/resize.py): the
// "left" neighbour of x is the last integer strictly below it, so the fraction is in (0, 1];
// indices past the border are clamped (edge padding); with exclude_outside the weights of
// outside taps are zeroed and the rest renormalized; tf_crop_and_resize marks coordinates
// outside [0, in - 1] as `outside` (the kernel writes extrapolation_value there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attributes.h"

namespace edgec {

struct ResizeRules {
  enum class Mode { kNearest, kLinear, kCubic } mode = Mode::kNearest;
  std::string coordinate_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
};
ResizeRules ReadResizeRules(const Attributes& a);

struct ResizeTap {
  int64_t index;
  double weight;
};

// Taps of every output coordinate along one axis: coordinate o uses taps[first[o] ..
// first[o + 1]) (taps of weight 0 are left out); outside[o] means "extrapolate".
struct ResizeAxis {
  std::vector<size_t> first;
  std::vector<ResizeTap> taps;
  std::vector<bool> outside;
};
ResizeAxis BuildResizeAxis(const ResizeRules& r, int64_t in_len, int64_t out_len, double scale, double roi_start,
                           double roi_end);

}  // namespace edgec
