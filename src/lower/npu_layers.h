// Graph nodes as NPU layers: the one mapping from ONNX/edgec nodes to the NPU's layer
// descriptions (npu/lower.h), shared by `edgec estimate` (shapes only) and `edgec compile`
// (with the int8 data). The NPU stage never sees the Graph; this file is the bridge.
#pragma once

#include <array>
#include <optional>

#include "support/status.h"
#include "ir/graph.h"
#include "npu/lower.h"
#include "npu/lower_norm.h"
#include "npu/move.h"
#include "npu/vector_tiler.h"

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

// An integer node the NPU's vector cores (or its DMA alone) run: QLinearAdd and QLinearMul with
// operands of the same shape, one of them per channel (NHWC rows: [1, C, 1, 1] against
// [N, C, H, W], or the last dim of other ranks) or a scalar (the other full; a constant
// broadcast operand is laid into the program's DRAM image), a fused ReLU as the clamp, in
// quant::QuantizedAdd's / QuantizedMul's arithmetic; a QuantizedLookup as a 256-entry table;
// an int8 MaxPool (2-d, no dilation, floor rounding) or QLinearGlobalAveragePool as a pool;
// a depthwise QLinearConv (group = channels, 2-d, no dilation, symmetric weights) with
// per-channel fixed-point requantization; and the data movement of 8-bit tensors as strided
// DMA copies (npu/move.h): Concat, Transpose, Slice (constant starts, positive steps), Split,
// and Reshape / Flatten / Squeeze / Unsqueeze whose NPU byte order changes. Tensors cross as
// for QuantizedLayerOf (u8 shifted to i8, NHWC), so operands and result must be 8-bit.
// QLinearLayerNormalization over the last axis of a tensor that is not 4-d (rows of the
// normalized dim), QLinearGroupNormalization of a 4-d tensor (NHWC: groups are channel bands
// of every pixel) and QLinearSoftmax of a tensor that is not 4-d are VEC norm / softmax layers
// (npu/lower_norm.h) with quant/int_norm.h's parameters. A Resize of an 8-bit NCHW tensor over
// H and W with an integer form (quant/int_resize.h: nearest or linear, constant scales or
// sizes) is a VEC resize layer, or DMA replication for nearest by integer factors.
// A Pad of an 8-bit or int16 tensor (constant, reflect, edge; crops too) is a move whose
// constant border the DMA pads on load (npu/move.h kFillInput); GlobalMaxPool, ReduceMax and
// ReduceMin of 8-bit tensors are VEC max / min pools and ArgMax / ArgMin over the innermost dim
// of the NPU layout a VEC argmax writing int64 indices (npu_reduce_layer.cc; tests/lower/
// npu_pad_test.cc, npu_reduce_segment_test.cc, NpuVectorOpsTest.MaxMinReductions*, ArgMax*).
struct VectorLayer {
  enum class Kind { kEltwise, kPool, kDepthwise, kMove, kNorm, kResize, kGather, kArgMax } kind = Kind::kEltwise;
  npu::EltwiseLayer eltwise;
  npu::PoolLayer pool;
  npu::DepthwiseLayer depthwise;
  npu::MoveLayer move;
  npu::NormLayer norm;
  npu::ResizeLayer resize;
  npu::GatherLayer gather;  // a Gather of a constant table by computed indices
  npu::ArgMaxLayer argmax;  // ArgMax / ArgMin over the innermost dim (int64 indices)
  bool output_u8 = false;
};
// The model's float boundary: a QuantizeLinear of an f32 graph input to 8 bits, or a
// DequantizeLinear of 8 bits to an f32 graph output. On a target whose vector cores declare an
// f32 rate it is a VEC quantize / dequantize layer (npu::EltwiseLayer::Quantize), the DMA
// moving the float bytes (tests/npu/npu_boundary_test.cc).
bool IsFloatBoundary(const Node& n);
// Whether `n` is of a kind the vector cores take (then VectorLayerOf says if this one can).
bool IsVectorNode(const Node& n);
StatusOr<VectorLayer> VectorLayerOf(const Node& n);
// The vector tiler's choice for the layer of `v`'s kind (the one place that maps kinds to
// tilers: the partitioner and the segment's re-tiling both ask here).
StatusOr<npu::VectorTiling> ChooseVectorTiling(const VectorLayer& v, const npu::Target& t,
                                               const npu::TilerOptions& opt);

// Data movement nodes (Concat, Transpose, Slice, Split, reshape-likes): their copy as DMA boxes.
bool IsMoveNode(const Node& n);
StatusOr<npu::MoveLayer> MoveLayerOf(const Node& n);
// A Gather of a constant 8-bit table by int64 indices computed at run time (npu_move_layer.cc).
StatusOr<npu::GatherLayer> GatherLayerOf(const Node& n);

// Two data movement nodes as one copy: `p` (a Transpose or reshape-like whose output only
// `n`, another one, reads; p's input not itself from such a pair) is absorbed into `n` when
// their composed byte map (NPU layouts) is one strided box. On the NPU, p is then a view
// (partition::IsDramView, no program) and n's MoveLayerOf copies from p's input: a head
// transpose next to a 3-d <-> 4-d reshape moves rows of d bytes, or nothing at all, instead of
// one-byte rows twice. The partition places the pair on one unit. Returns n, or nullptr.
// Guarded by tests/lower/npu_move_chain_test.cc. Longer chains from a Slice of a 4-d image (a
// channel split: Slice -> Reshape -> Reshape -> Transpose), each node read only by the next, are
// one copy too when the whole chain is one strided box: every node but the last is absorbed
// into the next, and the last copies from the Slice's input (tests/lower/npu_split_chain_test.cc).
const Node* AbsorbedInto(const Node& p);
// p is absorbed into the next move as part of a chain of more than two moves (one copy at the
// chain's last node, from its first node's input). The partition keeps such a chain inside
// one NPU segment or on the CPU (NpuSplitChainTest.ChainSplitBySegmentsRunsOnTheCpu).
bool InLongerChain(const Node& p);
// n's copy from p's input when AbsorbedInto(p) == &n.
StatusOr<npu::MoveLayer> ComposedMove(const Node& p, const Node& n);
// A Transpose of a 3-d 8-bit tensor read only as the right operand of a 3-d QLinearMatMul is
// absorbed into it too when K or N stays contiguous (attention's Kᵀ): the MatMul reads the
// transpose's input with these element strides (npu::ConvLayer::b_strides) and p is a view.
std::optional<std::array<int64_t, 3>> RightOperandStrides(const Node& p);

// Multiply-accumulates of a node: GEMM-class nodes and grouped/depthwise convolutions; 0 else.
int64_t MacsOf(const Node& n);

}  // namespace edgec::lower
