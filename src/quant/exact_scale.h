// Activation scales whose dequantized values are exact in f32.
//
// DequantizeLinear computes (q − zp) · s in f32. With |q − zp| ≤ 255 (8 bits) and s of at
// most 16 significant bits, the product has at most 24 and is exact. The quantizer rounds
// the activation scales it chooses up to 16 bits (a relative change below 2^-15; see
// ParamsFromRange); kernels may then replace sums of dequantized values by integer sums
// times s, bit for bit (the quantized global average pool). Scales read from a model or
// written in a scale table by hand are taken as they are; kernels check them with
// DequantizesExactly.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace edgec::quant {

// The significant bits an exact-dequantization scale may have.
constexpr int kExactScaleBits = 16;

// The smallest f32 >= s (s > 0, finite) with at most kExactScaleBits significant bits.
inline float RoundScaleForExactDequantization(double s) {
  int e = 0;
  const double f = std::frexp(s, &e);  // s = f · 2^e, f in [0.5, 1)
  const double m = std::ceil(std::ldexp(f, kExactScaleBits));  // in [2^15, 2^16]
  const float r = static_cast<float>(std::ldexp(m, e - kExactScaleBits));  // exact: m has <= 17 bits, 2^16 one
  return std::isfinite(r) && r > 0 ? r : static_cast<float>(s);
}

// Whether every (q − zp) · s with |q − zp| <= 255 is exact in f32: s is a normal float with
// at most kExactScaleBits significant bits, far enough from overflow and underflow.
inline bool DequantizesExactly(float s) {
  if (!(s >= 0x1p-100f && s <= 0x1p100f)) return false;
  return (std::bit_cast<uint32_t>(s) & ((1u << (24 - kExactScaleBits)) - 1u)) == 0;
}

}  // namespace edgec::quant
