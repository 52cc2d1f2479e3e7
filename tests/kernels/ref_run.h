// One op through shape inference and its reference kernel, the way the runtime runs it (every
// value known), or through inference alone on types (compile time). The kernel tests' helper
// headers (conv_, elementwise_, movement_test_util.h) wrap these with their node name.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/infer.h"
#include "kernels/ref/kernel.h"

namespace edgec::testing_ref {

// An absent optional input is std::nullopt.
using Inputs = std::vector<std::optional<Tensor>>;

// `node` names the node in messages: errors read "<Op> <node>: ...".
inline StatusOr<std::vector<Tensor>> RunOp(OpKind op, const Inputs& inputs, const Attributes& attrs,
                                           int num_outputs, const std::string& node) {
  std::vector<TensorType> types(inputs.size());
  std::vector<InferInput> infer_inputs(inputs.size());
  std::vector<const Tensor*> kernel_inputs(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    types[i] = TypeOf(*inputs[i]);
    infer_inputs[i] = {&types[i], &*inputs[i]};
    kernel_inputs[i] = &*inputs[i];
  }
  const std::string label = std::string(OpName(op)) + " " + node;
  InferContext ictx(op, attrs, label, infer_inputs, num_outputs);
  RETURN_IF_ERROR(GetInferFn(op)(ictx));
  std::vector<Tensor> outputs;
  for (const TensorType& t : ictx.outputs()) {
    if (!t.IsStatic()) return Internal("inference left {} not static", t.ToString());
    ASSIGN_OR_RETURN(Tensor out, Tensor::Create(t.dtype, t.dims));
    outputs.push_back(std::move(out));
  }
  ref::KernelContext kctx{op, attrs, label, kernel_inputs, outputs};
  RETURN_IF_ERROR(ref::GetKernel(op)(kctx));
  return outputs;
}

// Inputs given by type (nullopt: absent), values unknown.
inline StatusOr<std::vector<TensorType>> InferTypes(OpKind op, const std::vector<std::optional<TensorType>>& in,
                                                    const Attributes& attrs, int num_outputs,
                                                    const std::string& node) {
  std::vector<InferInput> infer_inputs(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i]) infer_inputs[i].type = &*in[i];
  }
  InferContext ctx(op, attrs, std::string(OpName(op)) + " " + node, infer_inputs, num_outputs);
  RETURN_IF_ERROR(GetInferFn(op)(ctx));
  return std::move(ctx.outputs());
}

}  // namespace edgec::testing_ref
