// Reference kernels for the quant family (see ops.def). ONNX QLinear semantics: int32
// accumulation of zero-point-shifted operands, then requantization in f32 with round half
// to even and saturation to the output type.
#include <algorithm>
#include <array>
#include <map>
#include <cmath>
#include <limits>

#include "kernels/ref/conv_util.h"
#include "kernels/ref/elementwise_util.h"
#include "kernels/ref/kernel.h"
#include "kernels/ref/matmul_util.h"
#include "ir/conv_geometry.h"
#include "quant/avg_pool.h"
#include "quant/fixed_point.h"
#include "quant/output_table.h"
#include "quant/ratio_forms.h"

namespace edgec::ref {

namespace {

// A quantization parameter: one value, or one per channel.
template <typename V>
struct PerChannel {
  std::vector<V> values;
  V at(int64_t c) const { return values.size() == 1 ? values[0] : values[c]; }
  bool per_tensor() const { return values.size() == 1; }
};

PerChannel<float> ReadScales(const Tensor& t) {
  PerChannel<float> s;
  for (double v : t.ToDoubleVector()) s.values.push_back(static_cast<float>(v));
  return s;
}

// An absent zero point is 0.
PerChannel<int32_t> ReadZeroPoints(const Tensor* t) {
  PerChannel<int32_t> z;
  if (!t) return PerChannel<int32_t>{{0}};
  for (int64_t v : t->ToInt64Vector()) z.values.push_back(static_cast<int32_t>(v));
  return z;
}

// Round half to even (the default rounding mode), then clamp to Q's range.
template <typename Q>
Q RoundAndSaturate(float v, int32_t zero_point) {
  if (std::isnan(v)) v = 0;
  float r = std::nearbyint(v) + static_cast<float>(zero_point);
  r = std::min(std::max(r, static_cast<float>(std::numeric_limits<Q>::min())),
               static_cast<float>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(r);
}

// Writes round_and_saturate(value(i), zero_point(i)) into the u8, i8 or i16 tensor y.
template <typename ValueFn, typename ZeroPointFn>
Status StoreQuantized(const KernelContext& ctx, Tensor& y, ValueFn value, ZeroPointFn zero_point) {
  auto store = [&](auto tag) {
    using Q = decltype(tag);
    Q* yp = y.data<Q>();
    for (int64_t i = 0; i < y.numel(); ++i) yp[i] = RoundAndSaturate<Q>(value(i), zero_point(i));
  };
  switch (y.dtype()) {
    case DType::kU8: store(uint8_t{}); return Status::Ok();
    case DType::kI8: store(int8_t{}); return Status::Ok();
    case DType::kI16: store(int16_t{}); return Status::Ok();
    default: return ctx.Error("output dtype {} is not a quantized type", DTypeName(y.dtype()));
  }
}

// How QLinearConv/QLinearMatMul turn an int32 accumulator into the output type (see
// ops.def): `edgec_requant` "float" (the default, ONNX's formula: f32 multiply by
// x_scale·w_scale/y_scale, round half to even) or "fixed_point" (quant/fixed_point.h, what the
// NPU computes); then the zero point, saturation, and the optional fused activation clamp
// [edgec_qmin, edgec_qmax] in the output's integer domain; then, with `edgec_output_table`
// (256 values of the output type, fused from a QuantizedLookup that read only this output),
// the value v becomes table[v - lowest].
struct Requantizer {
  bool fixed_point = false;
  std::vector<float> multiplier;                    // per channel (float mode)
  std::vector<quant::FixedPointMultiplier> fixed;  // per channel (fixed-point mode)
  int32_t qmin = 0, qmax = 0;
  int32_t lowest = 0;
  std::vector<int64_t> table;  // empty: none
  int32_t Finish(int32_t v) const { return table.empty() ? v : static_cast<int32_t>(table[v - lowest]); }

  float Value(int32_t acc, int64_t c) const { return static_cast<float>(acc) * multiplier[c]; }
  int32_t Apply(int32_t acc, int64_t c, int32_t zero_point) const {
    if (fixed_point) return quant::Requantize(acc, fixed[c], zero_point, qmin, qmax);
    float r = std::nearbyint(Value(acc, c)) + static_cast<float>(zero_point);
    r = std::min(std::max(r, static_cast<float>(qmin)), static_cast<float>(qmax));
    return static_cast<int32_t>(r);
  }
};

StatusOr<Requantizer> MakeRequantizer(const KernelContext& ctx, const std::vector<float>& multiplier,
                                      const std::vector<double>& real_multiplier, DType out) {
  Requantizer r;
  const std::string mode = ctx.attrs.GetString("edgec_requant", "float");
  if (mode != "float" && mode != "fixed_point")
    return ctx.Error("edgec_requant is '{}', expected 'float' or 'fixed_point'", mode);
  r.fixed_point = mode == "fixed_point";
  r.multiplier = multiplier;
  if (r.fixed_point) {
    for (double m : real_multiplier) {
      auto fm = quant::QuantizeMultiplier(m);
      if (!fm.ok()) return ctx.Error("requantization multiplier {}: {}", m, fm.status().message());
      r.fixed.push_back(*fm);
    }
  }
  // int16: an int16 point of the mixed precision written by the integer op (ops.def).
  const bool u8 = out == DType::kU8, i16 = out == DType::kI16;
  if (!u8 && !i16 && out != DType::kI8) return ctx.Error("output dtype {} is not a quantized type", DTypeName(out));
  const int64_t lo = u8 ? 0 : i16 ? -32768 : -128, hi = u8 ? 255 : i16 ? 32767 : 127;
  r.qmin = static_cast<int32_t>(std::max<int64_t>(ctx.attrs.GetInt("edgec_qmin", lo), lo));
  r.qmax = static_cast<int32_t>(std::min<int64_t>(ctx.attrs.GetInt("edgec_qmax", hi), hi));
  if (r.qmin > r.qmax) return ctx.Error("edgec_qmin {} > edgec_qmax {}", r.qmin, r.qmax);
  r.lowest = static_cast<int32_t>(lo);
  if (i16 && ctx.attrs.Has("edgec_output_table")) return ctx.Error("edgec_output_table on an int16 output");
  auto table = quant::ReadOutputTable(ctx.attrs, out);
  if (!table.ok()) return ctx.Error("{}", table.status().message());
  r.table = std::move(table).value();
  if (!r.table.empty() && ctx.op != OpKind::kQLinearConv && ctx.op != OpKind::kQLinearMatMul)
    return ctx.Error("edgec_output_table is for QLinearConv and QLinearMatMul");
  return r;
}

// Writes rq.Apply(acc(i), channel(i), zero_point(i)) into the u8, i8 or i16 tensor y.
template <typename AccFn, typename ChannelFn, typename ZeroPointFn>
void StoreRequantized(Tensor& y, const Requantizer& rq, AccFn acc, ChannelFn channel, ZeroPointFn zero_point) {
  auto store = [&](auto* yp) {
    using Q = std::remove_pointer_t<decltype(yp)>;
    for (int64_t i = 0; i < y.numel(); ++i) yp[i] = static_cast<Q>(rq.Finish(rq.Apply(acc(i), channel(i), zero_point(i))));
  };
  if (y.dtype() == DType::kU8) store(y.data<uint8_t>());
  else if (y.dtype() == DType::kI16) store(y.data<int16_t>());
  else store(y.data<int8_t>());
}

// The elements of a u8/i8 tensor minus a zero point: zero_point_of(i) picks element i's.
template <typename ZeroPointFn>
std::vector<int32_t> Shifted(const Tensor& t, ZeroPointFn zero_point_of) {
  std::vector<int32_t> out(t.numel());
  auto shift = [&](const auto* p) {
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<int32_t>(p[i]) - zero_point_of(i);
  };
  if (t.dtype() == DType::kU8) {
    shift(t.data<uint8_t>());
  } else {
    EDGEC_CHECK(t.dtype() == DType::kI8);  // inference admits only u8 and i8
    shift(t.data<int8_t>());
  }
  return out;
}

// Channel of flat element i along `axis` for per-axis parameters (0 when per tensor).
struct AxisIndexer {
  int64_t block = 1, channels = 1;
  bool per_axis = false;
  int64_t operator()(int64_t i) const { return per_axis ? (i / block) % channels : 0; }
};
AxisIndexer MakeAxisIndexer(const Tensor& x, int64_t axis_attr, size_t param_count) {
  AxisIndexer ix;
  if (param_count <= 1 || x.rank() == 0) return ix;
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + x.rank() : axis_attr);
  ix.per_axis = true;
  ix.channels = x.dim(axis);
  for (int d = axis + 1; d < x.rank(); ++d) ix.block *= x.dim(d);
  return ix;
}

// The integer convolution of ConvInteger and QLinearConv: int32 sums of shifted operands,
// starting from `bias` when given. W's zero point may be per output channel.
StatusOr<std::vector<int32_t>> IntegerConv(const KernelContext& ctx, const Tensor& x, int32_t x_zp,
                                           const Tensor& w, const PerChannel<int32_t>& w_zp,
                                           const Tensor* bias, const Dims& y_dims) {
  ASSIGN_OR_RETURN(ConvProblem p, MakeConvProblem(ctx.label, ctx.attrs, x.dims(), w.dims(), false));
  const int64_t per_oc = w.dim(0) ? w.numel() / w.dim(0) : 0;
  const std::vector<int32_t> xs = Shifted(x, [&](int64_t) { return x_zp; });
  const std::vector<int32_t> ws = Shifted(w, [&](int64_t i) { return w_zp.at(i / per_oc); });
  std::vector<int32_t> acc(NumElements(y_dims), 0);
  if (bias) {
    const int32_t* b = bias->data<int32_t>();
    const int64_t plane = p.out_plane();
    for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i)
      acc[i] = b[(i / plane) % p.out_channels];
  }
  DirectConvAccumulate<false, int32_t>(p, xs.data(), ws.data(), acc.data());
  return acc;
}

// The integer matmul of MatMulInteger and QLinearMatMul over shifted operands.
// Zero points broadcast to their operand: a vector is per row of A / per column of B.
std::vector<int32_t> IntegerMatMul(const Tensor& a, const Tensor* a_zp, const Tensor& b,
                                   const Tensor* b_zp) {
  auto zero_points_for = [](const Tensor& data, const Tensor* zp, bool per_row) {
    std::vector<int32_t> values = ReadZeroPoints(zp).values;
    Dims zp_dims = zp ? zp->dims() : Dims{};
    if (values.size() == 1) zp_dims = {};
    if (zp_dims.size() == 1 && per_row && data.rank() >= 2) zp_dims = {zp_dims[0], 1};
    return std::pair{values, BroadcastMap(zp_dims, data.dims())};
  };
  const auto a_zps = zero_points_for(a, a_zp, /*per_row=*/true);
  const auto b_zps = zero_points_for(b, b_zp, /*per_row=*/false);
  const std::vector<int32_t> as =
      Shifted(a, [&](int64_t i) { return a_zps.first[a_zps.second(i)]; });
  const std::vector<int32_t> bs =
      Shifted(b, [&](int64_t i) { return b_zps.first[b_zps.second(i)]; });
  const MatMulProblem p = MakeMatMulProblem(a.dims(), b.dims());
  std::vector<int32_t> acc(p.batch() * p.m * p.n);
  MatMulBatched<int32_t, int32_t>(p, as.data(), bs.data(), acc.data());
  return acc;
}

int64_t MatRows(const Tensor& a) { return a.rank() >= 2 ? a.dim(a.rank() - 2) : 1; }
int64_t MatCols(const Tensor& b) { return b.rank() >= 2 ? b.dim(b.rank() - 1) : 1; }

}  // namespace

// --- quantize and dequantize ---

Status QuantizeLinear(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const PerChannel<float> scale = ReadScales(*ctx.inputs[1]);
  const PerChannel<int32_t> zp = ReadZeroPoints(ctx.input(2));
  const AxisIndexer channel = MakeAxisIndexer(x, ctx.attrs.GetInt("axis", 1), scale.values.size());
  std::vector<float> xf(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i)
    xf[i] = static_cast<float>(LoadAsDouble(x.dtype(), x.raw(), i));
  return StoreQuantized(
      ctx, ctx.outputs[0], [&](int64_t i) { return xf[i] / scale.at(channel(i)); },
      [&](int64_t i) { return zp.at(channel(i)); });
}

Status DequantizeLinear(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const PerChannel<float> scale = ReadScales(*ctx.inputs[1]);
  const PerChannel<int32_t> zp = ReadZeroPoints(ctx.input(2));
  if (x.dtype() == DType::kI32) {
    for (int32_t z : zp.values) {
      if (z != 0) return ctx.Error("input 2 (zero point) must be 0 for int32 input, got {}", z);
    }
  }
  const AxisIndexer channel = MakeAxisIndexer(x, ctx.attrs.GetInt("axis", 1), scale.values.size());
  Tensor& y = ctx.outputs[0];
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = channel(i);
    const float v = static_cast<float>(LoadAsInt64(x.dtype(), x.raw(), i) - zp.at(c)) * scale.at(c);
    StoreFromDouble(y.dtype(), y.raw(), i, v);
  }
  return Status::Ok();
}

// DynamicQuantizeLinear (ONNX's formula, in f32): the range [min(0, min x), max(0, max x)]
// over 255 steps, zero point round(−min / scale) saturated to u8, y = saturate(round(x / scale)
// + zero point), rounding half to even. An all-zero x has scale 0, zero point 0 and y 0.
Status DynamicQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const float* v = x.data<float>();
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (std::isnan(v[i])) return ctx.Error("input holds NaN at flat index {}", i);
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  auto saturate = [](float r) { return static_cast<uint8_t>(std::clamp(r, 0.0f, 255.0f)); };
  const uint8_t zp = scale == 0 ? 0 : saturate(std::nearbyint(0.0f - lo / scale));
  uint8_t* y = ctx.outputs[0].data<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    y[i] = scale == 0 ? 0 : saturate(std::nearbyint(v[i] / scale) + static_cast<float>(zp));
  }
  ctx.outputs[1].data<float>()[0] = scale;
  ctx.outputs[2].data<uint8_t>()[0] = zp;
  return Status::Ok();
}

// --- quantized convolution ---

Status QLinearConv(KernelContext& ctx) {
  const Tensor& w = *ctx.inputs[3];
  const float x_scale = ReadScales(*ctx.inputs[1]).at(0);
  const int32_t x_zp = ReadZeroPoints(ctx.input(2)).at(0);
  // `edgec_quantize_input` (fused from the QuantizeLinear that alone fed input 0): input 0 is
  // f32 and is first quantized by x_scale and x_zero_point, as QuantizeLinear does.
  Tensor quantized;
  const bool quantize_input = ctx.attrs.GetInt("edgec_quantize_input", 0) != 0;
  if (quantize_input) {
    const Tensor& xf = *ctx.inputs[0];
    if (xf.dtype() != DType::kF32) return ctx.Error("edgec_quantize_input needs an f32 input 0, got {}", DTypeName(xf.dtype()));
    if (!ctx.input(2)) return ctx.Error("edgec_quantize_input needs input 2 (x_zero_point) for the quantized type");
    quantized = Tensor(ctx.input(2)->dtype(), xf.dims());
    const float* xp = xf.data<float>();
    RETURN_IF_ERROR(StoreQuantized(ctx, quantized, [&](int64_t i) { return xp[i] / x_scale; }, [&](int64_t) { return x_zp; }));
  }
  const Tensor& x = quantize_input ? quantized : *ctx.inputs[0];
  const PerChannel<float> w_scale = ReadScales(*ctx.inputs[4]);
  const PerChannel<int32_t> w_zp = ReadZeroPoints(ctx.input(5));
  const float y_scale = ReadScales(*ctx.inputs[6]).at(0);
  const int32_t y_zp = ReadZeroPoints(ctx.input(7)).at(0);
  Tensor& y = ctx.outputs[0];
  ASSIGN_OR_RETURN(std::vector<int32_t> acc,
                   IntegerConv(ctx, x, x_zp, w, w_zp, ctx.input(8), y.dims()));
  const int64_t out_channels = w.dim(0);
  const int64_t planes = y.dim(0) * out_channels;
  const int64_t plane = planes ? y.numel() / planes : 1;
  std::vector<float> multiplier(out_channels);
  std::vector<double> real(out_channels);
  for (int64_t oc = 0; oc < out_channels; ++oc) {
    multiplier[oc] = x_scale * w_scale.at(oc) / y_scale;
    real[oc] = static_cast<double>(x_scale) * w_scale.at(oc) / y_scale;
  }
  ASSIGN_OR_RETURN(Requantizer rq, MakeRequantizer(ctx, multiplier, real, y.dtype()));
  StoreRequantized(
      y, rq, [&](int64_t i) { return acc[i]; }, [&](int64_t i) { return (i / plane) % out_channels; },
      [&](int64_t) { return y_zp; });
  return Status::Ok();
}

Status ConvInteger(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  const int32_t x_zp = ReadZeroPoints(ctx.input(2)).at(0);
  Tensor& y = ctx.outputs[0];
  ASSIGN_OR_RETURN(std::vector<int32_t> acc,
                   IntegerConv(ctx, x, x_zp, w, ReadZeroPoints(ctx.input(3)), nullptr, y.dims()));
  std::copy(acc.begin(), acc.end(), y.data<int32_t>());
  return Status::Ok();
}

// --- quantized matmul ---

Status QLinearMatMul(KernelContext& ctx) {
  const Tensor& a = *ctx.inputs[0];
  const Tensor& b = *ctx.inputs[3];
  const PerChannel<float> a_scale = ReadScales(*ctx.inputs[1]);
  const PerChannel<float> b_scale = ReadScales(*ctx.inputs[4]);
  const PerChannel<float> y_scale = ReadScales(*ctx.inputs[6]);
  const PerChannel<int32_t> y_zp = ReadZeroPoints(ctx.input(7));
  std::vector<int32_t> acc = IntegerMatMul(a, ctx.input(2), b, ctx.input(5));
  const int64_t rows = MatRows(a), cols = MatCols(b);
  if (const Tensor* bias = ctx.input(8)) {  // edgec's int32 bias per column (ops.def)
    if (bias->numel() != cols) return ctx.Error("bias has {} values for {} columns", bias->numel(), cols);
    const int32_t* bd = bias->data<int32_t>();
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += bd[i % cols];
  }
  // One multiplier per (row, column) pair of the scales' shapes: a's and y's per row, b's
  // per column (per tensor: one).
  const int64_t sr = std::max(a_scale.values.size(), y_scale.values.size()) > 1 ? rows : 1;
  const int64_t sc = b_scale.per_tensor() ? 1 : cols;
  std::vector<float> multiplier(sr * sc);
  std::vector<double> real(sr * sc);
  for (int64_t r = 0; r < sr; ++r) {
    for (int64_t c = 0; c < sc; ++c) {
      multiplier[r * sc + c] = a_scale.at(r) * b_scale.at(c) / y_scale.at(r);
      real[r * sc + c] = static_cast<double>(a_scale.at(r)) * b_scale.at(c) / y_scale.at(r);
    }
  }
  ASSIGN_OR_RETURN(Requantizer rq, MakeRequantizer(ctx, multiplier, real, ctx.outputs[0].dtype()));
  StoreRequantized(
      ctx.outputs[0], rq, [&](int64_t i) { return acc[i]; },
      [&](int64_t i) { return (sr > 1 ? (i / cols) % rows : 0) * sc + (sc > 1 ? i % cols : 0); },
      [&](int64_t i) { return y_zp.at((i / cols) % rows); });
  return Status::Ok();
}

Status MatMulInteger(KernelContext& ctx) {
  const std::vector<int32_t> acc =
      IntegerMatMul(*ctx.inputs[0], ctx.input(2), *ctx.inputs[1], ctx.input(3));
  std::copy(acc.begin(), acc.end(), ctx.outputs[0].data<int32_t>());
  return Status::Ok();
}

// --- table lookup ---

// Per channel (Table [C, entries], ops.def): element i reads the table of its index along `axis`.
Status PerChannelLookup(KernelContext& ctx, const Tensor& x, const Tensor& table, int64_t entries) {
  const int64_t rank = x.rank(), given = ctx.attrs.GetInt("axis", 1);
  const int64_t axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) return ctx.Error("attribute axis {} is out of range for input 0 {}", given, x.TypeString());
  const int64_t channels = x.dim(axis);
  if (table.dim(0) != channels || table.dim(1) != entries)
    return ctx.Error("input 1 (table) is {}, expected [{}, {}] (one table per channel of axis {})", table.TypeString(),
                     channels, entries, axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.dim(d);
  const auto* t = static_cast<const uint8_t*>(table.raw());
  auto* y = static_cast<uint8_t*>(ctx.outputs[0].raw());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t index = LoadAsInt64(x.dtype(), x.raw(), i) - (x.dtype() == DType::kI16 ? -32768 : x.dtype() == DType::kI8 ? -128 : 0);
    y[i] = t[(i / inner) % channels * entries + index];
  }
  return Status::Ok();
}

Status QuantizedLookup(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const Tensor& table = *ctx.inputs[1];
  const auto* t = static_cast<const uint8_t*>(table.raw());
  auto* y = static_cast<uint8_t*>(ctx.outputs[0].raw());
  if (table.rank() == 2) return PerChannelLookup(ctx, x, table, x.dtype() == DType::kI16 ? 65536 : 256);
  if (x.dtype() == DType::kI16) {  // 65536 entries, Table[x + 32768]
    if (table.numel() != 65536) return ctx.Error("input 1 (table) has {} values, expected 65536", table.numel());
    const int16_t* xp = x.data<int16_t>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = t[int32_t{xp[i]} + 32768];
    return Status::Ok();
  }
  if (table.numel() != 256) return ctx.Error("input 1 (table) has {} values, expected 256", table.numel());
  const auto* xp = static_cast<const uint8_t*>(x.raw());
  const uint8_t flip = x.dtype() == DType::kI8 ? 0x80 : 0;  // i8 -128..127 -> index 0..255
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = t[xp[i] ^ flip];
  return Status::Ok();
}

// --- quantized global average pool ---

Status QLinearGlobalAveragePool(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const float sx = ReadScales(*ctx.inputs[1]).at(0), sy = ReadScales(*ctx.inputs[3]).at(0);
  const int32_t zx = ReadZeroPoints(ctx.input(2)).at(0), zy = ReadZeroPoints(ctx.input(4)).at(0);
  Tensor& y = ctx.outputs[0];
  const int64_t planes = x.dim(0) * x.dim(1), plane = planes ? x.numel() / planes : 0;
  if (plane == 0) return ctx.Error("input 0 {} has an empty spatial plane", x.TypeString());
  // The real multiplier of the fixed-point form: x_scale / (y_scale * count).
  ASSIGN_OR_RETURN(Requantizer rq, MakeRequantizer(ctx, {sx / sy / static_cast<float>(plane)},
                                                   {static_cast<double>(sx) / sy / static_cast<double>(plane)}, y.dtype()));
  std::vector<int32_t> out(planes);
  for (int64_t c = 0; c < planes; ++c) {
    if (rq.fixed_point) {
      int32_t sum = 0;
      for (int64_t i = 0; i < plane; ++i) sum += static_cast<int32_t>(LoadAsInt64(x.dtype(), x.raw(), c * plane + i)) - zx;
      out[c] = rq.Apply(sum, 0, zy);
      continue;
    }
    // The island's arithmetic: f32 DequantizeLinear, the reference pool's f64 mean, f32 Quantize.
    double sum = 0;
    for (int64_t i = 0; i < plane; ++i)
      sum += static_cast<double>(
          static_cast<float>(LoadAsInt64(x.dtype(), x.raw(), c * plane + i) - zx) * sx);
    float v = static_cast<float>(sum / static_cast<double>(plane)) / sy;
    if (std::isnan(v)) v = 0;
    const float r = std::nearbyint(v) + static_cast<float>(zy);
    out[c] = static_cast<int32_t>(std::min(std::max(r, static_cast<float>(rq.qmin)), static_cast<float>(rq.qmax)));
  }
  for (int64_t c = 0; c < planes; ++c) StoreFromDouble(y.dtype(), y.raw(), c, out[c]);
  return Status::Ok();
}

// --- quantized average pool ---

Status QLinearAveragePool(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const float sx = ReadScales(*ctx.inputs[1]).at(0), sy = ReadScales(*ctx.inputs[3]).at(0);
  const int32_t zx = ReadZeroPoints(ctx.input(2)).at(0), zy = ReadZeroPoints(ctx.input(4)).at(0);
  Tensor& y = ctx.outputs[0];
  const int spatial = static_cast<int>(x.rank()) - 2;
  if (spatial < 1 || spatial > 3) return ctx.Error("input 0 {} has {} spatial dims, expected 1 to 3", x.TypeString(), spatial);
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(ctx.attrs, spatial, options);
  if (!attrs.ok()) return attrs.status().WithContext(ctx.label);
  auto g = ForwardWindowGeometry(*attrs, Dims(x.dims().begin() + 2, x.dims().end()));
  if (!g.ok()) return g.status().WithContext(ctx.label);
  const bool include_pad = ctx.attrs.GetInt("count_include_pad", 0) != 0;
  const std::vector<int64_t> divisor = quant::AveragePoolDivisors(*g, include_pad);
  ASSIGN_OR_RETURN(Requantizer rq, MakeRequantizer(ctx, {1.f}, {1.0}, y.dtype()));
  // The fixed-point multiplier of each distinct divisor (a handful: border classes).
  std::map<int64_t, quant::FixedPointMultiplier> mult;
  if (rq.fixed_point) {
    for (int64_t d : divisor) {
      if (d <= 0 || mult.count(d)) continue;
      auto m = quant::AveragePoolMultiplier(sx, sy, d);
      if (!m.ok()) return ctx.Error("requantization multiplier for divisor {}: {}", d, m.status().message());
      mult[d] = *m;
    }
  }
  // Spatial dims padded to 3 (depth, height, width), as the float pool walks them.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, st{1, 1, 1}, dil{1, 1, 1}, pb{0, 0, 0};
  for (int i = 0; i < spatial; ++i) {
    const int a = 3 - spatial + i;
    in[a] = g->in[i], out[a] = g->out[i], k[a] = g->kernel[i], st[a] = g->strides[i], dil[a] = g->dilations[i];
    pb[a] = g->pad_begin[i];
  }
  const int64_t planes = x.dim(0) * x.dim(1), in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  for (int64_t c = 0; c < planes; ++c) {
    for (int64_t o = 0; o < out_plane; ++o) {
      const int64_t o3[3] = {o / (out[1] * out[2]), o / out[2] % out[1], o % out[2]};
      int32_t isum = 0;
      double fsum = 0;
      for (int64_t kd = 0; kd < k[0]; ++kd) {
        const int64_t id = o3[0] * st[0] - pb[0] + kd * dil[0];
        if (id < 0 || id >= in[0]) continue;
        for (int64_t kh = 0; kh < k[1]; ++kh) {
          const int64_t ih = o3[1] * st[1] - pb[1] + kh * dil[1];
          if (ih < 0 || ih >= in[1]) continue;
          for (int64_t kw = 0; kw < k[2]; ++kw) {
            const int64_t iw = o3[2] * st[2] - pb[2] + kw * dil[2];
            if (iw < 0 || iw >= in[2]) continue;
            const int64_t q = LoadAsInt64(x.dtype(), x.raw(), c * in_plane + (id * in[1] + ih) * in[2] + iw) - zx;
            isum += static_cast<int32_t>(q);
            fsum += static_cast<double>(static_cast<float>(q) * sx);  // f32 DQ, the pool's f64 sum
          }
        }
      }
      const int64_t d = divisor[o];
      int32_t r;
      if (rq.fixed_point) {
        r = d > 0 ? quant::Requantize(isum, mult[d], zy, rq.qmin, rq.qmax) : std::clamp(zy, rq.qmin, rq.qmax);
      } else {
        // The island's arithmetic: the f32 pool output (0 for an empty window), f32 Quantize.
        const float pooled = d > 0 ? static_cast<float>(fsum / static_cast<double>(d)) : 0.f;
        float v = pooled / sy;
        if (std::isnan(v)) v = 0;
        const float f = std::nearbyint(v) + static_cast<float>(zy);
        r = static_cast<int32_t>(std::min(std::max(f, static_cast<float>(rq.qmin)), static_cast<float>(rq.qmax)));
      }
      StoreFromDouble(y.dtype(), y.raw(), c * out_plane + o, r);
    }
  }
  return Status::Ok();
}

// --- quantized add and multiply ---

namespace {

// DQ(A) op DQ(B) ─► Q with numpy broadcasting and per-tensor parameters (QLinearAdd,
// QLinearMul): float mode is the ratio form of quant/ratio_forms.h (ONNX Runtime's), with
// input 3 as the operand folded first unless input 0 is the broadcast one (`make_ratio`,
// `ratio`); fixed_point mode is `fixed` on the integer operands with the parameters `make` returns (quant/fixed_point.h).
template <typename Params, typename RatioParams>
Status QLinearBinary(KernelContext& ctx, RatioParams (*make_ratio)(float, int32_t, float, int32_t, float, int32_t),
                     float (*ratio)(int32_t, int32_t, const RatioParams&),
                     StatusOr<Params> (*make)(double, int32_t, double, int32_t, double, int32_t, int32_t, int32_t, DType,
                                              DType),
                     int32_t (*fixed)(int32_t, int32_t, const Params&)) {
  const Tensor& a = *ctx.inputs[0];
  const Tensor& b = *ctx.inputs[3];
  const float sa = ReadScales(*ctx.inputs[1]).at(0), sb = ReadScales(*ctx.inputs[4]).at(0),
              sy = ReadScales(*ctx.inputs[6]).at(0);
  const int32_t za = ReadZeroPoints(ctx.input(2)).at(0), zb = ReadZeroPoints(ctx.input(5)).at(0),
                zy = ReadZeroPoints(ctx.input(7)).at(0);
  Tensor& y = ctx.outputs[0];
  // The clamp and the requantization mode as the other QLinear kernels read them.
  ASSIGN_OR_RETURN(Requantizer rq, MakeRequantizer(ctx, {1.f}, {1.0}, y.dtype()));
  Params params;
  if (rq.fixed_point) {
    auto p = make(sa, za, sb, zb, sy, zy, rq.qmin, rq.qmax, a.dtype(), b.dtype());
    if (!p.ok()) return ctx.Error("{}", p.status().message());
    params = *p;
  }
  const bool swap = a.numel() < y.numel() && b.numel() == y.numel();
  const RatioParams form = swap ? make_ratio(sb, zb, sa, za, sy, zy) : make_ratio(sa, za, sb, zb, sy, zy);
  const Dims* ins[] = {&a.dims(), &b.dims()};
  std::vector<int32_t> out(y.numel());
  ForEachBroadcast(y.dims(), ins, [&](int64_t o, const int64_t* in) {
    const int32_t qa = static_cast<int32_t>(LoadAsInt64(a.dtype(), a.raw(), in[0]));
    const int32_t qb = static_cast<int32_t>(LoadAsInt64(b.dtype(), b.raw(), in[1]));
    if (rq.fixed_point) {
      out[o] = fixed(qa, qb, params);
      return;
    }
    const float v = swap ? ratio(qb, qa, form) : ratio(qa, qb, form);
    out[o] = quant::RoundAndClamp(v, static_cast<float>(zy), rq.qmin, rq.qmax);
  });
  for (int64_t i = 0; i < y.numel(); ++i) StoreFromDouble(y.dtype(), y.raw(), i, out[i]);
  return Status::Ok();
}

}  // namespace

Status QLinearAdd(KernelContext& ctx) {
  // An int16 operand is lifted by 2^15 instead of 2^20 (quant/fixed_point.h).
  auto make = [](double sa, int32_t za, double sb, int32_t zb, double sy, int32_t zy, int32_t lo, int32_t hi, DType ta,
                 DType tb) {
    const bool wide = ta == DType::kI16 || tb == DType::kI16;
    return quant::MakeQuantizedAdd(sa, za, sb, zb, sy, zy, lo, hi, wide ? quant::kWideAddLeftShift : quant::kAddLeftShift);
  };
  return QLinearBinary<quant::QuantizedAddParams>(ctx, quant::MakeRatioAdd, quant::RatioAdd, make, quant::QuantizedAdd);
}

Status QLinearMul(KernelContext& ctx) {
  auto make = [](double sa, int32_t za, double sb, int32_t zb, double sy, int32_t zy, int32_t lo, int32_t hi, DType ta,
                 DType tb) -> StatusOr<quant::QuantizedMulParams> {
    if (ta == DType::kI16 && tb == DType::kI16) return InvalidArgument("fixed-point multiply of two int16 operands");
    return quant::MakeQuantizedMul(sa, za, sb, zb, sy, zy, lo, hi);
  };
  return QLinearBinary<quant::QuantizedMulParams>(ctx, quant::MakeRatioMul, quant::RatioMul, make, quant::QuantizedMul);
}

}  // namespace edgec::ref
