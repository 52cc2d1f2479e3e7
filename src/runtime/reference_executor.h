// Runs a Graph node by node on the reference kernels. Shapes are inferred from the actual
// input values at every run, so value-dependent shapes (Shape -> Gather -> Concat ->
// Reshape, dynamic widths) follow the inputs. This is the oracle the fast paths are
// compared against; it allocates freely and frees each value after its last use.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec {

// Checks `given` against the graph's inputs: every input present, no unknown names,
// dtype and rank equal, static dims equal. Messages name the input and the dim.
Status CheckInputs(const Graph& g, const std::map<std::string, Tensor>& given);

class ReferenceExecutor {
 public:
  explicit ReferenceExecutor(const Graph& g) : g_(g) {}

  // Called after each node with its outputs (for debugging and per-layer comparison).
  using NodeHook = std::function<void(const Node&, const std::vector<Tensor>&)>;
  void set_node_hook(NodeHook h) { hook_ = std::move(h); }

  // Returns the graph outputs in order.
  StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs) const;

 private:
  const Graph& g_;
  NodeHook hook_;
};

// Evaluates one node on the reference kernels (the evaluator constant folding uses).
StatusOr<std::vector<Tensor>> EvaluateNode(const Node& n, const std::vector<const Tensor*>& inputs);

// Seeded random inputs for every graph input: floats ~ N(0, 1); integers uniform in
// [0, 10); bool fair coin. Unknown dims become `default_dim`.
std::map<std::string, Tensor> RandomInputs(const Graph& g, uint64_t seed, int64_t default_dim = 1);

}  // namespace edgec
