// Shape inference for the conv family (see ops.def).
#include "ir/infer_conv.h"

#include "ir/conv_geometry.h"

namespace edgec::infer {

namespace {

// Dims of input i, or `rank` unknown dims when its rank is unknown.
Dims DimsOrUnknown(const TensorType& t, int rank) {
  return t.rank_known ? t.dims : Dims(rank, kUnknownDim);
}

bool Known(int64_t d) { return d != kUnknownDim; }

// The rank shared by X and W, or -1 when neither is known. Checks that they agree.
StatusOr<int> ConvRank(const InferContext& ctx, const ConvInputs& in) {
  const TensorType& x = ctx.input_type(in.x);
  const TensorType& w = ctx.input_type(in.w);
  int rank = x.rank_known ? x.rank() : (w.rank_known ? w.rank() : -1);
  if (rank == -1) return -1;
  if (rank < 3) {
    return ctx.Error("input {} (X) has {} dims {}, expected at least 3 (N, C, D1, ...)", in.x, rank,
                     x.rank_known ? x.ToString() : w.ToString());
  }
  if (rank - 2 > 3) {
    return ctx.Unsupported("X {} has {} spatial dims; at most 3 are supported",
                           x.rank_known ? x.ToString() : w.ToString(), rank - 2);
  }
  if (x.rank_known && w.rank_known && w.rank() != rank) {
    return ctx.Error("input {} (W) has {} dims {} but X {} has {}; W must have X's rank", in.w,
                     w.rank(), w.ToString(), x.ToString(), rank);
  }
  return rank;
}

StatusOr<int64_t> ReadGroup(const InferContext& ctx) {
  int64_t group = ctx.attrs().GetInt("group", 1);
  if (group < 1) return ctx.Error("attribute group is {}, must be >= 1", group);
  return group;
}

Status CheckBias(const InferContext& ctx, int bias, int64_t channels) {
  if (bias < 0 || !ctx.has_input(bias)) return Status::Ok();
  const TensorType& b = ctx.input_type(bias);
  if (!b.rank_known) return Status::Ok();
  if (b.rank() != 1 || (Known(channels) && Known(b.dims[0]) && b.dims[0] != channels)) {
    return ctx.Error("input {} (B) is {}, expected a vector of the {} output channels", bias,
                     b.ToString(), channels);
  }
  return Status::Ok();
}

template <typename T>
StatusOr<T> WithLabel(const InferContext& ctx, StatusOr<T> v) {
  if (!v.ok()) return v.status().WithContext(ctx.label());
  return v;
}

// Output 0: (N, out_channels, spatial dims of the window attributes over X's), the kernel
// size taken from W's spatial dims; `transpose` for ConvTranspose's geometry.
Status WindowOutput(InferContext& ctx, const Dims& x, const Dims& w, int64_t out_channels, bool transpose,
                    DType dtype) {
  const Dims w_spatial(w.begin() + 2, w.end());
  WindowAttrOptions options;
  options.kernel_from_weights = &w_spatial;
  options.transpose = transpose;
  ASSIGN_OR_RETURN(WindowAttrs attrs,
                   WithLabel(ctx, ReadWindowAttrs(ctx.attrs(), static_cast<int>(x.size()) - 2, options)));
  const Dims x_spatial(x.begin() + 2, x.end());
  ASSIGN_OR_RETURN(WindowGeometry g, WithLabel(ctx, transpose ? TransposeWindowGeometry(attrs, x_spatial)
                                                              : ForwardWindowGeometry(attrs, x_spatial)));
  Dims out = {x[0], out_channels};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ctx.output(0) = MakeType(dtype, std::move(out));
  return Status::Ok();
}

}  // namespace

Status InferConvLike(InferContext& ctx, const ConvInputs& in, DType out_dtype) {
  RETURN_IF_ERROR(ctx.ExpectRequired(in.x));
  RETURN_IF_ERROR(ctx.ExpectRequired(in.w));
  ASSIGN_OR_RETURN(int rank, ConvRank(ctx, in));
  ASSIGN_OR_RETURN(int64_t group, ReadGroup(ctx));
  if (rank == -1) {
    ctx.output(0) = UnknownRank(out_dtype);
    return Status::Ok();
  }
  const Dims x = DimsOrUnknown(ctx.input_type(in.x), rank);
  const Dims w = DimsOrUnknown(ctx.input_type(in.w), rank);
  const int64_t channels = x[1], w_channels = w[1], out_channels = w[0];
  if (Known(channels) && Known(w_channels) && channels != w_channels * group) {
    return ctx.Error(
        "channel mismatch: X {} has {} channels but W {} expects {} (W dim 1 = {} x group {})",
        DimsToString(x), channels, DimsToString(w), w_channels * group, w_channels, group);
  }
  if (Known(channels) && channels % group != 0) {
    return ctx.Error("X {} has {} channels, not divisible by group {}", DimsToString(x), channels,
                     group);
  }
  if (Known(out_channels) && out_channels % group != 0) {
    return ctx.Error("W {} has {} output channels, not divisible by group {}", DimsToString(w),
                     out_channels, group);
  }
  RETURN_IF_ERROR(CheckBias(ctx, in.bias, out_channels));
  return WindowOutput(ctx, x, w, out_channels, /*transpose=*/false, out_dtype);
}

namespace {

Status ExpectFloatConvTypes(const InferContext& ctx, int x, int w, int bias) {
  RETURN_IF_ERROR(ctx.ExpectDType(x, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  const DType dt = ctx.input_type(x).dtype;
  for (int i : {w, bias}) {
    if (ctx.has_input(i) && ctx.input_type(i).dtype != dt) {
      return ctx.Error("input {} has dtype {}, expected X's dtype {}", i,
                       DTypeName(ctx.input_type(i).dtype), DTypeName(dt));
    }
  }
  return Status::Ok();
}

}  // namespace

Status Conv(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ExpectFloatConvTypes(ctx, 0, 1, 2));
  return InferConvLike(ctx, ConvInputs{0, 1, 2}, ctx.input_type(0).dtype);
}

// ConvTranspose: X (N, C, D1, ...), W (C, M/group, k1, ...), output (N, M, out1, ...).
Status ConvTranspose(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ExpectFloatConvTypes(ctx, 0, 1, 2));
  const DType dt = ctx.input_type(0).dtype;
  ConvInputs in{0, 1, 2};
  ASSIGN_OR_RETURN(int rank, ConvRank(ctx, in));
  ASSIGN_OR_RETURN(int64_t group, ReadGroup(ctx));
  if (rank == -1) {
    ctx.output(0) = UnknownRank(dt);
    return Status::Ok();
  }
  const Dims x = DimsOrUnknown(ctx.input_type(0), rank);
  const Dims w = DimsOrUnknown(ctx.input_type(1), rank);
  if (Known(x[1]) && Known(w[0]) && x[1] != w[0]) {
    return ctx.Error(
        "channel mismatch: X {} has {} channels but W {} has {} input channels (dim 0)",
        DimsToString(x), x[1], DimsToString(w), w[0]);
  }
  if (Known(w[0]) && w[0] % group != 0) {
    return ctx.Error("W {} has {} input channels, not divisible by group {}", DimsToString(w), w[0],
                     group);
  }
  const int64_t out_channels = Known(w[1]) ? w[1] * group : kUnknownDim;
  RETURN_IF_ERROR(CheckBias(ctx, 2, out_channels));
  return WindowOutput(ctx, x, w, out_channels, /*transpose=*/true, dt);
}

}  // namespace edgec::infer
