// eliminate-dead: removes nodes that do nothing at inference time, and nodes and outputs
// nothing reads.
//
// Before:  %a = Identity(%x); %b = Dropout(%a); %c = Cast(%b) {to=f32}   (x is f32)
//          %d = Reshape(%c, [1, 64]) (c is [1, 64]); %e = Transpose(%d) {perm=[0, 1]}
//          %f = Pad(%e, [0, 0, 0, 0]); %g = Relu(%f); %unused = Exp(%x)
// After:   %g = Relu(%x)
// A Slice of the same shape stays when a step is negative: it reverses its axis.
#include <algorithm>

#include "ir/physical_layout.h"
#include "ir/control_flow.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {
namespace {

// Returns the input that the node passes through unchanged, or nullptr.
Value* PassThrough(const Node* n) {
  Value* x = n->input(0);
  if (!x) return nullptr;
  const Value* y = n->output(0);
  // A layout conversion (layout pass) is the identity on logical values but moves the data
  // into another physical layout; so does any no-op whose output is stored differently.
  if (IsRelayout(*n) || !SamePlacement(x->physical, y->physical)) return nullptr;
  bool same_type = x->type.IsStatic() && y->type.IsStatic() && x->type == y->type;
  switch (n->op()) {
    case OpKind::kIdentity:
      return x;
    case OpKind::kDropout: {
      // Inference mode unless training_mode is a constant true; the mask must be unused.
      if (n->num_outputs() > 1 && (!n->output(1)->uses().empty() || n->output(1)->is_graph_output())) return nullptr;
      if (n->input(2)) {
        auto t = ConstantScalar(n->input(2));
        if (!t || *t != 0) return nullptr;
      }
      return x;
    }
    case OpKind::kCast:
      return x->type.dtype == static_cast<DType>(n->attrs.GetInt("to")) ? x : nullptr;
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kExpand:
      return same_type ? x : nullptr;
    case OpKind::kTranspose: {
      auto perm = n->attrs.GetInts("perm");
      if (!x->type.rank_known) return nullptr;
      if (perm.empty()) return x->type.rank() <= 1 ? x : nullptr;
      for (size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] != static_cast<int64_t>(i)) return nullptr;
      }
      return x;
    }
    case OpKind::kPad: {
      const Tensor* pads = ConstantOf(n->input(1));
      if (!pads) return nullptr;
      for (int64_t p : pads->ToInt64Vector()) {
        if (p != 0) return nullptr;
      }
      return x;
    }
    case OpKind::kSlice: {
      // Same shape is not enough: a negative step keeps the shape and reverses the axis
      // (torch's F.pad exports its pads through Slice(step -1); EliminateDead.ReversingSliceStays).
      // With every step positive, an unchanged shape means every element in order.
      if (!same_type) return nullptr;
      if (n->num_inputs() > 4 && n->input(4)) {
        const Tensor* steps = ConstantOf(n->input(4));
        if (!steps) return nullptr;
        for (int64_t s : steps->ToInt64Vector()) {
          if (s <= 0) return nullptr;
        }
      }
      return x;
    }
    case OpKind::kTile: case OpKind::kConcat:
      return n->num_inputs() >= 1 && same_type && (n->op() != OpKind::kConcat || n->num_inputs() == 1) ? x : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

Status RunEliminateDead(Graph& g, PassContext& ctx, const PassOptions&) {
  for (Node* n : g.nodes()) {
    Value* through = PassThrough(n);
    if (!through) continue;
    if (ReplaceValue(g, n->output(0), through)) {
      ctx.stats().rewrites[std::string("no-op ") + std::string(OpName(n->op()))]++;
    }
  }
  // Trailing outputs nobody reads (MaxPool indices, LayerNormalization statistics, Dropout
  // masks): dropped so later stages need not compute them.
  for (Node* n : g.nodes()) {
    if (IsControlFlow(n->op())) continue;  // its output count is its subgraphs'
    int keep = n->num_outputs();
    while (keep > 1 && n->output(keep - 1)->uses().empty() && !n->output(keep - 1)->is_graph_output()) --keep;
    if (keep < n->num_outputs()) {
      ctx.stats().rewrites["unused outputs"] += n->num_outputs() - keep;
      g.TruncateOutputs(n, keep);
    }
  }
  ctx.stats().nodes_removed += RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
