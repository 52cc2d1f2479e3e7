// Shape inference for the signal family (see ops.def): the window functions, DFT, STFT and
// MelWeightMatrix of opset 17. Lengths given as inputs decide output dims when their values
// are known (constants, or at run time).
#include <optional>

#include "ir/infer.h"
#include "ir/infer_movement_util.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

constexpr std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};

// The value of a scalar (rank 0 or one element) integer input when known.
StatusOr<std::optional<int64_t>> ScalarInt(const InferContext& ctx, int i, std::string_view what) {
  RETURN_IF_ERROR(ctx.ExpectDType(i, {DType::kI32, DType::kI64}));
  const TensorType& t = ctx.input_type(i);
  if (t.rank_known && t.rank() > 1) return ctx.Error("input {} ({}) is {}, expected a scalar", i, what, t.ToString());
  const Tensor* v = ctx.input_value(i);
  if (!v) return std::optional<int64_t>();
  if (v->numel() != 1) return ctx.Error("input {} ({}) holds {} values, expected 1", i, what, v->numel());
  return std::optional<int64_t>(v->ToInt64Vector()[0]);
}

// output_datatype (an edgec DType after import; default f32) among the float types.
StatusOr<DType> OutputDType(const InferContext& ctx) {
  const auto dt = static_cast<DType>(ctx.attrs().GetInt("output_datatype", static_cast<int64_t>(DType::kF32)));
  for (DType f : kFloatTypes) {
    if (f == dt) return dt;
  }
  return ctx.Unsupported("output_datatype {} is not a float type", DTypeName(dt));
}

Status Window(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  ASSIGN_OR_RETURN(DType dt, OutputDType(ctx));
  ASSIGN_OR_RETURN(std::optional<int64_t> size, ScalarInt(ctx, 0, "size"));
  if (size && *size < 0) return ctx.Error("size is {}, expected >= 0", *size);
  ctx.output(0) = MakeType(dt, {size ? *size : kUnknownDim});
  return Status::Ok();
}

}  // namespace

// HannWindow / HammingWindow / BlackmanWindow(size): attributes output_datatype (f32),
// periodic (1: denominator size, 0: size − 1) -> [size].
EDGEC_SHARED_RULE(InferContext, Window, HannWindow, HammingWindow, BlackmanWindow)

// DFT(input [batch, ..., n, ..., 1 | 2], dft_length?): attributes axis (default 1; the last dim
// holds real or real+imaginary parts and cannot be the axis), inverse, onesided
// -> [batch, ..., m, ..., 2] with m = dft_length (default n), or m / 2 + 1 when onesided.
Status DFT(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 2));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  const TensorType& x = ctx.input_type(0);
  std::optional<int64_t> length;
  if (ctx.has_input(1)) {
    ASSIGN_OR_RETURN(length, ScalarInt(ctx, 1, "dft_length"));
    if (length && *length < 1) return ctx.Error("dft_length is {}, expected >= 1", *length);
  }
  const bool onesided = ctx.attrs().GetInt("onesided", 0) != 0;
  if (onesided && ctx.attrs().GetInt("inverse", 0) != 0) return ctx.Unsupported("onesided with inverse");
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(x.dtype);
    return Status::Ok();
  }
  if (x.rank() < 2) return ctx.Error("input is {}, expected [batch, ..., 1 or 2]", x.ToString());
  const int64_t parts = x.dims.back();
  if (parts >= 0 && parts != 1 && parts != 2) return ctx.Error("input is {}: the last dim must be 1 or 2", x.ToString());
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", 1), x.rank(), "attribute axis");
  if (!axis.ok()) return ctx.Error("{}", axis.status().message());
  if (*axis == 0 || *axis == x.rank() - 1) {
    return ctx.Error("axis {} is the batch dim or the real/imaginary dim of {}", *axis, x.ToString());
  }
  Dims out = x.dims;
  int64_t m = length ? *length : (ctx.has_input(1) ? kUnknownDim : x.dims[*axis]);
  if (onesided && m >= 0) m = m / 2 + 1;
  out[*axis] = m;
  out.back() = 2;
  ctx.output(0) = MakeType(x.dtype, std::move(out));
  return Status::Ok();
}

// STFT(signal [batch, length, 1 | 2], frame_step, window? [frame_length], frame_length?):
// attribute onesided (default 1) -> [batch, frames, bins, 2] with frames = (length −
// frame_length) / frame_step + 1 and bins = frame_length / 2 + 1 (onesided) or frame_length.
Status STFT(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 4));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  RETURN_IF_ERROR(ctx.ExpectRank(0, 3));
  ASSIGN_OR_RETURN(std::optional<int64_t> step, ScalarInt(ctx, 1, "frame_step"));
  if (step && *step < 1) return ctx.Error("frame_step is {}, expected >= 1", *step);
  int64_t frame = kUnknownDim;
  if (ctx.has_input(2)) {
    RETURN_IF_ERROR(ctx.ExpectRank(2, 1));
    if (ctx.input_type(2).dtype != ctx.input_type(0).dtype) return ctx.Error("window's dtype differs from the signal's");
    if (ctx.input_type(2).rank_known) frame = ctx.input_type(2).dims[0];
  }
  if (ctx.has_input(3)) {
    ASSIGN_OR_RETURN(std::optional<int64_t> fl, ScalarInt(ctx, 3, "frame_length"));
    if (fl && frame >= 0 && *fl != frame) return ctx.Error("frame_length {} differs from the window's {}", *fl, frame);
    if (fl) frame = *fl;
  }
  if (!ctx.has_input(2) && !ctx.has_input(3)) return ctx.Error("needs a window or a frame_length");
  const TensorType& x = ctx.input_type(0);
  if (x.rank_known && x.dims[2] >= 0 && x.dims[2] != 1 && x.dims[2] != 2) {
    return ctx.Error("signal is {}: the last dim must be 1 or 2", x.ToString());
  }
  if (frame == 0 || (frame > 0 && x.rank_known && x.dims[1] >= 0 && frame > x.dims[1])) {
    return ctx.Error("frame length {} does not fit the signal {}", frame, x.ToString());
  }
  const int64_t length = x.rank_known ? x.dims[1] : kUnknownDim;
  const int64_t frames = step && frame >= 0 && length >= 0 ? (length - frame) / *step + 1 : kUnknownDim;
  const bool onesided = ctx.attrs().GetInt("onesided", 1) != 0;
  const int64_t bins = frame < 0 ? kUnknownDim : (onesided ? frame / 2 + 1 : frame);
  ctx.output(0) = MakeType(x.dtype, {x.rank_known ? x.dims[0] : kUnknownDim, frames, bins, 2});
  return Status::Ok();
}

// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
// attribute output_datatype (f32) -> [dft_length / 2 + 1, num_mel_bins].
Status MelWeightMatrix(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(5, 5));
  for (int i = 0; i < 5; ++i) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  ASSIGN_OR_RETURN(DType dt, OutputDType(ctx));
  ASSIGN_OR_RETURN(std::optional<int64_t> bins, ScalarInt(ctx, 0, "num_mel_bins"));
  ASSIGN_OR_RETURN(std::optional<int64_t> length, ScalarInt(ctx, 1, "dft_length"));
  ASSIGN_OR_RETURN(std::optional<int64_t> rate, ScalarInt(ctx, 2, "sample_rate"));
  RETURN_IF_ERROR(ctx.ExpectDType(3, kFloatTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(4, kFloatTypes));
  if (bins && *bins < 1) return ctx.Error("num_mel_bins is {}, expected >= 1", *bins);
  if (length && *length < 1) return ctx.Error("dft_length is {}, expected >= 1", *length);
  if (rate && *rate < 1) return ctx.Error("sample_rate is {}, expected >= 1", *rate);
  ctx.output(0) = MakeType(dt, {length ? *length / 2 + 1 : kUnknownDim, bins ? *bins : kUnknownDim});
  return Status::Ok();
}

}  // namespace edgec::infer
