// Matching helpers shared by merge-chains and the exporter-pattern fusions (fuse-layernorm,
// fuse-rmsnorm, fuse-gelu, fuse-attention): scalar operands, sole consumers, reduced axes,
// names and provenance of fused nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace edgec::passes {

// Constants in exporter patterns (1/sqrt(2), sqrt(2/pi), 0.044715) are matched with this
// relative tolerance.
constexpr double kPatternConstantRtol = 1e-4;
bool NearConstant(double value, double expected, double rtol = kPatternConstantRtol);

// A binary node with one constant input holding a single repeated value, whose output has
// the shape of the other input (the constant does not broadcast it up).
struct ScalarOperand {
  Value* other;     // the non-constant input
  int other_index;  // its input index (0 or 1)
  double value;
};
std::optional<ScalarOperand> ScalarOperandOf(const Node* n);
// The scalar operand of `n` when n is of kind `op`, and the other input is `x` if given.
std::optional<ScalarOperand> ScalarOperandOf(const Node* n, OpKind op, const Value* x = nullptr);

// The one node reading v, when v has a single use and is not a graph output.
Node* SoleConsumer(const Value* v);
// The input of the two-input node `n` that is not `v` (nullptr if v is not an input).
Value* OtherInput(const Node* n, const Value* v);

// The dims a ReduceMean/ReduceSum reduces, normalized and sorted, when the axes are constant
// (absent axes reduce every dim); nullopt otherwise. `why` says why.
std::optional<std::vector<int>> ReducedAxes(const Node* reduce, int rank, std::string* why);
// The same, when the reduction also has keepdims=1.
std::optional<std::vector<int>> KeptReducedAxes(const Node* reduce, int rank, std::string* why);
// The first axis when `axes` are exactly the trailing dims [rank - n, rank).
std::optional<int> TrailingAxisOf(const std::vector<int>& axes, int rank);

// A scalar (rank 0) tensor of dtype `dt` holding v.
Tensor ScalarOf(DType dt, double v);
// A tensor of dtype `dt` and dims filled with v.
Tensor FilledOf(DType dt, const Dims& dims, double v);

// The name of a node fused from `nodes`: their common name scope plus `op`
// ("/encoder/layers.0/norm1/" + "LayerNormalization").
std::string FusedNodeName(const std::vector<Node*>& nodes, std::string_view op);
// Appends the provenance of every node of `from` to `into`.
void AbsorbAllProvenance(Node* into, const std::vector<Node*>& from);

// Replaces `from` by the output of the fused node `fused`; when that is impossible (a graph
// output that cannot be renamed) removes `fused` again and explains. Counts the absorbed
// nodes in the statistics.
bool CommitFusion(Graph& g, PassContext& ctx, Value* from, Node* fused, int absorbed,
                  std::string* why);

// Whether `square` (may be null) is Pow(v, 2) or Mul(v, v).
bool IsSquareOf(const Node* square, const Value* v);

// A matched decomposed normalization (LayerNorm's (x - mean) / sqrt(var + eps), RMSNorm's
// x / sqrt(mean(x^2) + eps)) without its scale and bias: the normalized value, the (last)
// axis, epsilon and every node of the pattern, in order.
struct NormalizationMatch {
  Value* x = nullptr;
  int axis = 0;
  double epsilon = 0;
  std::vector<Node*> nodes;
};

}  // namespace edgec::passes
