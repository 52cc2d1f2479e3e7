// What the own int8 elementwise kernels (int8_quantize, int8_lookup, int8_binary,
// int8_global_pool) share: the ISA checks and the reading of QLinear* parameters.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel.h"

namespace edgec::cpu {

// Elements per thread below which a kernel stays on one thread.
constexpr int64_t kInt8Grain = 16384;

// AVX2 (and FMA) unless the CPU lacks it or the own kernels are capped to scalar
// (cpu::CapVectorIsa), as for the other own kernels.
bool HasAvx2();
bool HasAvx2Fma();
// AVX-512 BW + VL within the cap (OwnAvx512).
bool HasAvx512();

// Scale and zero point inputs at (s, s + 1) as constant scalars, or a refusal.
Status ScalarParams(const KernelRequest& req, int s, double* scale, int32_t* zp);
// The requantization mode and output clamp of a QLinear* node, as the reference reads them.
Status ModeAndClamp(const KernelRequest& req, DType out, bool* fixed_point, int32_t* qmin, int32_t* qmax);

}  // namespace edgec::cpu
