// fuse-input-quantize: a QuantizeLinear (per tensor, constant parameters) whose output only a
// QLinearConv reads, as its input 0 with the same scale and zero point, goes into the conv:
// the conv reads the f32 tensor and carries `edgec_quantize_input` = 1. The CPU kernel then
// quantizes the rows each thread convolves as it rearranges them (the image of a network's
// first layer, three planes interleaved into NHWC), and the quantize's step, its pass over the
// tensor and the other core's share of it are gone. Exact: the same formula on the same values.
//
// Not in the named pipelines, for the reason fuse-output-table gives: the CPU plan runs it on
// its own graph (lower/cpu_lower.cc). The QuantizeLinear's output must not be a graph output and
// must be stored as its input is.
//
// Before:  %q = QuantizeLinear(%x, %s, %z); %y = QLinearConv(%q, %s, %z, %w, ...)
// After:   %y = QLinearConv(%x, %s, %z, %w, ...) {edgec_quantize_input=1}
#include "ir/physical_layout.h"
#include "lower/cpu_lower.h"
#include "passes/pass_util.h"

namespace edgec::lower {

namespace {

// Whether a and b are constant scalars of one dtype and value (b absent: a u8 zero).
bool SameScalar(const Value* a, const Value* b) {
  if (!a || !a->is_constant() || a->constant().numel() != 1) return false;
  if (!b) return a->constant().dtype() == DType::kU8 && a->constant().ToInt64Vector()[0] == 0;
  if (!b->is_constant() || b->constant().numel() != 1 || a->constant().dtype() != b->constant().dtype()) return false;
  return a->constant().ToDoubleVector()[0] == b->constant().ToDoubleVector()[0];
}

}  // namespace

Status FuseInputQuantize(Graph& g, passes::PassStats& stats) {
  for (Node* q : g.nodes()) {
    if (q->op() != OpKind::kQuantizeLinear || q->num_inputs() < 2 || q->num_outputs() != 1) continue;
    Value* x = q->input(0);
    Value* v = q->output(0);
    if (!x || x->type.dtype != DType::kF32 || v->is_graph_output() || v->uses().size() != 1) continue;
    Node* conv = v->uses()[0].node;
    if (conv->op() != OpKind::kQLinearConv || v->uses()[0].input_index != 0 || conv->num_inputs() < 3) continue;
    if (conv->attrs.Has("edgec_quantize_input")) continue;
    Value* scale = q->input(1);
    Value* zp = q->num_inputs() > 2 ? q->input(2) : nullptr;
    if (!scale || !scale->is_constant() || scale->constant().numel() != 1) continue;
    if (!SameScalar(conv->input(1), scale) || !SameScalar(conv->input(2), zp)) continue;
    if (!SamePlacement(x->physical, v->physical) || x->physical.is_view || v->physical.is_view) continue;
    g.SetInput(conv, 0, x);
    conv->attrs.Set("edgec_quantize_input", int64_t{1});
    passes::AbsorbProvenance(conv, q);
    g.RemoveNode(q);
    stats.nodes_fused += 1;
    stats.rewrites["QuantizeLinear+QLinearConv"] += 1;
  }
  return Status::Ok();
}

}  // namespace edgec::lower
