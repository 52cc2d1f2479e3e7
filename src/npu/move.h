// Data movement on the NPU as DMA access patterns, no compute: concatenation, transposes,
// slices and splits, and reshapes whose bytes change order between the NPU's layouts.
//
// A layer is a list of boxes, each an N-d strided copy (in bytes; every element is one int8)
// from one input tensor to one output tensor in DRAM. The DMA moves DRAM -> SRAM -> DRAM, so
// every box is cut into units that one load and one store move through a compact SRAM slot:
// dims that are contiguous on a side fold into that side's row, the rest become the
// descriptor's strided dims (up to min(3, dma.max_dims - 1); outer dims beyond that are
// separate units). Units are grouped into tiles of at most `chunk_bytes`, dealt round-robin
// over the cores; per core a load -> store pipeline with one (single) or two (double
// buffering) slots. No VEC instruction runs: the layer's time is its DMA time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "npu/isa.h"
#include "npu/target.h"

namespace edgec::npu {

// Element (i_0, ..., i_k) of the box, 0 <= i_d < counts[d], is copied from byte
// src_offset + sum(i_d * src_strides[d]) of input `input` to dst_offset + sum(i_d * dst_strides[d])
// of output `output`. Strides are >= 0. A box whose input is kFillInput reads no tensor: each
// of its bytes is the layer's `fill` byte, written by a load that pads every row on the way
// into SRAM (isa.h DmaDim: no DRAM read) and a store; its src strides are ignored. The
// constant border of a Pad (tests/lower/npu_pad_test.cc).
inline constexpr int kFillInput = -1;
struct MoveBox {
  int input = 0, output = 0;
  int64_t src_offset = 0, dst_offset = 0;
  std::vector<int64_t> counts, src_strides, dst_strides;
  int64_t bytes() const;
};

struct MoveLayer {
  std::string name = "move";
  std::string what = "copy";  // "concat", "transpose", "slice", "split", "reshape" (task name)
  std::vector<int64_t> input_bytes, output_bytes;  // regions "<name>.input", ".input1", ...; ".output", ".output1", ...
  std::vector<MoveBox> boxes;
  int8_t fill = 0;  // the byte of the kFillInput boxes (the NPU's i8 terms)
  // Bytes moved (each output byte once).
  int64_t bytes() const;
  // Whether some unit moves rows shorter than the whole innermost dim of both sides, i.e. the
  // innermost dim of the copy changes (a transpose of the last axis): rows of one byte.
  bool element_rows() const;
  // One input whose bytes the output holds in the same order: a view, no instruction needed.
  bool identity() const;
};

// The byte strides of a tensor's logical dims in the NPU's DRAM layout: NHWC for a 4-d
// tensor (its dims are N, C, H, W), row-major otherwise.
std::vector<int64_t> NpuByteStrides(const std::vector<int64_t>& dims);

StatusOr<Program> LowerMove(const MoveLayer& l, const Target& t, int64_t chunk_bytes, bool double_buffer);

}  // namespace edgec::npu
