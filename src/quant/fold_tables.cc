// Single-input float islands as 256-entry tables, 65536 for an int16 source (see fold_util.h:
// TabulateIsland).
#include <set>
#include <unordered_map>

#include "ir/infer.h"
#include "passes/pass_util.h"
#include "quant/fold_qdq.h"
#include "quant/fold_util.h"
#include "runtime/reference_executor.h"

namespace edgec::quant {
namespace {

using passes::ConstantOf;
using passes::HasSingleUse;

bool IsTabulable(OpKind op) { return HasTrait(op, op_trait::kTabulable); }

bool ScalarConstantsFrom(const Node* n, int first) {
  for (int i = first; i < n->num_inputs(); ++i) {
    const Value* v = n->input(i);
    if (v && (!ConstantOf(v) || NumElements(v->type.dims) != 1)) return false;
  }
  return true;
}

// The elementwise island that ends at `last`, a function of one value *x: elementwise unary
// ops with scalar constant parameters and Add/Sub/Mul/Div/Pow whose other operands are scalar
// constants or island values, each read only inside the island, at most 8 nodes in graph
// order; one such node alone (x + c, x·c) is an island too
// (the Erf GELU x·0.5·(1 + erf(x/√2)) is five; QdqTest.ErfGeluBecomesOneLookup).
// The island's node set in *in and its source in *x; false when `last` ends no such island.
bool CollectElementwiseIsland(const Node* last, std::set<const Node*>* in, Value** x) {
  auto allowed = [](const Node* n) {
    const OpKind op = n->op();
    if (n->num_outputs() != 1) return false;
    if (IsTabulable(op)) return ScalarConstantsFrom(n, 1);
    return op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv || op == OpKind::kPow;
  };
  std::vector<const Node*> stack = {last};
  *x = nullptr;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (in->count(n)) continue;
    if (!allowed(n) || in->size() >= 8) return false;
    in->insert(n);
    for (Value* v : n->inputs()) {
      if (!v) continue;
      if (const Tensor* c = ConstantOf(v)) {
        if (c->numel() != 1) return false;
        continue;
      }
      const Node* p = v->producer();
      if (p && p->op() != OpKind::kDequantizeLinear && allowed(p)) {
        stack.push_back(p);
      } else {
        if (*x && *x != v) return false;  // a second source
        *x = v;
      }
    }
  }
  if (!*x) return false;
  for (const Node* n : *in)
    for (const Use& u : n->output(0)->uses())
      if (n != last && !in->count(u.node)) return false;
  return true;
}

bool ElementwiseIsland(const Graph& g, Node* last, std::vector<Node*>* nodes, Value** x) {
  std::set<const Node*> in;
  if (!CollectElementwiseIsland(last, &in, x) || !DqOf(*x)) return false;
  nodes->clear();
  for (Node* n : g.nodes())
    if (in.count(n)) nodes->push_back(n);
  return true;
}

}  // namespace

const Value* ElementwiseIslandSource(const Node* last) {
  std::set<const Node*> in;
  Value* x = nullptr;
  return last && CollectElementwiseIsland(last, &in, &x) ? x : nullptr;
}

std::optional<UnaryIsland> MatchUnaryIsland(const Node* last) {
  UnaryIsland m;
  if (last->op() == OpKind::kMul && last->num_inputs() == 2) {
    for (int i = 0; i < 2 && !m.unary; ++i) {
      const Node* u = last->input(i) ? last->input(i)->producer() : nullptr;
      Value* x = last->input(1 - i);
      if (u && x && IsTabulable(u->op()) && u->input(0) == x && HasSingleUse(u->output(0))) {
        m.unary = u;
        m.x = x;
      }
    }
    m.mul = last;
  } else if (IsTabulable(last->op())) {
    m.unary = last;
    m.x = last->input(0);
  }
  if (!m.unary || !m.x || !ScalarConstantsFrom(m.unary, 1)) return std::nullopt;
  return m;
}

StatusOr<Tensor> EvaluateIsland(const Node* dq, const std::vector<Node*>& chain, const Node* q, const Tensor& input) {
  Graph sub;
  Value* x = sub.AddInput("q", MakeType(input.dtype(), input.dims()));
  std::unordered_map<const Value*, Value*> map = {{dq->input(0), x}};
  auto value_in_sub = [&](Value* v) -> Value* {
    if (!v) return nullptr;
    if (auto it = map.find(v); it != map.end()) return it->second;
    const Tensor* c = ConstantOf(v);
    Value* nv = sub.AddConstant(v->name(), c->Clone());
    map[v] = nv;
    return nv;
  };
  std::vector<const Node*> sub_nodes = {dq};
  sub_nodes.insert(sub_nodes.end(), chain.begin(), chain.end());
  sub_nodes.push_back(q);
  for (const Node* n : sub_nodes) {
    std::vector<Value*> in;
    for (Value* v : n->inputs()) in.push_back(value_in_sub(v));
    Node* copy = sub.AddNode(n->op(), n->name(), in, 1, {n->output(0)->name()});
    copy->attrs = n->attrs;
    map[n->output(0)] = copy->output(0);
  }
  sub.MarkOutput(map[q->output(0)]);
  RETURN_IF_ERROR(InferShapes(sub));
  ASSIGN_OR_RETURN(std::vector<Tensor> out, ReferenceExecutor(sub).Run({{"q", input}}));
  return std::move(out[0]);
}

// Q(f(DQ(q))) for f = U or x·U(x) (SiLU, x·HardSigmoid(x)) with U an elementwise unary op:
// a function of q's 256 values, computed once on the reference kernels (so the table
// equals what the island computes there) and looked up at run time.
StatusOr<bool> TabulateIsland(Graph& g, Node* q, int* tabulated) {
  if (q->op() != OpKind::kQuantizeLinear || q->output(0)->is_graph_output()) return false;
  const DType out_t = q->output(0)->type.dtype;
  if ((out_t != DType::kU8 && out_t != DType::kI8) || !ParamsOf(q, out_t)) return false;
  Node* last = q->input(0)->producer();
  if (!last || !HasSingleUse(last->output(0))) return false;
  std::vector<Node*> chain;  // the island's nodes in graph order
  Value* source = nullptr;
  // U(x) of a DQ, else the longer island (Tanh(x · c): its unary op's input is no DQ).
  const std::optional<UnaryIsland> island = MatchUnaryIsland(last);
  if (island && DqOf(island->x)) {
    chain = {const_cast<Node*>(island->unary)};
    if (island->mul) chain.push_back(const_cast<Node*>(island->mul));
    source = island->x;
  } else if (!ElementwiseIsland(g, last, &chain, &source)) {
    return false;
  }
  const Node* unary = chain.front();
  Node* dq = DqOf(source);
  if (!dq) return false;
  // An int16 source (the SiLU after an int16 GroupNorm) makes a table of 65536 entries.
  const DType in_t = dq->input(0)->type.dtype;
  if ((in_t != DType::kU8 && in_t != DType::kI8 && in_t != DType::kI16) || !ParamsOf(dq, in_t)) return false;
  const int64_t entries = in_t == DType::kI16 ? 65536 : 256;

  // The island on a tensor of every input value, lowest first.
  Tensor all(in_t, {entries});
  if (in_t == DType::kI16) {
    for (int i = 0; i < 65536; ++i) all.data<int16_t>()[i] = static_cast<int16_t>(i - 32768);
  } else {
    for (int i = 0; i < 256; ++i) static_cast<uint8_t*>(all.raw())[i] = static_cast<uint8_t>(in_t == DType::kI8 ? i ^ 0x80 : i);
  }
  ASSIGN_OR_RETURN(Tensor table, EvaluateIsland(dq, chain, q, all));
  Value* tv = g.AddConstant(g.FreshName(q->name() + "/table"), std::move(table));
  ASSIGN_OR_RETURN(Node* lookup, passes::AddInferredNode(g, OpKind::kQuantizedLookup, g.FreshName(unary->name() + "/lookup"),
                                                         {dq->input(0), tv}, {}, 1, chain.back()));
  if (!passes::ReplaceValue(g, q->output(0), lookup->output(0)))
    return Internal("{}: cannot replace its output '{}'", q->Label(), q->output(0)->name());
  ++*tabulated;
  return true;
}


}  // namespace edgec::quant
