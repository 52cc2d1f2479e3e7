// OpKind: the enum generated from ops.def, and lookups by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace edgec {

enum class OpKind : uint16_t {
#define EDGEC_OP(name, family, traits) k##name,
#include "ir/ops.def"
  kNumOps
};

std::string_view OpName(OpKind op);            // "Conv"
std::string_view OpFamily(OpKind op);          // "conv"
std::optional<OpKind> OpFromName(std::string_view name);
// Internal ops (families epilogue and composite) have no ONNX counterpart; they are
// exported in the "edgec" domain.
bool IsInternalOp(OpKind op);
// The ONNX domain an op is written in: "" (the default domain), "edgec" for internal ops,
// "ai.onnx.preview.training" for the training family. Import and export both ask here.
std::string_view OnnxDomain(OpKind op);
// Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same row-major order.
bool IsReshapeLike(OpKind op);

// The facts about an op that stages other than shape inference and the kernels ask for,
// declared once per op in ops.def (the third column). tests/ir/op_traits_test.cc checks them
// against the shape functions and the kernels.
namespace op_trait {
enum OpTrait : uint32_t {
  // Elementwise with one data input: output[i] = f(input 0[i]); any further inputs are
  // parameters (Clip's bounds), never data.
  kUnary = 1u << 0,
  // Elementwise over every data input with numpy broadcasting (binary, variadic, select).
  kBroadcast = 1u << 1,
  // Elementwise, and its kernels read and write any physical layout of same-shaped tensors:
  // the layout pass may put it in an NHWC region, the views pass may hand it strided data,
  // and (unless kViewOfInput) its output may take over a same-shaped input's buffer.
  kAnyLayout = 1u << 2,
  // Output 0 may be a view of input 0 (no step runs for it when the memory plan allows).
  kViewOfInput = 1u << 3,
  // Output values are input values (rearranged, selected or joined): no arithmetic, so a
  // quantized tensor passes through with its scale (MaxPool, Concat, Transpose, ...).
  kMovesValues = 1u << 4,
  // kMovesValues with one data input: the output keeps that input's quantization exactly
  // (not Concat, whose inputs may have other scales).
  kKeepsValues = 1u << 5,
  // A float function of one input that the quantizer may tabulate as a 256-entry lookup
  // between a DequantizeLinear and a QuantizeLinear.
  kTabulable = 1u << 6,
  // A window op over [N, C, spatial...] whose NPU lowering is 2-d only: the lift-1d-windows
  // pass (passes/lift_1d_windows.cc) computes a 1-d one as its 2-d form with H = 1 — input 0
  // and the output gain a unit dim 2, kernel_shape, strides, dilations and pads their H entry
  // (pads [0, b, 0, e]), constant operands of rank >= 2 (weights) a unit dim before the last.
  kLiftsTo2d = 1u << 7,
  // Each output element reads its data inputs at its own spatial position only (an integer
  // elementwise op, a Concat): a region of kLiftsTo2d ops lifted to 2-d takes it along. kUnary
  // and kBroadcast ops are so too and need not say it.
  kPerPosition = 1u << 8,
};
}  // namespace op_trait
using op_trait::OpTrait;

uint32_t OpTraits(OpKind op);
inline bool HasTrait(OpKind op, OpTrait t) { return (OpTraits(op) & t) != 0; }
// Elementwise in any layout and computed (not a view): its output may overwrite a same-shaped
// input whose last use it is (memory/liveness.cc), and a producer may write strided for it.
inline bool IsComputedElementwise(OpKind op) {
  return HasTrait(op, op_trait::kAnyLayout) && !HasTrait(op, op_trait::kViewOfInput);
}
constexpr const char* kInternalDomain = "edgec";
constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
constexpr int kNumOpKinds = static_cast<int>(OpKind::kNumOps);

}  // namespace edgec
