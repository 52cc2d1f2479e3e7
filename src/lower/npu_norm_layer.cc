// Integer normalizations and softmax as VEC norm / softmax layers (see npu_layer_util.h).
#include <algorithm>

#include "lower/npu_epilogue.h"
#include "lower/npu_layer_util.h"
#include "quant/int16_norm.h"
#include "quant/int_norm.h"

namespace edgec::lower {

// A QLinearLayerNormalization / QLinearGroupNormalization / QLinearSoftmax as a VEC norm or
// softmax layer, its parameters in the NPU's i8 terms (u8 zero points and clamp shift by -128;
// the arithmetic only sees q - zx and zy + ..., so the values agree with the reference's).
StatusOr<npu::NormLayer> NormLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  // int16 in and out: the wide VEC norm / softmax (npu/lower_wide_norm.cc).
  const bool wide = x->type.dtype == DType::kI16 && y->type.dtype == DType::kI16;
  if (!wide && (!Is8(x) || !Is8(y))) return Unimplemented("dtype not 8-bit (or int16 in and out)");
  ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
  const bool softmax = n.op() == OpKind::kQLinearSoftmax;
  const int y_scale = softmax ? 3 : 5, y_zp = softmax ? 4 : 6;
  ASSIGN_OR_RETURN(std::vector<double> sx, Scales(n, 1, "X scale"));
  ASSIGN_OR_RETURN(std::vector<double> sy, Scales(n, y_scale, "Y scale"));
  ASSIGN_OR_RETURN(int32_t zx, ScalarZeroPoint(n, 2, "X zero point"));
  ASSIGN_OR_RETURN(int32_t zy, ScalarZeroPoint(n, y_zp, "Y zero point"));
  if (sx.size() != 1 || sy.size() != 1) return Unimplemented("per-axis scales not lowered");
  const bool in_u8 = x->type.dtype == DType::kU8, out_u8 = y->type.dtype == DType::kU8;
  const auto [qmin, qmax] =
      wide ? std::pair<int32_t, int32_t>{static_cast<int32_t>(std::max<int64_t>(-32768, n.attrs.GetInt("edgec_qmin", -32768))),
                                         static_cast<int32_t>(std::min<int64_t>(32767, n.attrs.GetInt("edgec_qmax", 32767)))}
           : ClampInI8(n, out_u8);
  const int32_t zx8 = in_u8 ? zx - 128 : zx, zy8 = out_u8 ? zy - 128 : zy;
  npu::NormLayer l;
  l.name = n.name();
  l.wide = wide;
  const int rank = static_cast<int>(xd.size());
  if (n.op() != OpKind::kQLinearGroupNormalization) {
    if (rank == 4) return Unimplemented("{} over the last axis of a 4-d tensor (W in NHWC) not lowered", softmax ? "softmax" : "layer norm");
    if (!softmax && n.attrs.GetInt("axis", -1) != -1 && n.attrs.GetInt("axis", -1) != rank - 1)
      return Unimplemented("layer norm over axis {} (only the last)", n.attrs.GetInt("axis", -1));
    l.cols = xd.back();
    l.items = l.cols ? NumElements(xd) / l.cols : 0;
  } else {
    if (rank != 4) return Unimplemented("{}-d group norm (only 2-d)", rank - 2);
    l.items = xd[0];
    l.rows_per_item = xd[2] * xd[3];
    l.cols = xd[1];
    l.groups = n.attrs.GetInt("num_groups", 1);
    l.per_row = false;
  }
  if (softmax && wide) {
    l.op = npu::VecOp::kSoftmax;
    auto p = quant::MakeWideSoftmaxParams(static_cast<float>(sx[0]), static_cast<float>(sy[0]), zy, qmin, qmax);
    if (!p.ok()) return Unimplemented("{}", p.status().message());
    l.wide_softmax = *p;
    return l;
  }
  if (softmax) {
    l.op = npu::VecOp::kSoftmax;
    auto p = quant::MakeSoftmaxParams(static_cast<float>(sx[0]), static_cast<float>(sy[0]), zy8, qmin, qmax);
    if (!p.ok()) return Unimplemented("{}", p.status().message());
    l.softmax = *p;
    return l;
  }
  l.op = npu::VecOp::kNorm;
  auto floats = [&](int i) -> StatusOr<std::vector<float>> {
    std::vector<float> v;
    if (!n.input(i)) return v;
    const Tensor* t = ConstInput(n, i);
    if (!t) return Unimplemented("input {} is not a constant", i);
    for (double d : t->ToDoubleVector()) v.push_back(static_cast<float>(d));
    return v;
  };
  ASSIGN_OR_RETURN(std::vector<float> gamma, floats(3));
  ASSIGN_OR_RETURN(std::vector<float> beta, floats(4));
  const int64_t count = l.per_row ? l.cols : l.cols / std::max<int64_t>(1, l.groups) * l.rows_per_item;
  if (wide) {
    auto p = quant::MakeWideNormParams(static_cast<float>(sx[0]), zx, gamma, beta, static_cast<float>(sy[0]), zy, qmin,
                                       qmax, count, n.attrs.GetFloat("epsilon", 1e-5f));
    if (!p.ok()) return Unimplemented("{}", p.status().message());
    l.wide_norm = *p;
    return l;
  }
  auto p = quant::MakeNormParams(static_cast<float>(sx[0]), zx8, gamma, beta, static_cast<float>(sy[0]), zy8, qmin, qmax,
                                 count, n.attrs.GetFloat("epsilon", 1e-5f));
  if (!p.ok()) return Unimplemented("{}", p.status().message());
  l.norm = *p;
  ASSIGN_OR_RETURN(l.output_table, NpuOutputTable(n));
  return l;
}

}  // namespace edgec::lower
