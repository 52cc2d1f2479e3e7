// Graph nodes as NPU layers: the one mapping from ONNX/edgec nodes to the NPU's layer
// descriptions (npu/lower.h), shared by `edgec estimate` (shapes only) and `edgec compile`
// (with the int8 data). The NPU stage never sees the Graph; this file is the bridge.
#pragma once

#include "edgec/status.h"
#include "ir/graph.h"
#include "npu/lower.h"

namespace edgec::lower {

// Message of GemmLayerShape for nodes that are not Conv/MatMul/Gemm-like at all.
inline constexpr const char* kNotGemm = "not a GEMM-class op";

// A GEMM-class node (Conv, MatMul, Gemm, their integer and fused forms) as an NPU layer,
// shapes only (no weights), or the reason it cannot be one ("dynamic shape", "depthwise
// conv not lowered", ...). Other ops give kNotGemm.
StatusOr<npu::ConvLayer> GemmLayerShape(const Node& n);

// How an integer tensor crosses into the NPU's int8 form: u8 values are shifted by -128
// (x ^ 0x80, zero point - 128), which is exact for every quantized op the NPU runs.
struct QuantizedLayer {
  npu::ConvLayer layer;  // with weights (HWIO), bias, requantization, zero points in s8 terms
  bool input_u8 = false, output_u8 = false;
};

// A QLinearConv (2-d, group 1, symmetric int8 weights) or QLinearMatMul (2-d constant right
// operand, symmetric) with constant weights and scales, as an NPU layer with its data.
// The requantization multiplier per output channel is x_scale * w_scale / y_scale in
// fixed point (quant/fixed_point.h), the arithmetic every integer unit of edgec uses.
StatusOr<QuantizedLayer> QuantizedLayerOf(const Node& n);

// An integer node the NPU's vector cores run: QLinearAdd (same-shape operands; a fused ReLU as
// its clamp) as an elementwise add in quant::QuantizedAdd's arithmetic, an int8 MaxPool (2-d,
// no dilation, floor rounding) as a pool, or a depthwise QLinearConv (group = channels, 2-d,
// no dilation, symmetric weights) with per-channel fixed-point requantization. Tensors cross as
// for QuantizedLayerOf (u8 shifted to i8, NHWC), so operands and result must be 8-bit.
struct VectorLayer {
  enum class Kind { kAdd, kPool, kDepthwise } kind = Kind::kAdd;
  npu::EltwiseLayer add;
  npu::PoolLayer pool;
  npu::DepthwiseLayer depthwise;
  bool output_u8 = false;
};
// Whether `n` is of a kind the vector cores take (then VectorLayerOf says if this one can).
bool IsVectorNode(const Node& n);
StatusOr<VectorLayer> VectorLayerOf(const Node& n);

// Multiply-accumulates of a node: GEMM-class nodes and grouped/depthwise convolutions; 0 else.
int64_t MacsOf(const Node& n);

}  // namespace edgec::lower
