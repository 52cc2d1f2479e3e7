// integer-forms: rewrites float ops that have no integer form into equivalent ones that have
// one, so that the quantizer (quant/points.h) puts points around them; run before
// quantization (quant/pipeline.cc: PrepareForQuantization).
//   Sub(a, C)           -> Add(a, -C)               (C a float constant)
//   Sub(a, b)           -> Add(a, Neg(b))           (two activations: Neg is a one-node table)
//   Div(a, C)           -> Mul(a, 1/C)              (C a float constant without zeros)
//   Softmax(x, axis=k)  -> Transpose(k <-> last), Softmax(last), Transpose back   (k not last:
//                          the integer softmax is over the last axis; the NPU takes the
//                          transposes as DMA patterns)
// x·(1/C) may differ from x/C in the last bit of an f32; the others are exact. Guarded by
// tests/passes/integer_forms_test.cc (each rewrite against the graph before it on the
// reference kernels).
//
// Before:  %y = Sub(%a, %b); %p = Softmax(%z [1, 4, 16, 64]) {axis=2}
// After:   %n = Neg(%b); %y = Add(%a, %n)
//          %t = Transpose(%z) {perm=[0, 1, 3, 2]}; %s = Softmax(%t) {axis=-1};
//          %p = Transpose(%s) {perm=[0, 1, 3, 2]}
#include <cmath>
#include <numeric>

#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

bool IsFloatValue(const Value* v) { return v && v->type.dtype == DType::kF32; }

// Replaces n's output by `y`, or removes what was added and says why.
bool Take(Graph& g, Node* n, Value* y, std::string* why) {
  if (y->type.dims != n->output(0)->type.dims || !ReplaceValue(g, n->output(0), y)) {
    *why = "the rewritten output's shape differs, or the output cannot be renamed";
    return false;
  }
  return true;
}

// A float constant with every element mapped by f, named after `v`.
Value* MappedConstant(Graph& g, const Value* v, float (*f)(float)) {
  Tensor t = v->constant().Clone();
  float* d = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = f(d[i]);
  return g.AddConstant(g.FreshName(v->name() + "_integer_form"), std::move(t));
}

bool SubToAdd(Graph& g, Node* n, PassContext& ctx, std::string* why) {
  Value* a = n->input(0);
  Value* b = n->input(1);
  if (!IsFloatValue(a) || !IsFloatValue(b) || !IsFloatValue(n->output(0))) return *why = "not f32", false;
  if (ConstantOf(a)) return *why = "the minuend is a constant", false;
  Value* rhs = nullptr;
  if (ConstantOf(b)) {
    rhs = MappedConstant(g, b, [](float x) { return -x; });
  } else {
    auto neg = AddInferredNode(g, OpKind::kNeg, g.FreshName(n->name() + "/neg"), {b}, {}, 1, n);
    if (!neg.ok()) return *why = neg.status().message(), false;
    rhs = (*neg)->output(0);
  }
  auto add = AddInferredNode(g, OpKind::kAdd, g.FreshName(n->name() + "/add"), {a, rhs}, {}, 1, n);
  if (!add.ok()) return *why = add.status().message(), false;
  if (!Take(g, n, (*add)->output(0), why)) return false;
  ctx.stats().nodes_added += ConstantOf(b) ? 0 : 1;
  return true;
}

bool DivToMul(Graph& g, Node* n, PassContext&, std::string* why) {
  Value* a = n->input(0);
  Value* c = n->input(1);
  if (!IsFloatValue(a) || !IsFloatValue(c) || !ConstantOf(c)) return *why = "the divisor is not an f32 constant", false;
  if (ConstantOf(a)) return *why = "the dividend is a constant", false;
  const Tensor& t = c->constant();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!(std::isfinite(t.data<float>()[i]) && t.data<float>()[i] != 0))
      return *why = "the divisor has a zero or a non-finite element", false;
  Value* r = MappedConstant(g, c, [](float x) { return 1.0f / x; });
  auto mul = AddInferredNode(g, OpKind::kMul, g.FreshName(n->name() + "/mul"), {a, r}, {}, 1, n);
  if (!mul.ok()) return *why = mul.status().message(), false;
  return Take(g, n, (*mul)->output(0), why);
}

bool SoftmaxToLastAxis(Graph& g, Node* n, PassContext& ctx, std::string* why) {
  Value* x = n->input(0);
  if (!x->type.rank_known || !IsFloatValue(x)) return *why = "input is not f32 of known rank", false;
  const int64_t rank = x->type.rank();
  int64_t axis = n->attrs.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return *why = "axis out of range", false;
  if (axis == rank - 1) return *why = "already over the last axis", false;
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[axis], perm[rank - 1]);  // its own inverse
  Attributes ta;
  ta.Set("perm", perm);
  auto t1 = AddInferredNode(g, OpKind::kTranspose, g.FreshName(n->name() + "/to_last"), {x}, ta, 1, n);
  if (!t1.ok()) return *why = t1.status().message(), false;
  Attributes sa = n->attrs;
  sa.Set("axis", int64_t{-1});
  auto s = AddInferredNode(g, OpKind::kSoftmax, g.FreshName(n->name() + "/last_axis"), {(*t1)->output(0)}, sa, 1, n);
  if (!s.ok()) return *why = s.status().message(), false;
  auto t2 = AddInferredNode(g, OpKind::kTranspose, g.FreshName(n->name() + "/back"), {(*s)->output(0)}, ta, 1, n);
  if (!t2.ok()) return *why = t2.status().message(), false;
  if (!Take(g, n, (*t2)->output(0), why)) return false;
  ctx.stats().nodes_added += 2;
  return true;
}

}  // namespace

Status RunIntegerForms(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g,
                       {{"Sub -> Add", {OpKind::kSub}, SubToAdd},
                        {"Div by a constant -> Mul", {OpKind::kDiv}, DivToMul},
                        {"Softmax -> Softmax over the last axis", {OpKind::kSoftmax}, SoftmaxToLastAxis}},
                       ctx);
}

}  // namespace edgec::passes
