// fuse-output-table: a QuantizedLookup that is the only reader of a QLinearConv or
// QLinearMatMul output becomes that op's `edgec_output_table` attribute: the integer op maps
// each requantized value through the table as it writes it (the CPU requantization applies
// it to rows still in L1), and the lookup's pass over the tensor, its step and, on several
// threads, its fork and join are gone. Exact: the table is applied to the same values.
//
// Not in the named pipelines: the NPU has no lookup (a QLinearConv with a table would stay
// on the CPU), so the CPU plan runs this pass on each graph it builds (lower/cpu_lower.cc)
// after partitioning. The lookup's output must not be a graph output (its name would
// change) and must be stored as the op's output is.
//
// Before:  %c = QLinearConv(%x, ...) {edgec_qmin=0}; %y = QuantizedLookup(%c, %table)
// After:   %y' = QLinearConv(%x, ...) {edgec_qmin=0, edgec_output_table=[table...]}
//          (%y's readers read the conv's output)
#include "ir/physical_layout.h"
#include "lower/cpu_lower.h"
#include "passes/pass_util.h"

namespace edgec::lower {

Status FuseOutputTable(Graph& g, passes::PassStats& stats) {
  for (Node* lookup : g.nodes()) {
    if (lookup->op() != OpKind::kQuantizedLookup || lookup->num_inputs() != 2) continue;
    Value* v = lookup->input(0);
    Value* table = lookup->input(1);
    Value* y = lookup->output(0);
    Node* op = v ? v->producer() : nullptr;
    if (!op || (op->op() != OpKind::kQLinearConv && op->op() != OpKind::kQLinearMatMul)) continue;
    if (op->num_outputs() != 1 || v->uses().size() != 1 || v->is_graph_output() || y->is_graph_output()) continue;
    if (!table || !table->is_constant() || table->constant().numel() != 256) continue;
    if (op->attrs.Has("edgec_output_table")) continue;
    if (!(v->type == y->type) || !SamePlacement(v->physical, y->physical) || v->physical.is_view || y->physical.is_view)
      continue;
    const DType dt = v->type.dtype;
    if ((dt != DType::kU8 && dt != DType::kI8) || table->constant().dtype() != dt) continue;
    std::vector<int64_t> entries = table->constant().ToInt64Vector();
    op->attrs.Set("edgec_output_table", entries);
    passes::AbsorbProvenance(op, lookup);
    g.ReplaceAllUses(y, v);
    g.RemoveNode(lookup);
    stats.nodes_fused += 1;
    stats.rewrites[std::string(OpName(op->op())) + "+QuantizedLookup"] += 1;
  }
  return Status::Ok();
}

}  // namespace edgec::lower
