// Lowering of the composite family to standard opset-17 ops (the unfuse pass):
//   Gelu (none)      -> Div(x, √2), Erf, Add(1), Mul(x), Mul(0.5)
//   Gelu (tanh)      -> Mul(x, x), Mul(x), Mul(0.044715), Add(x), Mul(√(2/π)), Tanh, Add(1),
//                       Mul(x), Mul(0.5)
//   RmsNormalization -> Mul(x, x), ReduceMean(axes [axis, rank)), Add(eps), Sqrt, Div(x, ·),
//                       Mul(scale) (left out when the scale is a constant 1)
//   GroupNormalization -> Reshape [N, G, -1], InstanceNormalization (Scale ones, B zeros
//                       [G]), Reshape [N, C, spatial...], Mul(Scale [C, 1, ...]), Add(B [C, 1, ...])
//   Attention        -> [Transpose(K) swapping the last two dims, merged with a Transpose
//                       that feeds only K], MatMul(Q, Kᵀ), Mul(scale), [Add(mask)],
//                       Softmax(-1), MatMul(·, V)
//   ChannelShuffle   -> Reshape [N, g, C/g, ...], Transpose(0, 2, 1, ...), Reshape [N, C, ...]
// Every lowered node keeps the fused node's provenance.
#include <cmath>

#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/unfuse.h"

namespace edgec::passes {
namespace {

// Appends the nodes of one lowering, named "<fused name>/<step>".
class Lowering {
 public:
  Lowering(Graph& g, Node* fused) : g_(g), fused_(fused), dt_(fused->input(0)->type.dtype) {}

  StatusOr<Value*> Op(OpKind op, const std::string& step, std::vector<Value*> inputs,
                      Attributes attrs = Attributes()) {
    ASSIGN_OR_RETURN(Node* n, AddInferredNode(g_, op, fused_->name() + "/" + step, std::move(inputs),
                                              std::move(attrs), 1, fused_));
    return n->output(0);
  }
  Value* Scalar(const std::string& step, double v) {
    return g_.AddConstant(g_.FreshName(fused_->name() + "/" + step), ScalarOf(dt_, v));
  }
  Value* Ints(const std::string& step, const std::vector<int64_t>& v) {
    return g_.AddConstant(g_.FreshName(fused_->name() + "/" + step), Tensor::VectorI64(v));
  }
  // The fused node's output is now `v`.
  StatusOr<bool> Finish(Value* v) {
    if (!ReplaceValue(g_, fused_->output(0), v)) {
      return Internal("{}: cannot replace graph output '{}'", fused_->Label(), fused_->output(0)->name());
    }
    return true;
  }

 private:
  Graph& g_;
  Node* fused_;
  DType dt_;
};

StatusOr<bool> LowerGelu(Graph& g, Node* n) {
  Lowering l(g, n);
  Value* x = n->input(0);
  Value* bracket_arg;
  OpKind bracket_fn;
  if (n->attrs.GetString("approximate", "none") == "tanh") {
    ASSIGN_OR_RETURN(Value* x2, l.Op(OpKind::kMul, "square", {x, x}));
    ASSIGN_OR_RETURN(Value* x3, l.Op(OpKind::kMul, "cube", {x2, x}));
    ASSIGN_OR_RETURN(Value* t, l.Op(OpKind::kMul, "cube_coeff", {x3, l.Scalar("kappa", 0.044715)}));
    ASSIGN_OR_RETURN(Value* s, l.Op(OpKind::kAdd, "inner", {x, t}));
    ASSIGN_OR_RETURN(bracket_arg, l.Op(OpKind::kMul, "scaled", {s, l.Scalar("beta", std::sqrt(2.0 / M_PI))}));
    bracket_fn = OpKind::kTanh;
  } else {
    ASSIGN_OR_RETURN(bracket_arg, l.Op(OpKind::kDiv, "scaled", {x, l.Scalar("sqrt2", std::sqrt(2.0))}));
    bracket_fn = OpKind::kErf;
  }
  ASSIGN_OR_RETURN(Value* f, l.Op(bracket_fn, bracket_fn == OpKind::kErf ? "erf" : "tanh", {bracket_arg}));
  ASSIGN_OR_RETURN(Value* b, l.Op(OpKind::kAdd, "one_plus", {f, l.Scalar("one", 1.0)}));
  ASSIGN_OR_RETURN(Value* xb, l.Op(OpKind::kMul, "times_x", {x, b}));
  ASSIGN_OR_RETURN(Value* y, l.Op(OpKind::kMul, "half", {xb, l.Scalar("half", 0.5)}));
  return l.Finish(y);
}

StatusOr<bool> LowerRmsNormalization(Graph& g, Node* n) {
  Lowering l(g, n);
  Value* x = n->input(0);
  Value* scale = n->input(1);
  const int64_t axis = n->attrs.GetInt("axis", -1);
  std::vector<int64_t> axes;
  if (axis < 0) {
    for (int64_t a = axis; a < 0; ++a) axes.push_back(a);  // valid for any rank
  } else if (x->type.rank_known) {
    for (int64_t a = axis; a < x->type.rank(); ++a) axes.push_back(a);
  } else {
    return Unimplemented("{}: cannot lower a non-negative axis {} with unknown rank", n->Label(), axis);
  }
  ASSIGN_OR_RETURN(Value* sq, l.Op(OpKind::kMul, "square", {x, x}));
  Attributes keep;
  keep.Set("keepdims", int64_t{1});
  ASSIGN_OR_RETURN(Value* ms, l.Op(OpKind::kReduceMean, "mean_square", {sq, l.Ints("axes", axes)}, keep));
  ASSIGN_OR_RETURN(Value* a, l.Op(OpKind::kAdd, "plus_eps", {ms, l.Scalar("epsilon", n->attrs.GetFloat("epsilon", 1e-5f))}));
  ASSIGN_OR_RETURN(Value* rms, l.Op(OpKind::kSqrt, "rms", {a}));
  ASSIGN_OR_RETURN(Value* y, l.Op(OpKind::kDiv, "normalized", {x, rms}));
  auto one = ConstantScalar(scale);
  const bool unit_scale = one && *one == 1.0 && scale->type.rank_known && x->type.rank_known &&
                          scale->type.rank() <= x->type.rank();
  if (!unit_scale) {
    ASSIGN_OR_RETURN(y, l.Op(OpKind::kMul, "scaled", {y, scale}));
  }
  return l.Finish(y);
}

StatusOr<bool> LowerGroupNormalization(Graph& g, Node* n) {
  Lowering l(g, n);
  Value* x = n->input(0);
  if (!x->type.IsStatic()) return Unimplemented("{}: cannot lower with dynamic shape {}", n->Label(), x->type.ToString());
  const Dims& d = x->type.dims;
  const int64_t groups = n->attrs.GetInt("num_groups", 1);
  const DType dt = x->type.dtype;
  ASSIGN_OR_RETURN(Value* grouped, l.Op(OpKind::kReshape, "grouped", {x, l.Ints("group_shape", {d[0], groups, -1})}));
  Attributes in_attrs;
  in_attrs.Set("epsilon", n->attrs.GetFloat("epsilon", 1e-5f));
  Value* ones = g.AddConstant(g.FreshName(n->name() + "/ones"), FilledOf(dt, {groups}, 1.0));
  Value* zeros = g.AddConstant(g.FreshName(n->name() + "/zeros"), FilledOf(dt, {groups}, 0.0));
  ASSIGN_OR_RETURN(Value* normed, l.Op(OpKind::kInstanceNormalization, "normalized", {grouped, ones, zeros}, in_attrs));
  ASSIGN_OR_RETURN(Value* back, l.Op(OpKind::kReshape, "ungrouped", {normed, l.Ints("shape", std::vector<int64_t>(d.begin(), d.end()))}));
  // Scale and B as [C, 1, ...] so that they broadcast over the spatial dims.
  auto per_channel = [&](Value* v, const std::string& step) -> StatusOr<Value*> {
    std::vector<int64_t> shape(d.size() - 1, 1);
    shape[0] = d[1];
    if (const Tensor* c = ConstantOf(v)) {  // a constant of that shape (the fusion matches it again)
      return g.AddConstant(g.FreshName(n->name() + "/" + step), c->Clone().Reshaped(Dims(shape.begin(), shape.end())));
    }
    return l.Op(OpKind::kReshape, step, {v, l.Ints(step + "_shape", shape)});
  };
  ASSIGN_OR_RETURN(Value* scale, per_channel(n->input(1), "scale"));
  ASSIGN_OR_RETURN(Value* bias, per_channel(n->input(2), "bias"));
  ASSIGN_OR_RETURN(Value* scaled, l.Op(OpKind::kMul, "scaled", {back, scale}));
  ASSIGN_OR_RETURN(Value* y, l.Op(OpKind::kAdd, "shifted", {scaled, bias}));
  return l.Finish(y);
}

StatusOr<bool> LowerAttention(Graph& g, Node* n) {
  Lowering l(g, n);
  Value* q = n->input(0);
  Value* k = n->input(1);
  Value* v = n->input(2);
  Value* mask = n->input(3);
  if (n->attrs.GetInt("k_transposed", 0) == 0) {
    if (!k->type.rank_known) {
      return Unimplemented("{}: cannot transpose K of unknown rank", n->Label());
    }
    std::vector<int64_t> perm(k->type.rank());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    // A head-split Transpose that feeds only K and the swap become one Transpose.
    Node* split = ProducerOf(k, OpKind::kTranspose);
    std::vector<int64_t> split_perm = split ? split->attrs.GetInts("perm") : std::vector<int64_t>();
    if (split && HasSingleUse(k) && split_perm.size() == perm.size()) {
      for (int64_t& p : perm) p = split_perm[p];
      k = split->input(0);
    } else {
      split = nullptr;
    }
    Attributes a;
    a.Set("perm", perm);
    ASSIGN_OR_RETURN(k, l.Op(OpKind::kTranspose, "k_transposed", {k}, a));
    if (split) AbsorbProvenance(k->producer(), split);
  }
  double scale;
  if (n->attrs.Has("scale")) {
    scale = n->attrs.GetFloat("scale");
  } else if (q->type.rank_known && q->type.dims.back() != kUnknownDim) {
    scale = 1.0 / std::sqrt(static_cast<double>(q->type.dims.back()));
  } else {
    return Unimplemented("{}: the default scale needs Q's head dim", n->Label());
  }
  ASSIGN_OR_RETURN(Value* s, l.Op(OpKind::kMatMul, "scores", {q, k}));
  if (scale != 1.0) {
    ASSIGN_OR_RETURN(s, l.Op(OpKind::kMul, "scaled", {s, l.Scalar("scale", scale)}));
  }
  if (mask) {
    ASSIGN_OR_RETURN(s, l.Op(OpKind::kAdd, "masked", {s, mask}));
  }
  Attributes last;
  last.Set("axis", int64_t{-1});
  ASSIGN_OR_RETURN(Value* p, l.Op(OpKind::kSoftmax, "probs", {s}, last));
  ASSIGN_OR_RETURN(Value* y, l.Op(OpKind::kMatMul, "context", {p, v}));
  return l.Finish(y);
}

}  // namespace

StatusOr<bool> LowerChannelShuffle(Graph& g, Node* n) {
  Lowering l(g, n);
  Value* x = n->input(0);
  const Dims& dims = x->type.dims;
  const int64_t group = n->attrs.GetInt("group", 1);
  std::vector<int64_t> view = {dims[0], group, dims[1] / group}, perm = {0, 2, 1};
  for (size_t d = 2; d < dims.size(); ++d) {
    view.push_back(dims[d]);
    perm.push_back(static_cast<int64_t>(d) + 1);
  }
  Attributes pa;
  pa.Set("perm", perm);
  ASSIGN_OR_RETURN(Value* split, l.Op(OpKind::kReshape, "split", {x, l.Ints("view", view)}));
  ASSIGN_OR_RETURN(Value* swapped, l.Op(OpKind::kTranspose, "transpose", {split}, pa));
  ASSIGN_OR_RETURN(Value* y, l.Op(OpKind::kReshape, "merge", {swapped, l.Ints("shape", std::vector<int64_t>(dims.begin(), dims.end()))}));
  return l.Finish(y);
}

StatusOr<bool> UnfuseComposite(Graph& g, Node* n) {
  switch (n->op()) {
    case OpKind::kChannelShuffle: return LowerChannelShuffle(g, n);
    case OpKind::kGelu: return LowerGelu(g, n);
    case OpKind::kRmsNormalization: return LowerRmsNormalization(g, n);
    case OpKind::kGroupNormalization: return LowerGroupNormalization(g, n);
    case OpKind::kAttention: return LowerAttention(g, n);
    default:
      return false;
  }
}

}  // namespace edgec::passes
