// Reference kernels for the detection family (see ops.def): NonMaxSuppression (the greedy
// selection of ir/box_selection.h) and RoiAlign (bilinear samples averaged or maxed per bin).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/box_selection.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

Status NonMaxSuppression(KernelContext& ctx) {
  BoxSelectionParams p;
  p.center_point_box = ctx.attrs.GetInt("center_point_box", 0) == 1;
  if (const Tensor* t = ctx.input(2)) p.max_per_class = t->ToInt64Vector()[0];
  if (const Tensor* t = ctx.input(3)) p.iou_threshold = static_cast<float>(t->ToDoubleVector()[0]);
  if (const Tensor* t = ctx.input(4)) {
    p.has_score_threshold = true;
    p.score_threshold = static_cast<float>(t->ToDoubleVector()[0]);
  }
  const auto selected = SelectBoxes(*ctx.inputs[0], *ctx.inputs[1], p);
  Tensor& y = ctx.outputs[0];
  if (y.dim(0) != static_cast<int64_t>(selected.size())) {
    return ctx.Error("output {} does not hold the {} selected boxes", y.TypeString(), selected.size());
  }
  int64_t* out = y.data<int64_t>();
  for (size_t i = 0; i < selected.size(); ++i) std::copy(selected[i].begin(), selected[i].end(), out + 3 * i);
  return Status::Ok();
}

// RoiAlign: a roi scaled by spatial_scale (and shifted by half a pixel in half_pixel mode)
// splits into output_height × output_width bins; each bin takes sampling_ratio² (or
// ceil(bin size) per axis, adaptive) bilinear samples, averaged ("avg") or the largest of the
// four weighted corner terms over the samples ("max", ONNX Runtime's definition). A sample
// more than one pixel outside the image contributes 0; one within clamps to the border.
Status RoiAlign(KernelContext& ctx) {
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector();
  const std::vector<double> rois = ctx.inputs[1]->ToDoubleVector();
  const int64_t* batch_index = ctx.inputs[2]->data<int64_t>();
  Tensor& y = ctx.outputs[0];
  const int64_t channels = xt.dim(1), height = xt.dim(2), width = xt.dim(3);
  const int64_t oh = y.dim(2), ow = y.dim(3), nrois = y.dim(0);
  const bool avg = ctx.attrs.GetString("mode", "avg") == "avg";
  const bool half_pixel = ctx.attrs.GetString("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const double scale = ctx.attrs.GetFloat("spatial_scale", 1.0f);
  const int64_t ratio = ctx.attrs.GetInt("sampling_ratio", 0);
  const double offset = half_pixel ? 0.5 : 0.0;
  for (int64_t r = 0; r < nrois; ++r) {
    const int64_t b = batch_index[r];
    if (b < 0 || b >= xt.dim(0)) return ctx.Error("batch_indices[{}] = {} is outside [0, {})", r, b, xt.dim(0));
    const double x0 = rois[r * 4] * scale - offset, y0 = rois[r * 4 + 1] * scale - offset;
    double rw = rois[r * 4 + 2] * scale - offset - x0, rh = rois[r * 4 + 3] * scale - offset - y0;
    if (!half_pixel) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bin_h = rh / static_cast<double>(oh), bin_w = rw / static_cast<double>(ow);
    const int64_t grid_h = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh)));
    const int64_t grid_w = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow)));
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = x.data() + (b * channels + c) * height * width;
      for (int64_t ph = 0; ph < oh; ++ph) {
        for (int64_t pw = 0; pw < ow; ++pw) {
          double sum = 0, best = -std::numeric_limits<double>::infinity();
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              double sy = y0 + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
              double sx = x0 + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
              double terms[4] = {0, 0, 0, 0};
              if (!(sy < -1.0 || sy > height || sx < -1.0 || sx > width)) {
                sy = std::max(sy, 0.0);
                sx = std::max(sx, 0.0);
                int64_t ylo = static_cast<int64_t>(sy), xlo = static_cast<int64_t>(sx), yhi, xhi;
                if (ylo >= height - 1) yhi = ylo = height - 1, sy = static_cast<double>(ylo);
                else yhi = ylo + 1;
                if (xlo >= width - 1) xhi = xlo = width - 1, sx = static_cast<double>(xlo);
                else xhi = xlo + 1;
                const double ly = sy - ylo, lx = sx - xlo, hy = 1 - ly, hx = 1 - lx;
                terms[0] = hy * hx * plane[ylo * width + xlo];
                terms[1] = hy * lx * plane[ylo * width + xhi];
                terms[2] = ly * hx * plane[yhi * width + xlo];
                terms[3] = ly * lx * plane[yhi * width + xhi];
              }
              sum += terms[0] + terms[1] + terms[2] + terms[3];
              best = std::max(best, std::max(std::max(terms[0], terms[1]), std::max(terms[2], terms[3])));
            }
          }
          const double v = avg ? sum / count : (grid_h * grid_w > 0 ? best : 0.0);
          StoreFromDouble(y.dtype(), y.raw(), ((r * channels + c) * oh + ph) * ow + pw, v);
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace edgec::ref
