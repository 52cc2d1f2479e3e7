#include <algorithm>
#include <unordered_set>

#include "memory/liveness.h"

namespace edgec::memory {

Graph StaticPart(const Graph& g, std::vector<std::string>* left_out) {
  std::unordered_set<std::string> dynamic;  // values, by name
  std::vector<const Node*> nodes;           // the dynamic nodes, in order
  for (const Node* n : g.nodes()) {
    bool d = false;
    for (const Value* in : n->inputs()) d |= in && (dynamic.count(in->name()) || !in->type.IsDenseTensor());
    for (const Value* o : n->outputs()) d |= o && !o->type.IsStatic();
    if (!d) continue;
    nodes.push_back(n);
    for (const Value* o : n->outputs())
      if (o) dynamic.insert(o->name());
  }
  if (left_out) left_out->clear();
  Graph s = g.Clone();
  if (nodes.empty()) return s;
  for (const Node* n : nodes) {
    for (const Value* in : n->inputs()) {
      if (!in || in->is_constant() || dynamic.count(in->name())) continue;
      Value* v = s.FindValue(in->name());
      if (!v->is_graph_output()) s.MarkOutput(v);
    }
  }
  for (const Value* o : g.outputs()) {
    if (!dynamic.count(o->name())) continue;
    s.ReplaceAllUses(s.FindValue(o->name()), s.AddConstant(s.FreshName(o->name() + ".dynamic"), Tensor(o->type.dtype, {0})));
  }
  // The copy's node of each dynamic node, found through an output (every dynamic node has one).
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    for (const Value* o : (*it)->outputs()) {
      if (!o) continue;
      s.RemoveNode(s.FindValue(o->name())->producer());
      break;
    }
  }
  if (left_out) {
    left_out->assign(dynamic.begin(), dynamic.end());
    std::sort(left_out->begin(), left_out->end());
  }
  return s;
}

}  // namespace edgec::memory
