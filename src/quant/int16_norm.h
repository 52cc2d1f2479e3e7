// Wide integer normalization and softmax: the arithmetic of QLinearLayerNormalization,
// QLinearGroupNormalization and QLinearSoftmax when an input or output is int16 (the
// quantizer's mixed precision, quantization.md "int16 activations"). Shared by the reference
// kernels (kernels/ref/quant_norm.cc) and the NPU's VEC norm / softmax on int16 values, so the
// two agree bit for bit; 8-bit nodes keep quant/int_norm.h unchanged. The statistics and the
// products that can pass 64 bits use 128-bit intermediates (the vector core's wide
// accumulators).
//
// Normalization of a group of n values q_i (i8, u8 or i16), d_i = q_i − z_x (|d| < 2^16):
//   Σd, Σd² in int64 (n ≤ 2^20); V = n·Σd² − (Σd)² + E in int128, E = round(n²·ε / s_x²);
//   j = max(0, ⌈(bitwidth(V) − 62) / 2⌉), V' = ⌊V / 4^j⌋;
//   k = ⌊(62 − bitwidth(V')) / 2⌋, S = ⌊√(V'·4^k)⌋, R = round(2^62 / S)  (1/√V ≈ R·2^(k−j) / 2^62);
//   T_i = RoundShift(c_i·R, 42 − k + j), c_i = n·d_i − Σd         (the normalized value ·2^20);
//   y_i = clamp(z_y + RoundShift(RoundShift(T_i·M_c, 43 − e_c) + B_c, 8), lo, hi)
// with gamma_c / s_y ≈ M_c·2^(e_c − 31) and B_c = round(256·beta_c / s_y).
//
// Softmax of a row of n values q_i: d_i = max_j q_j − q_i ∈ [0, 65535];
//   e_i = RoundShift(H[d_i >> 8]·L[d_i & 255], 23), H[h] = round(2^23·exp(−s_x·256·h)),
//   L[l] = round(2^23·exp(−s_x·l))  (two 256-entry tables; for 8-bit inputs e_i = L[d_i], the
//   int8 table);
//   Σe in int64; a = 31 − bitwidth(Σe), S = Σe·2^a ∈ [2^30, 2^31), R = round(2^61 / S);
//   P_i = RoundShift(e_i·R, 37 − a)                                (the probability ·2^24);
//   y_i = clamp(z_y + RoundShift(P_i·M, 55 − e), lo, hi)   with 1/s_y ≈ M·2^(e − 31).
// tests/quant/int16_norm_test.cc checks both against the float formulas within one int16 step.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "support/status.h"
#include "quant/fixed_point.h"
#include "quant/int_norm.h"

namespace edgec::quant {

struct WideNormParams {
  int64_t count = 0;
  __int128 eps_term = 0;                   // E
  std::vector<int32_t> mult, shift;        // per channel of a group: M_c, e_c
  std::vector<int64_t> bias;               // B_c
  int32_t x_zero_point = 0, y_zero_point = 0, qmin = -32768, qmax = 32767;
};
StatusOr<WideNormParams> MakeWideNormParams(float x_scale, int32_t x_zero_point, const std::vector<float>& gamma,
                                            const std::vector<float>& beta, float y_scale, int32_t y_zero_point,
                                            int32_t qmin, int32_t qmax, int64_t count, float epsilon);

// NormGroup's statistics (Accumulate serves both) and j, the halvings V took to fit.
struct WideNormGroup : NormGroup {
  int j = 0;
};
void FinishGroup(WideNormGroup& g, const WideNormParams& p);
int32_t NormOutput(const WideNormGroup& g, const WideNormParams& p, int32_t q, int64_t c);

struct WideSoftmaxParams : SoftmaxOutput {
  std::array<int32_t, 256> exp_hi{}, exp_lo{};  // H, L
};
StatusOr<WideSoftmaxParams> MakeWideSoftmaxParams(float x_scale, float y_scale, int32_t y_zero_point, int32_t qmin,
                                                  int32_t qmax);
void SoftmaxRow(const int32_t* q, int64_t n, const WideSoftmaxParams& p, int32_t* out);

}  // namespace edgec::quant
