// Per-channel float islands as one table per channel (fold_qdq.h MatchChannelIsland,
// fold_util.h TabulateChannelIsland).
//
// Before:  %d = DequantizeLinear(%q, s, z); %p = PRelu(%d, slope[C,1,1]); %y = QuantizeLinear(%p, s', z')
// After:   %y = QuantizedLookup(%q, table[C, 256]) {axis = 1}
//          table[c][v] = Q(PRelu(DQ(lowest + v), slope[c])), computed on the reference kernels
#include <set>

#include "passes/pass_util.h"
#include "quant/fold_qdq.h"
#include "quant/fold_util.h"

namespace edgec::quant {
namespace {

using passes::ConstantOf;

constexpr size_t kMaxIslandNodes = 8;

bool ConstantsFrom(const Node* n, int first) {
  for (int i = first; i < n->num_inputs(); ++i)
    if (n->input(i) && !ConstantOf(n->input(i))) return false;
  return true;
}

// The ops a per-channel island may hold: tabulable unary ops, arithmetic with constants or
// island values, PRelu, and BatchNormalization in inference form (constant statistics).
bool Allowed(const Node* n) {
  if (n->num_outputs() != 1) return false;
  const OpKind op = n->op();
  if (HasTrait(op, op_trait::kTabulable)) return ConstantsFrom(n, 1);
  if (op == OpKind::kBatchNormalization) return n->attrs.GetInt("training_mode", 0) == 0 && ConstantsFrom(n, 1);
  return op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv || op == OpKind::kPow ||
         op == OpKind::kPRelu;
}

// The axis of x (rank `rank`) along which constant `c`, operand `i` of `n`, varies: -1 for a
// scalar, -2 when it varies along more than one axis or does not fit x. BatchNormalization's
// statistics are per channel of axis 1; the other ops broadcast, right-aligned.
int AxisOf(const Node* n, int i, const Tensor& c, const Dims& x) {
  const int rank = static_cast<int>(x.size());
  if (c.numel() == 1) return -1;
  if (n->op() == OpKind::kBatchNormalization)
    return i >= 1 && c.rank() == 1 && rank >= 2 && c.dim(0) == x[1] ? 1 : -2;
  if (c.rank() > rank) return -2;
  int axis = -1;
  for (int d = 0; d < c.rank(); ++d) {
    if (c.dim(d) == 1) continue;
    const int at = rank - c.rank() + d;
    if (axis != -1 || c.dim(d) != x[at]) return -2;
    axis = at;
  }
  return axis;
}

}  // namespace

std::optional<ChannelIsland> MatchChannelIsland(const Node* last) {
  if (!last) return std::nullopt;
  std::set<const Node*> in;
  std::vector<const Node*> stack = {last};
  Value* x = nullptr;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (in.count(n)) continue;
    if (!Allowed(n) || in.size() >= kMaxIslandNodes) return std::nullopt;
    in.insert(n);
    for (Value* v : n->inputs()) {
      if (!v || ConstantOf(v)) continue;
      const Node* p = v->producer();
      if (p && p->op() != OpKind::kDequantizeLinear && Allowed(p)) {
        stack.push_back(p);
      } else {
        if (x && x != v) return std::nullopt;  // a second source
        x = v;
      }
    }
  }
  if (!x || !x->type.IsStatic()) return std::nullopt;
  for (const Node* n : in)
    for (const Use& u : n->output(0)->uses())
      if (n != last && !in.count(u.node)) return std::nullopt;
  ChannelIsland m;
  m.x = x;
  bool own_op = false;  // PRelu or BatchNormalization: no scalar island takes them
  for (const Node* n : in) {
    own_op |= n->op() == OpKind::kPRelu || n->op() == OpKind::kBatchNormalization;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Tensor* c = n->input(i) ? ConstantOf(n->input(i)) : nullptr;
      if (!c) continue;
      const int axis = AxisOf(n, i, *c, x->type.dims);
      if (axis == -2 || (axis >= 0 && m.axis >= 0 && axis != m.axis)) return std::nullopt;
      if (axis >= 0) m.axis = axis;
    }
    if (!(n->output(0)->type == x->type)) return std::nullopt;
  }
  if (m.axis < 0 && !own_op) return std::nullopt;  // a scalar island: fold_tables.cc's
  m.channels = m.axis >= 0 ? x->type.dims[m.axis] : 1;
  m.nodes.assign(in.begin(), in.end());
  return m;
}

StatusOr<bool> TabulateChannelIsland(Graph& g, Node* q, int* tabulated) {
  if (q->op() != OpKind::kQuantizeLinear || q->output(0)->is_graph_output()) return false;
  const DType out_t = q->output(0)->type.dtype;
  if ((out_t != DType::kU8 && out_t != DType::kI8) || !ParamsOf(q, out_t)) return false;
  Node* last = q->input(0)->producer();
  if (!last || !passes::HasSingleUse(last->output(0))) return false;
  const std::optional<ChannelIsland> island = MatchChannelIsland(last);
  if (!island) return false;
  Node* dq = DqOf(island->x);
  if (!dq) return false;
  // 8-bit sources only: an int16 one would need C tables of 65536 entries.
  const DType in_t = dq->input(0)->type.dtype;
  if ((in_t != DType::kU8 && in_t != DType::kI8) || !ParamsOf(dq, in_t)) return false;
  std::vector<Node*> chain;  // the island's nodes in graph order
  const std::set<const Node*> in(island->nodes.begin(), island->nodes.end());
  for (Node* n : g.nodes())
    if (in.count(n)) chain.push_back(n);

  // The island on a tensor of x's rank (at least 2) holding every input value v along one
  // axis k and every channel c along the island's axis, 1 elsewhere: element (c, v) is
  // Q(f(DQ(lowest + v), constants of channel c)).
  const int rank = static_cast<int>(island->x->type.dims.size());
  const int sub_rank = std::max(rank, 2);
  const int axis = island->axis >= 0 ? island->axis + (sub_rank - rank) : -1;
  const int k = axis == sub_rank - 1 ? sub_rank - 2 : sub_rank - 1;
  const int64_t channels = island->channels;
  Dims dims(sub_rank, 1);
  dims[k] = 256;
  if (axis >= 0) dims[axis] = channels;
  Tensor all(in_t, dims);
  // Strides of v and c in the row-major sub tensor.
  const int64_t v_stride = axis > k ? channels : 1, c_stride = axis > k ? 1 : 256;
  auto* raw = static_cast<uint8_t*>(all.raw());
  for (int64_t c = 0; c < channels; ++c)
    for (int v = 0; v < 256; ++v)
      raw[c * c_stride + v * v_stride] = static_cast<uint8_t>(in_t == DType::kI8 ? v ^ 0x80 : v);
  ASSIGN_OR_RETURN(Tensor values, EvaluateIsland(dq, chain, q, all));
  const auto* got = static_cast<const uint8_t*>(values.raw());
  Tensor table(out_t, axis >= 0 ? Dims{channels, 256} : Dims{256});
  auto* t = static_cast<uint8_t*>(table.raw());
  for (int64_t c = 0; c < channels; ++c)
    for (int v = 0; v < 256; ++v) t[c * 256 + v] = got[c * c_stride + v * v_stride];

  Value* tv = g.AddConstant(g.FreshName(q->name() + "/table"), std::move(table));
  Attributes attrs;
  if (axis >= 0) attrs.Set("axis", int64_t{island->axis});
  ASSIGN_OR_RETURN(Node* lookup, passes::AddInferredNode(g, OpKind::kQuantizedLookup, g.FreshName(chain.front()->name() + "/lookup"),
                                                         {dq->input(0), tv}, std::move(attrs), 1, chain.back()));
  if (!passes::ReplaceValue(g, q->output(0), lookup->output(0)))
    return Internal("{}: cannot replace its output '{}'", q->Label(), q->output(0)->name());
  ++*tabulated;
  return true;
}

}  // namespace edgec::quant
