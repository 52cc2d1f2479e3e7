// lift-1d-windows: 1-d window ops computed as 2-d with H = 1, whole regions at a time. The NPU
// lowers convolutions, pools and group norms in 2-d only (4-d NHWC tensors); a 1-d one,
// [N, C, L], is the same op over [N, C, 1, L] with a unit kernel, stride, dilation and no pad
// along H.
//   Regions: the values a node ties together keep one rank. A kLiftsTo2d op (ops.def) ties its
//   input 0 and its output when both are static 3-d and input 0 is integer (8 or 16 bits),
//   every other input is a constant (the weights) or absent, and its window attributes are
//   1-d; a kUnary, kBroadcast or kPerPosition op ties its non-constant inputs and its outputs
//   when all are static 3-d (a Concat, a QLinearAdd of a same-shape or per-channel operand, a
//   lookup, a requantize, ...; Quantize/DequantizeLinear are not, so the boundary moves int8).
//   A region holding a kLiftsTo2d op is lifted: each of its values gains a unit dim 2; its
//   nodes' constants of rank >= 2 gain a unit dim before their last dim ([M, C/g, K] weights
//   become [M, C/g, 1, K], a per-channel [C, 1] operand [C, 1, 1]); kernel_shape, strides and
//   dilations gain a leading 1, pads [b, e] become [0, b, 0, e] (auto_pad is kept: with a
//   unit kernel and stride H gets no pad); an `axis` naming L names it in 4-d. A value from
//   outside the region (a graph input, another node) crosses one Unsqueeze(axes=[2]); readers
//   outside the region and graph outputs see it through one Squeeze(axes=[2]) (graph outputs
//   keep their names and 3-d shapes).
//
// Before:  %a = QLinearConv(%x: [1, 8, 40], .., %w: [16, 8, 3], ..) {kernel_shape=[3], pads=[1, 1]}
//          %b = QLinearAdd(%a, .., %r: [1, 16, 40], ..); %y = QLinearConv(%b, .., %w2: [16, 16, 9], ..)
// After:   %x4 = Unsqueeze(%x, [2]); %a = QLinearConv(%x4, .., %w: [16, 8, 1, 3], ..)
//          {kernel_shape=[1, 3], pads=[0, 1, 0, 1]}; %r4 = Unsqueeze(%r, [2]);
//          %b = QLinearAdd(%a, .., %r4, ..); %y4 = QLinearConv(%b, ..); %y = Squeeze(%y4, [2])
// Guarded by tests/passes/lift_1d_windows_test.cc (reference outputs before == after) and
// tests/lower/npu_1d_window_test.cc (npu-sim == cpu, no move inside a lifted chain).
#include <map>
#include <optional>
#include <set>

#include "passes/pass.h"
#include "passes/pass_util.h"
#include "support/status.h"

namespace edgec::passes {
namespace {

bool IsStatic3d(const Value* v) { return v && !v->is_constant() && v->type.IsStatic() && v->type.rank() == 3; }

// An integer window op (a float one never reaches the NPU: lifting it would only add moves).
bool IsIntegerData(const Value* v) {
  const DType t = v->type.dtype;
  return t == DType::kI8 || t == DType::kU8 || t == DType::kI16;
}

bool IsAnchor(const Node& n) { return HasTrait(n.op(), op_trait::kLiftsTo2d); }

bool IsRider(const Node& n) {
  // A lookup with a table per channel reads its axis attribute: the lift inserts H after the
  // channels, so a table along N or C rides, one along L would name another dim.
  if (n.op() == OpKind::kQuantizedLookup && (!n.input(1) || n.input(1)->type.rank() != 1)) {
    int64_t axis = n.attrs.GetInt("axis", 1);
    if (axis < 0) axis += n.input(0)->type.rank();
    if (axis >= 2) return false;
  }
  return HasTrait(n.op(), op_trait::kUnary) || HasTrait(n.op(), op_trait::kBroadcast) ||
         HasTrait(n.op(), op_trait::kPerPosition);
}

// The window attributes of a 1-d op: each absent or of its 1-d length.
bool WindowAttrsAre1d(const Node& n) {
  for (const char* a : {"kernel_shape", "strides", "dilations"})
    if (n.attrs.Has(a) && n.attrs.GetInts(a).size() != 1) return false;
  return !n.attrs.Has("pads") || n.attrs.GetInts("pads").size() == 2;
}

// The data values (non-constant inputs, then outputs) a node keeps at one rank, or nullopt when
// it is not a node of a region (then its 3-d values cross an Unsqueeze or a Squeeze).
std::optional<std::vector<Value*>> TiedValues(const Node& n) {
  const bool anchor = IsAnchor(n);
  if (!anchor && !IsRider(n)) return std::nullopt;
  if (anchor && !WindowAttrsAre1d(n)) return std::nullopt;
  std::vector<Value*> vs;
  for (int i = 0; i < n.num_inputs(); ++i) {
    Value* v = n.input(i);
    if (!v || v->is_constant()) continue;
    if ((anchor && i != 0) || !IsStatic3d(v)) return std::nullopt;  // e.g. a conv's weights from a node
    vs.push_back(v);
  }
  if (vs.empty() || (anchor && (vs[0] != n.input(0) || !IsIntegerData(vs[0])))) return std::nullopt;
  for (int i = 0; i < n.num_outputs(); ++i) {
    Value* v = n.output(i);
    if (!v) continue;
    if (!IsStatic3d(v) || (anchor && i > 0)) return std::nullopt;  // a max pool's indices
    vs.push_back(v);
  }
  return vs;
}

Dims WithUnitH(const Dims& d) { return {d[0], d[1], 1, d[2]}; }

// A node of a lifted region in its 2-d form: constants, window attributes, axis.
void LiftNode(Graph& g, Node* n) {
  for (int i = 0; i < n->num_inputs(); ++i) {
    Value* c = n->input(i);
    if (!c || !c->is_constant() || c->type.rank() < 2) continue;
    Dims d = c->type.dims;
    d.insert(d.end() - 1, 1);
    g.SetInput(n, i, g.AddConstant(g.FreshName(c->name() + "/2d"), c->constant().Reshaped(d)));
  }
  for (const char* a : {"kernel_shape", "strides", "dilations"})
    if (n->attrs.Has(a)) n->attrs.Set(a, std::vector<int64_t>{1, n->attrs.GetInts(a)[0]});
  if (n->attrs.Has("pads")) {
    const std::vector<int64_t> p = n->attrs.GetInts("pads");
    n->attrs.Set("pads", std::vector<int64_t>{0, p[0], 0, p[1]});
  }
  if (!IsAnchor(*n) && n->attrs.Has("axis")) {
    const int64_t axis = n->attrs.GetInt("axis", 0);
    if (axis == 2 || axis == -1) n->attrs.Set("axis", int64_t{axis == 2 ? 3 : -1});
    if (axis == -2 || axis == -3) n->attrs.Set("axis", axis - 1);
  }
}

}  // namespace

Status RunLift1dWindows(Graph& g, PassContext& ctx, const PassOptions&) {
  ValueGroups groups;
  std::vector<std::pair<Node*, std::vector<Value*>>> ties;
  for (Node* n : g.nodes()) {
    std::optional<std::vector<Value*>> vs = TiedValues(*n);
    if (!vs) continue;
    for (Value* v : *vs) groups.Join(v, (*vs)[0]);
    ties.emplace_back(n, *vs);
  }
  std::set<Value*> anchored;
  for (auto& [n, vs] : ties)
    if (IsAnchor(*n)) anchored.insert(groups.Find(vs[0]));
  std::map<Node*, bool> lifted;
  std::vector<Value*> values;  // of lifted regions, each once, in node order
  std::set<Value*> seen;
  for (auto& [n, vs] : ties) {
    if (!anchored.count(groups.Find(vs[0]))) continue;
    lifted[n] = true;
    for (Value* v : vs)
      if (seen.insert(v).second) values.push_back(v);
  }
  if (values.empty()) return Status::Ok();

  auto axes = [&]() { return g.AddConstant(g.FreshName("lift_1d.axes"), Tensor::VectorI64({2})); };
  int64_t added = 0;
  for (Value* v : values) {
    Node* p = v->producer();
    if (!p || !lifted.count(p)) {
      // From outside the region: its readers in the region see it through one Unsqueeze.
      ASSIGN_OR_RETURN(Node* u, AddInferredNode(g, OpKind::kUnsqueeze, g.FreshName(v->name() + "/to_2d"),
                                                {v, axes()}, {}, 1, p));
      for (const Use& use : std::vector<Use>(v->uses()))
        if (use.node != u && lifted.count(use.node)) g.SetInput(use.node, use.input_index, u->output(0));
      ++added;
      continue;
    }
    const Dims d3 = v->type.dims;
    v->type.dims = WithUnitH(d3);
    if (!v->type.dim_names.empty()) v->type.dim_names.insert(v->type.dim_names.begin() + 2, "");
    v->physical = PhysicalLayout{};
    std::vector<Use> outside, inside;
    for (const Use& use : v->uses()) (lifted.count(use.node) ? inside : outside).push_back(use);
    if (outside.empty() && !v->is_graph_output()) continue;
    // Readers outside the region and a graph output see the 3-d value through one Squeeze; a
    // graph output keeps its name (the lifted value takes a fresh one).
    const std::string name = v->name();
    if (v->is_graph_output()) RETURN_IF_ERROR(g.RenameValue(v, g.FreshName(name + "/2d")));
    Node* s = g.AddNode(OpKind::kSqueeze, g.FreshName(name + "/to_1d"), {v, axes()}, 1,
                        {v->is_graph_output() ? name : g.FreshName(name + "/1d")});
    AbsorbProvenance(s, p);
    RETURN_IF_ERROR(SetInferredTypes(s));
    for (const Use& use : outside) g.SetInput(use.node, use.input_index, s->output(0));
    if (v->is_graph_output()) {
      g.ReplaceAllUses(v, s->output(0));  // the graph output entry; the readers read v again
      g.SetInput(s, 0, v);
      for (const Use& use : inside) g.SetInput(use.node, use.input_index, v);
    }
    ++added;
  }
  for (auto& [n, yes] : lifted) {
    LiftNode(g, n);
    ++ctx.stats().rewrites[IsAnchor(*n) ? "1-d window op -> 2-d" : "op of a 1-d region -> 2-d"];
  }
  ctx.stats().nodes_added += added;
  RETURN_IF_ERROR(g.TopoSort());
  RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
