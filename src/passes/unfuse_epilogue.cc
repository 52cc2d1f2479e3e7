// Lowering of the epilogue family to standard ONNX ops (opset 17):
//   FusedConv   -> Conv [+ Add residual] [+ activation]
//   FusedMatMul -> Gemm when A and B are rank 2, else [Transpose] MatMul [+ Mul alpha]
//                  [+ Add bias]; then [+ Add residual] [+ activation]
//   FusedAdd    -> Add + activation
// Activations in standard ops: Relu, LeakyRelu, Clip (constant bounds), HardSigmoid,
// HardSwish, Sigmoid, Tanh; Silu = x * Sigmoid(x); Gelu = x * (1 + Erf(x / sqrt 2)) * 0.5;
// GeluTanh = x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3))) * 0.5.
#include <cmath>

#include "passes/epilogue_util.h"
#include "passes/pass_util.h"
#include "passes/unfuse.h"

namespace edgec::passes {

namespace {

// Emits the replacement nodes of one fused node, each with its provenance.
class Lowering {
 public:
  Lowering(Graph& g, const Node* fused) : g_(g), fused_(fused) {}

  StatusOr<Value*> Emit(OpKind op, std::string_view suffix, std::vector<Value*> inputs,
                        Attributes attrs = {}) {
    const std::string name = suffix.empty() ? fused_->name() : fused_->name() + "/" + std::string(suffix);
    ASSIGN_OR_RETURN(Node * n, AddInferredNode(g_, op, name, std::move(inputs), std::move(attrs), 1, fused_));
    return n->output(0);
  }

  // A scalar constant of `like`'s dtype.
  Value* Scalar(const Value* like, double v, std::string_view what) {
    Tensor t(like->type.dtype, {});
    StoreFromDouble(t.dtype(), t.raw(), 0, v);
    return g_.AddConstant(g_.FreshName(fused_->name() + "/" + std::string(what)), std::move(t));
  }

  StatusOr<Value*> Activate(const ActivationSpec& a, Value* x) {
    Attributes attrs;
    switch (a.kind) {
      case Activation::kNone: return x;
      case Activation::kRelu: return Emit(OpKind::kRelu, "relu", {x});
      case Activation::kSigmoid: return Emit(OpKind::kSigmoid, "sigmoid", {x});
      case Activation::kTanh: return Emit(OpKind::kTanh, "tanh", {x});
      case Activation::kHardSwish: return Emit(OpKind::kHardSwish, "hardswish", {x});
      case Activation::kLeakyRelu:
        attrs.Set("alpha", a.alpha);
        return Emit(OpKind::kLeakyRelu, "leakyrelu", {x}, attrs);
      case Activation::kHardSigmoid:
        attrs.Set("alpha", a.alpha);
        attrs.Set("beta", a.beta);
        return Emit(OpKind::kHardSigmoid, "hardsigmoid", {x}, attrs);
      case Activation::kClip: {
        Value* lo = std::isinf(a.alpha) && a.alpha < 0 ? nullptr : Scalar(x, a.alpha, "min");
        Value* hi = std::isinf(a.beta) && a.beta > 0 ? nullptr : Scalar(x, a.beta, "max");
        std::vector<Value*> in = {x, lo, hi};
        while (!in.back()) in.pop_back();
        return Emit(OpKind::kClip, "clip", in);
      }
      case Activation::kSilu: {
        ASSIGN_OR_RETURN(Value * s, Emit(OpKind::kSigmoid, "sigmoid", {x}));
        return Emit(OpKind::kMul, "silu", {x, s});
      }
      case Activation::kGelu: {
        ASSIGN_OR_RETURN(Value * t, Emit(OpKind::kDiv, "gelu/div", {x, Scalar(x, std::sqrt(2.0), "sqrt2")}));
        ASSIGN_OR_RETURN(Value * e, Emit(OpKind::kErf, "gelu/erf", {t}));
        return HalfXTimesOnePlus(x, e);
      }
      case Activation::kGeluTanh: {
        ASSIGN_OR_RETURN(Value * x2, Emit(OpKind::kMul, "gelu/square", {x, x}));
        ASSIGN_OR_RETURN(Value * x3, Emit(OpKind::kMul, "gelu/cube", {x2, x}));
        ASSIGN_OR_RETURN(Value * c, Emit(OpKind::kMul, "gelu/cube_scaled", {x3, Scalar(x, 0.044715, "k")}));
        ASSIGN_OR_RETURN(Value * s, Emit(OpKind::kAdd, "gelu/inner", {x, c}));
        const double k = std::sqrt(2.0 / 3.14159265358979323846);
        ASSIGN_OR_RETURN(Value * u, Emit(OpKind::kMul, "gelu/scaled", {s, Scalar(x, k, "sqrt_2_pi")}));
        ASSIGN_OR_RETURN(Value * t, Emit(OpKind::kTanh, "gelu/tanh", {u}));
        return HalfXTimesOnePlus(x, t);
      }
    }
    return Internal("unknown activation");
  }

 private:
  // x * (1 + e) * 0.5
  StatusOr<Value*> HalfXTimesOnePlus(Value* x, Value* e) {
    ASSIGN_OR_RETURN(Value * a, Emit(OpKind::kAdd, "gelu/add", {e, Scalar(x, 1.0, "one")}));
    ASSIGN_OR_RETURN(Value * m, Emit(OpKind::kMul, "gelu/mul", {x, a}));
    return Emit(OpKind::kMul, "gelu/half", {m, Scalar(x, 0.5, "half")});
  }

  Graph& g_;
  const Node* fused_;
};

bool IsRank(const Value* v, int rank) { return v->type.rank_known && v->type.rank() == rank; }

// Transpose of the last two dims.
StatusOr<Value*> SwapLastTwo(Lowering& l, Value* v, std::string_view what) {
  if (!v->type.rank_known) {
    return Unimplemented("{}: cannot lower a transpose of {} (rank unknown)", what, v->name());
  }
  std::vector<int64_t> perm(v->type.rank());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[perm.size() - 2], perm[perm.size() - 1]);
  Attributes a;
  a.Set("perm", perm);
  return l.Emit(OpKind::kTranspose, what, {v}, a);
}

StatusOr<Value*> LowerMatMul(Lowering& l, const Node* n) {
  Value* a = n->input(0);
  Value* b = n->input(1);
  Value* bias = n->input(2);
  const bool trans_a = n->attrs.GetInt("transA", 0) != 0, trans_b = n->attrs.GetInt("transB", 0) != 0;
  const float alpha = n->attrs.GetFloat("alpha", 1.0f);
  if (IsRank(a, 2) && IsRank(b, 2)) {
    Attributes attrs;
    if (trans_a) attrs.Set("transA", int64_t{1});
    if (trans_b) attrs.Set("transB", int64_t{1});
    if (alpha != 1.0f) attrs.Set("alpha", alpha);
    std::vector<Value*> in = {a, b};
    if (bias) in.push_back(bias);
    return l.Emit(OpKind::kGemm, "", in, attrs);
  }
  if (trans_a) {
    ASSIGN_OR_RETURN(a, SwapLastTwo(l, a, "transpose_a"));
  }
  if (trans_b) {
    ASSIGN_OR_RETURN(b, SwapLastTwo(l, b, "transpose_b"));
  }
  ASSIGN_OR_RETURN(Value * y, l.Emit(OpKind::kMatMul, "", {a, b}));
  if (alpha != 1.0f) {
    ASSIGN_OR_RETURN(y, l.Emit(OpKind::kMul, "alpha", {y, l.Scalar(y, alpha, "alpha")}));
  }
  if (bias) {
    ASSIGN_OR_RETURN(y, l.Emit(OpKind::kAdd, "bias", {y, bias}));
  }
  return y;
}

}  // namespace

StatusOr<bool> UnfuseEpilogue(Graph& g, Node* n) {
  if (!IsEpilogueOp(n->op())) return false;
  auto act = ReadActivation(n->attrs);
  if (!act.ok()) return act.status().WithContext(n->Label());
  Lowering l(g, n);
  Value* y = nullptr;
  if (n->op() == OpKind::kFusedConv) {
    Attributes conv = n->attrs;
    WriteActivation({}, conv);
    std::vector<Value*> in = {n->input(0), n->input(1)};
    if (n->input(2)) in.push_back(n->input(2));
    ASSIGN_OR_RETURN(y, l.Emit(OpKind::kConv, "", in, conv));
  } else if (n->op() == OpKind::kFusedMatMul) {
    ASSIGN_OR_RETURN(y, LowerMatMul(l, n));
  } else {
    ASSIGN_OR_RETURN(y, l.Emit(OpKind::kAdd, "", {n->input(0), n->input(1)}));
  }
  if (n->op() != OpKind::kFusedAdd && n->input(3)) {
    ASSIGN_OR_RETURN(y, l.Emit(OpKind::kAdd, "residual", {y, n->input(3)}));
  }
  ASSIGN_OR_RETURN(y, l.Activate(*act, y));
  if (!ReplaceValue(g, n->output(0), y)) {
    return Internal("{}: cannot replace its output by the lowered {}", n->Label(), y->name());
  }
  return true;
}

}  // namespace edgec::passes
