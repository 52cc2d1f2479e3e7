// The converter table's interface: one converter per ONNX op type, turning one NodeProto
// into canonical IR nodes. Internal to the frontend.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontend/onnx/onnx_tensor.h"
#include "ir/graph.h"

namespace edgec::onnx_fe {

class ConvertContext {
 public:
  ConvertContext(const onnx::NodeProto& node, int opset, Graph& g,
                 const std::filesystem::path& model_dir,
                 std::function<Value*(const std::string&)> lookup)
      : node_(node), opset_(opset), g_(g), model_dir_(model_dir), lookup_(std::move(lookup)) {}

  const onnx::NodeProto& node() const { return node_; }
  int opset() const { return opset_; }
  Graph& graph() { return g_; }
  std::string label() const { return fmt::format("{} '{}'", node_.op_type(), node_.name()); }

  int num_inputs() const { return node_.input_size(); }
  // The Value of input i, or nullptr when absent (empty name or beyond the list).
  Value* input(int i) const;
  // Converts every attribute; fails on graph/sparse/string-tensor attributes, except that
  // with `skip_graphs` graph attributes are left out (the control-flow converters import them).
  StatusOr<Attributes> ConvertAttributes(bool skip_graphs = false) const;
  Value* MakeConstant(const std::string& suffix, Tensor t);

  // Emits a node. `final_node` nodes get the ONNX node's output names and name; others get
  // derived names. Provenance is the ONNX node's name.
  Node* Emit(OpKind op, std::vector<Value*> inputs, Attributes attrs, bool final_node = true,
             int num_outputs = -1);

  template <typename... Args>
  Status Error(fmt::format_string<Args...> f, Args&&... args) const {
    return InvalidArgument("{}: {}", label(), fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status Unsupported(fmt::format_string<Args...> f, Args&&... args) const {
    return Unimplemented("{}: {}", label(), fmt::format(f, std::forward<Args>(args)...));
  }
  // The Value named `name` in this graph's scope (an enclosing graph's value becomes a
  // capture of this subgraph, ir/control_flow.h); nullptr when nothing has the name.
  Value* Lookup(const std::string& name) const { return lookup_(name); }

  // Imports a graph attribute of this node as a subgraph. `captures` holds on entry the names
  // the subgraph must take as its first captures (an If's other branch's) and on return all of
  // them in input order; `hints` types formal inputs the subgraph leaves untyped.
  using SubgraphImporter = std::function<StatusOr<SubgraphPtr>(
      const onnx::GraphProto&, const std::string& attr, std::vector<std::string>* captures,
      const std::vector<TensorType>& hints)>;
  void set_subgraph_importer(SubgraphImporter f) { import_subgraph_ = std::move(f); }
  StatusOr<SubgraphPtr> ImportSubgraph(const std::string& attr, std::vector<std::string>* captures,
                                       const std::vector<TensorType>& hints = {}) const;

  // Nodes emitted so far (the importer infers their types).
  std::vector<Node*>& emitted() { return emitted_; }
  // A node that converts to a constant (Constant) records it here instead.
  std::vector<std::pair<std::string, Value*>>& aliases() { return aliases_; }

 private:
  const onnx::NodeProto& node_;
  int opset_;
  Graph& g_;
  const std::filesystem::path& model_dir_;
  std::function<Value*(const std::string&)> lookup_;
  SubgraphImporter import_subgraph_;
  std::vector<Node*> emitted_;
  std::vector<std::pair<std::string, Value*>> aliases_;
  int counter_ = 0;
};

using ConvertFn = Status (*)(ConvertContext&);

// Control flow (control_flow_converters.cc): subgraphs with captures as trailing inputs.
Status ConvertIf(ConvertContext& c);
Status ConvertLoop(ConvertContext& c);
Status ConvertScan(ConvertContext& c);
Status ConvertSequenceMap(ConvertContext& c);
// Optional's `type` attribute (a TypeProto) -> edgec_dtype, edgec_sequence (sequence_converters.cc).
Status ConvertOptional(ConvertContext& c);

// nullptr when the op type is not supported.
ConvertFn FindConverter(const std::string& op_type);
// Converts a node of another domain that names an edgec op of that domain (OnnxDomain:
// internal ops, the training optimizers) one-to-one.
Status ConvertOneToOne(ConvertContext& c);
// Every ONNX op type the importer accepts.
std::vector<std::string> SupportedOnnxOps();

}  // namespace edgec::onnx_fe
