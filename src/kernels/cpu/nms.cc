// Fast NonMaxSuppression (a SizedByDataKernel: the number of kept boxes is known only after
// the selection). Per batch the boxes are read once into corner form with their areas; per
// class the candidates above the score threshold are ordered by decreasing score (ties: lower
// index first) and kept greedily when they overlap no kept box by more than the IoU
// threshold, at most max_output_boxes_per_class of them. The IoU is the reference's formula,
// operation for operation, so the kept indices are the same. The thresholds and the count
// are read at every run (they may be activations).
// tests/kernels/cpu/nms_test.cc against the reference (both box encodings, ties, thresholds).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "kernels/cpu/common.h"

namespace edgec::cpu {

namespace {

using KernelOrSized = StatusOr<std::unique_ptr<SizedByDataKernel>>;

struct Box {
  float y1, x1, y2, x2, area;
};

class NmsKernel final : public SizedByDataKernel {
 public:
  Status Run(std::span<const void* const> in, std::vector<Tensor>* outputs) override {
    const float* boxes = static_cast<const float*>(in[0]);
    const float* scores = static_cast<const float*>(in[1]);
    const int64_t max_per_class = in.size() > 2 && in[2] ? static_cast<const int64_t*>(in[2])[0] : 0;
    const float iou = in.size() > 3 && in[3] ? static_cast<const float*>(in[3])[0] : 0.0f;
    const bool has_threshold = in.size() > 4 && in[4];
    const float threshold = has_threshold ? static_cast<const float*>(in[4])[0] : 0.0f;
    selected_.clear();
    if (max_per_class > 0) {
      for (int64_t b = 0; b < batches_; ++b) {
        ReadBoxes(boxes + b * n_ * 4);
        for (int64_t c = 0; c < classes_; ++c) {
          SelectClass(b, c, scores + (b * classes_ + c) * n_, max_per_class, iou, has_threshold, threshold);
        }
      }
    }
    const int64_t count = static_cast<int64_t>(selected_.size());
    outputs->resize(1);
    (*outputs)[0] = Tensor(DType::kI64, {count, 3});
    int64_t* y = (*outputs)[0].data<int64_t>();
    for (int64_t i = 0; i < count; ++i) std::copy(selected_[i].begin(), selected_[i].end(), y + i * 3);
    return Status::Ok();
  }
  std::string Describe() const override { return center_ ? "own nms f32 (center boxes)" : "own nms f32"; }

  int64_t batches_ = 0, n_ = 0, classes_ = 0;
  bool center_ = false;

 private:
  void ReadBoxes(const float* b) {
    box_.resize(n_);
    for (int64_t i = 0; i < n_; ++i, b += 4) {
      Box& r = box_[i];
      if (center_) {
        const float hw = b[2] / 2, hh = b[3] / 2;
        r = {b[1] - hh, b[0] - hw, b[1] + hh, b[0] + hw, 0};
      } else {
        r = {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3]), 0};
      }
      r.area = (r.y2 - r.y1) * (r.x2 - r.x1);
    }
  }

  // Whether the IoU of boxes a and b exceeds `iou` (0 when either has no area).
  static bool Overlaps(const Box& a, const Box& b, float iou) {
    float v = 0;
    if (a.area > 0 && b.area > 0) {
      const float h = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
      const float w = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
      const float inter = h * w;
      // Boxes that do not meet have IoU 0 without the division.
      if (inter > 0) v = inter / (a.area + b.area - inter);
    }
    return v > iou;
  }

  void SelectClass(int64_t b, int64_t c, const float* s, int64_t max_per_class, float iou, bool has_threshold,
                   float threshold) {
    order_.clear();
    bool nan = false;
    for (int64_t i = 0; i < n_; ++i) {
      if (!has_threshold || s[i] > threshold) {
        order_.push_back(i);
        nan |= std::isnan(s[i]);
      }
    }
    // Decreasing score, ties by index: the order a stable sort gives, without its buffer.
    // NaN scores have no order: then the stable sort the reference runs, for the same result.
    if (nan) {
      std::stable_sort(order_.begin(), order_.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
    } else {
      std::sort(order_.begin(), order_.end(), [&](int64_t x, int64_t y) { return s[x] > s[y] || (s[x] == s[y] && x < y); });
    }
    kept_.clear();
    for (int64_t i : order_) {
      if (static_cast<int64_t>(kept_.size()) >= max_per_class) break;
      bool suppressed = false;
      for (int64_t k : kept_) {
        if (Overlaps(box_[i], box_[k], iou)) {
          suppressed = true;
          break;
        }
      }
      if (suppressed) continue;
      kept_.push_back(i);
      selected_.push_back({b, c, i});
    }
  }

  std::vector<Box> box_;
  std::vector<int64_t> order_, kept_;
  std::vector<std::array<int64_t, 3>> selected_;
};

KernelOrSized CreateNms(const KernelRequest& req) {
  if (req.inputs.size() < 2 || req.inputs.size() > 5 || req.outputs.size() != 1) {
    return Refuse(req, "expected 2 to 5 inputs and 1 output");
  }
  const TensorDesc& boxes = req.inputs[0];
  const TensorDesc& scores = req.inputs[1];
  if (boxes.dtype != DType::kF32 || scores.dtype != DType::kF32) return Refuse(req, "boxes and scores must be f32");
  if (boxes.dims.size() != 3 || scores.dims.size() != 3 || boxes.dims[2] != 4 || boxes.dims[0] != scores.dims[0] ||
      boxes.dims[1] != scores.dims[2]) {
    return Refuse(req, "boxes {} and scores {} are not [B, N, 4] and [B, C, N]", DimsToString(boxes.dims),
                  DimsToString(scores.dims));
  }
  const DType want[] = {DType::kF32, DType::kF32, DType::kI64, DType::kF32, DType::kF32};
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    const TensorDesc& d = req.inputs[i];
    if (!Present(d)) continue;
    if (d.dtype != want[i] || !IsDense(d) || d.layout != Layout::kRowMajor) {
      return Refuse(req, "input {} is {} {}; expected dense row-major {}", i, DTypeName(d.dtype), DimsToString(d.dims),
                    DTypeName(want[i]));
    }
    if (i >= 2 && NumElements(d.dims) != 1) return Refuse(req, "input {} has {} elements, expected 1", i, NumElements(d.dims));
  }
  auto k = std::make_unique<NmsKernel>();
  k->batches_ = boxes.dims[0];
  k->n_ = boxes.dims[1];
  k->classes_ = scores.dims[1];
  const int64_t center = req.attrs ? req.attrs->GetInt("center_point_box", 0) : 0;
  if (center != 0 && center != 1) return Refuse(req, "center_point_box is {}", center);
  k->center_ = center == 1;
  return std::unique_ptr<SizedByDataKernel>(std::move(k));
}

}  // namespace

StatusOr<std::unique_ptr<SizedByDataKernel>> CreateSizedByDataKernel(const KernelRequest& req) {
  switch (req.op) {
    case OpKind::kNonMaxSuppression: return CreateNms(req);
    default: return Refuse(req, "no fast CPU kernel for {} (its output size depends on the data)", OpName(req.op));
  }
}

}  // namespace edgec::cpu
