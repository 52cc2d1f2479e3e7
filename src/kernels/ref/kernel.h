// Reference kernels: plain, obviously-correct loops. They are the oracle every fast kernel,
// pass and NPU program is compared against, so clarity beats speed here.
//
// A kernel never sees the Graph. It gets its op's attributes, its input tensors (nullptr for
// an absent optional input) and output tensors already allocated with the types that shape
// inference computed from the actual inputs. Inference has validated the inputs, so a kernel
// only computes; it may still return an error for a value-dependent problem (an index out
// of range in Gather, say), naming the node.
#pragma once

#include <string>
#include <vector>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/op.h"
#include "ir/tensor.h"

namespace edgec::ref {

struct KernelContext {
  OpKind op;
  const Attributes& attrs;
  std::string label;  // "Gather 'g1'"
  std::vector<const Tensor*> inputs;
  std::vector<Tensor>& outputs;

  const Tensor* input(int i) const {
    return i < static_cast<int>(inputs.size()) ? inputs[i] : nullptr;
  }
  template <typename... Args>
  Status Error(fmt::format_string<Args...> f, Args&&... args) const {
    return InvalidArgument("{}: {}", label, fmt::format(f, std::forward<Args>(args)...));
  }
};

using KernelFn = Status (*)(KernelContext&);
KernelFn GetKernel(OpKind op);

#define EDGEC_OP(name, family, traits) Status name(KernelContext& ctx);
#include "ir/ops.def"

}  // namespace edgec::ref
