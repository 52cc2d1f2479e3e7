// Shape inference for the detection family (see ops.def): the tails of object detectors —
// NonMaxSuppression (its output length is the number of selected boxes, known when the
// boxes, scores and thresholds are) and RoiAlign.
#include "ir/box_selection.h"
#include "ir/infer.h"
#include "ir/infer_movement_util.h"

namespace edgec::infer {

namespace {

// A scalar-like optional input (rank 0 or one element) of one of `types`.
Status ExpectScalarInput(const InferContext& ctx, int i, std::initializer_list<DType> types, std::string_view what) {
  if (!ctx.has_input(i)) return Status::Ok();
  RETURN_IF_ERROR(ctx.ExpectDType(i, types));
  const TensorType& t = ctx.input_type(i);
  if (t.rank_known && (t.rank() > 1 || (t.IsStatic() && NumElements(t.dims) != 1))) {
    return ctx.Error("input {} ({}) is {}, expected one value", i, what, t.ToString());
  }
  return Status::Ok();
}

}  // namespace

// NonMaxSuppression(boxes f32 [B, N, 4], scores f32 [B, C, N], max_output_boxes_per_class i64?,
// iou_threshold f32?, score_threshold f32?), attribute center_point_box (0: [y1, x1, y2, x2];
// 1: [x_center, y_center, width, height]) -> selected_indices i64 [selected, 3].
Status NonMaxSuppression(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 5));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kF32}));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 3));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 3));
  RETURN_IF_ERROR(ExpectScalarInput(ctx, 2, {DType::kI64}, "max_output_boxes_per_class"));
  RETURN_IF_ERROR(ExpectScalarInput(ctx, 3, {DType::kF32}, "iou_threshold"));
  RETURN_IF_ERROR(ExpectScalarInput(ctx, 4, {DType::kF32}, "score_threshold"));
  const int64_t center = ctx.attrs().GetInt("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.Error("attribute center_point_box is {}, expected 0 or 1", center);
  const TensorType& boxes = ctx.input_type(0);
  const TensorType& scores = ctx.input_type(1);
  if (boxes.rank_known && boxes.dims[2] >= 0 && boxes.dims[2] != 4) {
    return ctx.Error("boxes are {}, expected [batch, boxes, 4]", boxes.ToString());
  }
  if (boxes.rank_known && scores.rank_known) {
    auto differ = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
    if (differ(boxes.dims[0], scores.dims[0]) || differ(boxes.dims[1], scores.dims[2])) {
      return ctx.Error("boxes {} and scores {} disagree (expected [B, N, 4] and [B, C, N])", boxes.ToString(),
                       scores.ToString());
    }
  }
  int64_t selected = kUnknownDim;
  const bool params_known = (!ctx.has_input(2) || ctx.input_value(2)) && (!ctx.has_input(3) || ctx.input_value(3)) &&
                            (!ctx.has_input(4) || ctx.input_value(4));
  if (ctx.input_value(0) && ctx.input_value(1) && params_known) {
    BoxSelectionParams p;
    p.center_point_box = center == 1;
    if (ctx.has_input(2)) p.max_per_class = ctx.input_value(2)->ToInt64Vector()[0];
    if (ctx.has_input(3)) p.iou_threshold = static_cast<float>(ctx.input_value(3)->ToDoubleVector()[0]);
    if (ctx.has_input(4)) {
      p.has_score_threshold = true;
      p.score_threshold = static_cast<float>(ctx.input_value(4)->ToDoubleVector()[0]);
    }
    selected = static_cast<int64_t>(SelectBoxes(*ctx.input_value(0), *ctx.input_value(1), p).size());
  } else if (ctx.has_input(2) && ctx.input_value(2) && ctx.input_value(2)->ToInt64Vector()[0] <= 0) {
    selected = 0;
  }
  ctx.output(0) = MakeType(DType::kI64, {selected, 3});
  return Status::Ok();
}

// RoiAlign(X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices i64 [R]), attributes
// mode "avg" | "max", output_height, output_width (default 1), sampling_ratio (0: adaptive),
// spatial_scale (1), coordinate_transformation_mode "half_pixel" | "output_half_pixel"
// -> Y [R, C, output_height, output_width].
Status RoiAlign(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectRequired(2));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  if (ctx.input_type(1).dtype != ctx.input_type(0).dtype) {
    return ctx.Error("rois are {}, expected X's dtype {}", DTypeName(ctx.input_type(1).dtype),
                     DTypeName(ctx.input_type(0).dtype));
  }
  RETURN_IF_ERROR(ctx.ExpectDType(2, {DType::kI64}));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 4));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 2));
  RETURN_IF_ERROR(ctx.ExpectRank(2, 1));
  const std::string mode = ctx.attrs().GetString("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.Error("attribute mode is '{}', expected avg or max", mode);
  const std::string ctm = ctx.attrs().GetString("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    return ctx.Error("attribute coordinate_transformation_mode is '{}', expected half_pixel or output_half_pixel", ctm);
  }
  const int64_t oh = ctx.attrs().GetInt("output_height", 1), ow = ctx.attrs().GetInt("output_width", 1);
  if (oh < 1 || ow < 1) return ctx.Error("output_height {} and output_width {} must be at least 1", oh, ow);
  if (ctx.attrs().GetInt("sampling_ratio", 0) < 0) return ctx.Error("attribute sampling_ratio is negative");
  const TensorType& rois = ctx.input_type(1);
  if (rois.rank_known && rois.dims[1] >= 0 && rois.dims[1] != 4) {
    return ctx.Error("rois are {}, expected [rois, 4]", rois.ToString());
  }
  if (const Tensor* idx = ctx.input_value(2); idx && ctx.input_type(0).rank_known && ctx.input_type(0).dims[0] >= 0) {
    for (int64_t i = 0; i < idx->numel(); ++i) {
      const int64_t b = idx->data<int64_t>()[i];
      if (b < 0 || b >= ctx.input_type(0).dims[0]) {
        return ctx.Error("batch_indices[{}] = {} is outside [0, {})", i, b, ctx.input_type(0).dims[0]);
      }
    }
  }
  const int64_t r = rois.rank_known ? rois.dims[0] : kUnknownDim;
  const int64_t c = ctx.input_type(0).rank_known ? ctx.input_type(0).dims[1] : kUnknownDim;
  ctx.output(0) = MakeType(ctx.input_type(0).dtype, {r, c, oh, ow});
  return Status::Ok();
}

}  // namespace edgec::infer
