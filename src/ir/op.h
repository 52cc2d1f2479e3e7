// OpKind: the enum generated from ops.def, and lookups by name.
#pragma once

#include <optional>
#include <string_view>

namespace edgec {

enum class OpKind : uint16_t {
#define EDGEC_OP(name, family) k##name,
#include "ir/ops.def"
  kNumOps
};

std::string_view OpName(OpKind op);            // "Conv"
std::string_view OpFamily(OpKind op);          // "conv"
std::optional<OpKind> OpFromName(std::string_view name);
// Internal ops (families epilogue and composite) have no ONNX counterpart; they are
// exported in the "edgec" domain.
bool IsInternalOp(OpKind op);
// Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same row-major order.
bool IsReshapeLike(OpKind op);
constexpr const char* kInternalDomain = "edgec";
constexpr int kNumOpKinds = static_cast<int>(OpKind::kNumOps);

}  // namespace edgec
