// gather-as-slice: a Gather at a constant scalar index of a Reshape's output that only reads
// one block of the Reshape's input in memory order becomes a Slice of that input and a
// Reshape. With y = Reshape(x) of dims (outer, G, inner) around the gather axis, Gather(y, k)
// is the elements o·G·inner + k·inner + i; when x splits at an axis c with
// prod(x[:c]) = outer and x[c] = G·m, m·prod(x[c+1:]) = inner, they are
// x[..., k·m : (k+1)·m, ...]. The attention qkv split (Reshape [1, 3C, H, W] ->
// [1, 3, heads, d, H·W], Gather 0/1/2) so becomes three channel slices, each a chain of moves
// of its own that the NPU copies as one strided box (lower::AbsorbedInto) instead of three
// one-byte-row copies through a shared reshaped tensor.
//
// Before:  %r = Reshape(%x: [1, 192, 16, 16], [1, 3, 4, 16, 256]); %q = Gather(%r, 0) {axis=1}
// After:   %s = Slice(%x, [0], [64], [1]); %q = Reshape(%s, [1, 4, 16, 256])
// Guarded by tests/passes/gather_as_slice_test.cc (reference outputs before == after).
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "support/status.h"

namespace edgec::passes {
namespace {

int64_t Product(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= d[i];
  return p;
}

// The [start, end) of x's axis `c` that Gather(Reshape(x), k) reads, or c = -1.
struct Block {
  int c = -1;
  int64_t start = 0, end = 0;
};

Block BlockOf(const Node& gather) {
  Block b;
  const Value* y = gather.input(0);
  const Node* r = y ? y->producer() : nullptr;
  const Value* iv = gather.input(1);
  if (!r || r->op() != OpKind::kReshape || !iv || !iv->is_constant() || iv->type.rank() != 0) return b;
  const Value* x = r->input(0);
  if (!x || !x->type.IsStatic() || !y->type.IsStatic() || !gather.output(0)->type.IsStatic()) return b;
  const Dims& xd = x->type.dims;
  const Dims& yd = y->type.dims;
  int64_t axis = gather.attrs.GetInt("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(yd.size());
  if (axis < 0 || axis >= static_cast<int64_t>(yd.size())) return b;
  const int64_t g = yd[axis];
  int64_t k = iv->constant().ToInt64Vector()[0];
  if (k < 0) k += g;
  if (k < 0 || k >= g) return b;
  const int64_t outer = Product(yd, 0, axis), inner = Product(yd, axis + 1, yd.size());
  for (size_t c = 0; c < xd.size(); ++c) {
    if (Product(xd, 0, c) != outer || xd[c] % g != 0) continue;
    const int64_t m = xd[c] / g;
    if (m * Product(xd, c + 1, xd.size()) != inner) continue;
    return {static_cast<int>(c), k * m, (k + 1) * m};
  }
  return b;
}

}  // namespace

Status RunGatherAsSlice(Graph& g, PassContext& ctx, const PassOptions&) {
  std::vector<Node*> gathers;
  for (Node* n : g.nodes())
    if (n->op() == OpKind::kGather && n->num_outputs() == 1 && BlockOf(*n).c >= 0) gathers.push_back(n);
  for (Node* n : gathers) {
    const Block b = BlockOf(*n);
    Value* x = n->input(0)->producer()->input(0);
    auto ints = [&](const std::string& what, std::vector<int64_t> v) {
      return g.AddConstant(g.FreshName(n->name() + "." + what), Tensor::VectorI64(std::move(v)));
    };
    ASSIGN_OR_RETURN(Node* slice, AddInferredNode(g, OpKind::kSlice, g.FreshName(n->name() + "/slice"),
                                                  {x, ints("starts", {b.start}), ints("ends", {b.end}),
                                                   ints("axes", {b.c})},
                                                  {}, 1, n));
    ASSIGN_OR_RETURN(Node* reshape, AddInferredNode(g, OpKind::kReshape, g.FreshName(n->name() + "/reshape"),
                                                    {slice->output(0), ints("shape", n->output(0)->type.dims)},
                                                    {}, 1, n));
    if (!ReplaceValue(g, n->output(0), reshape->output(0)))
      return Internal("{}: cannot replace its output '{}'", n->Label(), n->output(0)->name());
    ++ctx.stats().rewrites["gather of a reshape -> slice"];
    ctx.stats().nodes_added += 2;
  }
  if (!gathers.empty()) RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
