// Window geometry shared by Conv, ConvTranspose, the quantized convs and the pools: reading
// the kernel/stride/dilation/pad attributes with the ONNX defaults, the output size of each
// spatial dim and the pads that auto_pad implies. Shape inference and the reference kernels
// both use it, so the sizes they compute cannot disagree.
//
// Errors are plain messages; callers add the node label (Status::WithContext).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/tensor.h"
#include "ir/types.h"

namespace edgec {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

StatusOr<AutoPad> ParseAutoPad(std::string_view s);

// The window attributes of one node, ONNX defaults applied; one entry per spatial dim.
struct WindowAttrs {
  Dims kernel;     // from kernel_shape, or from W; kUnknownDim when W's dim is unknown
  Dims strides;    // default 1
  Dims dilations;  // default 1
  Dims pads;       // 2n entries: all begins, then all ends (ONNX order); default 0
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
  Dims output_padding;  // ConvTranspose only; default 0
  Dims output_shape;    // ConvTranspose only; empty when absent (spatial dims only)

  int rank() const { return static_cast<int>(kernel.size()); }
};

// What a node reads. Conv-like ops take the kernel from W when kernel_shape is absent;
// pools require kernel_shape.
struct WindowAttrOptions {
  const Dims* kernel_from_weights = nullptr;  // spatial dims of W, may hold kUnknownDim
  bool allow_ceil_mode = false;
  bool allow_dilations = true;
  bool transpose = false;  // read output_padding / output_shape
};

StatusOr<WindowAttrs> ReadWindowAttrs(const Attributes& attrs, int spatial_rank,
                                      const WindowAttrOptions& options);

// The geometry of every spatial dim: input, output, and the pads actually applied
// (auto_pad resolved). Unknown input dims give unknown outputs and pads.
struct WindowGeometry {
  Dims in, out, kernel, strides, dilations, pad_begin, pad_end;
  int rank() const { return static_cast<int>(in.size()); }
};

// Conv and pools: out = floor_or_ceil((in + pads - dilated_kernel) / stride) + 1.
// Fails when the dilated kernel is larger than the padded input.
StatusOr<WindowGeometry> ForwardWindowGeometry(const WindowAttrs& a, const Dims& in_spatial);

// ConvTranspose: out = stride * (in - 1) + output_padding + dilated_kernel - pads, or
// output_shape (or in * stride for SAME_*) with the pads derived from it.
StatusOr<WindowGeometry> TransposeWindowGeometry(const WindowAttrs& a, const Dims& in_spatial);

// Floor division for a possibly negative numerator (b > 0).
inline int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The t in [0, count) with 0 <= t * stride + offset < limit, as a half-open range
// [first, last) (empty when first >= last). Hoists the bounds test out of window loops.
struct IndexRange {
  int64_t first = 0, last = 0;
};
inline IndexRange StridedValidRange(int64_t count, int64_t stride, int64_t offset, int64_t limit) {
  IndexRange r;
  r.first = offset >= 0 ? 0 : CeilDiv(-offset, stride);
  r.last = limit - offset <= 0 ? 0 : CeilDiv(limit - offset, stride);
  if (r.first < 0) r.first = 0;
  if (r.last > count) r.last = count;
  if (r.last < r.first) r.last = r.first;
  return r;
}

}  // namespace edgec
