// Helpers shared by the fast CPU kernels: the factories registry.cc dispatches to, request
// checks that explain a refusal, and the strides of a TensorDesc in memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/kernel.h"

namespace edgec::cpu {

using KernelOr = StatusOr<std::unique_ptr<Kernel>>;

// One factory per kernel family (the file named after it).
KernelOr CreateUnaryKernel(const KernelRequest& req);      // elementwise.cc
KernelOr CreateBinaryKernel(const KernelRequest& req);     // elementwise.cc
KernelOr CreateSoftmaxKernel(const KernelRequest& req);    // softmax.cc
KernelOr CreateNormKernel(const KernelRequest& req);       // norm.cc
KernelOr CreateBatchNormKernel(const KernelRequest& req);  // batch_norm.cc
KernelOr CreateRecurrentKernel(const KernelRequest& req);  // recurrent.cc (RNN, GRU, LSTM)
KernelOr CreateAttentionKernel(const KernelRequest& req);  // attention.cc
KernelOr CreateResizeKernel(const KernelRequest& req);     // resize.cc
KernelOr CreateMovementKernel(const KernelRequest& req);   // movement.cc
KernelOr CreateConvKernel(const KernelRequest& req);       // onednn_conv.cc
KernelOr CreateConv1x1GemmKernel(const KernelRequest& req);  // conv1x1_gemm.cc (tried first)
KernelOr CreateImageConvKernel(const KernelRequest& req);  // image_conv.cc (a planar image stem)
KernelOr CreateWinoS2ConvKernel(const KernelRequest& req);  // conv3x3_s2_wino.cc (tried first for 3x3 stride 2)
// The own image conv when it fits `req` and measures faster than oneDNN's kernel `onednn`.
KernelOr PreferImageConv(const KernelRequest& req, std::unique_ptr<Kernel> onednn);  // image_conv.cc
KernelOr CreateMatMulKernel(const KernelRequest& req);     // onednn_matmul.cc
KernelOr CreateGemvKernel(const KernelRequest& req);       // gemv.cc (tried first for one-row products)
KernelOr CreatePoolKernel(const KernelRequest& req);       // onednn_pool.cc
KernelOr CreateMaxPoolNhwcKernel(const KernelRequest& req);  // pool.cc (tried first for NHWC f32 MaxPool)
KernelOr CreateGlobalAveragePoolNhwcKernel(const KernelRequest& req);  // pool.cc (tried first for NHWC f32)
KernelOr CreateReduceKernel(const KernelRequest& req);     // onednn_reduce.cc
KernelOr CreateInt8ConvKernel(const KernelRequest& req);   // int8_conv.cc
KernelOr CreateInt8MatMulKernel(const KernelRequest& req); // int8_matmul.cc
KernelOr CreateInt8ActMatMulKernel(const KernelRequest& req);  // int8_act_matmul.cc (B an activation)
KernelOr CreateQuantizeKernel(const KernelRequest& req);   // int8_quantize.cc
KernelOr CreateLookupKernel(const KernelRequest& req);     // int8_lookup.cc
KernelOr CreateQuantizedBinaryKernel(const KernelRequest& req);  // int8_binary.cc (QLinearAdd, QLinearMul)
KernelOr CreateQuantizedGlobalAveragePoolKernel(const KernelRequest& req);  // int8_global_pool.cc
KernelOr CreateQuantizedAveragePoolKernel(const KernelRequest& req);  // int8_avg_pool.cc
KernelOr CreateCastKernel(const KernelRequest& req);       // cast_compare.cc (non-f32 Cast)
KernelOr CreateCompareKernel(const KernelRequest& req);    // cast_compare.cc (Equal, Less, ... -> bool)
KernelOr CreateIntArithKernel(const KernelRequest& req);   // int_arith.cc (i64/i32 Add, Sub, Mul)
KernelOr CreateShapeKernel(const KernelRequest& req);      // int_arith.cc
KernelOr CreateNotKernel(const KernelRequest& req);        // int_arith.cc (bool Not)

// "Conv 'c1': <why>" as Unimplemented: the reason the Plan reports for its fallback.
template <typename... Args>
Status Refuse(const KernelRequest& req, fmt::format_string<Args...> f, Args&&... args) {
  return Unimplemented("{}: {}", req.label, fmt::format(f, std::forward<Args>(args)...));
}

inline bool Present(const TensorDesc& d) { return d.dtype != DType::kUndefined; }
inline int NumPresent(const std::vector<TensorDesc>& v) {
  int n = 0;
  for (const TensorDesc& d : v) n += Present(d);
  return n;
}
inline const TensorDesc* InputOrNull(const KernelRequest& req, size_t i) {
  return i < req.inputs.size() && Present(req.inputs[i]) ? &req.inputs[i] : nullptr;
}
inline const Tensor* ConstantOrNull(const KernelRequest& req, size_t i) {
  return i < req.constants.size() ? req.constants[i] : nullptr;
}

// Fails unless every present input and output (or those listed) is f32.
Status ExpectF32(const KernelRequest& req);
Status ExpectF32(const KernelRequest& req, std::initializer_list<int> inputs);

// Fails unless every present input and output of rank 4 has `layout` and no other rank
// claims a layout other than row-major.
Status ExpectLayouts(const KernelRequest& req, Layout layout);
// Fails when a layout other than kRowMajor and kNHWC is used, or kNHWC on a rank other than 4.
Status ExpectKnownLayouts(const KernelRequest& req);

// Element strides of each logical axis: the desc's own strides, else those of a dense
// row-major or NHWC buffer.
std::vector<int64_t> LogicalStrides(const TensorDesc& d);
// The logical axes in memory order, outermost first: 0..r-1, (0, 2, 3, 1) for NHWC, or
// by decreasing stride for explicit strides.
std::vector<int> MemoryOrder(const TensorDesc& d);
// Fails when a present input not in `strided_ok` or (unless `strided_outputs_ok`) any
// output is not dense.
Status ExpectDense(const KernelRequest& req, std::initializer_list<int> strided_ok = {},
                   bool strided_outputs_ok = false);

// "nhwc" / "row-major".
std::string LayoutWord(Layout l);

// The best time in ms of each of two kernels for the same request, run alternately on
// zero-filled buffers (input i of in_bytes[i] bytes, output o of out_bytes[o]; inputs not
// listed are nullptr): a choice by measurement between implementations that compute the same.
std::pair<double, double> TimeTwoKernels(Kernel& a, Kernel& b, const std::vector<size_t>& in_bytes,
                                         const std::vector<size_t>& out_bytes);

}  // namespace edgec::cpu
