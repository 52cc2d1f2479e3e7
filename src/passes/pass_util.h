// Small helpers every pass uses: use queries, constants, dead-node removal, provenance.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/infer.h"

namespace edgec::passes {

// True when v is read by exactly one node input and is not a graph output.
bool HasSingleUse(const Value* v);
// True when every use of v is by one of `nodes` and v is not a graph output.
bool UsedOnlyBy(const Value* v, const std::vector<Node*>& nodes);
// The producer of v when it is of kind `op`, else nullptr.
Node* ProducerOf(const Value* v, OpKind op);
// The constant value of v, or nullptr.
const Tensor* ConstantOf(const Value* v);
// A scalar (or all-equal) constant as double; nullopt when v is not such a constant.
std::optional<double> ConstantScalar(const Value* v);

// Replaces `from` by `to` everywhere. When `from` is a graph output, the output keeps its
// name: `to` takes it over if `to` is an intermediate value; otherwise nothing is replaced
// and false is returned (the caller must keep the node).
bool ReplaceValue(Graph& g, Value* from, Value* to);

// Removes nodes none of whose outputs are used (repeatedly); returns how many.
int RemoveDeadNodes(Graph& g);

// Sets the node's output types from shape inference (for nodes a pass creates).
Status SetInferredTypes(Node* n);

// Appends the provenance of `from` to `into` (without duplicates).
void AbsorbProvenance(Node* into, const Node* from);

// Creates a node like AddNode and infers its output types. Provenance is taken from
// `origin` when given.
StatusOr<Node*> AddInferredNode(Graph& g, OpKind op, const std::string& name,
                                std::vector<Value*> inputs, Attributes attrs, int num_outputs = 1,
                                const Node* origin = nullptr);

// Values joined into groups (union-find): the passes that change a region's rank join the
// values each node ties together (attention_3d.cc, lift_1d_windows.cc).
struct ValueGroups {
  std::map<Value*, Value*> parent;
  Value* Find(Value* v) {
    auto it = parent.find(v);
    if (it == parent.end()) return parent[v] = v;
    if (it->second == v) return v;
    return it->second = Find(it->second);
  }
  void Join(Value* a, Value* b) { parent[Find(a)] = Find(b); }
};

}  // namespace edgec::passes
