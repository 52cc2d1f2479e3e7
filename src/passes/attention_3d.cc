// attention-3d: the 4-d tensors of attention with a unit batch, [1, H, S, d], become 3-d
// [H, S, d]. A 4-d tensor is NHWC on the NPU (the heads would be its innermost dim) while a
// 3-d one is row-major, where a MatMul of two activations is a MATMUL batched over heads and
// a Softmax over the last axis is rows; the values mean the same in either rank.
//   Groups: the values a node ties together keep one rank — Transpose (perm[0] = 0), MatMul
//   and QLinearMatMul of two activations, Softmax / QLinearSoftmax over the last axis,
//   Quantize/DequantizeLinear per tensor, QLinearAdd/QLinearMul/Add/Mul/Sub/Div of two such
//   values or by a scalar, QuantizedLookup, QLinearRequantize. A group holding a MatMul of two
//   activations or a Softmax, all of whose values are [1, ...] 4-d and none a graph output, is
//   squeezed: each Transpose drops its first axis, a Reshape producing a value of it gets the
//   3-d shape, and a value from (or to) any other node crosses a new Reshape.
//
// Before:  %q = Reshape(%x: [1, 64, 128], [1, 64, 2, 64]); %qt = Transpose(%q) {perm=[0, 2, 1, 3]}
//          %s = QLinearMatMul(%qt, .., %kt, ..): [1, 2, 64, 64]; %p = QLinearSoftmax(%s) {axis=-1}
// After:   %q = Reshape(%x, [64, 2, 64]); %qt = Transpose(%q) {perm=[1, 0, 2]}
//          %s = QLinearMatMul(%qt, .., %kt, ..): [2, 64, 64]; %p = QLinearSoftmax(%s) {axis=-1}
// Guarded by tests/passes/attention_3d_test.cc (reference outputs before == after).
#include <map>
#include <numeric>

#include "passes/pass.h"
#include "passes/pass_util.h"
#include "support/status.h"

namespace edgec::passes {
namespace {

bool IsUnitBatch4d(const Value* v) {
  return v && !v->is_constant() && v->type.IsStatic() && v->type.rank() == 4 && v->type.dims[0] == 1;
}

bool IsScalarConstant(const Value* v) { return v && v->is_constant() && v->constant().numel() == 1; }

// The data values (inputs then outputs) a node keeps at one rank, or nullopt when the node is
// not one of the kinds above (then its 4-d values cross a Reshape).
std::optional<std::vector<Value*>> TiedValues(const Node& n) {
  auto per_tensor = [&](int i) { return n.input(i) && n.input(i)->is_constant() && n.input(i)->constant().numel() == 1; };
  switch (n.op()) {
    case OpKind::kTranspose: {
      const std::vector<int64_t> perm = n.attrs.GetInts("perm");
      if (perm.size() != 4 || perm[0] != 0) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.output(0)};
    }
    case OpKind::kMatMul:
      if (n.input(1)->is_constant()) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.input(1), n.output(0)};
    case OpKind::kQLinearMatMul:
      if (n.input(3)->is_constant()) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.input(3), n.output(0)};
    case OpKind::kSoftmax: case OpKind::kQLinearSoftmax: {
      const int64_t axis = n.attrs.GetInt("axis", -1);
      if (axis != -1 && axis != 3) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.output(0)};
    }
    case OpKind::kQuantizeLinear: case OpKind::kDequantizeLinear:
      if (!per_tensor(1)) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.output(0)};
    case OpKind::kQuantizedLookup:  // a table per channel ties its axis: not reshaped (yolo's DFL)
      if (!n.input(1) || n.input(1)->type.rank() != 1) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.output(0)};
    case OpKind::kQLinearRequantize:  // an int16 softmax's probabilities to 8 bits (elementwise)
      if (!per_tensor(1) || !per_tensor(3)) return std::nullopt;
      return std::vector<Value*>{n.input(0), n.output(0)};
    case OpKind::kQLinearAdd: case OpKind::kQLinearMul: case OpKind::kAdd: case OpKind::kMul:
    case OpKind::kSub: case OpKind::kDiv: {
      const bool q = n.op() == OpKind::kQLinearAdd || n.op() == OpKind::kQLinearMul;
      Value* a = n.input(0);
      Value* b = n.input(q ? 3 : 1);
      if (IsScalarConstant(a)) return std::vector<Value*>{b, n.output(0)};
      if (IsScalarConstant(b)) return std::vector<Value*>{a, n.output(0)};
      if (a->type.dims != n.output(0)->type.dims || b->type.dims != n.output(0)->type.dims) return std::nullopt;
      return std::vector<Value*>{a, b, n.output(0)};
    }
    default:
      return std::nullopt;
  }
}

bool IsAnchor(const Node& n) {
  return n.op() == OpKind::kMatMul || n.op() == OpKind::kQLinearMatMul || n.op() == OpKind::kSoftmax ||
         n.op() == OpKind::kQLinearSoftmax;
}

Dims Squeezed(const Dims& d) { return Dims(d.begin() + 1, d.end()); }

}  // namespace

Status RunAttention3d(Graph& g, PassContext& ctx, const PassOptions&) {
  ValueGroups groups;
  std::map<Value*, bool> blocked, anchored;
  std::vector<std::pair<Node*, std::vector<Value*>>> ties;
  for (Node* n : g.nodes()) {
    std::optional<std::vector<Value*>> vs = TiedValues(*n);
    if (!vs) continue;
    bool any = false;
    for (Value* v : *vs) any |= IsUnitBatch4d(v);
    if (!any) continue;
    for (Value* v : *vs) groups.Join(v, (*vs)[0]);
    ties.emplace_back(n, *vs);
  }
  for (auto& [n, vs] : ties) {
    Value* root = groups.Find(vs[0]);
    if (IsAnchor(*n)) anchored[root] = true;
    for (Value* v : vs)
      if (!IsUnitBatch4d(v) || v->is_graph_output()) blocked[root] = true;
  }
  // Values of the groups to squeeze, each once.
  std::map<Value*, bool> squeeze;
  for (auto& [n, vs] : ties)
    for (Value* v : vs) {
      Value* root = groups.Find(v);
      if (anchored[root] && !blocked[root]) squeeze[v] = true;
    }
  if (squeeze.empty()) return Status::Ok();
  std::map<Node*, bool> tie_node;
  for (auto& [n, vs] : ties) tie_node[n] = squeeze.count(vs[0]) > 0;

  int64_t reshapes = 0;
  auto shape_const = [&](const std::string& base, const Dims& d) {
    return g.AddConstant(g.FreshName(base + ".shape"), Tensor::VectorI64(d));
  };
  for (auto& [v, yes] : squeeze) {
    const Dims d4 = v->type.dims;
    Node* p = v->producer();
    Value* v3 = v;
    if (p && p->op() == OpKind::kReshape) {
      g.SetInput(p, 1, shape_const(p->name(), Squeezed(d4)));
      p->attrs.Erase("allowzero");
    } else if (!p || !tie_node[p]) {
      // A value from another node (or a graph input) keeps its rank; the group reads a view.
      ASSIGN_OR_RETURN(Node* r, AddInferredNode(g, OpKind::kReshape, g.FreshName(v->name() + "/to_3d"),
                                                {v, shape_const(v->name(), Squeezed(d4))}, {}, 1, p));
      v3 = r->output(0);
      for (const Use& u : std::vector<Use>(v->uses()))
        if (u.node != r && tie_node[u.node]) g.SetInput(u.node, u.input_index, v3);
      ++reshapes;
      continue;  // v stays 4-d; its other readers are unchanged
    }
    v->type.dims = Squeezed(d4);
    if (!v->type.dim_names.empty()) v->type.dim_names.erase(v->type.dim_names.begin());
    v->physical = PhysicalLayout{};
    // Readers other than the group's nodes and Reshapes see the 4-d value through a Reshape.
    Node* back = nullptr;
    for (const Use& u : std::vector<Use>(v->uses())) {
      if (tie_node[u.node] || (u.node->op() == OpKind::kReshape && u.input_index == 0)) continue;
      if (!back) {
        ASSIGN_OR_RETURN(back, AddInferredNode(g, OpKind::kReshape, g.FreshName(v->name() + "/to_4d"),
                                               {v, shape_const(v->name(), d4)}, {}, 1, p));
        ++reshapes;
      }
      g.SetInput(u.node, u.input_index, back->output(0));
    }
  }
  for (auto& [n, yes] : tie_node) {
    if (!yes) continue;
    if (n->op() == OpKind::kTranspose) {
      std::vector<int64_t> perm = n->attrs.GetInts("perm"), p3;
      for (size_t i = 1; i < perm.size(); ++i) p3.push_back(perm[i] - 1);
      n->attrs.Set("perm", p3);
    } else if (n->op() == OpKind::kSoftmax || n->op() == OpKind::kQLinearSoftmax) {
      n->attrs.Set("axis", int64_t{-1});
    }
    ++ctx.stats().rewrites["4-d attention -> 3-d"];
  }
  ctx.stats().nodes_added += reshapes;
  RETURN_IF_ERROR(g.TopoSort());
  RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
