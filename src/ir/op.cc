#include "ir/op.h"

#include <array>

namespace edgec {
namespace {
constexpr std::array<std::string_view, kNumOpKinds> kNames = {
#define EDGEC_OP(name, family, traits) #name,
#include "ir/ops.def"
};
constexpr std::array<std::string_view, kNumOpKinds> kFamilies = {
#define EDGEC_OP(name, family, traits) #family,
#include "ir/ops.def"
};
using namespace op_trait;
constexpr std::array<uint32_t, kNumOpKinds> kTraits = {
#define EDGEC_OP(name, family, traits) static_cast<uint32_t>(traits),
#include "ir/ops.def"
};
}  // namespace

std::string_view OpName(OpKind op) { return kNames[static_cast<int>(op)]; }
std::string_view OpFamily(OpKind op) { return kFamilies[static_cast<int>(op)]; }
uint32_t OpTraits(OpKind op) { return kTraits[static_cast<int>(op)]; }

bool IsInternalOp(OpKind op) {
  std::string_view f = OpFamily(op);
  return f == "epilogue" || f == "composite" || f == "quant_internal";
}

std::string_view OnnxDomain(OpKind op) {
  if (IsInternalOp(op)) return kInternalDomain;
  if (OpFamily(op) == "training") return kTrainingDomain;
  return "";
}

bool IsReshapeLike(OpKind op) {
  return op == OpKind::kReshape || op == OpKind::kFlatten || op == OpKind::kSqueeze || op == OpKind::kUnsqueeze;
}

std::optional<OpKind> OpFromName(std::string_view name) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    if (kNames[i] == name) return static_cast<OpKind>(i);
  }
  return std::nullopt;
}

}  // namespace edgec
