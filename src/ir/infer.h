// Shape and type inference, one function per op (src/ir/infer_<family>.cc), listed through
// ops.def. The same functions serve the compiler (values known only for constants, so some
// dims may stay unknown) and the runtime (every input value is known, so every output type
// is exact): one mechanism for static and value-dependent shapes.
//
// An infer function validates everything a kernel relies on (input count, ranks, dtypes,
// attribute values) and reports what is wrong with the node's label, the input index and
// the value. Kernels then only compute.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/op.h"
#include "ir/types.h"

namespace edgec {

class Graph;

struct InferInput {
  const TensorType* type = nullptr;  // nullptr when the optional input is absent
  const Tensor* value = nullptr;     // the value when known (constant or at runtime)
};

class InferContext {
 public:
  InferContext(OpKind op, const Attributes& attrs, std::string label,
               std::vector<InferInput> inputs, int num_outputs)
      : op_(op), attrs_(attrs), label_(std::move(label)), inputs_(std::move(inputs)),
        outputs_(num_outputs) {}

  OpKind op() const { return op_; }
  const Attributes& attrs() const { return attrs_; }
  const std::string& label() const { return label_; }  // "Conv 'conv1'"

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].type != nullptr; }
  const TensorType& input_type(int i) const { return *inputs_[i].type; }
  // Known value of input i, or nullptr (absent or not known yet).
  const Tensor* input_value(int i) const { return i < num_inputs() ? inputs_[i].value : nullptr; }

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  TensorType& output(int i) { return outputs_[i]; }
  std::vector<TensorType>& outputs() { return outputs_; }

  // "Conv 'conv1': <message>" as InvalidArgument.
  template <typename... Args>
  Status Error(fmt::format_string<Args...> f, Args&&... args) const {
    return InvalidArgument("{}: {}", label_, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status Unsupported(fmt::format_string<Args...> f, Args&&... args) const {
    return Unimplemented("{}: {}", label_, fmt::format(f, std::forward<Args>(args)...));
  }
  // Common checks, returning a clear error.
  Status ExpectInputs(int min, int max) const;   // count of inputs given (absent optional ok)
  Status ExpectRequired(int i) const;            // input i must be present
  Status ExpectRank(int i, int rank) const;      // when rank is known
  Status ExpectDType(int i, std::initializer_list<DType> allowed) const;

 private:
  OpKind op_;
  const Attributes& attrs_;
  std::string label_;
  std::vector<InferInput> inputs_;
  std::vector<TensorType> outputs_;
};

using InferFn = Status (*)(InferContext&);
InferFn GetInferFn(OpKind op);

// Runs inference on one node of a graph (types and constant values of its inputs) and
// returns the output types.
StatusOr<std::vector<TensorType>> InferNodeTypes(const class Node& node);

// Runs inference over the whole graph in order and writes every node output's type.
// Fails on the first node whose inputs are invalid.
Status InferShapes(Graph& g);

// --- helpers for infer functions and kernels ---

// Numpy-style multidirectional broadcasting; unknown dims broadcast to unknown.
StatusOr<Dims> BroadcastDims(const Dims& a, const Dims& b);
// axis in [-rank, rank) -> [0, rank); `what` names it in the error ("axis", "axes[1]").
StatusOr<int> NormalizeAxis(int64_t axis, int rank, std::string_view what = "axis");
// Convenience: a type with the given dtype and dims.
TensorType MakeType(DType dtype, Dims dims);
TensorType UnknownRank(DType dtype);
// The type of a value known at run time: a tensor's dtype and dims; a sequence's elements'
// dtype and the dims they share; an empty optional's element dtype, rank unknown.
TensorType TypeOf(const Tensor& t);
// Only the sequence and control families (and Identity, which passes any value on) take
// sequence or optional inputs; any other op given one fails here, naming the input
// (tests/frontend/sequence_test.cc: TensorOpRefusesASequence).
Status ExpectTensorInputs(const InferContext& ctx);

}  // namespace edgec

namespace edgec::infer {
// Input i (named `name` in the error) must broadcast unidirectionally to `target`
// (right-aligned, dims of 1 stretch; unknown dims pass).
Status ExpectBroadcastsTo(const InferContext& ctx, int i, const char* name, const Dims& target);
}  // namespace edgec::infer

namespace edgec::infer {
#define EDGEC_OP(name, family, traits) Status name(InferContext& ctx);
#include "ir/ops.def"
}  // namespace edgec::infer
