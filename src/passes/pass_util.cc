#include "passes/pass_util.h"

#include <algorithm>

namespace edgec::passes {

bool HasSingleUse(const Value* v) { return v->uses().size() == 1 && !v->is_graph_output(); }

bool UsedOnlyBy(const Value* v, const std::vector<Node*>& nodes) {
  if (v->is_graph_output()) return false;
  for (const Use& u : v->uses()) {
    if (std::find(nodes.begin(), nodes.end(), u.node) == nodes.end()) return false;
  }
  return true;
}

Node* ProducerOf(const Value* v, OpKind op) {
  return v && v->producer() && v->producer()->op() == op ? v->producer() : nullptr;
}

const Tensor* ConstantOf(const Value* v) { return v && v->is_constant() ? &v->constant() : nullptr; }

std::optional<double> ConstantScalar(const Value* v) {
  const Tensor* t = ConstantOf(v);
  if (!t || t->numel() == 0) return std::nullopt;
  double first = LoadAsDouble(t->dtype(), t->raw(), 0);
  for (int64_t i = 1; i < t->numel(); ++i) {
    if (LoadAsDouble(t->dtype(), t->raw(), i) != first) return std::nullopt;
  }
  return first;
}

bool ReplaceValue(Graph& g, Value* from, Value* to) {
  if (from == to) return true;
  if (from->is_graph_output()) {
    if (to->is_graph_input() || to->is_constant() || to->is_graph_output()) return false;
    std::string name = from->name();
    g.ReplaceAllUses(from, to);
    // `from` keeps a placeholder name until its producer is removed.
    EDGEC_CHECK(g.RenameValue(from, g.FreshName(name + ".replaced")).ok());
    EDGEC_CHECK(g.RenameValue(to, name).ok());
    return true;
  }
  g.ReplaceAllUses(from, to);
  return true;
}

int RemoveDeadNodes(Graph& g) {
  int removed = 0;
  bool again = true;
  while (again) {
    again = false;
    auto nodes = g.nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node* n = *it;
      bool used = false;
      for (Value* o : n->outputs()) used |= !o->uses().empty() || o->is_graph_output();
      if (!used) {
        g.RemoveNode(n);
        ++removed;
        again = true;
      }
    }
  }
  return removed;
}

Status SetInferredTypes(Node* n) {
  ASSIGN_OR_RETURN(auto types, InferNodeTypes(*n));
  for (int i = 0; i < n->num_outputs(); ++i) n->output(i)->type = types[i];
  return Status::Ok();
}

void AbsorbProvenance(Node* into, const Node* from) {
  for (const std::string& p : from->provenance) {
    if (std::find(into->provenance.begin(), into->provenance.end(), p) == into->provenance.end()) {
      into->provenance.push_back(p);
    }
  }
}

StatusOr<Node*> AddInferredNode(Graph& g, OpKind op, const std::string& name,
                                std::vector<Value*> inputs, Attributes attrs, int num_outputs,
                                const Node* origin) {
  Node* n = g.AddNode(op, name, std::move(inputs), num_outputs);
  n->attrs = std::move(attrs);
  if (origin) n->provenance = origin->provenance;
  Status st = SetInferredTypes(n);
  if (!st.ok()) {
    g.RemoveNode(n);
    return st;
  }
  return n;
}

}  // namespace edgec::passes
