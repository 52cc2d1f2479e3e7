#include "ir/conv_geometry.h"

namespace edgec {

StatusOr<AutoPad> ParseAutoPad(std::string_view s) {
  if (s.empty() || s == "NOTSET") return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return InvalidArgument("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", s);
}

namespace {

// Reads an int-list attribute of `size` entries, each >= `min`, or `def_value` repeated.
StatusOr<Dims> ReadPerDim(const Attributes& attrs, const std::string& name, size_t size,
                          int64_t def_value, int64_t min) {
  if (!attrs.Has(name)) return Dims(size, def_value);
  Dims v = attrs.GetInts(name);
  if (v.size() != size) {
    return InvalidArgument("attribute {} {} has {} entries, expected {}", name, DimsToString(v),
                           v.size(), size);
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < min) {
      return InvalidArgument("attribute {} {}: entry {} is {}, must be >= {}", name,
                             DimsToString(v), i, v[i], min);
    }
  }
  return v;
}

int64_t DilatedKernel(int64_t kernel, int64_t dilation) { return (kernel - 1) * dilation + 1; }

// Splits a total pad per auto_pad: SAME_UPPER puts the extra one at the end.
void SplitSamePad(int64_t total, AutoPad mode, int64_t& begin, int64_t& end) {
  if (mode == AutoPad::kSameLower) {
    begin = total - total / 2;
    end = total / 2;
  } else {
    begin = total / 2;
    end = total - total / 2;
  }
}

}  // namespace

StatusOr<WindowAttrs> ReadWindowAttrs(const Attributes& attrs, int spatial_rank,
                                      const WindowAttrOptions& options) {
  const size_t n = static_cast<size_t>(spatial_rank);
  WindowAttrs a;
  if (attrs.Has("kernel_shape")) {
    ASSIGN_OR_RETURN(a.kernel, ReadPerDim(attrs, "kernel_shape", n, 1, 1));
    if (const Dims* w = options.kernel_from_weights) {
      for (size_t i = 0; i < n; ++i) {
        if ((*w)[i] != kUnknownDim && (*w)[i] != a.kernel[i]) {
          return InvalidArgument(
              "attribute kernel_shape {} does not match the spatial dims {} of W",
              DimsToString(a.kernel), DimsToString(*w));
        }
      }
    }
  } else if (options.kernel_from_weights) {
    a.kernel = *options.kernel_from_weights;
  } else {
    return InvalidArgument("attribute kernel_shape is required");
  }
  ASSIGN_OR_RETURN(a.strides, ReadPerDim(attrs, "strides", n, 1, 1));
  ASSIGN_OR_RETURN(a.dilations, ReadPerDim(attrs, "dilations", n, 1, 1));
  ASSIGN_OR_RETURN(a.auto_pad, ParseAutoPad(attrs.GetString("auto_pad", "NOTSET")));
  // Explicit pads only count with auto_pad NOTSET (the spec forbids mixing them).
  if (a.auto_pad == AutoPad::kNotSet) {
    ASSIGN_OR_RETURN(a.pads, ReadPerDim(attrs, "pads", 2 * n, 0, 0));
  } else {
    a.pads = Dims(2 * n, 0);
  }
  if (options.allow_ceil_mode) {
    int64_t c = attrs.GetInt("ceil_mode", 0);
    if (c != 0 && c != 1) return InvalidArgument("attribute ceil_mode is {}, expected 0 or 1", c);
    a.ceil_mode = c == 1;
  }
  if (options.transpose) {
    ASSIGN_OR_RETURN(a.output_padding, ReadPerDim(attrs, "output_padding", n, 0, 0));
    if (attrs.Has("output_shape")) {
      Dims s = attrs.GetInts("output_shape");
      if (s.size() == n + 2) s.erase(s.begin(), s.begin() + 2);  // full (N, C, ...) form
      if (s.size() != n) {
        return InvalidArgument("attribute output_shape {} has {} entries, expected {}",
                               DimsToString(attrs.GetInts("output_shape")), s.size(), n);
      }
      for (int64_t d : s) {
        if (d < 1) {
          return InvalidArgument("attribute output_shape {} has a dim < 1", DimsToString(s));
        }
      }
      a.output_shape = std::move(s);
    }
  }
  return a;
}

namespace {

WindowGeometry GeometryFrom(const WindowAttrs& a, const Dims& in_spatial) {
  const size_t n = in_spatial.size();
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = a.kernel;
  g.strides = a.strides;
  g.dilations = a.dilations;
  g.out.assign(n, kUnknownDim);
  g.pad_begin.assign(a.pads.begin(), a.pads.begin() + n);
  g.pad_end.assign(a.pads.begin() + n, a.pads.end());
  return g;
}

}  // namespace

StatusOr<WindowGeometry> ForwardWindowGeometry(const WindowAttrs& a, const Dims& in_spatial) {
  EDGEC_CHECK(in_spatial.size() == a.kernel.size());
  WindowGeometry g = GeometryFrom(a, in_spatial);
  for (int i = 0; i < g.rank(); ++i) {
    const int64_t in = g.in[i], s = g.strides[i];
    if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
      if (in == kUnknownDim) {
        g.pad_begin[i] = g.pad_end[i] = kUnknownDim;
        continue;
      }
      g.out[i] = CeilDiv(in, s);
      if (g.kernel[i] == kUnknownDim) {
        g.pad_begin[i] = g.pad_end[i] = kUnknownDim;
        continue;
      }
      const int64_t ek = DilatedKernel(g.kernel[i], g.dilations[i]);
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + ek - in);
      SplitSamePad(total, a.auto_pad, g.pad_begin[i], g.pad_end[i]);
      continue;
    }
    if (in == kUnknownDim || g.kernel[i] == kUnknownDim) continue;
    const int64_t ek = DilatedKernel(g.kernel[i], g.dilations[i]);
    const int64_t padded = in + g.pad_begin[i] + g.pad_end[i];
    if (padded < ek) {
      return InvalidArgument(
          "spatial dim {}: kernel {} (dilated {}) is larger than the padded input {} "
          "(input {} + pads {} + {})",
          i, g.kernel[i], ek, padded, in, g.pad_begin[i], g.pad_end[i]);
    }
    int64_t out = (a.ceil_mode ? CeilDiv(padded - ek, s) : (padded - ek) / s) + 1;
    // A window must start inside the input or its begin padding (as PyTorch and ORT do).
    if (a.ceil_mode && (out - 1) * s >= in + g.pad_begin[i]) --out;
    g.out[i] = out;
  }
  return g;
}

StatusOr<WindowGeometry> TransposeWindowGeometry(const WindowAttrs& a, const Dims& in_spatial) {
  EDGEC_CHECK(in_spatial.size() == a.kernel.size());
  WindowGeometry g = GeometryFrom(a, in_spatial);
  const bool same = a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower;
  for (int i = 0; i < g.rank(); ++i) {
    const int64_t in = g.in[i], s = g.strides[i], op = a.output_padding[i];
    const bool known = in != kUnknownDim && g.kernel[i] != kUnknownDim;
    const int64_t ek = known ? DilatedKernel(g.kernel[i], g.dilations[i]) : 0;
    if (!a.output_shape.empty() || same) {
      // The output size is given (or implied); the pads follow from it.
      if (!a.output_shape.empty()) {
        g.out[i] = a.output_shape[i];
      } else if (in != kUnknownDim) {
        g.out[i] = in * s;
      }
      if (!known || g.out[i] == kUnknownDim) {
        g.pad_begin[i] = g.pad_end[i] = kUnknownDim;
        continue;
      }
      const int64_t total = s * (in - 1) + op + ek - g.out[i];
      // The spec: SAME_UPPER puts the smaller half first; otherwise the larger half. The
      // total is negative when the output is larger than the natural one (halves rounded
      // down, as the ONNX reference does).
      const int64_t half = FloorDiv(total, 2);
      if (a.auto_pad == AutoPad::kSameUpper) {
        g.pad_begin[i] = half;
        g.pad_end[i] = total - half;
      } else {
        g.pad_begin[i] = total - half;
        g.pad_end[i] = half;
      }
      continue;
    }
    if (!known) continue;
    const int64_t out = s * (in - 1) + op + ek - g.pad_begin[i] - g.pad_end[i];
    if (out < 1) {
      return InvalidArgument(
          "spatial dim {}: output size {} = stride {} * (input {} - 1) + output_padding {} + "
          "dilated kernel {} - pads {} - {} is not positive",
          i, out, s, in, op, ek, g.pad_begin[i], g.pad_end[i]);
    }
    g.out[i] = out;
  }
  return g;
}

}  // namespace edgec
