// Shape inference for the control family (see ops.def): If, Loop, Scan, SequenceMap. The output types come
// from the subgraphs' output types (inferred when the subgraph was imported), merged with
// what the node's inputs say; node inputs follow ir/control_flow.h (captures last).
//   If(cond, captures...)            -> the branch outputs; with cond known, the taken branch's
//   Loop(M?, cond?, v..., captures...) -> v_final... (body outputs 1..N), scan outputs [?, ...]
//   Scan(state..., scan_in..., captures...) -> state_final..., scan outputs with the sequence
//                                       length inserted at scan_output_axes
#include "ir/control_flow.h"
#include "ir/infer.h"

namespace edgec::infer {

namespace {

// The type both `a` and `b` satisfy: equal dims stay, others become unknown.
// Sequences and optionals: `b`'s kind (a loop-carried optional becomes what the body gives).
TensorType Merge(const TensorType& a, const TensorType& b) {
  if (!a.rank_known || !b.rank_known || a.rank() != b.rank()) {
    TensorType t = UnknownRank(a.dtype);
    t.kind = b.kind;
    t.optional = b.optional;
    return t;
  }
  TensorType t = a;
  t.kind = b.kind;
  t.optional = b.optional;
  for (int i = 0; i < t.rank(); ++i) {
    if (a.dims[i] != b.dims[i]) t.dims[i] = kUnknownDim;
  }
  t.dim_names.clear();
  return t;
}

StatusOr<const Graph*> Body(InferContext& ctx, const char* attr) {
  const Graph* g = ctx.attrs().GetGraph(attr);
  if (!g) return ctx.Error("attribute '{}' (a graph) is missing", attr);
  return g;
}

// Checks the subgraph's input count against the node's (formal inputs + captures).
Status ExpectBodyInputs(InferContext& ctx, const Graph& body, const char* attr, int formal) {
  const int want = formal + NumCaptures(ctx.attrs());
  if (static_cast<int>(body.inputs().size()) != want) {
    return ctx.Error("'{}' has {} inputs, expected {} ({} of the op and {} from the enclosing graph)",
                     attr, body.inputs().size(), want, formal, NumCaptures(ctx.attrs()));
  }
  return Status::Ok();
}

}  // namespace

Status If(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  ASSIGN_OR_RETURN(const Graph* then_g, Body(ctx, "then_branch"));
  ASSIGN_OR_RETURN(const Graph* else_g, Body(ctx, "else_branch"));
  RETURN_IF_ERROR(ExpectBodyInputs(ctx, *then_g, "then_branch", 0));
  RETURN_IF_ERROR(ExpectBodyInputs(ctx, *else_g, "else_branch", 0));
  if (then_g->outputs().size() != else_g->outputs().size()) {
    return ctx.Error("then_branch has {} outputs, else_branch {}", then_g->outputs().size(),
                     else_g->outputs().size());
  }
  if (ctx.num_outputs() > static_cast<int>(then_g->outputs().size())) {
    return ctx.Error("{} outputs, the branches have {}", ctx.num_outputs(), then_g->outputs().size());
  }
  const Tensor* cond = ctx.input_value(0);
  if (cond && cond->numel() != 1) return ctx.Error("cond has {} elements, expected 1", cond->numel());
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const TensorType& a = then_g->outputs()[i]->type;
    const TensorType& b = else_g->outputs()[i]->type;
    if (a.dtype != b.dtype) {
      return ctx.Error("output {}: then_branch gives {}, else_branch {}", i, DTypeName(a.dtype), DTypeName(b.dtype));
    }
    if (cond) {
      ctx.output(i) = cond->ToDoubleVector()[0] != 0 ? a : b;
    } else {
      ctx.output(i) = Merge(a, b);
    }
  }
  return Status::Ok();
}

Status Loop(InferContext& ctx) {
  ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  const int carried = ctx.num_inputs() - 2 - NumCaptures(ctx.attrs());
  if (carried < 0) return ctx.Error("expected M and cond inputs (either may be empty)");
  RETURN_IF_ERROR(ExpectBodyInputs(ctx, *body, "body", 2 + carried));
  const int body_outs = static_cast<int>(body->outputs().size());
  if (body_outs < 1 + carried) {
    return ctx.Error("body has {} outputs, expected at least {} (cond and {} loop-carried)", body_outs,
                     1 + carried, carried);
  }
  if (ctx.num_outputs() > body_outs - 1) return ctx.Error("{} outputs, the body gives {}", ctx.num_outputs(), body_outs - 1);
  if (ctx.has_input(0) && ctx.input_type(0).dtype != DType::kI64) return ctx.Error("M must be int64");
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const TensorType& b = body->outputs()[1 + i]->type;
    if (i < carried) {
      if (!ctx.has_input(2 + i)) return ctx.Error("loop-carried input {} is missing", 2 + i);
      const TensorType& init = ctx.input_type(2 + i);
      if (init.dtype != b.dtype) {
        return ctx.Error("loop-carried value {}: initial {} but the body gives {}", i, DTypeName(init.dtype),
                         DTypeName(b.dtype));
      }
      ctx.output(i) = Merge(init, b);
    } else if (!b.rank_known) {
      ctx.output(i) = UnknownRank(b.dtype);
    } else {
      // Scan outputs stack one body output per iteration: the trip count is known after running.
      TensorType t = MakeType(b.dtype, b.dims);
      t.dims.insert(t.dims.begin(), kUnknownDim);
      ctx.output(i) = t;
    }
  }
  return Status::Ok();
}

Status Scan(InferContext& ctx) {
  ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  const int formal = ctx.num_inputs() - NumCaptures(ctx.attrs());
  const int m = static_cast<int>(ctx.attrs().GetInt("num_scan_inputs", 0));
  if (m < 1 || m > formal) return ctx.Error("num_scan_inputs {} must be in [1, {}]", m, formal);
  const int n = formal - m;
  RETURN_IF_ERROR(ExpectBodyInputs(ctx, *body, "body", formal));
  const int k = static_cast<int>(body->outputs().size()) - n;
  if (k < 0 || ctx.num_outputs() > n + k) return ctx.Error("body has {} outputs for {} states", body->outputs().size(), n);
  const auto in_axes = ctx.attrs().GetInts("scan_input_axes", std::vector<int64_t>(m, 0));
  const auto out_axes = ctx.attrs().GetInts("scan_output_axes", std::vector<int64_t>(k, 0));
  if (static_cast<int>(in_axes.size()) != m || static_cast<int>(out_axes.size()) != k) {
    return ctx.Error("scan_input_axes has {} entries for {} scan inputs, scan_output_axes {} for {} outputs",
                     in_axes.size(), m, out_axes.size(), k);
  }
  int64_t seq = kUnknownDim;
  for (int j = 0; j < m; ++j) {
    RETURN_IF_ERROR(ctx.ExpectRequired(n + j));
    const TensorType& t = ctx.input_type(n + j);
    if (!t.rank_known) continue;
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(in_axes[j], t.rank(), fmt::format("scan_input_axes[{}]", j)));
    const int64_t len = t.dims[axis];
    if (len >= 0 && seq >= 0 && len != seq) {
      return ctx.Error("scan input {} has {} steps along axis {}, scan input 0 has {}", j, len, axis, seq);
    }
    if (len >= 0) seq = len;
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const TensorType& b = body->outputs()[i]->type;
    if (i < n) {
      ctx.output(i) = ctx.has_input(i) ? Merge(ctx.input_type(i), b) : b;
    } else if (!b.rank_known) {
      ctx.output(i) = UnknownRank(b.dtype);
    } else {
      ASSIGN_OR_RETURN(int axis, NormalizeAxis(out_axes[i - n], b.rank() + 1, fmt::format("scan_output_axes[{}]", i - n)));
      TensorType t = MakeType(b.dtype, b.dims);
      t.dims.insert(t.dims.begin() + axis, seq);
      ctx.output(i) = t;
    }
  }
  return Status::Ok();
}


// SequenceMap(seq, more..., captures...) -> one sequence per body output.
Status SequenceMap(InferContext& ctx) {
  ASSIGN_OR_RETURN(const Graph* body, Body(ctx, "body"));
  const int formal = ctx.num_inputs() - NumCaptures(ctx.attrs());
  if (formal < 1) return ctx.Error("expected at least 1 input (a sequence)");
  RETURN_IF_ERROR(ExpectBodyInputs(ctx, *body, "body", formal));
  RETURN_IF_ERROR(ctx.ExpectRequired(0));
  if (ctx.input_type(0).kind != ValueKind::kSequence || ctx.input_type(0).optional) {
    return ctx.Error("input 0 is {}, expected a sequence", ctx.input_type(0).ToString());
  }
  if (ctx.num_outputs() != static_cast<int>(body->outputs().size())) {
    return ctx.Error("{} outputs, the body gives {}", ctx.num_outputs(), body->outputs().size());
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    TensorType t = body->outputs()[i]->type;
    if (!t.IsDenseTensor()) return ctx.Error("body output {} is {}, expected a tensor", i, t.ToString());
    t.kind = ValueKind::kSequence;
    t.dim_names.clear();
    ctx.output(i) = t;
  }
  return Status::Ok();
}

}  // namespace edgec::infer
