// The requantization epilogue of the fast int8 kernels (QLinearConv, QLinearMatMul): int32
// accumulators (from oneDNN, no scales) plus the int32 bias become u8/i8 outputs with the
// same arithmetic as the reference kernels (src/kernels/ref/quant.cc), bit for bit:
//   "float"       (ONNX): saturate(round_half_to_even(f32(acc + b[c]) · m[c]) + zp),
//                 m[c] = x_scale · w_scale[c] / y_scale computed in f32 as the reference does;
//   "fixed_point" (NPU):  quant::Requantize(acc + b[c], multiplier + shift, zp, qmin, qmax);
// each then clamped to [edgec_qmin, edgec_qmax] (a fused Relu/Clip), and mapped through
// `edgec_output_table` when the node has one (a QuantizedLookup fused into it). The node's
// `edgec_requant` attribute picks the mode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/types.h"
#include "quant/fixed_point.h"

namespace edgec::cpu {

struct Int8Requant {
  bool fixed_point = false;
  bool u8 = true;                                   // output type (else i8)
  std::vector<float> multiplier;                    // per channel
  std::vector<quant::FixedPointMultiplier> fixed;   // per channel (fixed-point mode)
  std::vector<int32_t> bias;                        // per channel (zeros when absent)
  int32_t zero_point = 0, qmin = 0, qmax = 255;
  std::vector<uint8_t> table;                       // by the output's raw byte; empty: none

  // Rows of `channels` accumulators (acc[r * channels + c]) into y at
  // y[r * row_stride + c * channel_stride] (elements), rows [begin, end); with
  // `bias_override` (one per channel) in place of `bias`.
  void Run(const int32_t* acc, int64_t channels, int64_t begin, int64_t end, void* y, int64_t row_stride,
           int64_t channel_stride, const int32_t* bias_override = nullptr) const;
  std::string Word() const;  // "float requant" / "fixed-point requant", with the clamp
};

// y[i] = by_byte[x[i]] for i in [0, n): AVX-512 VBMI permutes where the own kernels' ISA has
// them (int8_lookup.cc), else one byte at a time.
void LookupBytes(const uint8_t* by_byte, const uint8_t* x, uint8_t* y, int64_t n);

// From the node's attributes, the per-channel f32 scales of input and weights (the
// products are formed as the reference does), the output scale and zero point.
StatusOr<Int8Requant> MakeInt8Requant(const Attributes& attrs, const std::string& label, float x_scale,
                                      const std::vector<float>& w_scale, int64_t channels, float y_scale,
                                      int32_t y_zp, DType out, const int32_t* bias);

}  // namespace edgec::cpu
