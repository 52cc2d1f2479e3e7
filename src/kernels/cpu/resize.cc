// Own Resize for 4-D f32 tensors resized over H and W (N and C kept), modes nearest and
// linear, in row-major or NHWC. The taps of every output row and column (input index and
// weight) are computed once at creation with the reference kernel's rules (coordinate
// transformation, nearest rounding, edge clamping, exclude_outside); Run only blends.
// Cubic and tf_crop_and_resize fall back to the reference kernel.
#include <cmath>
#include <cstring>

#include "ir/resize_coordinate.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

struct Taps {
  int count = 0;
  int64_t index[2] = {0, 0};
  float weight[2] = {0, 0};
};

struct ResizeRules {
  bool linear = false;
  std::string coordinate_mode, nearest_mode;
  bool exclude_outside = false;
};

// Taps along one axis: `left` is the last integer strictly below x, the fraction in (0, 1].
std::vector<Taps> AxisTaps(const ResizeRules& r, int64_t in_len, int64_t out_len, double scale) {
  std::vector<Taps> taps(out_len);
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = ResizeSourceCoordinate(r.coordinate_mode, o, in_len, scale);
    const double left = std::ceil(x) - 1;
    const double ratio = x - left;
    double c[2];
    if (r.linear) {
      c[0] = 1 - ratio;
      c[1] = ratio;
    } else {
      const bool right = ResizeNearestTakesRight(r.nearest_mode, ratio);
      c[0] = right ? 0.0 : 1.0;
      c[1] = right ? 1.0 : 0.0;
    }
    const int64_t first = static_cast<int64_t>(left);
    if (r.exclude_outside) {
      double total = 0;
      for (int i = 0; i < 2; ++i) {
        if (first + i < 0 || first + i >= in_len) c[i] = 0;
        total += c[i];
      }
      for (double& v : c) v /= total;
    }
    Taps& t = taps[o];
    for (int i = 0; i < 2; ++i) {
      if (c[i] == 0) continue;
      t.index[t.count] = std::clamp<int64_t>(first + i, 0, in_len - 1);
      t.weight[t.count] = static_cast<float>(c[i]);
      ++t.count;
    }
  }
  return taps;
}

// True when every output coordinate reads only the input coordinate of its own index with
// total weight 1 (as the reference gives a unit-scale axis under most transformations;
// tf_half_pixel_for_nn shifts it by half a pixel).
bool IsIdentity(const std::vector<Taps>& taps) {
  for (size_t o = 0; o < taps.size(); ++o) {
    float total = 0;
    for (int i = 0; i < taps[o].count; ++i) {
      if (taps[o].index[i] != static_cast<int64_t>(o)) return false;
      total += taps[o].weight[i];
    }
    if (total != 1.0f) return false;
  }
  return true;
}

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(bool nhwc, bool linear, Dims in, Dims out, std::vector<Taps> h, std::vector<Taps> w,
               int threads)
      : nhwc_(nhwc), linear_(linear), in_(std::move(in)), out_(std::move(out)), h_(std::move(h)),
        w_(std::move(w)), threads_(threads), gather_(SingleTaps(h_) && SingleTaps(w_)) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    if (NumElements(out_) == 0) return Status::Ok();
    if (nhwc_) RunNhwc(x, y);
    else RunNchw(x, y);
    return Status::Ok();
  }

  std::string Describe() const override {
    return fmt::format("own resize {} {} f32{}", linear_ ? "linear" : "nearest", nhwc_ ? "nhwc" : "nchw",
                       gather_ && !nhwc_ ? " (gather)" : "");
  }

 private:
  // True when every output row and column reads one input row and column with weight 1
  // (nearest): Run then gathers, and copies an output row that repeats the one above.
  static bool SingleTaps(const std::vector<Taps>& taps) {
    for (const Taps& t : taps) {
      if (t.count != 1 || t.weight[0] != 1.0f) return false;
    }
    return true;
  }

  void RunNchwGather(const float* x, float* y) const {
    const int64_t planes = in_[0] * in_[1], ih = in_[2], iw = in_[3], oh = out_[2], ow = out_[3];
    ParallelFor(threads_, planes * oh, std::max<int64_t>(1, 16384 / std::max<int64_t>(ow, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t item = begin; item < end; ++item) {
                    const int64_t p = item / oh, r = item % oh;
                    float* row = y + (p * oh + r) * ow;
                    if (r > 0 && item > begin && h_[r - 1].index[0] == h_[r].index[0]) {
                      std::memcpy(row, row - ow, static_cast<size_t>(ow) * sizeof(float));
                      continue;
                    }
                    const float* src = x + (p * ih + h_[r].index[0]) * iw;
                    for (int64_t c = 0; c < ow; ++c) row[c] = src[w_[c].index[0]];
                  }
                });
  }

  void RunNchw(const float* x, float* y) const {
    if (gather_) return RunNchwGather(x, y);
    const int64_t planes = in_[0] * in_[1], ih = in_[2], iw = in_[3], oh = out_[2], ow = out_[3];
    ParallelFor(threads_, planes * oh, std::max<int64_t>(1, 4096 / std::max<int64_t>(ow, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t item = begin; item < end; ++item) {
                    const int64_t p = item / oh, r = item % oh;
                    const float* plane = x + p * ih * iw;
                    float* row = y + (p * oh + r) * ow;
                    const Taps& th = h_[r];
                    for (int64_t c = 0; c < ow; ++c) {
                      const Taps& tw = w_[c];
                      float v = 0;
                      for (int a = 0; a < th.count; ++a) {
                        const float* src = plane + th.index[a] * iw;
                        float s = 0;
                        for (int b = 0; b < tw.count; ++b) s += tw.weight[b] * src[tw.index[b]];
                        v += th.weight[a] * s;
                      }
                      row[c] = v;
                    }
                  }
                });
  }

  void RunNhwc(const float* x, float* y) const {
    const int64_t n = in_[0], ch = in_[1], ih = in_[2], iw = in_[3], oh = out_[2], ow = out_[3];
    const vec::Table& t = vec::Kernels();
    ParallelFor(threads_, n * oh, std::max<int64_t>(1, 4096 / std::max<int64_t>(ow * ch, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t item = begin; item < end; ++item) {
                    const int64_t b = item / oh, r = item % oh;
                    const Taps& th = h_[r];
                    for (int64_t c = 0; c < ow; ++c) {
                      const Taps& tw = w_[c];
                      const float* src[4];
                      float weight[4];
                      int taps = 0;
                      for (int i = 0; i < th.count; ++i) {
                        for (int j = 0; j < tw.count; ++j) {
                          src[taps] = x + ((b * ih + th.index[i]) * iw + tw.index[j]) * ch;
                          weight[taps++] = th.weight[i] * tw.weight[j];
                        }
                      }
                      t.blend(src, weight, taps, y + ((b * oh + r) * ow + c) * ch, ch);
                    }
                  }
                });
  }

  bool nhwc_, linear_;
  Dims in_, out_;
  std::vector<Taps> h_, w_;
  int threads_;
  bool gather_;
};

}  // namespace

KernelOr CreateResizeKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req, {0}));
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (y.dtype != DType::kF32) return Refuse(req, "output is not f32");
  if (x.dims.size() != 4) return Refuse(req, "input has {} dims; the fast Resize is 4-d", x.dims.size());
  if (x.layout != y.layout) return Refuse(req, "input and output layouts differ");
  if (x.dims[0] != y.dims[0] || x.dims[1] != y.dims[1]) return Refuse(req, "resizes N or C");
  const Attributes& a = *req.attrs;
  ResizeRules rules;
  const std::string mode = a.GetString("mode", "nearest");
  if (mode != "nearest" && mode != "linear") return Refuse(req, "mode '{}' is not nearest or linear", mode);
  rules.linear = mode == "linear";
  rules.coordinate_mode = a.GetString("coordinate_transformation_mode", "half_pixel");
  if (rules.coordinate_mode == "tf_crop_and_resize") return Refuse(req, "tf_crop_and_resize is not supported");
  rules.nearest_mode = a.GetString("nearest_mode", "round_prefer_floor");
  rules.exclude_outside = a.GetInt("exclude_outside", 0) != 0;

  double scale[4];
  for (int k = 0; k < 4; ++k) scale[k] = static_cast<double>(y.dims[k]) / static_cast<double>(x.dims[k]);
  if (const TensorDesc* s = InputOrNull(req, 2); s && NumElements(s->dims) > 0) {
    const Tensor* t = ConstantOrNull(req, 2);
    if (!t) return Refuse(req, "scales is not constant");
    const std::vector<double> v = t->ToDoubleVector();
    if (v.size() != 4) return Refuse(req, "scales has {} entries", v.size());
    for (int k = 0; k < 4; ++k) scale[k] = v[k];
  }
  for (int k = 0; k < 2; ++k) {
    if (!IsIdentity(AxisTaps(rules, x.dims[k], y.dims[k], scale[k]))) {
      return Refuse(req, "{} with scale 1 on axis {} still moves elements along it", rules.coordinate_mode, k);
    }
  }
  return std::unique_ptr<Kernel>(new ResizeKernel(
      x.layout == Layout::kNHWC, rules.linear, x.dims, y.dims, AxisTaps(rules, x.dims[2], y.dims[2], scale[2]),
      AxisTaps(rules, x.dims[3], y.dims[3], scale[3]), std::max(1, req.threads)));
}

}  // namespace edgec::cpu
