// Attention as one NPU layer: softmax(Q·Kᵀ)·V of every head in one task, the scores never
// leaving the chip.
//
// The unfused chain is three layers (QLinearMatMul scores → QLinearSoftmax → QLinearMatMul
// context), each streaming its result through DRAM or the segment's SRAM plan. Here one
// instruction sequence per core runs, for each block of `rows` query rows of one head:
//   load  Q rows [rows][d] (and, when the head changes, its K and V, resident per head);
//   exec  MATMUL acc = (Q − zq)(K − zk)ᵀ   [rows][keys] int32;
//   vec   VEC requantize acc → S (int8) with the scores' multiplier, VEC softmax S → P;
//   exec  MATMUL acc' = (P − zp)(V − zv)  [rows][dv] int32;
//   vec   VEC requantize acc' → O;  store O rows.
// Each step is the VEC / MATMUL the unfused layers issue, with the same parameters, so the
// result equals the reference chain bit for bit (tests/lower/npu_attention_test.cc). A block
// of rows is the flash-style row tiling: the scores of a head take rows x keys bytes twice
// (S and P) per buffer slot instead of the whole keys x keys, so any sequence length fits.
// The heads' row blocks are dealt to the cores in contiguous runs (a core reloads K and V
// only when its head changes).
//
// With an int16 softmax (the mixed precision's int16 point at the softmax, `wide`): the
// scores' requantize writes int16 S (2 bytes a value), the VEC softmax runs the wide
// arithmetic (quant/int16_norm.h, isa.h kWideImm) into int16 P, and a VEC rescale narrows P to
// the 8-bit probabilities the context's MATMUL reads (the QLinearRequantize the quantizer puts
// before it) — the four unfused layers' instructions, so again bit for bit
// (NpuAttentionTest.Int16SoftmaxMatchesReference).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "support/status.h"
#include "npu/isa.h"
#include "npu/target.h"
#include "npu/tiler.h"
#include "quant/fixed_point.h"
#include "quant/int16_norm.h"
#include "quant/int_norm.h"
#include "quant/rescale.h"

namespace edgec::npu {

struct AttentionLayer {
  std::string name = "attention";
  int heads = 1, rows = 1, keys = 1, depth = 1, v_depth = 1;  // Q [heads][rows][depth], out [heads][rows][v_depth]
  // Element (h, i, j) of K as the scores' right operand [depth][keys] and of V [keys][v_depth]
  // at h·s[0] + i·s[1] + j·s[2] of their regions (".input1", ".input2"); all 0: row-major.
  // One of s[1], s[2] is 1 (a row of contiguous values is one DMA row).
  std::array<int64_t, 3> k_strides{}, v_strides{};
  // Quantization in the NPU's int8 terms: zero points of Q, K, scores, probabilities, V and
  // the output, each MatMul's per-tensor multiplier, its (uniform) bias and clamp.
  int32_t q_zero = 0, k_zero = 0, s_zero = 0, p_zero = 0, v_zero = 0, o_zero = 0;
  int32_t s_bias = 0, o_bias = 0;
  int32_t s_min = -128, s_max = 127, o_min = -128, o_max = 127;
  quant::FixedPointMultiplier s_mult, o_mult;
  quant::SoftmaxParams softmax;
  // An int16 softmax: s_zero / s_min / s_max in int16 terms, its parameters, and the rescale
  // of its int16 output to the 8-bit probabilities (p_zero).
  bool wide = false;
  quant::WideSoftmaxParams wide_softmax;
  quant::RescaleParams narrow;
  int64_t q_bytes() const { return int64_t{heads} * rows * depth; }
  int64_t o_bytes() const { return int64_t{heads} * rows * v_depth; }
  int64_t macs() const { return int64_t{heads} * rows * keys * (depth + v_depth); }
  // DRAM bytes the unfused chain moves for its scores and probabilities (each written once
  // and read once) when they do not stay on chip.
  // With an int16 softmax: int16 scores and probabilities and the 8-bit ones, each written and read.
  int64_t unfused_scores_traffic() const { return (wide ? 10 : 4) * int64_t{heads} * rows * keys; }
};

struct AttentionTiling {
  int block_rows = 1;  // query rows per block
  bool double_buffer = true;
  int cores = 1;
  std::string ToString() const;
};

// SRAM bytes the tiling's working tiles take (all cores), and the scores' share of it, or
// why it does not fit (SRAM, accumulators).
struct AttentionFootprint {
  int64_t sram = 0, scores_sram = 0;
};
StatusOr<AttentionFootprint> CheckAttentionTiling(const AttentionLayer& l, const Target& t, const AttentionTiling& tl);

// The fused program (one task): regions "<name>.input" (Q), ".input1" (K), ".input2" (V),
// ".output", and the constant ".params" (exp table, requantization blocks).
StatusOr<Program> LowerAttention(const AttentionLayer& l, const Target& t, const AttentionTiling& tl);

// The fastest legal tiling by simulated cycles (timing only), over row blocks and buffering
// (opt.allow_double / allow_single as for the tiler; opt.on_chip_*: operands in SRAM).
struct AttentionChoice {
  AttentionTiling tiling;
  double cycles = 0;
  AttentionFootprint footprint;
};
StatusOr<AttentionChoice> ChooseAttentionTiling(const AttentionLayer& l, const Target& t, const TilerOptions& opt = {});

}  // namespace edgec::npu
