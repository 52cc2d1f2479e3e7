// fuse-npu-epilogue (see npu_epilogue.h).
//
// Before:  %c = QLinearConv(%x, ...); %y = QuantizedLookup(%c, %hardswish_table)
// After:   %c = QLinearConv(%x, ...) {edgec_output_table=[hardswish_table...]}
//          (%y's readers read %c)
#include "ir/physical_layout.h"
#include "lower/npu_epilogue.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::lower {
namespace {

bool Is8(DType d) { return d == DType::kU8 || d == DType::kI8; }

// The MAC or depthwise layer the lookup can ride on, or null.
Node* FusibleProducer(const Node& lookup) {
  if (lookup.op() != OpKind::kQuantizedLookup || lookup.num_inputs() != 2 || lookup.num_outputs() != 1) return nullptr;
  const Value* v = lookup.input(0);
  const Value* table = lookup.input(1);
  const Value* y = lookup.output(0);
  Node* op = v ? v->producer() : nullptr;
  if (!op || !y || op->num_outputs() != 1) return nullptr;
  const bool norm = op->op() == OpKind::kQLinearGroupNormalization || op->op() == OpKind::kQLinearLayerNormalization;
  if (op->op() != OpKind::kQLinearConv && op->op() != OpKind::kQLinearMatMul && !norm) return nullptr;
  // A MatMul of two activations may become part of an attention layer, which has no lookup.
  if (op->op() == OpKind::kQLinearMatMul && !(op->input(3) && op->input(3)->is_constant())) return nullptr;
  if (op->attrs.Has("edgec_output_table")) return nullptr;
  if (v->uses().size() != 1 || v->is_graph_output() || y->is_graph_output()) return nullptr;
  if (!(v->type == y->type) || !Is8(v->type.dtype)) return nullptr;
  if (!table || !table->is_constant() || table->constant().numel() != 256 || table->constant().dtype() != v->type.dtype)
    return nullptr;
  if (!SamePlacement(v->physical, y->physical) || v->physical.is_view || y->physical.is_view) return nullptr;
  return op;
}

// A norm layer's tiles are whole items (LayerNorm rows, GroupNorm batch items) dealt over the
// cores; the lookup after it runs on the vector cores of the cores that have tiles, while the
// lookup alone spreads over all of them. So a lookup rides on a norm only when the norm has
// at least one item per vector core: a UNet's GroupNorm of one batch item stays a pair (fused,
// unet_small's NPU time grew from 0.183 to 0.212 ms).
bool NormSpreads(const Node& norm, const npu::Target& t) {
  const Dims& d = norm.input(0)->type.dims;
  if (d.empty()) return false;
  const int64_t items = norm.op() == OpKind::kQLinearGroupNormalization ? d[0] : NumElements(d) / std::max<int64_t>(1, d.back());
  return items >= t.vector_cores.count;
}

// An output larger than half the SRAM is one the segment runs in row stripes with its
// neighbours (lower/npu_cascade.h), whose runs were planned with the lookup as a layer of
// its own: fused into the stem conv of mnv3_fpn_db at 640x640 (320x320x16), the planner
// dropped the stem's cascade and the NPU time grew from 4.85 to 6.18 ms. Such pairs stay.
bool FitsBesideCascades(const Node& op, const npu::Target& t) {
  const Value* y = op.output(0);
  return y && y->type.IsStatic() && 2 * NumElements(y->type.dims) <= t.shared_sram.bytes;
}

}  // namespace

int FuseNpuEpilogues(Graph& g, const npu::Target& t) {
  if (!t.SupportsOp("QuantizedLookup")) return 0;
  int fused = 0;
  for (Node* lookup : g.nodes()) {
    Node* op = FusibleProducer(*lookup);
    if (!op) continue;
    if (op->op() != OpKind::kQLinearConv && op->op() != OpKind::kQLinearMatMul && !NormSpreads(*op, t)) continue;
    if (!FitsBesideCascades(*op, t)) continue;
    op->attrs.Set("edgec_output_table", lookup->input(1)->constant().ToInt64Vector());
    passes::AbsorbProvenance(op, lookup);
    g.ReplaceAllUses(lookup->output(0), op->output(0));
    g.RemoveNode(lookup);
    ++fused;
  }
  return fused;
}

Status PrepareNpuGraph(Graph& g, const npu::Target& t) {
  if (t.SupportsOp("Transpose")) {
    ASSIGN_OR_RETURN(passes::Pipeline p, passes::ParsePipeline("fuse-channel-shuffle"));
    passes::PassContext ctx;
    RETURN_IF_ERROR(passes::RunPipeline(g, p, ctx));
  }
  FuseNpuEpilogues(g, t);
  return Status::Ok();
}

}  // namespace edgec::lower
