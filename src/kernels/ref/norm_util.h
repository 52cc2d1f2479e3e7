// What the reference normalizations over trailing dims share (LayerNormalization in norm.cc,
// RmsNormalization in composite.cc).
#pragma once

#include <cstdint>

#include "kernels/ref/kernel.h"

namespace edgec::ref {

// The first normalized dim (attribute axis, default -1, negative from the back) and epsilon
// (default 1e-5, widened from f32 as the attribute stores it).
struct NormAxisEpsilon {
  int axis;
  double epsilon;
};
inline NormAxisEpsilon ReadNormAxisEpsilon(const KernelContext& ctx, int rank) {
  const int64_t axis = ctx.attrs.GetInt("axis", -1);
  return {static_cast<int>(axis < 0 ? axis + rank : axis), ctx.attrs.GetFloat("epsilon", 1e-5f)};
}

}  // namespace edgec::ref
