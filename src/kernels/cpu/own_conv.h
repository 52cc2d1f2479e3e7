// What the own f32 convolutions (image_conv.cc, conv3x3_s2_wino.cc) read from a request alike:
// a 2-D Conv or FusedConv of f32 tensors with a constant W and, when present, a constant bias;
// one group, no dilation, no residual, an output whose dims agree with the window. Each kernel
// adds its own checks (layouts, channel counts, kernel size, stride) before or after.
#pragma once

#include <string>
#include <vector>

#include "ir/conv_geometry.h"
#include "ir/epilogue.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

// What a kernel keeps after its factory: the bias and the fused activation.
struct OwnConvEpilogue {
  std::vector<float> bias;  // empty: no bias
  ActivationSpec act;       // kNone for a plain Conv
  vec::UnaryFn act_fn{};

  const float* bias_or_null() const { return bias.empty() ? nullptr : bias.data(); }
  // " (epilogue: relu)" when an activation is fused, else "": the tail of a kernel's Describe.
  std::string Words() const;
  // Applies the fused activation to `count` floats in place (nothing without one).
  void Activate(float* y, int64_t count) const;
};

// The request's operands (valid while the request is) and what the kernel keeps.
struct OwnConv {
  const TensorDesc* x = nullptr;
  const TensorDesc* y = nullptr;
  const Tensor* w = nullptr;  // [m][c][kh][kw]
  WindowGeometry geom;
  OwnConvEpilogue epilogue;
};

// The request's operands and geometry, or the refusal (Refuse) naming what does not fit.
StatusOr<OwnConv> ReadOwnConv(const KernelRequest& req);

}  // namespace edgec::cpu
