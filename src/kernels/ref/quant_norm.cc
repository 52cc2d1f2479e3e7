// Reference kernels of the integer normalizations and softmax: loops over the groups / rows
// around quant/int_norm.h (8-bit input and output) or quant/int16_norm.h (an int16 input or
// output), whose arithmetic the NPU's VEC norm and softmax share.
#include "kernels/ref/kernel.h"
#include "quant/int16_norm.h"
#include "quant/int_norm.h"
#include "quant/output_table.h"

namespace edgec::ref {
namespace {

float ScalarF(const Tensor& t) { return static_cast<float>(t.ToDoubleVector().at(0)); }
int32_t ZeroPoint(const Tensor* t) { return t ? static_cast<int32_t>(t->ToInt64Vector().at(0)) : 0; }

std::vector<float> Floats(const Tensor* t) {
  std::vector<float> v;
  if (t)
    for (double d : t->ToDoubleVector()) v.push_back(static_cast<float>(d));
  return v;
}

// The output clamp: the type's range, narrowed by a fused activation's [edgec_qmin, edgec_qmax].
std::pair<int32_t, int32_t> Clamp(const KernelContext& ctx, DType y) {
  const int64_t lo = y == DType::kU8 ? 0 : y == DType::kI16 ? -32768 : -128;
  const int64_t hi = y == DType::kU8 ? 255 : y == DType::kI16 ? 32767 : 127;
  return {static_cast<int32_t>(std::max(lo, ctx.attrs.GetInt("edgec_qmin", lo))),
          static_cast<int32_t>(std::min(hi, ctx.attrs.GetInt("edgec_qmax", hi)))};
}

int32_t At(const Tensor& x, int64_t i) {
  if (x.dtype() == DType::kI16) return x.data<int16_t>()[i];
  return x.dtype() == DType::kU8 ? x.data<uint8_t>()[i] : x.data<int8_t>()[i];
}
void Put(Tensor& y, int64_t i, int32_t v) {
  if (y.dtype() == DType::kU8) y.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  else if (y.dtype() == DType::kI16) y.data<int16_t>()[i] = static_cast<int16_t>(v);
  else y.data<int8_t>()[i] = static_cast<int8_t>(v);
}

// An int16 input or output selects the wide arithmetic (quant/int16_norm.h).
bool Wide(const KernelContext& ctx) {
  return ctx.inputs[0]->dtype() == DType::kI16 || ctx.outputs[0].dtype() == DType::kI16;
}

// Normalizes `groups` groups; group g's j-th value is at index(g, j) and has channel channel(g, j).
template <typename Index, typename Channel>
Status NormalizeGroups(KernelContext& ctx, int64_t groups, int64_t count, Index index, Channel channel) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  // Plain variables, not a structured binding: the lambda below captures them (C++20 lets
  // clang 14 capture no binding).
  const std::pair<int32_t, int32_t> range = Clamp(ctx, y.dtype());
  const int32_t qmin = range.first, qmax = range.second;
  // A fused lookup (`edgec_output_table`, 8-bit Y only): v becomes table[v - lowest].
  auto table = quant::ReadOutputTable(ctx.attrs, y.dtype());
  if (!table.ok()) return ctx.Error("{}", table.status().message());
  if (!table->empty() && y.dtype() == DType::kI16) return ctx.Error("edgec_output_table on an int16 output");
  const std::vector<int64_t> lut = std::move(table).value();
  const int32_t lowest = y.dtype() == DType::kU8 ? 0 : -128;
  auto finish = [&](int32_t v) { return lut.empty() ? v : static_cast<int32_t>(lut[v - lowest]); };
  // The int16 path (Wide) and the int8 one differ only in the parameters' and sums' types.
  auto run = [&](auto group, auto make_params) -> Status {
    auto p = make_params(ScalarF(*ctx.inputs[1]), ZeroPoint(ctx.input(2)), Floats(ctx.input(3)), Floats(ctx.input(4)),
                         ScalarF(*ctx.inputs[5]), ZeroPoint(ctx.input(6)), qmin, qmax, count,
                         ctx.attrs.GetFloat("epsilon", 1e-5f));
    if (!p.ok()) return ctx.Error("{}", p.status().message());
    for (int64_t g = 0; g < groups; ++g) {
      decltype(group) s;
      for (int64_t j = 0; j < count; ++j) quant::Accumulate(s, At(x, index(g, j)), p->x_zero_point);
      quant::FinishGroup(s, *p);
      for (int64_t j = 0; j < count; ++j)
        Put(y, index(g, j), finish(quant::NormOutput(s, *p, At(x, index(g, j)), channel(g, j))));
    }
    return Status::Ok();
  };
  if (Wide(ctx)) return run(quant::WideNormGroup{}, [](auto&&... a) { return quant::MakeWideNormParams(a...); });
  return run(quant::NormGroup{}, [](auto&&... a) { return quant::MakeNormParams(a...); });
}

}  // namespace

Status QLinearLayerNormalization(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int rank = x.rank();
  int64_t axis = ctx.attrs.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  int64_t count = 1;
  for (int d = static_cast<int>(axis); d < rank; ++d) count *= x.dim(d);
  if (count == 0) return Status::Ok();
  return NormalizeGroups(
      ctx, x.numel() / count, count, [&](int64_t g, int64_t j) { return g * count + j; },
      [](int64_t, int64_t j) { return j; });
}

Status QLinearGroupNormalization(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t n = x.dim(0), c = x.dim(1), groups = ctx.attrs.GetInt("num_groups", 1);
  const int64_t plane = n * c != 0 ? x.numel() / (n * c) : 0, per = c / groups, count = per * plane;
  if (count == 0) return Status::Ok();
  // Group b·G + g holds channels [g·per, (g+1)·per) of item b: contiguous in NCHW.
  return NormalizeGroups(
      ctx, n * groups, count, [&](int64_t g, int64_t j) { return g * count + j; },
      [&](int64_t g, int64_t j) { return (g % groups) * per + j / plane; });
}

Status QLinearSoftmax(KernelContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  const auto [qmin, qmax] = Clamp(ctx, y.dtype());
  const int64_t cols = x.dim(x.rank() - 1);
  if (cols == 0) return Status::Ok();
  auto rows = [&](const auto& p) {
    std::vector<int32_t> row(cols), out(cols);
    for (int64_t r = 0; r < x.numel() / cols; ++r) {
      for (int64_t j = 0; j < cols; ++j) row[j] = At(x, r * cols + j);
      quant::SoftmaxRow(row.data(), cols, p, out.data());
      for (int64_t j = 0; j < cols; ++j) Put(y, r * cols + j, out[j]);
    }
    return Status::Ok();
  };
  if (Wide(ctx)) {
    auto p = quant::MakeWideSoftmaxParams(ScalarF(*ctx.inputs[1]), ScalarF(*ctx.inputs[3]), ZeroPoint(ctx.input(4)),
                                          qmin, qmax);
    if (!p.ok()) return ctx.Error("{}", p.status().message());
    return rows(*p);
  }
  auto p = quant::MakeSoftmaxParams(ScalarF(*ctx.inputs[1]), ScalarF(*ctx.inputs[3]), ZeroPoint(ctx.input(4)), qmin, qmax);
  if (!p.ok()) return ctx.Error("{}", p.status().message());
  return rows(*p);
}

}  // namespace edgec::ref
