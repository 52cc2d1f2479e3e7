// Helpers the node-to-NPU-layer mappings of lower/ share (npu_layers.cc, npu_move_layer.cc,
// npu_norm_layer.cc); not part of the stage's interface (npu_layers.h).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/conv_geometry.h"
#include "ir/graph.h"
#include "npu/lower.h"
#include "npu/lower_norm.h"
#include "support/status.h"

namespace edgec::lower {

// Input i's static dims, or "dynamic shape".
StatusOr<Dims> StaticDims(const Node& n, int i);
// Input i's constant tensor, or null.
const Tensor* ConstInput(const Node& n, int i);
// A constant scale input's values, or "<what> is not a constant".
StatusOr<std::vector<double>> Scales(const Node& n, int i, const char* what);
// A constant per-tensor zero point (0 when the input is absent).
StatusOr<int32_t> ScalarZeroPoint(const Node& n, int i, const char* what);
// The fused activation's clamp [edgec_qmin, edgec_qmax] of an integer node, in the NPU's
// i8 terms (u8 values shift by -128).
std::pair<int32_t, int32_t> ClampInI8(const Node& n, bool output_u8);
// The clamp of an int16 output (the mixed precision's int16 point): [edgec_qmin, edgec_qmax]
// within the int16 range.
std::pair<int32_t, int32_t> ClampInI16(const Node& n);
// The geometry fields every NPU window layer has (conv, depthwise, pool), from an NCHW input
// and the resolved window.
template <typename Layer>
void FillWindow(Layer& l, const Dims& x, const WindowGeometry& g) {
  l.batch = static_cast<int>(x[0]);
  l.channels = static_cast<int>(x[1]);
  l.in_h = static_cast<int>(x[2]);
  l.in_w = static_cast<int>(x[3]);
  l.kernel_h = static_cast<int>(g.kernel[0]);
  l.kernel_w = static_cast<int>(g.kernel[1]);
  l.stride_h = static_cast<int>(g.strides[0]);
  l.stride_w = static_cast<int>(g.strides[1]);
  l.pad_top = static_cast<int>(g.pad_begin[0]);
  l.pad_left = static_cast<int>(g.pad_begin[1]);
  l.pad_bottom = static_cast<int>(g.pad_end[0]);
  l.pad_right = static_cast<int>(g.pad_end[1]);
}
inline bool Is8(const Value* x) { return x->type.dtype == DType::kU8 || x->type.dtype == DType::kI8; }

// A QLinearLayerNormalization / QLinearGroupNormalization / QLinearSoftmax as a VEC norm or
// softmax layer (npu_norm_layer.cc).
StatusOr<npu::NormLayer> NormLayerOf(const Node& n);

// A QLinearAveragePool (8-bit, 2-d, no dilation) as a VEC avgpool layer, a multiplier per
// output pixel where the divisors differ (npu_avg_pool_layer.cc).
StatusOr<npu::PoolLayer> AveragePoolLayerOf(const Node& n);

// A GlobalMaxPool, ReduceMax or ReduceMin of an 8-bit tensor as a VEC max (min) pool
// (npu_reduce_layer.cc): in the NPU's byte order the tensor is O x R x I (kept dims outside,
// the reduced ones, kept dims inside) and the layer is a pool of O rows of a 1 x R image with
// I channels, one window of R pixels per row. Spatial axes (I = C), the channel axis of a 4-d
// tensor or the last axis (I = 1), keepdims 0 or 1 when the kept dims keep their byte order.
StatusOr<npu::PoolLayer> ReducePoolLayerOf(const Node& n);

// An ArgMax / ArgMin of an 8-bit tensor over the innermost dim of its NPU layout (the channel
// axis of a 4-d tensor, the last axis otherwise), keepdims 0 or 1, select_last_index 0 or 1,
// as a VEC argmax writing the graph's int64 indices (npu_reduce_layer.cc).
StatusOr<npu::ArgMaxLayer> ArgMaxLayerOf(const Node& n);

}  // namespace edgec::lower
