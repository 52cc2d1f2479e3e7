// Helpers of the epilogue fusions (fuse-conv-bn, fuse-matmul-add, fuse-activation,
// fuse-residual-add) and their lowering (unfuse_epilogue.cc): the fused form of a producer,
// the activation forms exporters write, and the pattern tables built from them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/epilogue.h"
#include "passes/pattern.h"

namespace edgec::passes {

bool IsEpilogueOp(OpKind op);  // FusedConv, FusedMatMul, FusedAdd

// A node about to be created, usually the fused equivalent of a Conv, Gemm, MatMul, Add or
// of an epilogue node (fuse-conv-bn also builds plain Conv/Gemm nodes with it). FusedConv and
// FusedMatMul always have 4 input slots (X/A, W/B, bias, residual; absent = nullptr),
// FusedAdd 2.
struct FusedForm {
  OpKind op = OpKind::kFusedConv;
  std::vector<Value*> inputs;
  Attributes attrs;

  ActivationSpec activation() const;  // attributes were validated: never fails
  void set_activation(const ActivationSpec& a) { WriteActivation(a, attrs); }
  Value* bias() const { return inputs.size() == 4 ? inputs[2] : nullptr; }
  Value* residual() const { return inputs.size() == 4 ? inputs[3] : nullptr; }
};

// Conv -> FusedConv; Gemm -> FusedMatMul (beta folded: C itself when beta is 1, a new
// constant beta*C when C is constant, dropped when beta is 0); MatMul -> FusedMatMul; Add ->
// FusedAdd; epilogue nodes as they are. Only float outputs. nullopt (and *why) otherwise.
std::optional<FusedForm> ToFusedForm(Graph& g, const Node* n, std::string* why);

// Creates the node for `form` (trailing absent inputs dropped, types inferred), gives it the
// provenance of every node in `absorbed` (the first one names it) and replaces `old_output`
// by its output. Returns false with *why when inference rejects it or the value cannot be
// replaced (the new node is then removed).
bool ReplaceWithFused(Graph& g, Value* old_output, const FusedForm& form,
                      const std::vector<const Node*>& absorbed, std::string* why);

// The activation forms fuse-activation recognizes, each ending at its `anchor` node:
//   Relu, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh: the op;
//   Clip with constant (or absent) min and max;  Gelu: the composite Gelu op;
//   x*HardSigmoid(x) with alpha 1/6, beta 1/2 (HardSwish as opset-13 exporters write it);
//   x*Sigmoid(x) (SiLU / Swish).
struct ActivationForm {
  std::string name;  // "Relu", "x*Sigmoid(x)": the second half of a pattern name
  OpKind anchor;
};
const std::vector<ActivationForm>& ActivationForms();

struct ActivationMatch {
  Value* input = nullptr;    // x, the tensor the activation applies to
  ActivationSpec spec;
  std::vector<Node*> nodes;  // the nodes of the form; the last one produces the result
};
// Recognizes `form` ending at `at`; nullopt with *why when it does not match.
std::optional<ActivationMatch> MatchActivation(const ActivationForm& form, Node* at, std::string* why);

// One pattern per (producer op, activation form), named "<producer>+<form>": the activation
// is absorbed into the producer's epilogue. A producer qualifies when it has no activation
// yet, its output is read only by the activation, and `accept` (when given) agrees.
using ProducerFilter = std::function<bool(const Node* producer, std::string* why)>;
std::vector<Pattern> ActivationPatterns(const std::vector<OpKind>& producers,
                                        ProducerFilter accept = nullptr);

// A pattern anchored at Add, named `name`: for each side (input 0 first) computed by a
// `producer_op` node, `fold(g, add, producer, other input, why)` tries to absorb the Add into
// that producer; the pattern matches at the first side it succeeds on. Without such a side
// *why says that no input is a `producer_op`.
using AddFold = std::function<bool(Graph& g, Node* add, Node* producer, Value* other, std::string* why)>;
Pattern AddIntoProducerPattern(std::string name, OpKind producer_op, AddFold fold);

}  // namespace edgec::passes
