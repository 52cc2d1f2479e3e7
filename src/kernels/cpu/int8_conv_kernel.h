// The fast QLinearConv kernel (the file comment of int8_conv.cc says how it is exact): its
// state, made by CreateInt8ConvKernel (int8_conv_factory.cc), and its Run (int8_conv.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/int8_conv_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

class Int8ConvKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override;
  size_t scratch_bytes() const override { return scratch_bytes_; }
  std::string Describe() const override { return describe_; }

  // Requantizes pixels [begin, end) of a band whose first pixel is in output row `first_row`
  // (counted over all images) into y, each run of pixels of one border class with that
  // class's bias (the zero point's border sums added in; see CreateInt8ConvKernel).
  void Requantize(const int32_t* acc, int64_t first_row, int64_t begin, int64_t end, std::byte* y) const;

  // Output columns [begin, end) of one column class, in order across the width.
  struct ColumnRun {
    int64_t begin, end;
    int column_class;
  };

  // Output rows [out_row, out_row + rows) of one image from input rows starting at
  // in_row (the primitive's padding covers the rest), `pixels` = rows x output width.
  struct Band {
    int64_t out_row = 0, in_row = 0, pixels = 0;
    int prim = 0;
  };

  std::string label_;
  std::vector<BoundPrimitive> band_prims_;  // lane-major: [lane * prims_per_lane_ + prim]
  std::vector<dnnl::stream> lane_streams_;
  int lanes_ = 1, prims_per_lane_ = 1;
  size_t lane_bytes_ = 0;  // scratch of one lane: its accumulators and oneDNN scratchpad
  BoundPrimitive reorder_src_, reorder_dst_;
  // Instead of reorder_src_ for a row-major source of 3 channels: InterleavePlanes.
  int64_t interleave_channels_ = 0, interleave_pixels_ = 0, images_in_ = 0;
  // edgec_quantize_input on the interleave path: the f32 image is quantized as it is interleaved.
  bool quantize_input_ = false, in_u8_ = true;
  float in_scale_ = 1;
  int32_t in_zero_point_ = 0;
  static constexpr int64_t kGrainPixels = 8192;
  std::vector<dnnl::memory> weights_;
  Int8Requant rq_;
  // oneDNN requantizes (its output scales and post-ops, see OnednnRequantExact) and writes the
  // u8/i8 result itself; the own part is the fused lookup, if any. bias_ wraps rq_.bias.
  bool fused_ = false;
  dnnl::memory bias_;
  std::vector<Band> bands_;
  int64_t images_ = 1, channels_ = 0, out_width_ = 0, image_rows_ = 0, image_pixels_ = 0;
  int64_t src_row_bytes_ = 0, image_src_bytes_ = 0;
  bool nhwc_out_ = true;
  size_t acc_offset_ = 0, q_offset_ = 0, scratch_bytes_ = 0;
  int threads_ = 1;
  // The bias of each border class: class_bias_[(row class * col_classes_ + col class) *
  // channels_ + c] is the requantization's bias plus the zero point's border sum of outputs in
  // that row and column class (class 0: the window misses the padding; row_class_ per output
  // row). Empty: no border sums.
  std::vector<int32_t> class_bias_;
  std::vector<int> row_class_;
  std::vector<ColumnRun> column_runs_;  // the output columns by class, covering the width
  int col_classes_ = 1;
  bool amx_ = false;   // some convolution is one of oneDNN's AMX implementations
  std::string impl_;   // the first one's name
  std::string describe_;
};

}  // namespace edgec::cpu
