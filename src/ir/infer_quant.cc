// Shape inference for the quant family (see ops.def).
#include "ir/conv_geometry.h"
#include "ir/infer.h"
#include "ir/infer_conv.h"
#include "ir/infer_matmul.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

bool Known(int64_t d) { return d != kUnknownDim; }

const std::initializer_list<DType> kQuantTypes = {DType::kU8, DType::kI8};
// What an integer op may write, and QLinearAdd/QLinearMul read: int16 is the mixed
// precision's wide point (ops.def).
const std::initializer_list<DType> kQuantOrWideTypes = {DType::kU8, DType::kI8, DType::kI16};
// QuantizeLinear / DequantizeLinear also carry int16 activations (mixed precision: the
// quantizer's promoted norms and softmaxes; exported in the com.microsoft domain).
const std::initializer_list<DType> kQdqTypes = {DType::kU8, DType::kI8, DType::kI16};

// A scale or zero point that is one value: rank 0, or rank 1 with one element.
bool IsSingleValue(const TensorType& t) {
  return t.rank_known && (t.rank() == 0 || (t.rank() == 1 && t.dims[0] == 1));
}

Status ExpectSingleValue(const InferContext& ctx, int i, const char* name) {
  if (!ctx.has_input(i)) return Status::Ok();
  const TensorType& t = ctx.input_type(i);
  if (t.rank_known && !IsSingleValue(t)) {
    return ctx.Error("input {} ({}) is {}, expected a scalar (per-tensor quantization)", i, name,
                     t.ToString());
  }
  return Status::Ok();
}

// A scale or zero point that is one value or a vector of `count` entries (count may be
// unknown): per-tensor or per-channel.
Status ExpectSingleOrVector(const InferContext& ctx, int i, const char* name, int64_t count,
                            const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const TensorType& t = ctx.input_type(i);
  if (!t.rank_known || IsSingleValue(t)) return Status::Ok();
  if (t.rank() != 1 || (Known(count) && Known(t.dims[0]) && t.dims[0] != count)) {
    return ctx.Error("input {} ({}) is {}, expected a scalar or a vector of the {} {}", i, name,
                     t.ToString(), count, what);
  }
  return Status::Ok();
}

// Zero point i must have the dtype of the data it belongs to and, for Quantize/Dequantize
// (`same_shape`), the shape of its scale.
Status ExpectZeroPointLike(const InferContext& ctx, int zp, int scale, DType data_dtype,
                           bool same_shape = true) {
  if (!ctx.has_input(zp)) return Status::Ok();
  const TensorType& z = ctx.input_type(zp);
  if (z.dtype != data_dtype) {
    return ctx.Error("input {} (zero point) has dtype {}, expected {}", zp, DTypeName(z.dtype),
                     DTypeName(data_dtype));
  }
  const TensorType& s = ctx.input_type(scale);
  const bool both_single = IsSingleValue(z) && IsSingleValue(s);
  if (same_shape && z.rank_known && s.rank_known && !both_single && z.dims != s.dims) {
    return ctx.Error("input {} (zero point) {} does not match the shape of its scale {}", zp,
                     z.ToString(), s.ToString());
  }
  return Status::Ok();
}

// QuantizeLinear / DequantizeLinear: scale and zero point per tensor, or 1-D along `axis`.
Status CheckAxisParams(const InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& s = ctx.input_type(1);
  if (!s.rank_known || IsSingleValue(s)) return Status::Ok();
  if (s.rank() != 1) {
    return ctx.Error("input 1 (scale) is {}, expected a scalar or a 1-D tensor", s.ToString());
  }
  if (!x.rank_known) return Status::Ok();
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", 1), x.rank(), "attribute axis");
  if (!axis.ok()) return axis.status().WithContext(ctx.label());
  const int64_t channels = x.dims[*axis];
  if (Known(channels) && Known(s.dims[0]) && channels != s.dims[0]) {
    return ctx.Error("input 1 (scale) {} has {} entries but X {} has {} along axis {}",
                     s.ToString(), s.dims[0], x.ToString(), channels, *axis);
  }
  return Status::Ok();
}

}  // namespace

// --- quantize / dequantize ---

Status QuantizeLinear(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kF32, DType::kF16, DType::kBF16}));
  const DType out = ctx.has_input(2) ? ctx.input_type(2).dtype : DType::kU8;
  if (ctx.has_input(2)) RETURN_IF_ERROR(ctx.ExpectDType(2, kQdqTypes));
  RETURN_IF_ERROR(CheckAxisParams(ctx));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 2, 1, out));
  const TensorType& x = ctx.input_type(0);
  ctx.output(0) = x.rank_known ? MakeType(out, x.dims) : UnknownRank(out);
  return Status::Ok();
}

Status DequantizeLinear(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 3));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kU8, DType::kI8, DType::kI16, DType::kI32}));
  RETURN_IF_ERROR(ctx.ExpectDType(1, {DType::kF32, DType::kF16, DType::kBF16}));
  const DType in = ctx.input_type(0).dtype;
  RETURN_IF_ERROR(CheckAxisParams(ctx));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 2, 1, in));
  if (in == DType::kI32 && ctx.input_value(2)) {
    for (int64_t z : ctx.input_value(2)->ToInt64Vector()) {
      if (z != 0) return ctx.Error("input 2 (zero point) must be 0 for int32 input, got {}", z);
    }
  }
  const DType out = ctx.input_type(1).dtype;
  const TensorType& x = ctx.input_type(0);
  ctx.output(0) = x.rank_known ? MakeType(out, x.dims) : UnknownRank(out);
  return Status::Ok();
}

// DynamicQuantizeLinear(x f32) -> y u8 of x's shape, y_scale f32 [], y_zero_point u8 [].
Status DynamicQuantizeLinear(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32}));
  if (ctx.num_outputs() != 3) return ctx.Error("has {} outputs, expected 3", ctx.num_outputs());
  const TensorType& x = ctx.input_type(0);
  ctx.output(0) = x.rank_known ? MakeType(DType::kU8, x.dims) : UnknownRank(DType::kU8);
  ctx.output(1) = MakeType(DType::kF32, {});
  ctx.output(2) = MakeType(DType::kU8, {});
  return Status::Ok();
}

// --- quantized conv: QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?)
// and ConvInteger(x, w, x_zp?, w_zp?) ---

Status QLinearConv(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(8, 9));
  // edgec_quantize_input: input 0 is f32, quantized by x_scale and x_zero_point first (ops.def).
  const bool quantize_input = ctx.attrs().GetInt("edgec_quantize_input", 0) != 0;
  if (quantize_input) {
    RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32}));
    if (!ctx.has_input(2)) return ctx.Error("edgec_quantize_input needs input 2 (x_zero_point) for the quantized type");
    RETURN_IF_ERROR(ctx.ExpectDType(2, kQuantTypes));
  } else {
    RETURN_IF_ERROR(ctx.ExpectDType(0, kQuantTypes));
  }
  RETURN_IF_ERROR(ctx.ExpectDType(3, kQuantTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(7, kQuantOrWideTypes));
  for (int i : {1, 4, 6}) RETURN_IF_ERROR(ctx.ExpectDType(i, {DType::kF32}));
  if (ctx.has_input(8)) RETURN_IF_ERROR(ctx.ExpectDType(8, {DType::kI32}));
  RETURN_IF_ERROR(ExpectSingleValue(ctx, 1, "x_scale"));
  RETURN_IF_ERROR(ExpectSingleValue(ctx, 2, "x_zero_point"));
  RETURN_IF_ERROR(ExpectSingleValue(ctx, 6, "y_scale"));
  RETURN_IF_ERROR(ExpectSingleValue(ctx, 7, "y_zero_point"));
  const TensorType& w = ctx.input_type(3);
  const int64_t out_channels = w.rank_known && w.rank() > 0 ? w.dims[0] : kUnknownDim;
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 4, "w_scale", out_channels, "output channels"));
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 5, "w_zero_point", out_channels, "output channels"));
  if (!quantize_input) RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 2, 1, ctx.input_type(0).dtype, false));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 5, 4, ctx.input_type(3).dtype, false));
  return InferConvLike(ctx, ConvInputs{0, 3, 8}, ctx.input_type(7).dtype);
}

namespace {

// ConvInteger's and MatMulInteger's operands: 2 to 4 inputs, inputs 0 and 1 quantized, the
// zero points 2 and 3 (when present) of their operands' dtypes.
Status ExpectIntegerOperands(const InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 4));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kQuantTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(1, kQuantTypes));
  for (int i : {2, 3}) {
    if (ctx.has_input(i) && ctx.input_type(i).dtype != ctx.input_type(i - 2).dtype) {
      return ctx.Error("input {} (zero point) has dtype {}, expected input {}'s dtype {}", i,
                       DTypeName(ctx.input_type(i).dtype), i - 2,
                       DTypeName(ctx.input_type(i - 2).dtype));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ConvInteger(InferContext& ctx) {
  RETURN_IF_ERROR(ExpectIntegerOperands(ctx));
  RETURN_IF_ERROR(ExpectSingleValue(ctx, 2, "x_zero_point"));
  const TensorType& w = ctx.input_type(1);
  const int64_t out_channels = w.rank_known && w.rank() > 0 ? w.dims[0] : kUnknownDim;
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 3, "w_zero_point", out_channels, "output channels"));
  return InferConvLike(ctx, ConvInputs{0, 1, -1}, DType::kI32);
}

// --- quantized matmul: QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp[, bias])
// (bias: edgec's int32 [N], see ops.def) and MatMulInteger(a, b, a_zp?, b_zp?) ---

Status QLinearMatMul(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(8, 9));
  if (ctx.has_input(8)) {
    RETURN_IF_ERROR(ctx.ExpectDType(8, {DType::kI32}));
    const TensorType& bias = ctx.input_type(8);
    const TensorType& bt = ctx.input_type(3);
    if (bias.rank_known && bias.rank() != 1) return ctx.Error("bias must be 1-D, got rank {}", bias.rank());
    if (bias.rank_known && bt.rank_known && bt.rank() >= 1 && bias.dims[0] != kUnknownDim &&
        bt.dims.back() != kUnknownDim && bias.dims[0] != bt.dims.back())
      return ctx.Error("bias has {} values for {} columns of b", bias.dims[0], bt.dims.back());
  }
  RETURN_IF_ERROR(ctx.ExpectDType(0, kQuantTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(3, kQuantTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(7, kQuantOrWideTypes));
  for (int i : {1, 4, 6}) RETURN_IF_ERROR(ctx.ExpectDType(i, {DType::kF32}));
  // a and y: per tensor or per row (M); b: per tensor or per column (N).
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(3);
  auto rows_or_cols = [](const TensorType& t, int from_end) {
    if (!t.rank_known) return kUnknownDim;
    return t.rank() >= 2 ? t.dims[t.rank() - from_end] : int64_t{1};
  };
  const int64_t rows = rows_or_cols(a, 2), cols = rows_or_cols(b, 1);
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 1, "a_scale", rows, "rows of a"));
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 4, "b_scale", cols, "columns of b"));
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 6, "y_scale", rows, "rows of y"));
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 2, "a_zero_point", rows, "rows of a"));
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 5, "b_zero_point", cols, "columns of b"));
  RETURN_IF_ERROR(ExpectSingleOrVector(ctx, 7, "y_zero_point", rows, "rows of y"));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 2, 1, ctx.input_type(0).dtype, false));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 5, 4, ctx.input_type(3).dtype, false));
  return InferMatMulLike(ctx, 0, 3, ctx.input_type(7).dtype);
}

Status MatMulInteger(InferContext& ctx) {
  RETURN_IF_ERROR(ExpectIntegerOperands(ctx));
  // Zero points: a scalar, a vector per row of A (M) / column of B (N), or N-D shaped
  // [..., M, 1] / [..., 1, N] broadcasting to the operand.
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  auto check_zp = [&](int zp, const TensorType& data, bool per_row) -> Status {
    if (!ctx.has_input(zp) || !data.rank_known) return Status::Ok();
    const TensorType& z = ctx.input_type(zp);
    if (!z.rank_known || IsSingleValue(z)) return Status::Ok();
    const int r = data.rank();
    Dims want;  // what a 1-D or N-D zero point must broadcast to
    if (z.rank() == 1) {
      want = {per_row ? (r >= 2 ? data.dims[r - 2] : 1) : data.dims[r - 1]};
    } else {
      want = data.dims;
      want[per_row ? r - 1 : r - 2] = 1;
    }
    bool ok = z.rank() <= static_cast<int>(want.size());
    for (int d = 0; ok && d < z.rank(); ++d) {
      const int64_t have = z.dims[z.rank() - 1 - d], need = want[want.size() - 1 - d];
      ok = !Known(have) || !Known(need) || have == need || (z.rank() > 1 && have == 1);
    }
    if (!ok) {
      return ctx.Error(
          "input {} (zero point) {} does not fit input {} {}: expected a scalar or "
          "one zero point per {}",
          zp, z.ToString(), zp - 2, data.ToString(), per_row ? "row" : "column");
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(check_zp(2, a, /*per_row=*/true));
  RETURN_IF_ERROR(check_zp(3, b, /*per_row=*/false));
  return InferMatMulLike(ctx, 0, 1, DType::kI32);
}

// --- QuantizedLookup(X, Table) ---

Status QuantizedLookup(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kQuantOrWideTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(1, kQuantTypes));
  const TensorType& t = ctx.input_type(1);
  const TensorType& x = ctx.input_type(0);
  const int64_t entries = x.dtype == DType::kI16 ? 65536 : 256;
  // Per channel (ops.def): Table [C, entries], C = X's dim on `axis`.
  if (t.rank_known && t.rank() == 2) {
    if (Known(t.dims[1]) && t.dims[1] != entries)
      return ctx.Error("input 1 (table) is {}, expected {} values per channel", t.ToString(), entries);
    if (x.rank_known) {
      auto a = NormalizeAxis(ctx.attrs().GetInt("axis", 1), x.rank(), "attribute axis");
      if (!a.ok()) return a.status().WithContext(ctx.label());
      const int axis = *a;
      const int64_t c = x.dims[axis];
      if (Known(c) && Known(t.dims[0]) && t.dims[0] != c)
        return ctx.Error("input 1 (table) is {}: {} channel tables, but input 0 {} has {} on axis {}", t.ToString(),
                         t.dims[0], x.ToString(), c, axis);
    }
  } else if (t.rank_known && (t.rank() != 1 || (Known(t.dims[0]) && t.dims[0] != entries))) {
    return ctx.Error("input 1 (table) is {}, expected {} values or [C, {}] (one table per channel)", t.ToString(),
                     entries, entries);
  } else if (ctx.attrs().Has("axis")) {
    return ctx.Error("attribute axis is for a per-channel table [C, {}], but input 1 (table) is {}", entries,
                     t.ToString());
  }
  ctx.output(0) = x.rank_known ? MakeType(t.dtype, x.dims) : UnknownRank(t.dtype);
  return Status::Ok();
}

namespace {

// The operands of a quantized pool (X, X_scale, X_zp, Y_scale, Y_zp): per-tensor scales and zero
// points, X of a quantized type; returns Y's dtype (u8 or i8: Y_zp's, else X's).
StatusOr<DType> QuantizedPoolOperands(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(4, 5));
  for (int i : {0, 1, 3}) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kQuantTypes));
  const char* names[] = {"", "X scale", "X zero point", "Y scale", "Y zero point"};
  for (int i : {1, 2, 3, 4}) RETURN_IF_ERROR(ExpectSingleValue(ctx, i, names[i]));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 2, 1, ctx.input_type(0).dtype));
  const DType out = ctx.has_input(4) ? ctx.input_type(4).dtype : ctx.input_type(0).dtype;
  if (out != DType::kU8 && out != DType::kI8)
    return ctx.Error("input 4 (Y zero point) has dtype {}, expected u8 or i8", DTypeName(out));
  return out;
}

}  // namespace

// --- QLinearGlobalAveragePool(X, X_scale, X_zp, Y_scale, Y_zp) ---

Status QLinearGlobalAveragePool(InferContext& ctx) {
  ASSIGN_OR_RETURN(const DType out, QuantizedPoolOperands(ctx));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(out);
    return Status::Ok();
  }
  if (x.rank() < 3) return ctx.Error("input 0 is {}, expected at least 3 dims (N, C, spatial...)", x.ToString());
  Dims d(x.rank(), 1);
  d[0] = x.dims[0];
  d[1] = x.dims[1];
  ctx.output(0) = MakeType(out, d);
  return Status::Ok();
}

// --- QLinearAveragePool(X, X_scale, X_zp, Y_scale, Y_zp) ---

Status QLinearAveragePool(InferContext& ctx) {
  ASSIGN_OR_RETURN(const DType out, QuantizedPoolOperands(ctx));
  const int64_t include = ctx.attrs().GetInt("count_include_pad", 0);
  if (include != 0 && include != 1) return ctx.Error("attribute count_include_pad is {}, expected 0 or 1", include);
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(out);
    return Status::Ok();
  }
  if (x.rank() < 3 || x.rank() > 5)
    return ctx.Error("input 0 is {}, expected 3 to 5 dims (N, C, 1 to 3 spatial)", x.ToString());
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(ctx.attrs(), x.rank() - 2, options);
  if (!attrs.ok()) return attrs.status().WithContext(ctx.label());
  auto g = ForwardWindowGeometry(*attrs, Dims(x.dims.begin() + 2, x.dims.end()));
  if (!g.ok()) return g.status().WithContext(ctx.label());
  Dims d = {x.dims[0], x.dims[1]};
  d.insert(d.end(), g->out.begin(), g->out.end());
  ctx.output(0) = MakeType(out, d);
  return Status::Ok();
}

// --- QLinearAdd, QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp) ---

namespace {

Status QLinearBinary(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(7, 8));
  for (int i : {0, 1, 3, 4, 6}) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kQuantOrWideTypes));
  RETURN_IF_ERROR(ctx.ExpectDType(3, kQuantOrWideTypes));
  const char* names[] = {"A scale", "A zero point", "", "B scale", "B zero point", "", "C scale", "C zero point"};
  for (int i : {1, 2, 4, 5, 6, 7}) RETURN_IF_ERROR(ExpectSingleValue(ctx, i, names[i]));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 2, 1, ctx.input_type(0).dtype));
  RETURN_IF_ERROR(ExpectZeroPointLike(ctx, 5, 4, ctx.input_type(3).dtype));
  const DType out = ctx.has_input(7) ? ctx.input_type(7).dtype : ctx.input_type(0).dtype;
  if (out != DType::kU8 && out != DType::kI8 && out != DType::kI16)
    return ctx.Error("input 7 (C zero point) has dtype {}, expected u8, i8 or i16", DTypeName(out));
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(3);
  if (!a.rank_known || !b.rank_known) {
    ctx.output(0) = UnknownRank(out);
    return Status::Ok();
  }
  auto dims = BroadcastDims(a.dims, b.dims);
  if (!dims.ok()) return ctx.Error("inputs 0 and 3: {}", dims.status().message());
  ctx.output(0) = MakeType(out, *dims);
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(InferContext, QLinearBinary, QLinearAdd, QLinearMul)

}  // namespace edgec::infer
