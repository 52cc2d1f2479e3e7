#include "quant/rescale.h"

#include <algorithm>
#include <cmath>

namespace edgec::quant {

StatusOr<RescaleParams> MakeRescale(double x_scale, int32_t x_zero_point, double y_scale, int32_t y_zero_point,
                                    int32_t qmin, int32_t qmax) {
  if (!(x_scale > 0) || !(y_scale > 0) || !std::isfinite(x_scale) || !std::isfinite(y_scale))
    return InvalidArgument("requantize: scales {} and {} must be finite and > 0", x_scale, y_scale);
  if (qmin > qmax) return InvalidArgument("requantize: clamp [{}, {}] is empty", qmin, qmax);
  RescaleParams p;
  p.x_zero_point = x_zero_point;
  p.y_zero_point = y_zero_point;
  p.qmin = qmin;
  p.qmax = qmax;
  ASSIGN_OR_RETURN(p.m, QuantizeMultiplier(x_scale / y_scale / static_cast<double>(1 << kRescaleLeftShift)));
  return p;
}

int32_t Rescale(int32_t x, const RescaleParams& p) {
  const int32_t lifted = (x - p.x_zero_point) * (1 << kRescaleLeftShift);
  return Requantize(lifted, p.m, p.y_zero_point, p.qmin, p.qmax);
}

}  // namespace edgec::quant
