// A QLinearAveragePool as a VEC avgpool layer (see npu_layer_util.h): the window sums on the
// vector cores with the padding loaded as the input zero point (adding nothing), requantized
// by one multiplier when every window has the same divisor, else by one per output pixel
// (count_include_pad = 0 beside padding, ceil_mode's extra windows: quant/avg_pool.h's
// divisors). NpuVectorOpsTest.AveragePool* check the program against the reference.
#include <algorithm>
#include <tuple>

#include "ir/conv_geometry.h"
#include "lower/npu_layer_util.h"
#include "quant/avg_pool.h"

namespace edgec::lower {

StatusOr<npu::PoolLayer> AveragePoolLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  if (!Is8(x) || !Is8(y)) return Unimplemented("dtype {} average pool not lowered (8-bit only)", DTypeName(x->type.dtype));
  ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
  if (xd.size() != 4) return Unimplemented("{}-d average pool (only 2-d)", static_cast<int>(xd.size()) - 2);
  WindowAttrOptions wo;
  wo.allow_ceil_mode = true;
  ASSIGN_OR_RETURN(WindowAttrs a, ReadWindowAttrs(n.attrs, 2, wo));
  ASSIGN_OR_RETURN(WindowGeometry g, ForwardWindowGeometry(a, Dims{xd[2], xd[3]}));
  if (g.dilations[0] != 1 || g.dilations[1] != 1)
    return Unimplemented("average pool with dilations {} not lowered (the VEC window is dense)", DimsToString(g.dilations));
  ASSIGN_OR_RETURN(std::vector<double> sx, Scales(n, 1, "X scale"));
  ASSIGN_OR_RETURN(std::vector<double> sy, Scales(n, 3, "Y scale"));
  ASSIGN_OR_RETURN(int32_t zx, ScalarZeroPoint(n, 2, "X zero point"));
  ASSIGN_OR_RETURN(int32_t zy, ScalarZeroPoint(n, 4, "Y zero point"));
  const bool y_u8 = y->type.dtype == DType::kU8;
  npu::PoolLayer l;
  l.name = n.name();
  l.max = false;
  FillWindow(l, xd, g);
  // ceil_mode's last windows reach past the end pads: more end padding (the zero point, which
  // adds nothing to a sum) makes the floor-rounded count the ceil-rounded one; their divisors
  // stay the reference's (they never count positions past the end pads).
  l.pad_bottom = static_cast<int>(std::max<int64_t>(g.pad_end[0], (g.out[0] - 1) * g.strides[0] + g.kernel[0] - g.in[0] - g.pad_begin[0]));
  l.pad_right = static_cast<int>(std::max<int64_t>(g.pad_end[1], (g.out[1] - 1) * g.strides[1] + g.kernel[1] - g.in[1] - g.pad_begin[1]));
  const Dims& yd = y->type.dims;
  if (yd.size() != 4 || yd[2] != l.out_h() || yd[3] != l.out_w() || g.out[0] != l.out_h() || g.out[1] != l.out_w())
    return Unimplemented("average pool output {} is not the padded window count {}x{}", DimsToString(yd), l.out_h(), l.out_w());
  l.x_zero_point = x->type.dtype == DType::kU8 ? zx - 128 : zx;
  l.y_zero_point = y_u8 ? zy - 128 : zy;
  std::tie(l.act_min, l.act_max) = ClampInI8(n, y_u8);
  // As the reference's fixed-point mode: f32 scales, x_scale / (y_scale * divisor).
  const float fx = static_cast<float>(sx.at(0)), fy = static_cast<float>(sy.at(0));
  const std::vector<int64_t> divisor = quant::AveragePoolDivisors(g, n.attrs.GetInt("count_include_pad", 0) != 0);
  std::vector<quant::FixedPointMultiplier> mult;
  for (int64_t d : divisor) {
    if (d <= 0) {  // a window of padding only: its sum is 0, its output the zero point
      mult.emplace_back();
      continue;
    }
    auto m = quant::AveragePoolMultiplier(fx, fy, d);
    if (!m.ok()) return Unimplemented("requantization multiplier for divisor {}: {}", d, m.status().message());
    mult.push_back(*m);
  }
  const bool one = std::all_of(divisor.begin(), divisor.end(), [&](int64_t d) { return d == divisor[0]; });
  if (one) l.mult = mult.at(0);
  else l.pixel_mult = std::move(mult);
  return l;
}

}  // namespace edgec::lower
