#include "quant/int_resize.h"

#include <cmath>

namespace edgec::quant {
namespace {

StatusOr<IntResizeAxis> ToIntAxis(const ResizeAxis& a) {
  IntResizeAxis r;
  const size_t n = a.first.size() - 1;
  for (size_t o = 0; o < n; ++o) {
    const size_t b = a.first[o], e = a.first[o + 1];
    if (a.outside[o] || e == b || e - b > 2) return Unimplemented("coordinate {} has {} taps", o, e - b);
    r.lo.push_back(static_cast<int32_t>(a.taps[b].index));
    r.hi.push_back(static_cast<int32_t>(a.taps[e - 1].index));
    r.w.push_back(e - b == 1 ? 0 : static_cast<int32_t>(std::lround(a.taps[b + 1].weight * kResizeOne)));
  }
  return r;
}

}  // namespace

bool KeepsQuantization(const Node& n) {
  if (n.op() != OpKind::kResize) return false;
  const ResizeRules r = ReadResizeRules(n.attrs);
  return r.mode != ResizeRules::Mode::kCubic && r.coordinate_mode != "tf_crop_and_resize";
}

StatusOr<IntResizePlan> PlanIntResize(const ResizeRules& r, const Dims& in, const Dims& out,
                                      const std::vector<double>& scales, const std::vector<double>& roi) {
  if (r.mode == ResizeRules::Mode::kCubic) return Unimplemented("cubic resize has no integer form");
  if (r.coordinate_mode == "tf_crop_and_resize") return Unimplemented("tf_crop_and_resize has no integer form");
  if (in.size() != 4 || out.size() != 4) return Unimplemented("{}-d resize (the integer form is NCHW)", in.size());
  if (in[0] != out[0] || in[1] != out[1]) return Unimplemented("resize of the N or C axis");
  for (int k : {0, 1})
    if (!scales.empty() && scales[k] != 1.0) return Unimplemented("resize of the N or C axis");
  if (!roi.empty() && roi.size() != 8) return Unimplemented("roi of {} values", roi.size());
  IntResizePlan p;
  for (int k : {2, 3}) {
    const double scale = scales.empty() ? static_cast<double>(out[k]) / in[k] : scales[k];
    const double r0 = roi.empty() ? 0.0 : roi[k], r1 = roi.empty() ? 1.0 : roi[4 + k];
    ASSIGN_OR_RETURN(IntResizeAxis a, ToIntAxis(BuildResizeAxis(r, in[k], out[k], scale, r0, r1)));
    (k == 2 ? p.h : p.w) = std::move(a);
  }
  return p;
}

}  // namespace edgec::quant
