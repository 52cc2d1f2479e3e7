// Shape inference for the training family (see ops.def): the optimizers of the
// ai.onnx.preview.training domain, version 1. Each updates n tensors at once:
//   Adagrad (R, T, X1..Xn, G1..Gn, H1..Hn)        -> X1_new..Xn_new, H1_new..Hn_new
//   Momentum(R, T, X1..Xn, G1..Gn, V1..Vn)        -> X1_new..Xn_new, V1_new..Vn_new
//   Adam    (R, T, X1..Xn, G1..Gn, V1..Vn, H1..Hn) -> X_new.., V_new.., H_new..
// R is the learning rate (a float scalar), T the update count (an int64 scalar); every
// state tensor has its X's shape and dtype (float or double). Formulas: kernels/ref/training.cc.
#include "ir/infer.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

// States per updated tensor: X, G and one (Adagrad: H; Momentum: V) or two (Adam: V, H).
int StatesOf(OpKind op) { return op == OpKind::kAdam ? 4 : 3; }

Status Optimizer(InferContext& ctx) {
  const int per = StatesOf(ctx.op());
  const int data = ctx.num_inputs() - 2;
  if (data < per || data % per != 0) {
    return ctx.Error("has {} inputs; expected R, T and {} tensors per updated X", ctx.num_inputs(), per);
  }
  const int n = data / per;
  if (ctx.num_outputs() != (per - 1) * n) {
    return ctx.Error("has {} outputs for {} updated tensors; expected {}", ctx.num_outputs(), n, (per - 1) * n);
  }
  for (int i = 0; i < ctx.num_inputs(); ++i) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI64}));
  for (int i = 0; i < 2; ++i) {
    const TensorType& s = ctx.input_type(i);
    bool one = s.rank_known;
    for (int64_t d : s.dims) one = one && d == 1;
    if (s.rank_known && !one && s.IsStatic()) {
      return ctx.Error("input {} ({}) is {}; expected a scalar", i, i == 0 ? "R" : "T", s.ToString());
    }
  }
  if (ctx.op() == OpKind::kMomentum) {
    for (const char* a : {"alpha", "beta", "norm_coefficient", "mode"}) {
      if (!ctx.attrs().Has(a)) return ctx.Error("attribute '{}' is required", a);
    }
    const std::string mode = ctx.attrs().GetString("mode");
    if (mode != "standard" && mode != "nesterov") return ctx.Error("mode '{}' is not standard or nesterov", mode);
  }
  for (int k = 0; k < n; ++k) {
    const TensorType& x = ctx.input_type(2 + k);
    RETURN_IF_ERROR(ctx.ExpectDType(2 + k, {DType::kF32, DType::kF64}));
    for (int s = 1; s < per; ++s) {
      const int i = 2 + s * n + k;
      const TensorType& t = ctx.input_type(i);
      if (t.dtype != x.dtype) return ctx.Error("input {} is {}; expected {} like X{}", i, t.ToString(), DTypeName(x.dtype), k + 1);
      if (x.rank_known && t.rank_known) {
        bool same = t.rank() == x.rank();
        for (int d = 0; same && d < x.rank(); ++d) same = x.dims[d] < 0 || t.dims[d] < 0 || x.dims[d] == t.dims[d];
        if (!same) return ctx.Error("input {} is {}; expected X{}'s shape {}", i, t.ToString(), k + 1, x.ToString());
      }
    }
    for (int s = 0; s < per - 1; ++s) ctx.output(s * n + k) = x;
  }
  return Status::Ok();
}

}  // namespace

// The three share one rule (StatesOf tells them apart).
EDGEC_SHARED_RULE(InferContext, Optimizer, Adagrad, Momentum, Adam)

}  // namespace edgec::infer
