// Attention chains as one NPU layer (see npu_attention.h).
#include "lower/npu_attention.h"

#include <algorithm>

#include <fmt/format.h>

#include "lower/npu_layer_util.h"
#include "lower/npu_layers.h"

namespace edgec::lower {
namespace {

// A value read by exactly one node, `reader`, input 0, and not a graph output.
bool OnlyFeeds(const Value* v, const Node* reader) {
  if (!v || v->is_graph_output() || v->uses().size() != 1) return false;
  return v->uses()[0].node == reader && v->uses()[0].input_index == 0;
}

// The one multiplier and bias of a MatMul layer, or why there are several.
Status PerTensor(const npu::ConvLayer& l, const char* what) {
  if (l.requant.size() != 1) return Unimplemented("{} has per-column multipliers", what);
  for (int32_t b : l.bias)
    if (b != l.bias.front()) return Unimplemented("{} has a per-column bias", what);
  return Status::Ok();
}

}  // namespace

Status MatchAttention(const AttentionChain& c) {
  if (c.scores->op() != OpKind::kQLinearMatMul || c.softmax->op() != OpKind::kQLinearSoftmax ||
      c.context->op() != OpKind::kQLinearMatMul)
    return Unimplemented("not MatMul -> Softmax -> MatMul");
  if (!OnlyFeeds(c.scores->output(0), c.softmax)) return Unimplemented("the scores are read elsewhere");
  if (c.narrow) {
    if (c.narrow->op() != OpKind::kQLinearRequantize || !OnlyFeeds(c.softmax->output(0), c.narrow) ||
        !OnlyFeeds(c.narrow->output(0), c.context))
      return Unimplemented("the int16 probabilities are read elsewhere");
  } else if (!OnlyFeeds(c.softmax->output(0), c.context)) {
    return Unimplemented("the probabilities are read elsewhere");
  }
  for (const Node* m : {c.scores, c.context}) {
    const Value* b = m->input(3);
    if (!b || b->is_constant() || !b->type.rank_known || b->type.rank() != 3)
      return Unimplemented("'{}' is not a 3-d MatMul of two activations", m->name());
  }
  return Status::Ok();
}

StatusOr<npu::AttentionLayer> AttentionLayerOf(const AttentionChain& c) {
  RETURN_IF_ERROR(MatchAttention(c));
  ASSIGN_OR_RETURN(QuantizedLayer qk, QuantizedLayerOf(*c.scores));
  ASSIGN_OR_RETURN(npu::NormLayer sm, NormLayerOf(*c.softmax));
  ASSIGN_OR_RETURN(QuantizedLayer av, QuantizedLayerOf(*c.context));
  const npu::ConvLayer &s = qk.layer, &o = av.layer;
  if (!s.weights_from_input || !o.weights_from_input) return Unimplemented("a MatMul has a constant operand");
  if (sm.op != npu::VecOp::kSoftmax) return Unimplemented("not a softmax");
  // An int16 softmax: int16 scores in, int16 probabilities narrowed to 8 bits for the context.
  if (sm.wide != (c.narrow != nullptr) || (sm.wide && s.out_elem_bytes() != 2))
    return Unimplemented("an int16 softmax without int16 scores and its requantize to 8 bits");
  quant::RescaleParams narrow;
  if (c.narrow) {
    ASSIGN_OR_RETURN(VectorLayer nv, VectorLayerOf(*c.narrow));
    const npu::EltwiseLayer& e = nv.eltwise;
    if (e.op != npu::VecOp::kRescale || e.a_bytes != 2 || e.y_bytes != 1)
      return Unimplemented("the probabilities' requantize is not int16 -> 8 bits");
    narrow = {e.imm[0], e.imm[1], {e.imm[2], e.imm[3]}, e.imm[4], e.imm[5]};
  }
  RETURN_IF_ERROR(PerTensor(s, "the scores' MatMul"));
  RETURN_IF_ERROR(PerTensor(o, "the context's MatMul"));
  const int64_t heads = s.batch, rows = s.m() / std::max(1, s.batch), keys = s.n();
  if (o.batch != heads || o.m() != s.m() || o.k() != keys || sm.cols != keys || sm.items != heads * rows)
    return Unimplemented("shapes do not chain: scores {}x{}x{}, softmax {}x{}, context {}x{}x{}", heads, rows, keys,
                         sm.items, sm.cols, o.batch, o.m() / std::max(1, o.batch), o.k());
  npu::AttentionLayer l;
  l.name = c.context->name();
  l.heads = static_cast<int>(heads);
  l.rows = static_cast<int>(rows);
  l.keys = static_cast<int>(keys);
  l.depth = static_cast<int>(s.k());
  l.v_depth = static_cast<int>(o.n());
  l.k_strides = s.b_strides;
  l.v_strides = o.b_strides;
  l.q_zero = s.x_zero_point;
  l.k_zero = s.w_zero_point;
  l.s_zero = s.y_zero_point;
  l.s_min = s.act_min;
  l.s_max = s.act_max;
  l.s_mult = s.requant.front();
  l.s_bias = s.bias.empty() ? 0 : s.bias.front();
  l.p_zero = o.x_zero_point;
  l.v_zero = o.w_zero_point;
  l.o_zero = o.y_zero_point;
  l.o_min = o.act_min;
  l.o_max = o.act_max;
  l.o_mult = o.requant.front();
  l.o_bias = o.bias.empty() ? 0 : o.bias.front();
  l.softmax = sm.softmax;
  l.wide = sm.wide;
  l.wide_softmax = sm.wide_softmax;
  l.narrow = narrow;
  return l;
}

std::map<const Node*, FusedAttention> FuseAttention(const std::vector<const partition::NodePlacement*>& run,
                                                    const npu::Target& t, const npu::TilerOptions& opt,
                                                    std::string& listing) {
  std::map<const Node*, FusedAttention> out;
  std::vector<const Node*> nodes;
  std::map<const Node*, const partition::NodePlacement*> placement;
  for (const partition::NodePlacement* p : run) nodes.push_back(p->node), placement[p->node] = p;
  for (const AttentionChain& c : FindAttentionChains(nodes, [](const Node& n) { return partition::IsDramView(n); })) {
    auto l = AttentionLayerOf(c);
    if (!l.ok()) {
      listing += fmt::format(";   attention at {} not fused: {}\n", c.context->Label(), l.status().message());
      continue;
    }
    auto ch = npu::ChooseAttentionTiling(*l, t, opt);
    if (!ch.ok()) {
      listing += fmt::format(";   attention at {} not fused: {}\n", c.context->Label(), ch.status().message());
      continue;
    }
    double unfused = 0;
    for (const Node* n : c.nodes()) unfused += placement[n]->npu_cycles - t.dispatch_overhead_cycles;
    const double fused_cycles = ch->cycles - t.dispatch_overhead_cycles;
    listing += fmt::format(";   attention {} ({} heads x {} rows x {} keys): {} {:.0f} cycles vs {:.0f} unfused; scores "
                           "take {} B of SRAM; the unfused chain moves {} B of scores and probabilities\n",
                           c.context->Label(), l->heads, l->rows, l->keys, ch->tiling.ToString(), fused_cycles, unfused,
                           ch->footprint.scores_sram, l->unfused_scores_traffic());
    if (fused_cycles >= unfused) continue;
    FusedAttention f{c, std::move(*l), *ch, placement[c.context]};
    for (const Node* n : c.nodes()) out[n] = f;
  }
  return out;
}


}  // namespace edgec::lower
