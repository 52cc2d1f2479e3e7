#include <array>

#include "kernels/ref/kernel.h"

namespace edgec::ref {
namespace {
constexpr std::array<KernelFn, kNumOpKinds> kKernels = {
#define EDGEC_OP(name, family, traits) &name,
#include "ir/ops.def"
};
}  // namespace

KernelFn GetKernel(OpKind op) { return kKernels[static_cast<int>(op)]; }

}  // namespace edgec::ref
