#include "passes/inline_branch.h"

#include <unordered_map>

#include "ir/control_flow.h"
#include "passes/pass_util.h"

namespace edgec::passes {

Status InlineIfBranch(Graph& g, Node* n) {
  const Tensor& cond = n->input(0)->constant();
  if (cond.numel() != 1) return InvalidArgument("{}: cond has {} elements, expected 1", n->Label(), cond.numel());
  const bool taken = LoadAsInt64(cond.dtype(), cond.raw(), 0) != 0;
  const Graph* branch = n->attrs.GetGraph(taken ? "then_branch" : "else_branch");
  if (!branch) return InvalidArgument("{}: the {} branch is missing", n->Label(), taken ? "then" : "else");
  const int captures = NumCaptures(n->attrs);
  if (static_cast<int>(branch->inputs().size()) != captures) {
    return Internal("{}: branch has {} inputs for {} captures", n->Label(), branch->inputs().size(), captures);
  }
  std::unordered_map<const Value*, Value*> map;
  for (int c = 0; c < captures; ++c) map[branch->inputs()[c]] = n->input(1 + c);
  auto mapped = [&](const Value* v) -> Value* {
    if (!v) return nullptr;
    auto it = map.find(v);
    if (it != map.end()) return it->second;
    // Constants of the branch become constants of the enclosing graph (buffers shared).
    EDGEC_CHECK(v->is_constant());
    Value* c = g.AddConstant(g.FreshName(v->name()), v->constant());
    map[v] = c;
    return c;
  };
  for (const Node* b : branch->nodes()) {
    std::vector<Value*> inputs;
    for (const Value* v : b->inputs()) inputs.push_back(mapped(v));
    std::vector<std::string> names;
    for (const Value* o : b->outputs()) names.push_back(o->name());
    Node* copy = g.AddNode(b->op(), n->name() + "/" + b->name(), std::move(inputs), b->num_outputs(), names);
    copy->attrs = b->attrs;
    copy->opset = b->opset;
    copy->provenance = b->provenance;
    for (int i = 0; i < b->num_outputs(); ++i) {
      copy->output(i)->type = b->output(i)->type;
      map[b->output(i)] = copy->output(i);
    }
  }
  for (int i = 0; i < n->num_outputs(); ++i) {
    Value* out = n->output(i);
    Value* result = mapped(branch->outputs()[i]);
    if (!ReplaceValue(g, out, result)) {
      // A graph output that the branch passes through (a capture or a constant): an Identity
      // keeps the output's name.
      ASSIGN_OR_RETURN(Node* id, AddInferredNode(g, OpKind::kIdentity, n->name() + "/output", {result}, {}, 1, n));
      if (!ReplaceValue(g, out, id->output(0))) return Internal("{}: output {} could not be replaced", n->Label(), i);
    }
  }
  g.RemoveNode(n);
  return g.TopoSort();
}

}  // namespace edgec::passes
