// Integer-only normalization and softmax: the arithmetic of QLinearLayerNormalization,
// QLinearGroupNormalization and QLinearSoftmax (ir/ops.def), shared by their reference kernels
// (kernels/ref/quant_norm.cc) and the NPU's VEC norm / softmax (npu/sim_functional.cc), so the
// two agree bit for bit. No floating point runs per element: the float parts (gamma / y_scale,
// the exp table) are turned into integers once per op, by the Make* functions, from the f32
// scales.
//
// Normalization of one group of n int8 values q_i (x_i = s_x·(q_i − z_x)), d_i = q_i − z_x:
//   Σd and Σd² in int64; c_i = n·d_i − Σd  (= n·(d_i − mean));
//   V = n·Σd² − (Σd)² + E,  E = round(n²·ε / s_x²)   (= n²·(var + ε) in d units; V ≥ 1);
//   k = ⌊(62 − bitwidth(V)) / 2⌋, S = ⌊√(V·4^k)⌋ ∈ [2^30, 2^31), R = round(2^62 / S)
//   (so 1/√V ≈ R·2^k / 2^62, 31 significant bits);
//   T_i = RoundShift(c_i·R, 46 − k)                     (the normalized value ·2^16);
//   y_i = clamp(z_y + RoundShift(RoundShift(T_i·M_c, 39 − e_c) + B_c, 8), lo, hi)
// with gamma_c / s_y ≈ M_c·2^(e_c − 31) (quant::QuantizeMultiplier) and B_c = round(256·beta_c / s_y)
// for the group's channel c of value i. RoundShift(x, s) = ⌊(x + 2^(s−1)) / 2^s⌋ (ties up),
// 0 for s ≥ 63. Limits (checked by MakeNormParams): n ≤ 2^20, E < 2^58, e_c ≤ 39,
// |B_c| < 2^30; then no intermediate leaves int64.
//
// Softmax of one row of n int8 values q_i: d_i = q_i − max_j q_j ∈ [−255, 0];
//   e_i = X[−d_i], X[j] = round(2^23·exp(−s_x·j)) (the exp table, 256 int32);
//   Σe in int64; a = 31 − bitwidth(Σe), S = Σe·2^a (a shift right when a < 0) ∈ [2^30, 2^31),
//   R = round(2^61 / S)  (1/Σe ≈ R·2^a / 2^61);
//   P_i = RoundShift(e_i·R, 45 − a)                     (the probability ·2^16);
//   y_i = clamp(z_y + RoundShift(P_i·M, 47 − e), lo, hi)   with 1/s_y ≈ M·2^(e − 31).
// tests/quant/int_norm_test.cc checks both against float within one output step.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "support/status.h"
#include "quant/fixed_point.h"

namespace edgec::quant {

// Round(x / 2^s), ties toward +∞; 0 when s ≥ 63; x when s ≤ 0.
int64_t RoundShift64(int64_t x, int s);

struct NormParams {
  int64_t count = 0;     // n: values per group
  int64_t eps_term = 0;  // E
  std::vector<int32_t> mult, shift, bias;  // per channel of a group: M_c, e_c, B_c
  int32_t x_zero_point = 0, y_zero_point = 0, qmin = -128, qmax = 127;
};
// `gamma` and `beta` per channel (beta empty: zeros); fails (naming the limit) outside the
// limits above.
StatusOr<NormParams> MakeNormParams(float x_scale, int32_t x_zero_point, const std::vector<float>& gamma,
                                    const std::vector<float>& beta, float y_scale, int32_t y_zero_point,
                                    int32_t qmin, int32_t qmax, int64_t count, float epsilon);

// What MakeNormParams and its wide form (int16_norm.h) share: the argument checks,
// E = round(n²·ε / s_x²) (below 2^eps_bits), and per channel M_c, e_c of γ_c / s_y (e_c at most
// max_shift) and B_c = round(256·β_c / s_y) (|B_c| below 2^bias_bits).
struct NormAffine {
  double eps_term = 0;
  std::vector<int32_t> mult, shift;
  std::vector<int64_t> bias;
};
StatusOr<NormAffine> MakeNormAffine(float x_scale, const std::vector<float>& gamma, const std::vector<float>& beta,
                                    float y_scale, int64_t count, float epsilon, int eps_bits, int max_shift,
                                    int bias_bits);

// The group's statistics (Σd, Σd²) and the reciprocal root they give.
struct NormGroup {
  int64_t sum = 0, sumsq = 0;
  int64_t recip = 0;  // R
  int k = 0;
};
// Adds value q (its raw integer, before the zero point) to the statistics.
inline void Accumulate(NormGroup& g, int32_t q, int32_t x_zero_point) {
  const int64_t d = q - x_zero_point;
  g.sum += d;
  g.sumsq += d * d;
}
// Sets recip and k from the statistics of `p.count` values.
void FinishGroup(NormGroup& g, const NormParams& p);
// The output of value q at channel c of the group.
int32_t NormOutput(const NormGroup& g, const NormParams& p, int32_t q, int64_t c);

// Normalizes a block of `rows` x `cols` values, read as value(r, c), as one group, or each row
// as its own group when per_row, writing out(r, c, y). Group is NormGroup or WideNormGroup
// (int16_norm.h) with its Params; the reference kernels and the NPU's VEC norm share it.
template <typename Group, typename Params, typename Value, typename Out>
void NormalizeBlock(const Params& p, int32_t rows, int32_t cols, bool per_row, Value&& value, Out&& out) {
  auto group = [&](int32_t r0, int32_t r1) {
    Group g;
    for (int32_t r = r0; r < r1; ++r)
      for (int32_t c = 0; c < cols; ++c) Accumulate(g, value(r, c), p.x_zero_point);
    FinishGroup(g, p);
    for (int32_t r = r0; r < r1; ++r)
      for (int32_t c = 0; c < cols; ++c) out(r, c, NormOutput(g, p, value(r, c), c));
  };
  if (per_row) {
    for (int32_t r = 0; r < rows; ++r) group(r, r + 1);
  } else {
    group(0, rows);
  }
}

// Softmax of each row of a `rows` x `cols` block read as value(r, c), written as out(r, c, y),
// with SoftmaxRow of the Params' width (8-bit here, WideSoftmaxParams in int16_norm.h).
template <typename Params, typename Value, typename Out>
void SoftmaxBlock(const Params& p, int32_t rows, int32_t cols, Value&& value, Out&& out) {
  std::vector<int32_t> row(cols), y(cols);
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < cols; ++c) row[c] = value(r, c);
    SoftmaxRow(row.data(), cols, p, y.data());
    for (int32_t c = 0; c < cols; ++c) out(r, c, y[c]);
  }
}

// The output side both softmax widths share: 1 / y_scale as M·2^(e − 31) (e at most
// max_shift) and the output's zero point and range; MakeSoftmaxOutput checks both scales.
struct SoftmaxOutput {
  FixedPointMultiplier inv_y;  // 1 / y_scale
  int32_t y_zero_point = 0, qmin = 0, qmax = 0;
};
StatusOr<SoftmaxOutput> MakeSoftmaxOutput(float x_scale, float y_scale, int32_t y_zero_point, int32_t qmin,
                                          int32_t qmax, int max_shift);

struct SoftmaxParams : SoftmaxOutput {
  std::array<int32_t, 256> exp_table{};
};
StatusOr<SoftmaxParams> MakeSoftmaxParams(float x_scale, float y_scale, int32_t y_zero_point, int32_t qmin,
                                          int32_t qmax);
// One row: `q` (n values, raw integers; the zero point cancels) to `out`.
void SoftmaxRow(const int32_t* q, int64_t n, const SoftmaxParams& p, int32_t* out);

}  // namespace edgec::quant
