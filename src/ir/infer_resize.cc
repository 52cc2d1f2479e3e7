// Shape inference for the resize family (see ops.def).
//
// Resize(X, roi?, scales?, sizes?) with the opset 11-13 attributes. Exactly one of scales
// and sizes holds values (the other is absent or an empty tensor). With scales, each
// output dim is floor(input dim * scale).
#include <cmath>

#include "ir/infer.h"
#include "ir/infer_movement_util.h"

namespace edgec::infer {

namespace {

bool OneOf(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (v == a) return true;
  }
  return false;
}

Status CheckResizeAttributes(const InferContext& ctx) {
  const Attributes& a = ctx.attrs();
  std::string mode = a.GetString("mode", "nearest");
  if (!OneOf(mode, {"nearest", "linear", "cubic"})) {
    return ctx.Error("mode '{}' is not nearest, linear or cubic", mode);
  }
  std::string ctm = a.GetString("coordinate_transformation_mode", "half_pixel");
  if (!OneOf(ctm, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                   "tf_half_pixel_for_nn", "tf_crop_and_resize"})) {
    return ctx.Unsupported("coordinate_transformation_mode '{}' is not supported", ctm);
  }
  std::string nearest = a.GetString("nearest_mode", "round_prefer_floor");
  if (!OneOf(nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
    return ctx.Error("nearest_mode '{}' is not valid", nearest);
  }
  if (a.GetInt("antialias", 0) != 0) return ctx.Unsupported("antialias=1 is not supported");
  if (a.Has("axes")) return ctx.Unsupported("the axes attribute (opset 18) is not supported");
  if (a.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return ctx.Unsupported("keep_aspect_ratio_policy other than stretch is not supported");
  }
  return Status::Ok();
}

// Input i holds values (present and not an empty tensor); unknown counts as holding values.
bool HoldsValues(const InferContext& ctx, int i) {
  return ctx.has_input(i) && KnownLength(ctx, i) != 0;
}

}  // namespace

Status Resize(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 4));
  RETURN_IF_ERROR(CheckResizeAttributes(ctx));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                      DType::kI8, DType::kI16, DType::kI32, DType::kI64,
                                      DType::kU8, DType::kU16, DType::kU32, DType::kU64}));
  if (ctx.has_input(1)) RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kF32, DType::kF64, DType::kF16}));
  if (ctx.has_input(2)) RETURN_IF_ERROR(ctx.ExpectDType(2, {DType::kF32}));
  if (ctx.has_input(3)) RETURN_IF_ERROR(ctx.ExpectDType(3, {DType::kI64}));
  bool has_scales = HoldsValues(ctx, 2);
  bool has_sizes = HoldsValues(ctx, 3);
  if (has_scales && has_sizes) return ctx.Error("only one of scales and sizes may be given");
  if (!has_scales && !has_sizes) return ctx.Error("one of scales and sizes must be given");

  const TensorType& in = ctx.input_type(0);
  if (!in.rank_known) {
    ctx.output(0) = UnknownRank(in.dtype);
    return Status::Ok();
  }
  int r = in.rank();
  bool crop = ctx.attrs().GetString("coordinate_transformation_mode", "half_pixel") ==
              "tf_crop_and_resize";
  if (crop) {
    if (!ctx.has_input(1)) return ctx.Error("tf_crop_and_resize needs the roi input");
    int64_t n = KnownLength(ctx, 1);
    if (n >= 0 && n != 2 * r) return ctx.Error("roi has {} values, expected 2 * rank = {}", n, 2 * r);
  }

  Dims out = UnknownDims(r);
  int source = has_scales ? 2 : 3;
  if (const Tensor* v = ctx.input_value(source)) {
    if (v->numel() != r) {
      return ctx.Error("{} has {} values for an input of rank {}", has_scales ? "scales" : "sizes",
                       v->numel(), r);
    }
    if (has_scales) {
      std::vector<double> scales = v->ToDoubleVector();
      for (int i = 0; i < r; ++i) {
        if (!(scales[i] > 0) || !std::isfinite(scales[i])) {
          return ctx.Error("scales[{}] = {} is not positive", i, scales[i]);
        }
        if (in.dims[i] >= 0) {
          double d = std::floor(static_cast<double>(in.dims[i]) * scales[i]);
          if (d > static_cast<double>(int64_t{1} << 40)) {
            return ctx.Error("scales[{}] = {} gives a dim that is too large", i, scales[i]);
          }
          out[i] = static_cast<int64_t>(d);
        }
      }
    } else {
      std::vector<int64_t> sizes = v->ToInt64Vector();
      for (int i = 0; i < r; ++i) {
        if (sizes[i] < 0) return ctx.Error("sizes[{}] = {} is negative", i, sizes[i]);
      }
      out = sizes;
    }
  }
  bool static_out = true;
  for (int i = 0; i < r; ++i) {
    static_out &= out[i] >= 0;
    if (in.dims[i] == 0 && out[i] > 0) {
      return ctx.Error("axis {} of {} is empty and cannot be resized to {}", i, in.ToString(),
                       out[i]);
    }
  }
  if (static_out) {
    if (auto n = CheckedNumElements(out, DTypeSize(in.dtype)); !n.ok()) {
      return ctx.Error("{}", n.status().message());
    }
  }
  ctx.output(0) = MakeType(in.dtype, std::move(out));
  return Status::Ok();
}

// GridSample(X [N, C, H, W], grid [N, H_out, W_out, 2] of (x, y) in [-1, 1]), attributes
// mode "bilinear" | "nearest" | "bicubic", padding_mode "zeros" | "border" | "reflection",
// align_corners (0) -> Y [N, C, H_out, W_out].
Status GridSample(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 4));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 4));
  const std::string mode = ctx.attrs().GetString("mode", "bilinear");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") {
    return ctx.Error("attribute mode is '{}', expected bilinear, nearest or bicubic", mode);
  }
  const std::string pad = ctx.attrs().GetString("padding_mode", "zeros");
  if (pad != "zeros" && pad != "border" && pad != "reflection") {
    return ctx.Error("attribute padding_mode is '{}', expected zeros, border or reflection", pad);
  }
  const TensorType& x = ctx.input_type(0);
  const TensorType& grid = ctx.input_type(1);
  if (grid.rank_known && grid.dims[3] >= 0 && grid.dims[3] != 2) {
    return ctx.Error("grid is {}, expected [N, H_out, W_out, 2]", grid.ToString());
  }
  if (x.rank_known && grid.rank_known && x.dims[0] >= 0 && grid.dims[0] >= 0 && x.dims[0] != grid.dims[0]) {
    return ctx.Error("X {} and grid {} have different batch sizes", x.ToString(), grid.ToString());
  }
  const int64_t n = x.rank_known ? x.dims[0] : (grid.rank_known ? grid.dims[0] : kUnknownDim);
  ctx.output(0) = MakeType(x.dtype, {n, x.rank_known ? x.dims[1] : kUnknownDim, grid.rank_known ? grid.dims[1] : kUnknownDim,
                                     grid.rank_known ? grid.dims[2] : kUnknownDim});
  return Status::Ok();
}

}  // namespace edgec::infer
