// fold-constants: evaluates every node whose inputs are all constant and replaces its
// outputs by constants. Shape and Size fold as soon as their input's type is static, so
// Shape -> Gather -> Concat -> Reshape chains disappear once input shapes are bound.
//
// Before:  %s = Shape(%x) (x: f32[1, 64, 7, 7]); %n = Gather(%s, 0); %u = Unsqueeze(%n, [0])
//          %c = Concat(%u, [-1]); %y = Reshape(%x, %c)
// After:   %y = Reshape(%x, [1, -1])
// An If whose condition is constant is replaced by the nodes of the branch it takes.
#include <algorithm>

#include "ir/infer.h"
#include "passes/inline_branch.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {
namespace {

// Larger results stay computed at run time rather than bloating the model.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

bool Foldable(const Node* n) {
  if (n->op() == OpKind::kShape || n->op() == OpKind::kSize) {
    return n->input(0) && n->input(0)->type.IsStatic();
  }
  if (n->num_inputs() == 0) return false;
  for (const Value* v : n->inputs()) {
    if (v && !v->is_constant()) return false;
  }
  for (const Value* o : n->outputs()) {
    if (!o->type.IsStatic() || NumElements(o->type.dims) > kMaxFoldedElements) return false;
  }
  return true;
}

Status FoldSweep(Graph& g, PassContext& ctx, bool* inlined);

}  // namespace

Status RunFoldConstants(Graph& g, PassContext& ctx, const PassOptions&) {
  if (!ctx.evaluator) return Internal("fold-constants needs an evaluator (set by the driver)");
  // A branch inlined below brings nodes typed for any input (a branch is inferred alone):
  // the graph is inferred again and swept again, so that its Shape -> Gather -> Equal
  // chains fold and the Ifs nested in it inline too (silero VAD's decoder;
  // FreezeInputs.IfOnAFrozenInputBecomesItsBranch).
  constexpr int kMaxSweeps = 16;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool inlined = false;
    RETURN_IF_ERROR(FoldSweep(g, ctx, &inlined));
    if (!inlined) break;
    RETURN_IF_ERROR(InferShapes(g));
  }
  ctx.stats().nodes_removed += RemoveDeadNodes(g);
  return Status::Ok();
}

namespace {

Status FoldSweep(Graph& g, PassContext& ctx, bool* inlined) {
  for (Node* n : g.nodes()) {
    // An If on a constant condition becomes its taken branch.
    if (n->op() == OpKind::kIf && n->input(0) && n->input(0)->is_constant()) {
      RETURN_IF_ERROR(InlineIfBranch(g, n));
      ctx.stats().rewrites["inlined If branch"]++;
      *inlined = true;
      continue;
    }
    if (!Foldable(n)) continue;
    std::vector<Tensor> outs;
    if (n->op() == OpKind::kShape || n->op() == OpKind::kSize) {
      // The value depends on the type only: evaluate on a shape-only stand-in is not
      // possible for the kernel, so compute it here.
      const Dims& d = n->input(0)->type.dims;
      if (n->op() == OpKind::kSize) {
        outs.push_back(Tensor::ScalarI64(NumElements(d)));
      } else {
        int64_t r = static_cast<int64_t>(d.size());
        auto clamp = [&](int64_t a) { return std::clamp(a < 0 ? a + r : a, int64_t{0}, r); };
        int64_t b = clamp(n->attrs.GetInt("start", 0)), e = clamp(n->attrs.GetInt("end", r));
        outs.push_back(Tensor::VectorI64(std::vector<int64_t>(d.begin() + b, d.begin() + std::max(b, e))));
      }
    } else {
      std::vector<const Tensor*> ins;
      for (const Value* v : n->inputs()) ins.push_back(v ? &v->constant() : nullptr);
      auto r = ctx.evaluator(*n, ins);
      if (!r.ok()) return r.status();
      outs = std::move(r).value();
    }
    bool replaced_all = true;
    for (int i = 0; i < n->num_outputs(); ++i) {
      Value* o = n->output(i);
      if (o->uses().empty() && !o->is_graph_output()) continue;
      Value* c = g.AddConstant(g.FreshName(o->name() + ".folded"), std::move(outs[i]));
      if (o->is_graph_output()) {
        // A graph output keeps its name: the constant takes it over.
        std::string name = o->name();
        g.ReplaceAllUses(o, c);
        RETURN_IF_ERROR(g.RenameValue(o, g.FreshName(name + ".old")));
        RETURN_IF_ERROR(g.RenameValue(c, name));
      } else {
        g.ReplaceAllUses(o, c);
      }
      replaced_all &= o->uses().empty() && !o->is_graph_output();
    }
    if (replaced_all) ctx.stats().rewrites[std::string("folded ") + std::string(OpName(n->op()))]++;
  }
  return Status::Ok();
}

}  // namespace
}  // namespace edgec::passes
