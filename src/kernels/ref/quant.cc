// Reference kernels for the quant family (see ops.def). ONNX QLinear semantics: int32
// accumulation of zero-point-shifted operands, then requantization in f32 with round half
// to even and saturation to the output type.
#include <cmath>
#include <limits>

#include "kernels/ref/conv_util.h"
#include "kernels/ref/kernel.h"
#include "kernels/ref/matmul_util.h"

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

// Writes round_and_saturate(value(i), zero_point(i)) into the u8 or i8 tensor y.
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
    default: return ctx.Error("output dtype {} is not a quantized type", DTypeName(y.dtype()));
  }
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
  ConvAccumulate<int32_t>(p, xs.data(), ws.data(), acc.data());
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

// --- quantized convolution ---

Status QLinearConv(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[3];
  const float x_scale = ReadScales(*ctx.inputs[1]).at(0);
  const int32_t x_zp = ReadZeroPoints(ctx.input(2)).at(0);
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
  for (int64_t oc = 0; oc < out_channels; ++oc) multiplier[oc] = x_scale * w_scale.at(oc) / y_scale;
  return StoreQuantized(
      ctx, y,
      [&](int64_t i) {
        return static_cast<float>(acc[i]) * multiplier[(i / plane) % out_channels];
      },
      [&](int64_t) { return y_zp; });
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
  const std::vector<int32_t> acc = IntegerMatMul(a, ctx.input(2), b, ctx.input(5));
  const int64_t rows = MatRows(a), cols = MatCols(b);
  return StoreQuantized(
      ctx, ctx.outputs[0],
      [&](int64_t i) {
        const int64_t r = (i / cols) % rows, c = i % cols;
        return static_cast<float>(acc[i]) * (a_scale.at(r) * b_scale.at(c) / y_scale.at(r));
      },
      [&](int64_t i) { return y_zp.at((i / cols) % rows); });
}

Status MatMulInteger(KernelContext& ctx) {
  const std::vector<int32_t> acc =
      IntegerMatMul(*ctx.inputs[0], ctx.input(2), *ctx.inputs[1], ctx.input(3));
  std::copy(acc.begin(), acc.end(), ctx.outputs[0].data<int32_t>());
  return Status::Ok();
}

}  // namespace edgec::ref
