#include "ir/resize_geometry.h"

#include <algorithm>
#include <cmath>

#include "ir/resize_coordinate.h"

namespace edgec {

ResizeRules ReadResizeRules(const Attributes& a) {
  ResizeRules r;
  const std::string mode = a.GetString("mode", "nearest");
  r.mode = mode == "linear" ? ResizeRules::Mode::kLinear
           : mode == "cubic" ? ResizeRules::Mode::kCubic
                             : ResizeRules::Mode::kNearest;
  r.coordinate_mode = a.GetString("coordinate_transformation_mode", "half_pixel");
  r.nearest_mode = a.GetString("nearest_mode", "round_prefer_floor");
  r.cubic_a = a.GetFloat("cubic_coeff_a", -0.75f);
  r.exclude_outside = a.GetInt("exclude_outside", 0) != 0;
  r.extrapolation_value = a.GetFloat("extrapolation_value", 0.f);
  return r;
}

namespace {

// Weights of the taps left, left + 1 (nearest, linear) or left - 1 .. left + 2 (cubic),
// where `ratio` = x - left is in (0, 1].
int Coefficients(const ResizeRules& r, double ratio, double* c) {
  switch (r.mode) {
    case ResizeRules::Mode::kNearest: {
      const bool right = ResizeNearestTakesRight(r.nearest_mode, ratio);
      c[0] = right ? 0.0 : 1.0;
      c[1] = right ? 1.0 : 0.0;
      return 2;
    }
    case ResizeRules::Mode::kLinear:
      c[0] = 1 - ratio;
      c[1] = ratio;
      return 2;
    case ResizeRules::Mode::kCubic: {
      // Keys' cubic convolution kernel at distances 1 + r, r, 1 - r, 2 - r.
      const double a = r.cubic_a;
      auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };      // |d| <= 1
      auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
      c[0] = far(1 + ratio);
      c[1] = near(ratio);
      c[2] = near(1 - ratio);
      c[3] = far(2 - ratio);
      return 4;
    }
  }
  return 0;
}

}  // namespace

ResizeAxis BuildResizeAxis(const ResizeRules& r, int64_t in_len, int64_t out_len, double scale, double roi_start,
                           double roi_end) {
  ResizeAxis s;
  const bool crop = r.coordinate_mode == "tf_crop_and_resize";
  for (int64_t o = 0; o < out_len; ++o) {
    s.first.push_back(s.taps.size());
    double x = ResizeSourceCoordinate(r.coordinate_mode, o, in_len, scale, roi_start, roi_end);
    bool outside = crop && (x < 0 || x > static_cast<double>(in_len - 1));
    s.outside.push_back(outside);
    if (outside) continue;
    double left = std::ceil(x) - 1;
    double c[4];
    int n = Coefficients(r, x - left, c);
    int64_t first_index = static_cast<int64_t>(left) - (n == 4 ? 1 : 0);
    if (r.exclude_outside) {
      double total = 0;
      for (int i = 0; i < n; ++i) {
        int64_t idx = first_index + i;
        if (idx < 0 || idx >= in_len) c[i] = 0;
        total += c[i];
      }
      for (int i = 0; i < n; ++i) c[i] /= total;
    }
    for (int i = 0; i < n; ++i) {
      if (c[i] == 0) continue;
      int64_t idx = std::clamp<int64_t>(first_index + i, 0, in_len - 1);
      s.taps.push_back({idx, c[i]});
    }
  }
  s.first.push_back(s.taps.size());
  return s;
}

}  // namespace edgec
