// Shape inference for the matmul family (see ops.def).
#include "ir/infer_matmul.h"

#include "ir/einsum_equation.h"

namespace edgec::infer {

namespace {

bool Known(int64_t d) { return d != kUnknownDim; }

const std::initializer_list<DType> kMatMulTypes = {DType::kF32,  DType::kF64, DType::kF16,
                                                   DType::kBF16, DType::kI32, DType::kI64,
                                                   DType::kU32,  DType::kU64};

Status ExpectSameDType(const InferContext& ctx, int i, int ref) {
  if (ctx.has_input(i) && ctx.input_type(i).dtype != ctx.input_type(ref).dtype) {
    return ctx.Error("input {} has dtype {}, expected input {}'s dtype {}", i,
                     DTypeName(ctx.input_type(i).dtype), ref, DTypeName(ctx.input_type(ref).dtype));
  }
  return Status::Ok();
}

}  // namespace

Status InferMatMulLike(InferContext& ctx, int a_index, int b_index, DType out_dtype) {
  RETURN_IF_ERROR(ctx.ExpectRequired(a_index));
  RETURN_IF_ERROR(ctx.ExpectRequired(b_index));
  const TensorType& ta = ctx.input_type(a_index);
  const TensorType& tb = ctx.input_type(b_index);
  if ((ta.rank_known && ta.rank() == 0) || (tb.rank_known && tb.rank() == 0)) {
    return ctx.Error("matmul operands need at least 1 dim, got input {} {} and input {} {}",
                     a_index, ta.ToString(), b_index, tb.ToString());
  }
  if (!ta.rank_known || !tb.rank_known) {
    ctx.output(0) = UnknownRank(out_dtype);
    return Status::Ok();
  }
  Dims a = ta.dims, b = tb.dims;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  const int64_t k_a = a.back(), k_b = b[b.size() - 2];
  if (Known(k_a) && Known(k_b) && k_a != k_b) {
    return ctx.Error("inner dims do not match: input {} {} has K = {} but input {} {} has K = {}",
                     a_index, ta.ToString(), k_a, b_index, tb.ToString(), k_b);
  }
  auto batch = BroadcastDims(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
  if (!batch.ok()) {
    return ctx.Error("batch dims of input {} {} and input {} {} do not broadcast", a_index,
                     ta.ToString(), b_index, tb.ToString());
  }
  Dims out = *batch;
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  ctx.output(0) = MakeType(out_dtype, std::move(out));
  return Status::Ok();
}

// Gemm: Y (M, N) = alpha * A' B' + beta * C, C broadcast unidirectionally to (M, N).
Status Gemm(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kMatMulTypes));
  RETURN_IF_ERROR(ExpectSameDType(ctx, 1, 0));
  RETURN_IF_ERROR(ExpectSameDType(ctx, 2, 0));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 2));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 2));
  const DType dt = ctx.input_type(0).dtype;
  const TensorType& ta = ctx.input_type(0);
  const TensorType& tb = ctx.input_type(1);
  const bool trans_a = ctx.attrs().GetInt("transA", 0) != 0;
  const bool trans_b = ctx.attrs().GetInt("transB", 0) != 0;
  const Dims a = ta.rank_known ? ta.dims : Dims{kUnknownDim, kUnknownDim};
  const Dims b = tb.rank_known ? tb.dims : Dims{kUnknownDim, kUnknownDim};
  const int64_t m = trans_a ? a[1] : a[0], k_a = trans_a ? a[0] : a[1];
  const int64_t k_b = trans_b ? b[1] : b[0], n = trans_b ? b[0] : b[1];
  if (Known(k_a) && Known(k_b) && k_a != k_b) {
    return ctx.Error(
        "inner dims do not match: A {} (transA={}) has K = {} but B {} (transB={}) "
        "has K = {}",
        ta.ToString(), trans_a, k_a, tb.ToString(), trans_b, k_b);
  }
  if (ctx.has_input(2) && ctx.input_type(2).rank_known) {
    const TensorType& tc = ctx.input_type(2);
    const Dims target = {m, n};
    bool ok = tc.rank() <= 2;
    for (int i = 0; ok && i < tc.rank(); ++i) {
      const int64_t c = tc.dims[tc.rank() - 1 - i], t = target[1 - i];
      ok = !Known(c) || !Known(t) || c == 1 || c == t;
    }
    if (!ok) {
      return ctx.Error("input 2 (C) {} does not broadcast to the output (M, N) = {}", tc.ToString(),
                       DimsToString(target));
    }
  }
  ctx.output(0) = MakeType(dt, {m, n});
  return Status::Ok();
}

Status MatMul(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kMatMulTypes));
  RETURN_IF_ERROR(ExpectSameDType(ctx, 1, 0));
  return InferMatMulLike(ctx, 0, 1, ctx.input_type(0).dtype);
}

Status Einsum(InferContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.Error("expected at least 1 input, got 0");
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    RETURN_IF_ERROR(ctx.ExpectRequired(i));
    RETURN_IF_ERROR(ExpectSameDType(ctx, i, 0));
  }
  RETURN_IF_ERROR(ctx.ExpectDType(
      0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kI16, DType::kI32,
          DType::kI64, DType::kU8, DType::kU16, DType::kU32, DType::kU64}));
  if (!ctx.attrs().Has("equation")) return ctx.Error("attribute equation is required");
  const DType dt = ctx.input_type(0).dtype;
  std::vector<Dims> operands;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input_type(i).rank_known) {
      ctx.output(0) = UnknownRank(dt);
      return Status::Ok();
    }
    operands.push_back(ctx.input_type(i).dims);
  }
  auto binding = BindEinsum(ctx.attrs().GetString("equation"), operands);
  if (!binding.ok()) return binding.status().WithContext(ctx.label());
  ctx.output(0) = MakeType(dt, binding->OutputDims());
  return Status::Ok();
}

// Det(X): X [..., M, M] float; the determinant of each square matrix, Y [...].
Status Det(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(x.dtype);
    return Status::Ok();
  }
  if (x.rank() < 2) return ctx.Error("input is {}, expected [..., M, M]", x.ToString());
  const int64_t m = x.dims[x.rank() - 2], n = x.dims[x.rank() - 1];
  if (m >= 0 && n >= 0 && m != n) return ctx.Error("input is {}: the matrices are not square", x.ToString());
  ctx.output(0) = MakeType(x.dtype, Dims(x.dims.begin(), x.dims.end() - 2));
  return Status::Ok();
}

}  // namespace edgec::infer
