// The IR graph: Values (SSA edges) and Nodes (ops). The Graph owns both, keeps use lists,
// and keeps nodes in topological order (passes must leave it so; Verify checks).
//
// A Value is a graph input, a constant (initializer), or the output of exactly one node.
// An absent optional input is a nullptr entry in Node::inputs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/attributes.h"
#include "ir/op.h"
#include "ir/types.h"

namespace edgec {

class Node;

struct Use {
  Node* node;
  int input_index;
};

class Value {
 public:
  const std::string& name() const { return name_; }
  TensorType type;
  PhysicalLayout physical;
  std::optional<QuantParams> quant;

  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool is_constant() const { return constant_ != nullptr; }
  const Tensor& constant() const { return *constant_; }
  std::shared_ptr<const Tensor> constant_ptr() const { return constant_; }
  bool is_graph_input() const { return is_graph_input_; }
  bool is_graph_output() const { return is_graph_output_; }

 private:
  friend class Graph;
  std::string name_;
  Node* producer_ = nullptr;
  int producer_output_ = -1;
  std::vector<Use> uses_;
  std::shared_ptr<const Tensor> constant_;
  bool is_graph_input_ = false;
  bool is_graph_output_ = false;
};

class Node {
 public:
  OpKind op() const { return op_; }
  const std::string& name() const { return name_; }
  Attributes attrs;
  // ONNX node names this node came from (itself when imported; all absorbed nodes after
  // fusion). Reports and per-layer comparisons use it.
  std::vector<std::string> provenance;
  // The opset the node was imported at (informational; converters already normalized it).
  int opset = 0;

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  Value* input(int i) const { return i < num_inputs() ? inputs_[i] : nullptr; }
  Value* output(int i) const { return outputs_[i]; }
  // "Conv 'layer1.0/conv1'": how messages name a node.
  std::string Label() const;

 private:
  friend class Graph;
  OpKind op_;
  std::string name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  std::string name;

  // --- building ---
  // Names must be unique among values; an empty name gets a fresh one.
  Value* AddInput(const std::string& name, TensorType type);
  Value* AddConstant(const std::string& name, Tensor value);
  // Appends a node (callers append in topological order or call TopoSort after).
  Node* AddNode(OpKind op, const std::string& name, std::vector<Value*> inputs,
                int num_outputs, std::vector<std::string> output_names = {});
  void MarkOutput(Value* v);
  std::string FreshName(const std::string& base);

  // --- editing ---
  void SetInput(Node* n, int index, Value* v);  // keeps use lists
  void ReplaceAllUses(Value* from, Value* to);  // includes graph outputs
  void RemoveNode(Node* n);                     // its outputs must be unused
  // Renames a value; fails if the name is taken by another value.
  Status RenameValue(Value* v, const std::string& name);
  // Drops the node's outputs from index `keep` on; they must be unused.
  void TruncateOutputs(Node* n, int keep);
  // Sorts nodes topologically (stable for already-sorted graphs). Fails on a cycle,
  // naming a node on it.
  Status TopoSort();

  // Deep copy: same names, types, attributes, provenance; constants share their buffers
  // (they are immutable).
  Graph Clone() const;

  // --- queries ---
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  std::vector<Node*> nodes() const;
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  Value* FindValue(const std::string& name) const;
  std::vector<Value*> constants() const;

 private:
  Value* NewValue(const std::string& name);
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> by_name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  int64_t fresh_counter_ = 0;
};

// Checks structure: use lists match inputs, every value has one definition, nodes are in
// topological order, graph outputs are defined, constants match their types, physical
// layouts agree with logical shapes. Messages name the node and value.
Status Verify(const Graph& g);

// Text IR, one node a line:  %y: f32[1, 64, 56, 56] = Conv 'conv1'(%x, %w, %b) {strides=[2, 2]}
std::string PrintGraph(const Graph& g);

}  // namespace edgec
