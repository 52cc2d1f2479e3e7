// The narrowing requantize moved ahead of a value-moving op, so that the op runs on 8-bit
// values (quant/fold_qdq.h):
//
//   DQ16(x) ─► M ─► Q8          ⇒   DQ16(x) ─► Q8' ─► DQ8' ─► M ─► Q8     (Q8' = Q8's parameters)
//
// M keeps a subset of its input's values (kKeepsValues: Transpose, Reshape, Slice, ...), so
// Q8(M(v)) = M(Q8(v)) element for element; afterwards the int8 movement pushes DQ8' past M,
// Q8(DQ8') cancels, and Q8'(DQ16) folds into one QLinearRequantize: the transformer's Transpose
// after an int16 LayerNorm runs on int8 values on the NPU instead of in float on the CPU
// (Int16Quantize.NarrowingRequantizeMovesAheadOfATranspose).
#include "quant/fold_util.h"

#include "passes/pass_util.h"
#include "quant/int_resize.h"

namespace edgec::quant {

StatusOr<bool> HoistNarrowingQuantize(Graph& g, Node* n) {
  if (!(HasTrait(n->op(), op_trait::kKeepsValues) || KeepsQuantization(*n)) || n->num_outputs() != 1 ||
      n->num_inputs() < 1 || n->output(0)->is_graph_output() || !passes::HasSingleUse(n->output(0)))
    return false;
  Node* dq = DqOf(n->input(0));
  Node* q = n->output(0)->uses()[0].node;
  if (!dq || q->op() != OpKind::kQuantizeLinear) return false;
  for (int i = 1; i < n->num_inputs(); ++i)
    if (n->input(i) && !passes::ConstantOf(n->input(i))) return false;
  const DType xt = dq->input(0)->type.dtype, yt = q->output(0)->type.dtype;
  if (xt != DType::kI16 || (yt != DType::kI8 && yt != DType::kU8)) return false;
  if (!ParamsOf(dq, xt) || !ParamsOf(q, yt)) return false;
  std::vector<Value*> qin(q->inputs().begin(), q->inputs().end());
  qin[0] = dq->output(0);
  ASSIGN_OR_RETURN(Node* q8, passes::AddInferredNode(g, OpKind::kQuantizeLinear, g.FreshName(q->name() + "/ahead"),
                                                     qin, q->attrs, 1, q));
  std::vector<Value*> dqin = qin;
  dqin[0] = q8->output(0);
  ASSIGN_OR_RETURN(Node* dq8, passes::AddInferredNode(g, OpKind::kDequantizeLinear, g.FreshName(q->name() + "/ahead_dq"),
                                                      dqin, {}, 1, q));
  g.SetInput(n, 0, dq8->output(0));
  return true;
}

}  // namespace edgec::quant
