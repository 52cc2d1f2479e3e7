// Normalization and softmax on the vector cores (one task): the VEC norm and softmax of isa.h
// over tiles of whole groups, the arithmetic of quant/int_norm.h.
//
// The tensor is `items` items of rows_per_item x cols int8 values each, contiguous in DRAM
// (a LayerNorm / softmax row: 1 x D; a GroupNorm batch item in NHWC: H·W pixels x C channels).
// A tile is `chunk` whole items, loaded with one DMA; the vector core then normalizes every
// group of the tile in SRAM (per row for LayerNorm and softmax: one VEC for the tile; one VEC
// per group for GroupNorm, the group's channels a column band of the pixels) and the tile is
// stored back. The parameters (per group: int64 E, then int32 M_c, e_c, B_c per channel of the
// group; or the softmax's exp table) are the constant part of the DRAM image, loaded once per
// core ahead of the first tile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "npu/isa.h"
#include "npu/target.h"
#include "quant/int16_norm.h"
#include "quant/int_norm.h"

namespace edgec::npu {

struct NormLayer {
  std::string name = "norm";
  VecOp op = VecOp::kNorm;  // kNorm or kSoftmax
  int64_t items = 1, rows_per_item = 1, cols = 1;
  int64_t groups = 1;     // kNorm over column bands of every item (GroupNorm); 1 with per_row
  bool per_row = true;    // kNorm: each row is a group (LayerNorm)
  // Data in the NPU's i8 terms (empty vectors: timing only).
  quant::NormParams norm;        // per channel of the whole row: cols values (GroupNorm: C)
  quant::SoftmaxParams softmax;
  // int16 values in and out (the quantizer's mixed precision): the wide arithmetic and its
  // parameters (isa.h kWideImm), timed at vector_cores.dtype_rates' i16 rate.
  bool wide = false;
  quant::WideNormParams wide_norm;
  quant::WideSoftmaxParams wide_softmax;
  // A lookup epilogue (kNorm, 8-bit: lower/npu_epilogue.h): 256 values in the NPU's i8 terms
  // after the parameter block, loaded with it; a VEC lut maps each output tile before its store.
  std::vector<int8_t> output_table;
  int64_t elem_bytes() const { return wide ? 2 : 1; }
  int64_t item_bytes() const { return rows_per_item * cols * elem_bytes(); }
  int64_t bytes() const { return items * item_bytes(); }
};

// The parameter bytes of the layer (what the DRAM image's constant part holds).
std::vector<uint8_t> NormParamBytes(const NormLayer& l);
// The same for a wide (int16) layer, and its VEC's immediates (lower_wide_norm.cc).
std::vector<uint8_t> WideNormParamBytes(const NormLayer& l);
void SetWideImms(const NormLayer& l, Instr& v);
// `chunk` items per tile.
StatusOr<Program> LowerNorm(const NormLayer& l, const Target& t, int64_t chunk, bool double_buffer);

}  // namespace edgec::npu
