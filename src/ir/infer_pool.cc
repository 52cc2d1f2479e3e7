// Shape inference for the pool family (see ops.def).
#include "ir/conv_geometry.h"
#include "ir/infer.h"

namespace edgec::infer {

namespace {

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16,
                                                  DType::kBF16};

// X (N, C, D1, ...) with 1 to 3 spatial dims, or unknown rank (returns -1).
StatusOr<int> PoolRank(const InferContext& ctx, int max_spatial) {
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) return -1;
  if (x.rank() < 3) {
    return ctx.Error("input 0 (X) has {} dims {}, expected at least 3 (N, C, D1, ...)", x.rank(),
                     x.ToString());
  }
  if (x.rank() - 2 > max_spatial) {
    return ctx.Unsupported("input 0 (X) {} has {} spatial dims; at most {} are supported",
                           x.ToString(), x.rank() - 2, max_spatial);
  }
  return x.rank();
}

Status InferWindowPool(InferContext& ctx, bool is_max) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  if (is_max) {
    RETURN_IF_ERROR(ctx.ExpectDType(
        0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8}));
    const int64_t order = ctx.attrs().GetInt("storage_order", 0);
    if (order != 0 && order != 1) {
      return ctx.Error("attribute storage_order is {}, expected 0 or 1", order);
    }
  } else {
    RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
    const int64_t include = ctx.attrs().GetInt("count_include_pad", 0);
    if (include != 0 && include != 1) {
      return ctx.Error("attribute count_include_pad is {}, expected 0 or 1", include);
    }
  }
  if (ctx.num_outputs() > (is_max ? 2 : 1)) {
    return ctx.Error("has {} outputs, expected at most {}", ctx.num_outputs(), is_max ? 2 : 1);
  }
  const DType dt = ctx.input_type(0).dtype;
  ASSIGN_OR_RETURN(int rank, PoolRank(ctx, 3));
  if (rank == -1) {
    ctx.output(0) = UnknownRank(dt);
    if (ctx.num_outputs() > 1) ctx.output(1) = UnknownRank(DType::kI64);
    return Status::Ok();
  }
  const Dims& x = ctx.input_type(0).dims;
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(ctx.attrs(), rank - 2, options);
  if (!attrs.ok()) return attrs.status().WithContext(ctx.label());
  auto g = ForwardWindowGeometry(*attrs, Dims(x.begin() + 2, x.end()));
  if (!g.ok()) return g.status().WithContext(ctx.label());
  Dims out = {x[0], x[1]};
  out.insert(out.end(), g->out.begin(), g->out.end());
  ctx.output(0) = MakeType(dt, out);
  if (ctx.num_outputs() > 1) ctx.output(1) = MakeType(DType::kI64, out);
  return Status::Ok();
}

Status InferGlobalPool(InferContext& ctx, std::initializer_list<DType> types) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, types));
  const DType dt = ctx.input_type(0).dtype;
  ASSIGN_OR_RETURN(int rank, PoolRank(ctx, 1 << 20));
  if (rank == -1) {
    ctx.output(0) = UnknownRank(dt);
    return Status::Ok();
  }
  Dims out(rank, 1);
  out[0] = ctx.input_type(0).dims[0];
  out[1] = ctx.input_type(0).dims[1];
  ctx.output(0) = MakeType(dt, std::move(out));
  return Status::Ok();
}

}  // namespace

Status MaxPool(InferContext& ctx) { return InferWindowPool(ctx, /*is_max=*/true); }
Status AveragePool(InferContext& ctx) { return InferWindowPool(ctx, /*is_max=*/false); }
Status GlobalAveragePool(InferContext& ctx) { return InferGlobalPool(ctx, kFloatTypes); }
Status GlobalMaxPool(InferContext& ctx) {
  return InferGlobalPool(
      ctx, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8});
}

// MaxUnpool(X, I, output_shape?): X [N, C, D...], I i64 of X's shape (flat indices into Y, as
// MaxPool's second output writes them); attributes kernel_shape (required), strides, pads.
// Y [N, C, (D - 1) · stride − pad_begin − pad_end + kernel ...], or output_shape when given.
Status MaxUnpool(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kI64}));
  const TensorType& x = ctx.input_type(0);
  const std::vector<int64_t> kernel = ctx.attrs().GetInts("kernel_shape");
  if (kernel.empty()) return ctx.Error("attribute kernel_shape is required");
  const size_t spatial = kernel.size();
  const std::vector<int64_t> strides = ctx.attrs().GetInts("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = ctx.attrs().GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  if (strides.size() != spatial || pads.size() != 2 * spatial) {
    return ctx.Error("strides {} / pads {} do not match kernel_shape {}", DimsToString(strides), DimsToString(pads),
                     DimsToString(kernel));
  }
  if (x.rank_known && x.rank() != static_cast<int>(spatial) + 2) {
    return ctx.Error("input is {}, expected rank {} for kernel_shape {}", x.ToString(), spatial + 2, DimsToString(kernel));
  }
  if (ctx.has_input(2)) {
    RETURN_IF_ERROR(ctx.ExpectDType(2, {DType::kI64}));
    if (const Tensor* v = ctx.input_value(2)) {
      Dims out = v->ToInt64Vector();
      if (out.size() != spatial + 2) return ctx.Error("output_shape {} has the wrong rank", DimsToString(out));
      ctx.output(0) = MakeType(x.dtype, std::move(out));
    } else {
      ctx.output(0) = MakeType(x.dtype, Dims(spatial + 2, kUnknownDim));
    }
    return Status::Ok();
  }
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(x.dtype);
    return Status::Ok();
  }
  Dims out = {x.dims[0], x.dims[1]};
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t in = x.dims[d + 2];
    out.push_back(in < 0 ? kUnknownDim : (in - 1) * strides[d] - pads[d] - pads[d + spatial] + kernel[d]);
  }
  ctx.output(0) = MakeType(x.dtype, std::move(out));
  return Status::Ok();
}

}  // namespace edgec::infer
