// Shape inference for the epilogue family (see ops.def): the op part is inferred as Conv and
// MatMul are (infer_conv.h, infer_matmul.h); then the epilogue inputs and attributes are
// checked against the output.
#include "ir/epilogue.h"
#include "ir/infer.h"
#include "ir/infer_conv.h"
#include "ir/infer_matmul.h"

namespace edgec::infer {

namespace {

bool Known(int64_t d) { return d != kUnknownDim; }

const std::initializer_list<DType> kEpilogueTypes = {DType::kF32, DType::kF64, DType::kF16,
                                                     DType::kBF16};

// Input 0 is a float dtype and every other present input has the same dtype.
Status ExpectSameFloatTypes(const InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectDType(0, kEpilogueTypes));
  const DType dt = ctx.input_type(0).dtype;
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && ctx.input_type(i).dtype != dt) {
      return ctx.Error("input {} has dtype {}, expected input 0's dtype {}", i,
                       DTypeName(ctx.input_type(i).dtype), DTypeName(dt));
    }
  }
  return Status::Ok();
}

Status CheckActivation(const InferContext& ctx) {
  auto spec = ReadActivation(ctx.attrs());
  if (!spec.ok()) return ctx.Error("{}", spec.status().message());
  return Status::Ok();
}

// Input i (when present and of known rank) has exactly the output's shape.
Status CheckSameShape(const InferContext& ctx, int i, const TensorType& out, std::string_view what) {
  if (!ctx.has_input(i) || !ctx.input_type(i).rank_known || !out.rank_known) return Status::Ok();
  const TensorType& t = ctx.input_type(i);
  bool ok = t.rank() == out.rank();
  for (int d = 0; ok && d < t.rank(); ++d) {
    ok = !Known(t.dims[d]) || !Known(out.dims[d]) || t.dims[d] == out.dims[d];
  }
  if (!ok) {
    return ctx.Error("input {} ({}) is {}, expected the output's shape {}", i, what, t.ToString(),
                     out.ToString());
  }
  return Status::Ok();
}

// Input i (when present) broadcasts to the output without enlarging it (numpy rules).
Status CheckBroadcastsTo(const InferContext& ctx, int i, const TensorType& out, std::string_view what) {
  if (!ctx.has_input(i) || !ctx.input_type(i).rank_known || !out.rank_known) return Status::Ok();
  const TensorType& t = ctx.input_type(i);
  bool ok = t.rank() <= out.rank();
  for (int d = 0; ok && d < t.rank(); ++d) {
    const int64_t from = t.dims[t.rank() - 1 - d], to = out.dims[out.rank() - 1 - d];
    ok = from == 1 || !Known(from) || !Known(to) || from == to;
  }
  if (!ok) {
    return ctx.Error("input {} ({}) {} does not broadcast to the output {}", i, what, t.ToString(),
                     out.ToString());
  }
  return Status::Ok();
}

// The type with its last two dims swapped (unchanged when the rank is unknown).
TensorType SwapLastTwo(TensorType t) {
  if (t.rank_known) {
    std::swap(t.dims[t.rank() - 2], t.dims[t.rank() - 1]);
    if (t.dim_names.size() == t.dims.size()) {
      std::swap(t.dim_names[t.rank() - 2], t.dim_names[t.rank() - 1]);
    }
  }
  return t;
}

}  // namespace

// FusedConv(X, W, B?, Residual?): Conv's output; Residual has exactly that shape.
Status FusedConv(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 4));
  RETURN_IF_ERROR(ExpectSameFloatTypes(ctx));
  RETURN_IF_ERROR(CheckActivation(ctx));
  RETURN_IF_ERROR(InferConvLike(ctx, ConvInputs{0, 1, 2}, ctx.input_type(0).dtype));
  return CheckSameShape(ctx, 3, ctx.output(0), "Residual");
}

// FusedMatMul(A, B, Bias?, Residual?): the numpy matmul of A and B, each transposed in its
// last two dims when transA/transB is set; Bias and Residual broadcast to it.
Status FusedMatMul(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 4));
  RETURN_IF_ERROR(ExpectSameFloatTypes(ctx));
  RETURN_IF_ERROR(CheckActivation(ctx));
  const bool trans[2] = {ctx.attrs().GetInt("transA", 0) != 0, ctx.attrs().GetInt("transB", 0) != 0};
  std::vector<TensorType> operands(2);
  for (int i = 0; i < 2; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (trans[i] && t.rank_known && t.rank() < 2) {
      return ctx.Error("input {} {} has {} dims; {} needs at least 2", i, t.ToString(), t.rank(),
                       i == 0 ? "transA" : "transB");
    }
    operands[i] = trans[i] ? SwapLastTwo(t) : t;
  }
  // The matmul rule on the transposed operands (its messages then show those shapes).
  InferContext mm(ctx.op(), ctx.attrs(),
                  ctx.label() + (trans[0] || trans[1] ? " (operands after transA/transB)" : ""),
                  {InferInput{&operands[0], nullptr}, InferInput{&operands[1], nullptr}}, 1);
  RETURN_IF_ERROR(InferMatMulLike(mm, 0, 1, ctx.input_type(0).dtype));
  ctx.output(0) = mm.output(0);
  RETURN_IF_ERROR(CheckBroadcastsTo(ctx, 2, ctx.output(0), "Bias"));
  return CheckBroadcastsTo(ctx, 3, ctx.output(0), "Residual");
}

// FusedAdd(A, B): A + B with numpy broadcasting.
Status FusedAdd(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectSameFloatTypes(ctx));
  RETURN_IF_ERROR(CheckActivation(ctx));
  const DType dt = ctx.input_type(0).dtype;
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  if (!a.rank_known || !b.rank_known) {
    ctx.output(0) = UnknownRank(dt);
    return Status::Ok();
  }
  auto dims = BroadcastDims(a.dims, b.dims);
  if (!dims.ok()) return ctx.Error("{}", dims.status().message());
  ctx.output(0) = MakeType(dt, *dims);
  return Status::Ok();
}

}  // namespace edgec::infer
