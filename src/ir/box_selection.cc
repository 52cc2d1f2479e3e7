#include "ir/box_selection.h"

#include <algorithm>
#include <numeric>

namespace edgec {

namespace {

struct Corners {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
  float Area() const { return (y2 - y1) * (x2 - x1); }
};

Corners ReadBox(const float* b, bool center) {
  if (center) {
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[1] - hh, b[0] - hw, b[1] + hh, b[0] + hw};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// Intersection over union; 0 when either box has no area.
float Iou(const Corners& a, const Corners& b) {
  const float area_a = a.Area(), area_b = b.Area();
  if (area_a <= 0 || area_b <= 0) return 0;
  const float h = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float w = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float inter = h * w;
  return inter / (area_a + area_b - inter);
}

}  // namespace

std::vector<std::array<int64_t, 3>> SelectBoxes(const Tensor& boxes, const Tensor& scores, const BoxSelectionParams& p) {
  std::vector<std::array<int64_t, 3>> out;
  const int64_t batches = boxes.dim(0), n = boxes.dim(1), classes = scores.dim(1);
  const float* bx = boxes.data<float>();
  const float* sc = scores.data<float>();
  if (p.max_per_class <= 0) return out;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Corners> corners;
    for (int64_t i = 0; i < n; ++i) corners.push_back(ReadBox(bx + (b * n + i) * 4, p.center_point_box));
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = sc + (b * classes + c) * n;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i) {
        if (!p.has_score_threshold || s[i] > p.score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_per_class) break;
        bool suppressed = false;
        for (int64_t k : kept) {
          if (Iou(corners[i], corners[k]) > p.iou_threshold) {
            suppressed = true;
            break;
          }
        }
        if (suppressed) continue;
        kept.push_back(i);
        out.push_back({b, c, i});
      }
    }
  }
  return out;
}

}  // namespace edgec
