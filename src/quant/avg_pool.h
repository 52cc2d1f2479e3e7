// The quantized average pool's divisors and fixed-point multipliers, shared by every unit
// that computes QLinearAveragePool (ops.def): the reference kernel, the CPU's fast kernel and
// the NPU lowering (its per-pixel multipliers), so they agree bit for bit.
//
// The divisor of an output position is AveragePool's: the window positions inside X, or with
// count_include_pad also those in the pads, never those past the end pads (ceil_mode's
// extra windows reach there). It is the product of one count per spatial axis.
// The fixed-point mode requantizes sum(X − zx) over the positions inside X by
//   x_scale / (y_scale · divisor)   (f32 scales, the quotient in f64: QuantizeMultiplier),
// the global pool's formula with the window's own divisor (FoldAveragePool.*,
// CpuInt8.QuantizedAveragePoolEqualsReferenceAndTheIsland, NpuVectorOpsTest.AveragePool*).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/conv_geometry.h"
#include "quant/fixed_point.h"
#include "support/status.h"

namespace edgec::quant {

// The divisor of every output position of one spatial plane (row-major over g.out); 0 where
// a window holds no counted position (its output is the zero point).
std::vector<int64_t> AveragePoolDivisors(const WindowGeometry& g, bool count_include_pad);

// x_scale / (y_scale · divisor) as a fixed-point multiplier (divisor > 0).
StatusOr<FixedPointMultiplier> AveragePoolMultiplier(float x_scale, float y_scale, int64_t divisor);

}  // namespace edgec::quant
