// QLinearAdd and QLinearMul in their float mode: the scales folded into ratios to the
// output's scale, the zero points into one constant, in f32 — the arithmetic ONNX Runtime's
// x86 kernels use for the same ops when it fuses DQ, DQ -> Add|Mul -> Q (MLAS, AVX2 add and
// SSE2 mul), so that the two engines round alike next to a rounding tie. (The island's own
// arithmetic, two dequantizes, the op, a quantize, rounds one value in ~10^5 to the other
// side of a tie; in a deep network such a one-step difference can grow to several steps
// at the output, so the test oracle's form is the one to compute.)
//
//   add: r_a = s_a / s_y, r_b = s_b / s_y, base = z_y − fma(r_a, z_a, r_b · z_b)
//        v = fma(a, r_a, fma(b, r_b, base))            (a, b the raw integers)
//   mul: r = (s_a · s_b) / s_y
//        v = f32((a − z_a)(b − z_b)) · r + z_y         (a multiply, then an add: no FMA)
//   y = saturate(round_half_to_even(v)) to [qmin, qmax]; NaN -> z_y.
//
// `b` is the operand folded first: the node's input 3, or the one that is broadcast when
// input 0 is (ONNX Runtime then passes that one as its scalar operand). The product of the
// mul is exact (|·| ≤ 255², below 2^24), so its order does not matter. Every user of these
// forms is compiled with -ffp-contract=off (CMakeLists.txt) so that the mul's multiply and
// add stay two roundings. tests/quant/ort_binary_ops.py checks them against ONNX Runtime on
// every pair of operand values.
#pragma once

#include <cmath>
#include <cstdint>

namespace edgec::quant {

struct RatioAddParams {
  float ra = 1, rb = 1, base = 0;
};

inline RatioAddParams MakeRatioAdd(float sa, int32_t za, float sb, int32_t zb, float sy, int32_t zy) {
  RatioAddParams p;
  p.ra = sa / sy;
  p.rb = sb / sy;
  p.base = static_cast<float>(zy) - std::fma(p.ra, static_cast<float>(za), p.rb * static_cast<float>(zb));
  return p;
}

inline float RatioAdd(int32_t a, int32_t b, const RatioAddParams& p) {
  return std::fma(static_cast<float>(a), p.ra, std::fma(static_cast<float>(b), p.rb, p.base));
}

struct RatioMulParams {
  float ratio = 1, zy = 0;
  int32_t za = 0, zb = 0;
};

inline RatioMulParams MakeRatioMul(float sa, int32_t za, float sb, int32_t zb, float sy, int32_t zy) {
  const float sab = sa * sb;
  return {sab / sy, static_cast<float>(zy), za, zb};
}

inline float RatioMul(int32_t a, int32_t b, const RatioMulParams& p) {
  const float product = static_cast<float>((a - p.za) * (b - p.zb)) * p.ratio;
  return product + p.zy;
}

// The last step of both: v rounded half to even and clamped; NaN (an infinite ratio times a
// zero product) gives the zero point.
inline int32_t RoundAndClamp(float v, float nan_value, int32_t qmin, int32_t qmax) {
  if (std::isnan(v)) v = nan_value;
  const float r = std::nearbyint(v);
  return static_cast<int32_t>(std::fmin(std::fmax(r, static_cast<float>(qmin)), static_cast<float>(qmax)));
}

}  // namespace edgec::quant
