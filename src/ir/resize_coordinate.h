// Resize's coordinate_transformation_mode and nearest_mode, the rules the reference
// (kernels/ref/resize.cc) and the fast CPU kernel (kernels/cpu/resize.cc) share, bit for bit.
#pragma once

#include <cstdint>
#include <string>

namespace edgec {

// The input coordinate of output coordinate x along an axis of in_len inputs resized by
// `scale`. As ONNX's reference, the output length is scale * in_len, unrounded. roi_start
// and roi_end are read by tf_crop_and_resize only; an unknown mode is half_pixel.
inline double ResizeSourceCoordinate(const std::string& mode, int64_t x, int64_t in_len, double scale,
                                     double roi_start = 0, double roi_end = 1) {
  const double out_len = scale * static_cast<double>(in_len);
  const double xr = static_cast<double>(x);
  if (mode == "align_corners") return out_len == 1 ? 0.0 : xr * (in_len - 1) / (out_len - 1);
  if (mode == "asymmetric") return xr / scale;
  if (mode == "tf_half_pixel_for_nn") return (xr + 0.5) / scale;
  if (mode == "pytorch_half_pixel") return out_len == 1 ? -0.5 : (xr + 0.5) / scale - 0.5;
  if (mode == "tf_crop_and_resize") {
    double span = (roi_end - roi_start) * (in_len - 1);
    double offset = roi_start * (in_len - 1);
    return offset + (out_len == 1 ? span / 2 : xr * span / (out_len - 1));
  }
  return (xr + 0.5) / scale - 0.5;  // half_pixel
}

// Whether nearest mode takes the right tap (left + 1) for a source coordinate `ratio` = x - left
// past the left one, ratio in (0, 1]; 1 means x is a whole number, which is taken.
inline bool ResizeNearestTakesRight(const std::string& nearest_mode, double ratio) {
  if (ratio == 1.0) return true;
  if (nearest_mode == "round_prefer_ceil") return ratio >= 0.5;
  if (nearest_mode == "floor") return false;
  if (nearest_mode == "ceil") return true;
  return ratio > 0.5;  // round_prefer_floor
}

}  // namespace edgec
