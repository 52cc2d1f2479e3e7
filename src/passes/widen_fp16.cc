// widen-fp16: computes a float16 graph in float32. Every f16 constant is widened, every f16
// value inside the graph becomes f32, a Cast to f16 becomes a Cast to f32 (a no-op that
// eliminate-dead removes, so a rounding step of the exporter's mixed-precision wrapper
// disappears), and the graph's interface keeps its declared types: an f16 graph input is
// cast to f32 at its entry, an f16 graph output is the f32 value cast back to f16 under the
// output's name. The quantizer calibrates f32 activations only and the fast CPU kernels are
// f32, so a half-precision export (the trained ISNet) quantizes and runs like its f32 twin.
//
// Before:  %w: f16 const; %x: f32 input; %h = Cast(%x) {to=f16}; %c = Conv(%h, %w)
//          %y = Cast(%c) {to=f32}   (y the output)
// After:   %w: f32 const; %c = Conv(%x, %w); %y = ... (the Casts are no-ops)
//
// Guarded by tests/passes/widen_fp16_test.cc.
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "support/status.h"

namespace edgec::passes {
namespace {

bool IsHalf(const Value* v) { return v && v->type.dtype == DType::kF16; }

// Points every node input reading `from` at `to`, except those of `keep`.
void RedirectNodeUses(Graph& g, Value* from, Value* to, const Node* keep) {
  const std::vector<Use> uses = from->uses();
  for (const Use& u : uses) {
    if (u.node != keep) g.SetInput(u.node, u.input_index, to);
  }
}

// Attributes that name an element type or hold a typed value: f16 becomes f32.
void WidenAttributes(Node* n, PassStats& stats) {
  const int64_t f16 = static_cast<int64_t>(DType::kF16);
  const int64_t f32 = static_cast<int64_t>(DType::kF32);
  // Cast's `to` and EyeLike's `dtype` hold the frontend's DType (converters.cc).
  for (const char* key : {"to", "dtype"}) {
    if (n->op() != (key[0] == 't' ? OpKind::kCast : OpKind::kEyeLike)) continue;
    if (n->attrs.Has(key) && n->attrs.GetInt(key, -1) == f16) {
      n->attrs.Set(key, f32);
      stats.rewrites[std::string(OpName(n->op())) + " " + key + "=f16 -> f32"]++;
    }
  }
  if (n->op() == OpKind::kConstantOfShape && n->attrs.Has("value")) {
    Tensor v = n->attrs.GetTensor("value");
    if (v.dtype() == DType::kF16) n->attrs.Set("value", v.CastTo(DType::kF32));
  }
}

}  // namespace

Status RunWidenFp16(Graph& g, PassContext& ctx, const PassOptions&) {
  PassStats& stats = ctx.stats();
  // Constants keep their names (the widened tensor takes the name over).
  for (Value* c : g.constants()) {
    if (!IsHalf(c) || c->is_graph_output()) continue;
    const std::string name = c->name();
    RETURN_IF_ERROR(g.RenameValue(c, g.FreshName(name + "/f16")));
    Value* wide = g.AddConstant(name, c->constant().CastTo(DType::kF32));
    RedirectNodeUses(g, c, wide, nullptr);
    stats.rewrites["f16 constant"]++;
  }
  for (Node* n : g.nodes()) WidenAttributes(n, stats);

  std::vector<Node*> nodes = g.nodes();
  for (Node* n : nodes) {
    for (Value* v : n->outputs()) {
      if (!IsHalf(v)) continue;
      v->type.dtype = DType::kF32;
      stats.rewrites["f16 value"]++;
      if (!v->is_graph_output()) continue;
      // The output keeps its name and type: the f32 value is renamed and cast back.
      const std::string name = v->name();
      const std::vector<Use> uses = v->uses();
      RETURN_IF_ERROR(g.RenameValue(v, g.FreshName(name + "/f32")));
      Node* cast = g.AddNode(OpKind::kCast, g.FreshName(name + "/to_f16"), {v}, 1, {name});
      cast->attrs.Set("to", static_cast<int64_t>(DType::kF16));
      cast->output(0)->type = v->type;
      cast->output(0)->type.dtype = DType::kF16;
      g.ReplaceAllUses(v, cast->output(0));
      g.SetInput(cast, 0, v);
      for (const Use& u : uses) g.SetInput(u.node, u.input_index, v);
      stats.nodes_added++;
    }
  }
  for (Value* x : std::vector<Value*>(g.inputs())) {
    if (!IsHalf(x)) continue;
    Node* cast = g.AddNode(OpKind::kCast, g.FreshName(x->name() + "/to_f32"), {x}, 1,
                           {g.FreshName(x->name() + "/f32")});
    cast->attrs.Set("to", static_cast<int64_t>(DType::kF32));
    cast->output(0)->type = x->type;
    cast->output(0)->type.dtype = DType::kF32;
    RedirectNodeUses(g, x, cast->output(0), cast);
    stats.nodes_added++;
  }
  if (stats.nodes_added) RETURN_IF_ERROR(g.TopoSort());
  return Status::Ok();
}

}  // namespace edgec::passes
