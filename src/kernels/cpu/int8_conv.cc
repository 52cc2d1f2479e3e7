// Fast QLinearConv: oneDNN's int8 convolution (u8 or s8 activations, s8 weights, no zero
// point), requantized by oneDNN's own epilogue where that is exact (OnednnRequantExact:
// output scales, round, + zero point, clamp as post-ops, u8/i8 out), else accumulating into
// int32 with no scales, then the own requantization epilogue (int8_requant.h) with the bias,
// per-channel multipliers and the fused clamp. The source
// zero point zp is the kernel's own: sum((x - zp) w) over a window = sum(x w) - zp sum(w)
// with ONNX's padding (pads hold zp, so they add nothing), and oneDNN's zero padding makes
// sum(x w) skip the pads; so -zp sum(w) goes into the bias, and outputs whose window
// overlaps the padding get zp times the weights over the padded taps added back through
// their bias (one bias per class of border row and column, used by the requantization).
// oneDNN 2.6's brgemm and AMX convolutions take no zero point at all, and its jit AMX one
// sums some layers wrongly with one. oneDNN's epilogue adds a zero point in f32, which rounds
// unless the value is whole first (hence its round post-op), and its f32 sums equal the
// reference's only below 2^24; where that cannot be shown, oneDNN is kept to the integer sum
// and the own epilogue makes the kernel equal the reference bit for bit. The s32
// accumulators are NHWC in scratch; a row-major
// source is reordered to NHWC in scratch first.
//
// Exactness depends on oneDNN's integer sum being exact: it is on CPUs with VNNI
// (vpdpbusd); without VNNI oneDNN 2.6 multiplies u8·s8 pairs with vpmaddubsw, whose 16-bit
// pair sums saturate (255·127·2 > 32767), and for s8 sources it halves the weights. The
// kernel therefore refuses (reference fallback) when the ISA has no VNNI unless the pair
// sums cannot saturate: 7-bit weights (|w| ≤ 64, `--reduce-range`) with u8 sources.
#include <algorithm>

#include "kernels/cpu/int8_conv_kernel.h"

namespace edgec::cpu {

Status Int8ConvKernel::Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) {
  UseThreads(threads_);
  dnnl::stream& stream = GetDnnlContext(threads_).stream;
  const int64_t image = interleave_channels_ * interleave_pixels_;
  // Pixels [p0, p1) of every image of an f32 input quantized into NHWC scratch.
  auto quantize_in = [&](int64_t p0, int64_t p1) {
    for (int64_t n = 0; n < images_in_; ++n)
      QuantizeInterleave(static_cast<const float*>(in[0]) + n * image, interleave_channels_, interleave_pixels_, p0, p1,
                         in_scale_, in_zero_point_, in_u8_, static_cast<uint8_t*>(scratch) + n * image);
  };
  if (quantize_input_ && lanes_ == 1) {
    ParallelFor(threads_, interleave_pixels_, kGrainPixels, quantize_in);
  } else if (quantize_input_) {
    // Done by the lanes below, each the pixels of its own rows.
  } else if (interleave_channels_ > 0) {  // a row-major image of 3 channels, NHWC in scratch
    for (int64_t n = 0; n < images_in_; ++n)
      InterleavePlanes(static_cast<const uint8_t*>(in[0]) + n * image, interleave_channels_, interleave_pixels_,
                       static_cast<uint8_t*>(scratch) + n * image);
  } else if (reorder_src_.valid()) {
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      reorder_src_.Execute(stream, in, out, scratch);
      return Status::Ok();
    }));
  }
  // The requantized result: the output itself (NHWC) or NHWC scratch before its reorder.
  auto* q = nhwc_out_ ? static_cast<std::byte*>(out[0]) : static_cast<std::byte*>(scratch) + q_offset_;
  const int64_t items = images_ * static_cast<int64_t>(bands_.size());
  // Band `i` (of image i / bands) on `lane`: its convolution into the lane's accumulators,
  // then their requantization by `threads` threads (the lane's own when lanes run at once).
  auto band = [&](int lane, int64_t i, dnnl::stream& stream, int threads) {
    const int64_t n = i / static_cast<int64_t>(bands_.size());
    const Band& b = bands_[i % bands_.size()];
    const int64_t y_offset = (n * image_pixels_ + b.out_row * out_width_) * channels_;  // 1-byte elements
    const std::pair<int, int64_t> shift[] = {{DNNL_ARG_SRC, n * image_src_bytes_ + b.in_row * src_row_bytes_},
                                             {DNNL_ARG_DST, y_offset}};
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      band_prims_[lane * prims_per_lane_ + b.prim].Execute(stream, in, out, scratch,
                                                           std::span(shift, fused_ ? 2 : 1));
      return Status::Ok();
    }));
    std::byte* y = q + y_offset;
    if (fused_) {
      if (rq_.table.empty()) return Status::Ok();
      auto* y8 = reinterpret_cast<uint8_t*>(y);
      ParallelFor(threads, b.pixels * channels_, 16384, [&](int64_t begin, int64_t end) {
        LookupBytes(rq_.table.data(), y8 + begin, y8 + begin, end - begin);
      });
      return Status::Ok();
    }
    const auto* acc = reinterpret_cast<const int32_t*>(static_cast<std::byte*>(scratch) + acc_offset_ + lane * lane_bytes_);
    ParallelFor(threads, b.pixels, std::max<int64_t>(1, 4096 / channels_), [&](int64_t begin, int64_t end) {
      Requantize(acc, n * image_rows_ + b.out_row, begin, end, y);
    });
    return Status::Ok();
  };
  if (lanes_ == 1) {
    for (int64_t i = 0; i < items; ++i) RETURN_IF_ERROR(band(0, i, stream, threads_));
  } else {
    // Each thread runs whole bands (single-threaded primitives), a contiguous share of them.
    std::vector<Status> failed(lanes_);
#pragma omp parallel num_threads(lanes_)
    {
      const int lane = omp_get_thread_num(), lanes = omp_get_num_threads();
      if (quantize_input_) {
        // The lane's share of the pixels (its bands' rows, but for the window's overlap),
        // then a barrier: a band may read rows another lane quantized.
        quantize_in(interleave_pixels_ * lane / lanes, interleave_pixels_ * (lane + 1) / lanes);
#pragma omp barrier
      }
      for (int64_t i = items * lane / lanes; i < items * (lane + 1) / lanes && failed[lane].ok(); ++i)
        failed[lane] = band(lane, i, lane_streams_[lane], 1);
    }
    for (const Status& st : failed) RETURN_IF_ERROR(st);
  }
  if (!nhwc_out_) {
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      reorder_dst_.Execute(stream, in, out, scratch);
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

void Int8ConvKernel::Requantize(const int32_t* acc, int64_t first_row, int64_t begin, int64_t end, std::byte* y) const {
  if (class_bias_.empty()) {
    rq_.Run(acc, channels_, begin, end, y, channels_, 1);
    return;
  }
  const int64_t width = out_width_, rows = static_cast<int64_t>(row_class_.size());
  int64_t ow = begin % width, oh = (first_row + begin / width) % rows;  // divisions once per call
  for (int64_t p = begin; p < end; ow = 0, oh = oh + 1 == rows ? 0 : oh + 1) {
    const int64_t row_end = std::min(end, p + width - ow);  // pixel p is at column ow
    const int32_t* row_bias = class_bias_.data() + row_class_[oh] * col_classes_ * channels_;
    for (const ColumnRun& run : column_runs_) {
      const int64_t from = p + std::max<int64_t>(run.begin - ow, 0), to = std::min(row_end, p + run.end - ow);
      if (from >= row_end) break;
      if (from < to) rq_.Run(acc, channels_, from, to, y, channels_, 1, row_bias + run.column_class * channels_);
    }
    p = row_end;
  }
}

}  // namespace edgec::cpu
