// canonicalize: rewrites ops into the equivalent form the backends have kernels for.
//   ReduceMean over every spatial dim (axes 2..rank-1) of a float tensor of rank >= 3 ->
//     GlobalAveragePool, followed by Flatten when keepdims=0 (torchvision's
//     `x.mean([2, 3])`, shufflenet_v2's pool): a pooling kernel in any layout on the CPU,
//     the NPU's average pool, and in int8 a QLinearGlobalAveragePool, where a reduction
//     over an NHWC tensor had only oneDNN's reference kernel and no int8 form.
//
// Before:  %y = ReduceMean(%x [1, 1024, 7, 7], axes=[2, 3]) {keepdims=0}
// After:   %p = GlobalAveragePool(%x); %y = Flatten(%p) {axis=1}
#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

bool SpatialMeanToGlobalPool(Graph& g, Node* n, PassContext& ctx, std::string* why) {
  Value* x = n->input(0);
  if (!x->type.rank_known || x->type.rank() < 3 || !IsFloat(x->type.dtype)) {
    *why = "input is not a float tensor of known rank >= 3";
    return false;
  }
  const int rank = x->type.rank();
  const std::optional<std::vector<int>> axes = ReducedAxes(n, rank, why);
  if (!axes) return false;
  if (TrailingAxisOf(*axes, rank) != 2) {
    *why = "axes are not exactly the spatial dims 2..rank-1";
    return false;
  }
  const bool keep = n->attrs.GetInt("keepdims", 1) != 0;
  auto pool = AddInferredNode(g, OpKind::kGlobalAveragePool, g.FreshName(n->name() + "/pool"), {x}, {}, 1, n);
  if (!pool.ok()) {
    *why = pool.status().message();
    return false;
  }
  Node* last = *pool;
  if (!keep) {
    Attributes fa;
    fa.Set("axis", int64_t{1});
    auto flat = AddInferredNode(g, OpKind::kFlatten, g.FreshName(n->name() + "/flatten"), {last->output(0)},
                                std::move(fa), 1, n);
    if (!flat.ok()) {
      *why = flat.status().message();
      return false;
    }
    last = *flat;
  }
  if (last->output(0)->type.dims != n->output(0)->type.dims || !ReplaceValue(g, n->output(0), last->output(0))) {
    if (last != *pool) g.RemoveNode(last);
    g.RemoveNode(*pool);
    *why = "the pooled shape differs from the ReduceMean's, or its output cannot be renamed";
    return false;
  }
  ctx.stats().nodes_added += keep ? 1 : 2;
  return true;
}

}  // namespace

Status RunCanonicalize(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"ReduceMean -> GlobalAveragePool", {OpKind::kReduceMean}, SpatialMeanToGlobalPool}}, ctx);
}

}  // namespace edgec::passes
