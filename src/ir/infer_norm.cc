// Shape inference for the norm family (see ops.def).
#include "ir/infer.h"
#include "ir/infer_movement_util.h"

namespace edgec::infer {

namespace {

bool Known(int64_t d) { return d != kUnknownDim; }

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16,
                                                  DType::kBF16};

// Input i must be a float vector of `size` entries (size may be unknown).
Status ExpectChannelVector(const InferContext& ctx, int i, const char* name, int64_t size) {
  RETURN_IF_ERROR(ctx.ExpectDType(i, kFloatTypes));
  const TensorType& t = ctx.input_type(i);
  if (!t.rank_known) return Status::Ok();
  if (t.rank() != 1 || (Known(size) && Known(t.dims[0]) && t.dims[0] != size)) {
    return ctx.Error("input {} ({}) is {}, expected a vector of the {} channels", i, name,
                     t.ToString(), size);
  }
  return Status::Ok();
}

// LayerNormalization's stash_type is an ONNX TensorProto data type code.
StatusOr<DType> StashDType(const InferContext& ctx) {
  const int64_t code = ctx.attrs().GetInt("stash_type", 1);
  switch (code) {
    case 1: return DType::kF32;
    case 10: return DType::kF16;
    case 11: return DType::kF64;
    case 16: return DType::kBF16;
    default:
      return ctx.Error(
          "attribute stash_type is {}, expected an ONNX float type code "
          "(1 float, 10 float16, 11 double, 16 bfloat16)",
          code);
  }
}

}  // namespace

// BatchNormalization (opset 15): X (N, C, D...) or (N); scale, B, mean, var of C entries.
// Outputs Y and, in training mode, running_mean and running_var.
Status BatchNormalization(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(5, 5));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  const int64_t training = ctx.attrs().GetInt("training_mode", 0);
  if (training != 0 && training != 1) {
    return ctx.Error("attribute training_mode is {}, expected 0 or 1", training);
  }
  if (ctx.num_outputs() > 3) {
    return ctx.Unsupported("has {} outputs; saved_mean/saved_var (opset < 14) are not supported",
                           ctx.num_outputs());
  }
  const TensorType& x = ctx.input_type(0);
  int64_t channels = kUnknownDim;
  if (x.rank_known) {
    if (x.rank() < 1) return ctx.Error("input 0 (X) is a scalar, expected (N, C, D1, ...)");
    channels = x.rank() == 1 ? 1 : x.dims[1];
  }
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i) RETURN_IF_ERROR(ExpectChannelVector(ctx, i, names[i - 1], channels));
  ctx.output(0) = x;
  ctx.output(0).dim_names.clear();
  for (int i = 1; i < ctx.num_outputs(); ++i) {
    ctx.output(i) = MakeType(ctx.input_type(i + 2).dtype, {channels});
  }
  return Status::Ok();
}

// InstanceNormalization: X (N, C, D1, ...), scale and B of C entries.
Status InstanceNormalization(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  const TensorType& x = ctx.input_type(0);
  int64_t channels = kUnknownDim;
  if (x.rank_known) {
    if (x.rank() < 3) {
      return ctx.Error("input 0 (X) has {} dims {}, expected at least 3 (N, C, D1, ...)", x.rank(),
                       x.ToString());
    }
    channels = x.dims[1];
  }
  RETURN_IF_ERROR(ExpectChannelVector(ctx, 1, "scale", channels));
  RETURN_IF_ERROR(ExpectChannelVector(ctx, 2, "B", channels));
  ctx.output(0) = MakeType(x.dtype, x.dims);
  ctx.output(0).rank_known = x.rank_known;
  return Status::Ok();
}

// LayerNormalization (opset 17): normalizes over X's dims [axis, rank). Outputs Y, and
// Mean and InvStdDev shaped X.dims[:axis] + ones (dtype stash_type).
Status LayerNormalization(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  const DType dt = ctx.input_type(0).dtype;
  for (int i = 1; i < 3; ++i) {
    if (ctx.has_input(i) && ctx.input_type(i).dtype != dt) {
      return ctx.Error("input {} has dtype {}, expected X's dtype {}", i,
                       DTypeName(ctx.input_type(i).dtype), DTypeName(dt));
    }
  }
  if (ctx.num_outputs() > 3) {
    return ctx.Error("has {} outputs, expected at most 3", ctx.num_outputs());
  }
  ASSIGN_OR_RETURN(DType stash, StashDType(ctx));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(dt);
    for (int i = 1; i < ctx.num_outputs(); ++i) ctx.output(i) = UnknownRank(stash);
    return Status::Ok();
  }
  if (x.rank() < 1) return ctx.Error("input 0 (X) is a scalar, expected at least 1 dim");
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), x.rank(), "attribute axis");
  if (!axis.ok()) return axis.status().WithContext(ctx.label());
  RETURN_IF_ERROR(ExpectBroadcastsTo(ctx, 1, "Scale", x.dims));
  if (ctx.has_input(2)) RETURN_IF_ERROR(ExpectBroadcastsTo(ctx, 2, "B", x.dims));
  ctx.output(0) = MakeType(dt, x.dims);
  Dims stats = x.dims;
  for (size_t d = *axis; d < stats.size(); ++d) stats[d] = 1;
  for (int i = 1; i < ctx.num_outputs(); ++i) ctx.output(i) = MakeType(stash, stats);
  return Status::Ok();
}

// MeanVarianceNormalization: (X - mean) / (std + 1e-9) over the `axes` attribute
// (default [0, 2, 3]); the output has X's type.
Status MeanVarianceNormalization(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  const TensorType& x = ctx.input_type(0);
  if (x.rank_known) {
    const std::vector<int64_t> axes = ctx.attrs().GetInts("axes", {0, 2, 3});
    RETURN_IF_ERROR(NormalizeAxes(ctx, axes, x.rank(), "attribute axes").status());
  }
  ctx.output(0) = x;
  return Status::Ok();
}

// LRN: X (N, C, D1, ...) normalized across `size` neighbouring channels.
Status LRN(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  if (!ctx.attrs().Has("size")) return ctx.Error("attribute size is required");
  const int64_t size = ctx.attrs().GetInt("size", 0);
  if (size <= 0) return ctx.Error("attribute size is {}, expected a positive count", size);
  const TensorType& x = ctx.input_type(0);
  if (x.rank_known && x.rank() < 2) {
    return ctx.Error("input 0 (X) has {} dims {}, expected at least 2 (N, C, D1, ...)", x.rank(),
                     x.ToString());
  }
  ctx.output(0) = x;
  return Status::Ok();
}

}  // namespace edgec::infer
