#include "ir/infer.h"

#include <algorithm>
#include <array>

#include "ir/graph.h"

namespace edgec {

namespace {
constexpr std::array<InferFn, kNumOpKinds> kInferFns = {
#define EDGEC_OP(name, family, traits) &infer::name,
#include "ir/ops.def"
};
}  // namespace

InferFn GetInferFn(OpKind op) { return kInferFns[static_cast<int>(op)]; }

Status InferContext::ExpectInputs(int min, int max) const {
  int n = num_inputs();
  while (n > 0 && !has_input(n - 1)) --n;  // trailing absent optionals do not count
  if (n < min || n > max) {
    if (min == max) return Error("expected {} inputs, got {}", min, n);
    return Error("expected {} to {} inputs, got {}", min, max, n);
  }
  for (int i = 0; i < min; ++i) RETURN_IF_ERROR(ExpectRequired(i));
  return Status::Ok();
}

Status InferContext::ExpectRequired(int i) const {
  if (!has_input(i)) return Error("input {} is required but absent", i);
  return Status::Ok();
}

Status InferContext::ExpectRank(int i, int rank) const {
  RETURN_IF_ERROR(ExpectRequired(i));
  const TensorType& t = input_type(i);
  if (t.rank_known && t.rank() != rank) {
    return Error("input {} has {} dims {}, expected {}", i, t.rank(), t.ToString(), rank);
  }
  return Status::Ok();
}

Status InferContext::ExpectDType(int i, std::initializer_list<DType> allowed) const {
  RETURN_IF_ERROR(ExpectRequired(i));
  DType d = input_type(i).dtype;
  for (DType a : allowed) {
    if (a == d) return Status::Ok();
  }
  std::string names;
  for (DType a : allowed) names += (names.empty() ? "" : ", ") + std::string(DTypeName(a));
  return Unsupported("input {} has dtype {}, expected one of {}", i, DTypeName(d), names);
}

StatusOr<Dims> BroadcastDims(const Dims& a, const Dims& b) {
  size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      out[i] = da < 0 ? db : da;  // the known one must be the result (or it is an error later)
    } else if (da == db) {
      out[i] = da;
    } else {
      return InvalidArgument("shapes {} and {} do not broadcast (dim {}: {} vs {})",
                             DimsToString(a), DimsToString(b), i, da, db);
    }
  }
  return out;
}

StatusOr<int> NormalizeAxis(int64_t axis, int rank, std::string_view what) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgument("{} {} out of range for rank {}", what, axis, rank);
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

TensorType MakeType(DType dtype, Dims dims) {
  TensorType t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  return t;
}

TensorType UnknownRank(DType dtype) {
  TensorType t;
  t.dtype = dtype;
  t.rank_known = false;
  return t;
}

TensorType TypeOf(const Tensor& t) {
  if (t.is_none()) {
    TensorType r = UnknownRank(t.dtype());
    r.kind = t.kind();
    r.optional = true;
    return r;
  }
  if (!t.is_sequence()) return MakeType(t.dtype(), t.dims());
  TensorType r = UnknownRank(t.dtype());
  for (size_t i = 0; i < t.items().size(); ++i) {
    const Tensor& x = t.items()[i];
    if (i == 0) {
      r = MakeType(x.dtype(), x.dims());
    } else if (r.rank_known && x.rank() == r.rank()) {
      for (int d = 0; d < x.rank(); ++d) {
        if (r.dims[d] != x.dim(d)) r.dims[d] = kUnknownDim;
      }
    } else {
      r = UnknownRank(t.dtype());
    }
  }
  r.kind = ValueKind::kSequence;
  return r;
}

Status ExpectTensorInputs(const InferContext& ctx) {
  const std::string_view family = OpFamily(ctx.op());
  if (family == "sequence" || family == "control" || ctx.op() == OpKind::kIdentity) return Status::Ok();
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && !ctx.input_type(i).IsDenseTensor()) {
      return ctx.Error("input {} is {}; {} takes tensors only", i, ctx.input_type(i).ToString(), OpName(ctx.op()));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<TensorType>> InferNodeTypes(const Node& node) {
  std::vector<InferInput> ins;
  for (Value* v : node.inputs()) {
    InferInput in;
    if (v) {
      in.type = &v->type;
      if (v->is_constant()) in.value = &v->constant();
    }
    ins.push_back(in);
  }
  InferContext ctx(node.op(), node.attrs, node.Label(), std::move(ins), node.num_outputs());
  RETURN_IF_ERROR(ExpectTensorInputs(ctx));
  RETURN_IF_ERROR(GetInferFn(node.op())(ctx));
  // A static output whose bytes pass int64 (a Reshape or Expand to dims no device holds) is
  // refused here, by name, so that no pass's cost or layout arithmetic overflows on it
  // (fuzz_onnx_import; tests/fuzz/make_regressions.py density_past_int64.onnx).
  for (size_t i = 0; i < ctx.outputs().size(); ++i) {
    const TensorType& t = ctx.outputs()[i];
    if (!t.IsStatic()) continue;
    auto bytes = CheckedNumElements(t.dims, std::max<size_t>(DTypeSize(t.dtype), 1));
    if (bytes.ok()) continue;
    const Value* out = static_cast<int>(i) < node.num_outputs() ? node.output(static_cast<int>(i)) : nullptr;
    return ctx.Error("output {} '{}' {}: {}", i, out ? out->name() : "", t.ToString(), bytes.status().message());
  }
  return std::move(ctx.outputs());
}

Status InferShapes(Graph& g) {
  for (Node* n : g.nodes()) {
    ASSIGN_OR_RETURN(auto types, InferNodeTypes(*n));
    for (int i = 0; i < n->num_outputs(); ++i) {
      TensorType t = std::move(types[i]);
      // Keep symbolic names a model gave for dims that stay unknown.
      const TensorType& old = n->output(i)->type;
      if (t.rank_known && old.rank_known && old.rank() == t.rank()) t.dim_names = old.dim_names;
      n->output(i)->type = std::move(t);
    }
  }
  return Status::Ok();
}

}  // namespace edgec

namespace edgec::infer {

Status ExpectBroadcastsTo(const InferContext& ctx, int i, const char* name, const Dims& target) {
  const TensorType& t = ctx.input_type(i);
  if (!t.rank_known) return Status::Ok();
  bool ok = t.rank() <= static_cast<int>(target.size());
  for (int d = 0; ok && d < t.rank(); ++d) {
    const int64_t have = t.dims[t.rank() - 1 - d], want = target[target.size() - 1 - d];
    ok = have == kUnknownDim || want == kUnknownDim || have == 1 || have == want;
  }
  if (!ok) {
    return ctx.Error("input {} ({}) {} does not broadcast to {}", i, name, t.ToString(),
                     DimsToString(target));
  }
  return Status::Ok();
}

}  // namespace edgec::infer
