#include "kernels/ref/conv_util.h"

#include <cstring>

namespace edgec::ref {

StatusOr<ConvProblem> MakeConvProblem(const std::string& label, const Attributes& attrs,
                                      const Dims& x, const Dims& w, bool transpose) {
  const int spatial = static_cast<int>(x.size()) - 2;
  if (spatial < 1 || spatial > 3 || w.size() != x.size()) {
    return Unimplemented("{}: X {} and W {}: only 1 to 3 spatial dims are supported", label,
                         DimsToString(x), DimsToString(w));
  }
  const Dims w_spatial(w.begin() + 2, w.end());
  WindowAttrOptions options;
  options.kernel_from_weights = &w_spatial;
  options.transpose = transpose;
  auto attrs_or = ReadWindowAttrs(attrs, spatial, options);
  if (!attrs_or.ok()) return attrs_or.status().WithContext(label);
  const Dims x_spatial(x.begin() + 2, x.end());
  auto geom_or = transpose ? TransposeWindowGeometry(*attrs_or, x_spatial)
                           : ForwardWindowGeometry(*attrs_or, x_spatial);
  if (!geom_or.ok()) return geom_or.status().WithContext(label);
  const WindowGeometry& g = *geom_or;

  ConvProblem p;
  p.batch = x[0];
  p.in_channels = x[1];
  p.group = attrs.GetInt("group", 1);
  p.out_channels = transpose ? w[1] * p.group : w[0];
  const int lead = 3 - spatial;  // leading dims of size 1
  for (int i = 0; i < spatial; ++i) {
    p.in[lead + i] = g.in[i];
    p.out[lead + i] = g.out[i];
    p.kernel[lead + i] = g.kernel[i];
    p.stride[lead + i] = g.strides[i];
    p.dilation[lead + i] = g.dilations[i];
    p.pad[lead + i] = g.pad_begin[i];
  }
  return p;
}

void StoreConverted(const Tensor& src, Tensor& dst) {
  EDGEC_CHECK(src.numel() == dst.numel());
  Tensor converted = src.CastTo(dst.dtype());
  if (dst.nbytes()) std::memcpy(dst.raw(), converted.raw(), dst.nbytes());
}

}  // namespace edgec::ref
