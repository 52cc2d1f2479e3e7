#include "lower/npu_layers.h"

#include <cmath>
#include <optional>
#include <tuple>

#include "ir/conv_geometry.h"
#include "ir/infer_movement_util.h"
#include "lower/npu_epilogue.h"
#include "lower/npu_layer_util.h"
#include "quant/int_resize.h"

namespace edgec::lower {

StatusOr<Dims> StaticDims(const Node& n, int i) {
  if (i >= n.num_inputs() || !n.inputs()[i] || !n.inputs()[i]->type.IsStatic())
    return Unimplemented("dynamic shape");
  return n.inputs()[i]->type.dims;
}

const Tensor* ConstInput(const Node& n, int i) {
  const Value* v = n.input(i);
  return v && v->is_constant() ? &v->constant() : nullptr;
}

StatusOr<std::vector<double>> Scales(const Node& n, int i, const char* what) {
  const Tensor* t = ConstInput(n, i);
  if (!t) return Unimplemented("{} is not a constant", what);
  return t->ToDoubleVector();
}

StatusOr<int32_t> ScalarZeroPoint(const Node& n, int i, const char* what) {
  const Value* v = n.input(i);
  if (!v) return 0;
  const Tensor* t = ConstInput(n, i);
  if (!t) return Unimplemented("{} is not a constant", what);
  const std::vector<double> z = t->ToDoubleVector();
  if (z.size() != 1) return Unimplemented("{} is not per tensor", what);
  return static_cast<int32_t>(z[0]);
}

std::pair<int32_t, int32_t> ClampInI8(const Node& n, bool output_u8) {
  const int32_t lo = output_u8 ? 0 : -128, hi = output_u8 ? 255 : 127, shift = output_u8 ? -128 : 0;
  return {static_cast<int32_t>(std::max<int64_t>(lo, n.attrs.GetInt("edgec_qmin", lo))) + shift,
          static_cast<int32_t>(std::min<int64_t>(hi, n.attrs.GetInt("edgec_qmax", hi))) + shift};
}

std::pair<int32_t, int32_t> ClampInI16(const Node& n) {
  return {static_cast<int32_t>(std::max<int64_t>(-32768, n.attrs.GetInt("edgec_qmin", -32768))),
          static_cast<int32_t>(std::min<int64_t>(32767, n.attrs.GetInt("edgec_qmax", 32767)))};
}

namespace {


// Fills the conv geometry of `l` from a 4-d input and OIHW weights.
Status ConvGeometry(const Node& n, const Dims& x, const Dims& w, npu::ConvLayer& l) {
  if (x.size() != 4) return Unimplemented("{}-d conv (only 2-d)", static_cast<int>(x.size()) - 2);
  const int64_t group = n.attrs.GetInt("group", 1);
  if (group != 1) {
    // Depthwise runs on the vector cores (DepthwiseLayer); other groups on the MAC array
    // (ConvLayer::group), each N tile within one group.
    if (group == x[1] && group == w[0]) return Unimplemented("depthwise conv not lowered (group={})", group);
    if (group < 1 || x[1] % group || w[0] % group || w[1] * group != x[1])
      return Unimplemented("group={} does not divide {} input and {} output channels into {}-channel weights", group,
                           x[1], w[0], w[1]);
    l.group = static_cast<int>(group);
  }
  const Dims kernel = {w[2], w[3]};
  WindowAttrOptions o;
  o.kernel_from_weights = &kernel;
  ASSIGN_OR_RETURN(WindowAttrs a, ReadWindowAttrs(n.attrs, 2, o));
  ASSIGN_OR_RETURN(WindowGeometry g, ForwardWindowGeometry(a, Dims{x[2], x[3]}));
  FillWindow(l, x, g);
  l.out_channels = static_cast<int>(w[0]);
  l.dilation_h = static_cast<int>(g.dilations[0]);
  l.dilation_w = static_cast<int>(g.dilations[1]);
  return Status::Ok();
}

bool IsDepthwise(const Node& n);

// What the NPU needs of a QLinearConv/QLinearMatMul (X, xs, xz, W, ws, wz, ys, yz[, B]) with
// `channels` output channels: symmetric int8 constant weights, per-tensor activation scales,
// zero points and clamp in i8 terms, the int32 bias (zeros when absent) and one fixed-point
// multiplier x_scale * w_scale / y_scale per weight scale, formed as the reference kernel
// forms it (f32 operands).
struct QuantizedOperands {
  const Tensor* weights = nullptr;  // null: a QLinearMatMul's right operand is an activation
  int32_t w_zero_point = 0;         // then its zero point (i8 terms)
  bool input_u8 = false, output_u8 = false;
  int32_t x_zero_point = 0, y_zero_point = 0, act_min = -128, act_max = 127;
  std::vector<int32_t> bias;
  std::vector<quant::FixedPointMultiplier> requant;
};

StatusOr<QuantizedOperands> QuantizedOperandsOf(const Node& n, int64_t channels) {
  QuantizedOperands q;
  // The output may be int16 (the requantize writes 2-byte values: ConvLayer::y_bytes).
  const bool wide = n.output(0)->type.dtype == DType::kI16 && !IsDepthwise(n);
  for (const Value* v : {n.input(0), n.output(0)})
    if (!Is8(v) && !(wide && v == n.output(0))) return Unimplemented("dtype {} not supported", DTypeName(v->type.dtype));
  q.input_u8 = n.input(0)->type.dtype == DType::kU8;
  q.output_u8 = n.output(0)->type.dtype == DType::kU8;
  q.weights = ConstInput(n, 3);
  const bool b_input = !q.weights && n.op() == OpKind::kQLinearMatMul;  // a MatMul of two activations
  if (b_input) {
    const DType bt = n.input(3)->type.dtype;
    if (bt != DType::kI8 && bt != DType::kU8) return Unimplemented("dtype {} not supported", DTypeName(bt));
    ASSIGN_OR_RETURN(q.w_zero_point, ScalarZeroPoint(n, 5, "right operand zero point"));
    if (bt == DType::kU8) q.w_zero_point -= 128;
  } else if (!q.weights) {
    return Unimplemented("weights are not a constant");
  } else if (q.weights->dtype() != DType::kI8) {
    return Unimplemented("weights dtype {} not supported", DTypeName(q.weights->dtype()));
  }
  if (b_input) {
  } else if (const Tensor* wz = ConstInput(n, 5)) {
    for (double z : wz->ToDoubleVector())
      if (z != 0) return Unimplemented("asymmetric weights (zero point {}) not lowered", z);
  } else if (n.input(5)) {
    return Unimplemented("weight zero point is not a constant");
  }
  ASSIGN_OR_RETURN(std::vector<double> sx, Scales(n, 1, "input scale"));
  ASSIGN_OR_RETURN(std::vector<double> sw, Scales(n, 4, "weight scale"));
  ASSIGN_OR_RETURN(std::vector<double> sy, Scales(n, 6, "output scale"));
  if (sx.size() != 1 || sy.size() != 1) return Unimplemented("per-row activation scales not lowered");
  if (sw.size() != 1 && static_cast<int64_t>(sw.size()) != channels)
    return Unimplemented("{} weight scales for {} output channels", sw.size(), channels);
  ASSIGN_OR_RETURN(int32_t zx, ScalarZeroPoint(n, 2, "input zero point"));
  ASSIGN_OR_RETURN(int32_t zy, ScalarZeroPoint(n, 7, "output zero point"));
  q.x_zero_point = q.input_u8 ? zx - 128 : zx;
  q.y_zero_point = q.output_u8 ? zy - 128 : zy;
  std::tie(q.act_min, q.act_max) = wide ? ClampInI16(n) : ClampInI8(n, q.output_u8);
  q.bias.assign(channels, 0);
  if ((n.op() == OpKind::kQLinearConv || n.op() == OpKind::kQLinearMatMul) && n.num_inputs() > 8 && n.input(8)) {
    const Value* b = n.input(8);
    if (!b->is_constant() || b->constant().dtype() != DType::kI32) return Unimplemented("bias is not an int32 constant");
    const int32_t* bd = b->constant().data<int32_t>();
    q.bias.assign(bd, bd + channels);
  }
  for (size_t c = 0; c < sw.size(); ++c) {
    const double real = static_cast<double>(static_cast<float>(sx[0])) * static_cast<float>(sw[c]) /
                        static_cast<float>(sy[0]);
    auto m = quant::QuantizeMultiplier(real);
    if (!m.ok()) return Unimplemented("requantization multiplier {}: {}", real, m.status().message());
    q.requant.push_back(*m);
  }
  return q;
}

}  // namespace

StatusOr<npu::ConvLayer> GemmLayerShape(const Node& n) {
  const OpKind op = n.op();
  const bool conv = op == OpKind::kConv || op == OpKind::kQLinearConv || op == OpKind::kConvInteger ||
                    op == OpKind::kFusedConv;
  const bool matmul = op == OpKind::kMatMul || op == OpKind::kQLinearMatMul || op == OpKind::kMatMulInteger ||
                      op == OpKind::kFusedMatMul || op == OpKind::kGemm;
  if (!conv && !matmul) return Unimplemented(kNotGemm);
  const int w_index = op == OpKind::kQLinearConv || op == OpKind::kQLinearMatMul ? 3 : 1;
  ASSIGN_OR_RETURN(Dims x, StaticDims(n, 0));
  ASSIGN_OR_RETURN(Dims w, StaticDims(n, w_index));
  npu::ConvLayer l;
  l.name = n.name();
  // A fused lookup epilogue (npu_fuse_epilogue.cc) costs its VEC lut: the shape carries a
  // table of zeros until QuantizedLayerOf fills it.
  if (n.attrs.Has("edgec_output_table")) l.output_table.assign(256, 0);
  // An int16 point written by the requantize (Int16WriterTest).
  const int y_bytes = n.output(0) && n.output(0)->type.dtype == DType::kI16 ? 2 : 0;
  l.y_bytes = y_bytes;
  if (conv) {
    RETURN_IF_ERROR(ConvGeometry(n, x, w, l));
    return l;
  }
  if (w.size() != 2) {
    // A batched MatMul of two activations (attention): [..., M, K] x [..., K, N], the same
    // batch dims on both sides, rank 3 (rank 4 tensors are NHWC on the NPU: the heads would
    // be the innermost dim).
    if (op != OpKind::kQLinearMatMul || ConstInput(n, 3)) return Unimplemented("batched right operand {}", fmt::join(w, "x"));
    if (x.size() != w.size() || w.size() != 3)
      return Unimplemented("{}-d MatMul of two activations not lowered (3-d only)", w.size());
    for (size_t i = 0; i + 2 < w.size(); ++i)
      if (x[i] != w[i]) return Unimplemented("broadcasting MatMul {} x {} not lowered", fmt::join(x, "x"), fmt::join(w, "x"));
    npu::ConvLayer b = npu::ConvLayer::MatMul(l.name, static_cast<int>(x[1]), static_cast<int>(x[2]), static_cast<int>(w[2]));
    b.output_table = l.output_table;
    b.batch = static_cast<int>(x[0]);
    b.y_bytes = y_bytes;
    b.weights_from_input = true;
    if (const Node* t = n.input(3)->producer(); t && AbsorbedInto(*t) == &n) b.b_strides = *RightOperandStrides(*t);
    return b;
  }
  int64_t m = 1;
  for (size_t i = 0; i + 1 < x.size(); ++i) m *= x[i];
  const bool trans_a = op == OpKind::kGemm && n.attrs.GetInt("transA", 0);
  const bool trans_b = op == OpKind::kGemm && n.attrs.GetInt("transB", 0);
  const int64_t k = trans_a ? x[0] : x.back();
  if (trans_a) m = x[1];
  const int64_t nn = trans_b ? w[0] : w[1];
  npu::ConvLayer mm = npu::ConvLayer::MatMul(l.name, static_cast<int>(m), static_cast<int>(k), static_cast<int>(nn));
  mm.output_table = l.output_table;
  mm.y_bytes = y_bytes;
  return mm;
}

StatusOr<QuantizedLayer> QuantizedLayerOf(const Node& n) {
  const OpKind op = n.op();
  if (op != OpKind::kQLinearConv && op != OpKind::kQLinearMatMul)
    return Unimplemented("{} is not lowered to the NPU", OpName(op));
  ASSIGN_OR_RETURN(npu::ConvLayer l, GemmLayerShape(n));
  const int64_t K = l.k(), N = l.n();
  ASSIGN_OR_RETURN(QuantizedOperands o, QuantizedOperandsOf(n, N));
  QuantizedLayer q;
  q.input_u8 = o.input_u8;
  q.output_u8 = o.output_u8;
  l.x_zero_point = o.x_zero_point;
  l.y_zero_point = o.y_zero_point;
  l.act_min = o.act_min;
  l.act_max = o.act_max;
  l.bias = std::move(o.bias);
  l.requant = std::move(o.requant);
  ASSIGN_OR_RETURN(l.output_table, NpuOutputTable(n));
  if (!o.weights) {  // the right operand is the region `.input1` (2-d: one batch item)
    l.weights_from_input = true;
    l.w_zero_point = o.w_zero_point;
    q.layer = std::move(l);
    return q;
  }
  // Weights as HWIO (K x N).
  l.weights.resize(K * N);
  const int8_t* wd = o.weights->data<int8_t>();
  if (op == OpKind::kQLinearConv) {
    const int C = l.group_in(), KH = l.kernel_h, KW = l.kernel_w;  // OIHW with I = C / group
    for (int oc = 0; oc < N; ++oc)
      for (int c = 0; c < C; ++c)
        for (int kh = 0; kh < KH; ++kh)
          for (int kw = 0; kw < KW; ++kw)
            l.weights[((int64_t{kh} * KW + kw) * C + c) * N + oc] = wd[((int64_t{oc} * C + c) * KH + kh) * KW + kw];
  } else {
    std::copy(wd, wd + K * N, l.weights.begin());
  }
  q.layer = std::move(l);
  return q;
}

namespace {

bool IsDepthwise(const Node& n) {
  if (n.op() != OpKind::kQLinearConv) return false;
  const int64_t group = n.attrs.GetInt("group", 1);
  const Value* x = n.input(0);
  return group > 1 && x->type.rank_known && x->type.rank() == 4 && x->type.dims[1] == group;
}

StatusOr<npu::DepthwiseLayer> DepthwiseLayerOf(const Node& n) {
  ASSIGN_OR_RETURN(Dims x, StaticDims(n, 0));
  ASSIGN_OR_RETURN(Dims w, StaticDims(n, 3));
  const int64_t C = x[1];
  // M = multiplier * C filters of one input channel each: output channel o reads input o / multiplier.
  if (w.size() != 4 || w[0] < C || w[0] % C || w[1] != 1)
    return Unimplemented("depthwise weights {} for {} channels", DimsToString(w), C);
  const int64_t M = w[0];
  const Dims kernel = {w[2], w[3]};
  WindowAttrOptions wo;
  wo.kernel_from_weights = &kernel;
  ASSIGN_OR_RETURN(WindowAttrs a, ReadWindowAttrs(n.attrs, 2, wo));
  ASSIGN_OR_RETURN(WindowGeometry g, ForwardWindowGeometry(a, Dims{x[2], x[3]}));
  ASSIGN_OR_RETURN(QuantizedOperands o, QuantizedOperandsOf(n, M));
  npu::DepthwiseLayer l;
  l.name = n.name();
  FillWindow(l, x, g);
  l.dilation_h = static_cast<int>(g.dilations[0]);
  l.dilation_w = static_cast<int>(g.dilations[1]);
  l.multiplier = static_cast<int>(M / C);
  l.x_zero_point = o.x_zero_point;
  l.y_zero_point = o.y_zero_point;
  l.act_min = o.act_min;
  l.act_max = o.act_max;
  const int64_t window = int64_t{l.kernel_h} * l.kernel_w;
  l.weights.resize(window * M);
  const int8_t* wd = o.weights->data<int8_t>();
  for (int64_t c = 0; c < M; ++c)
    for (int64_t k = 0; k < window; ++k) l.weights[k * M + c] = wd[c * window + k];
  l.bias = std::move(o.bias);
  l.requant = std::move(o.requant);
  ASSIGN_OR_RETURN(l.output_table, NpuOutputTable(n));
  const Dims& yd = n.output(0)->type.dims;
  if (yd.size() != 4 || yd[1] != M || l.out_h() != yd[2] || l.out_w() != yd[3])
    return Unimplemented("depthwise output {} is not {} channels by the window count", DimsToString(yd), M);
  return l;
}

// A Resize of an 8-bit tensor with constant roi/scales/sizes and an integer form.
StatusOr<npu::ResizeLayer> ResizeLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  if (!Is8(x) || !Is8(y) || x->type.dtype != y->type.dtype)
    return Unimplemented("dtype {} resize not lowered (8-bit only)", DTypeName(x->type.dtype));
  ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
  if (!y->type.IsStatic()) return Unimplemented("dynamic shape");
  std::vector<double> roi, scales;
  for (int i : {1, 2, 3}) {
    if (!n.input(i)) continue;
    const Tensor* c = ConstInput(n, i);
    if (!c) return Unimplemented("resize input {} is not a constant", i);
    if (i == 1 && c->numel() == 8) roi = c->ToDoubleVector();
    if (i == 2 && c->numel() > 0) scales = c->ToDoubleVector();
  }
  ASSIGN_OR_RETURN(quant::IntResizePlan plan,
                   quant::PlanIntResize(ReadResizeRules(n.attrs), xd, y->type.dims, scales, roi));
  npu::ResizeLayer l;
  l.name = n.name();
  l.batch = static_cast<int>(xd[0]);
  l.channels = static_cast<int>(xd[1]);
  l.in_h = static_cast<int>(xd[2]);
  l.in_w = static_cast<int>(xd[3]);
  l.out_h = static_cast<int>(y->type.dims[2]);
  l.out_w = static_cast<int>(y->type.dims[3]);
  l.row_lo = plan.h.lo, l.row_hi = plan.h.hi, l.row_w = plan.h.w;
  l.col_lo = plan.w.lo, l.col_hi = plan.w.hi, l.col_w = plan.w.w;
  l.DetectReplication();
  return l;
}

}  // namespace

bool IsMoveNode(const Node& n) {
  switch (n.op()) {
    case OpKind::kConcat: case OpKind::kTranspose: case OpKind::kSlice: case OpKind::kSplit: case OpKind::kGather:
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kDepthToSpace: case OpKind::kChannelShuffle: case OpKind::kPad:
      return true;
    default:
      return false;
  }
}

bool IsFloatBoundary(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  if (!x || !y || n.num_outputs() != 1) return false;
  if (n.op() == OpKind::kQuantizeLinear) return x->is_graph_input() && x->type.dtype == DType::kF32 && Is8(y);
  // An int16 model output (the mixed precision's last norm) too: a 2-byte dequantize.
  if (n.op() == OpKind::kDequantizeLinear)
    return y->is_graph_output() && y->type.dtype == DType::kF32 && (Is8(x) || x->type.dtype == DType::kI16);
  return false;
}

bool IsVectorNode(const Node& n) {
  return IsFloatBoundary(n) || n.op() == OpKind::kQLinearLayerNormalization || n.op() == OpKind::kQLinearGroupNormalization ||
         n.op() == OpKind::kQLinearSoftmax || n.op() == OpKind::kQLinearAdd || n.op() == OpKind::kQLinearMul || n.op() == OpKind::kQuantizedLookup ||
         n.op() == OpKind::kMaxPool || n.op() == OpKind::kQLinearGlobalAveragePool || n.op() == OpKind::kQLinearAveragePool || IsDepthwise(n) || IsMoveNode(n) ||
         n.op() == OpKind::kResize || n.op() == OpKind::kQLinearRequantize || n.op() == OpKind::kGlobalMaxPool ||
         n.op() == OpKind::kReduceMax || n.op() == OpKind::kReduceMin || n.op() == OpKind::kArgMax ||
         n.op() == OpKind::kArgMin;
}

int64_t MacsOf(const Node& n) {
  if (auto l = GemmLayerShape(n); l.ok()) return l->macs();
  const OpKind op = n.op();
  // The MatMuls the NPU layer does not take (4-d attention, broadcasting) and the float
  // Attention still do their MACs wherever they run: every output element sums over K, and
  // Attention is its two products, Sq x Sk x D and Sq x Sk x Dv per batch item
  // (tests/lower/segment_cost_rule_test.cc: CpuCostCountsAttentionMacs).
  const Value* y = n.output(0);
  const bool matmul = op == OpKind::kMatMul || op == OpKind::kQLinearMatMul || op == OpKind::kMatMulInteger ||
                      op == OpKind::kFusedMatMul;
  if (matmul && n.input(0) && y && n.input(0)->type.IsStatic() && y->type.IsStatic() && n.input(0)->type.rank() >= 1)
    return NumElements(y->type.dims) * n.input(0)->type.dims.back();
  if (op == OpKind::kAttention && n.num_inputs() >= 3 && n.input(0) && n.input(2) && y && y->type.IsStatic() &&
      n.input(0)->type.IsStatic() && n.input(2)->type.IsStatic() && n.input(0)->type.rank() >= 2) {
    const int64_t d = n.input(0)->type.dims.back();
    const int64_t sk = n.input(2)->type.dims[n.input(2)->type.rank() - 2];
    const int64_t dv = y->type.dims.back();
    return NumElements(y->type.dims) / dv * sk * (d + dv);
  }
  if (op != OpKind::kConv && op != OpKind::kQLinearConv && op != OpKind::kConvInteger && op != OpKind::kFusedConv)
    return 0;
  const Value* w = n.input(op == OpKind::kQLinearConv ? 3 : 1);
  if (!w || !y || !w->type.IsStatic() || !y->type.IsStatic() || w->type.rank() < 2) return 0;
  // Every output element sums over its group's input channels x the kernel window.
  return NumElements(y->type.dims) * (NumElements(w->type.dims) / w->type.dims[0]);
}



namespace {

// A per-channel QuantizedLookup (Table [C, 256], ops.def): one VEC lut with a table per
// column (isa.h kLutPerColumnImm) when its axis is the NPU's innermost dim: C of a 4-d
// tensor (NHWC), the last dim otherwise (tests/lower/npu_channel_lookup_test.cc).
StatusOr<VectorLayer> ChannelLookupLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  const Tensor* table = ConstInput(n, 1);
  if (!Is8(x) || !Is8(y)) return Unimplemented("a per-channel lookup of {} values (8-bit only)", DTypeName(x->type.dtype));
  if (!x->type.IsStatic()) return Unimplemented("dynamic shape");
  const Dims& d = x->type.dims;
  const int rank = static_cast<int>(d.size());
  const int64_t given = n.attrs.GetInt("axis", 1);
  const int64_t axis = given < 0 ? given + rank : given;
  const int channel = rank == 4 ? 1 : rank - 1;
  if (axis != channel)
    return Unimplemented("a per-channel lookup along axis {} of a {}-d tensor: the NPU's rows hold dim {}", given, rank,
                         channel);
  const int64_t channels = d[channel];
  if (!table || table->rank() != 2 || table->dim(0) != channels || table->dim(1) != 256 || DTypeSize(table->dtype()) != 1)
    return Unimplemented("the per-channel table is not [{}, 256] constant bytes", channels);
  const uint8_t flip = y->type.dtype == DType::kU8 ? 0x80 : 0;  // the NPU's i8 terms, as for one table
  const auto* t = static_cast<const uint8_t*>(table->raw());
  std::vector<int8_t> npu_table(channels * 256);
  for (int64_t i = 0; i < channels * 256; ++i) npu_table[i] = static_cast<int8_t>(t[i] ^ flip);
  VectorLayer v;
  v.kind = VectorLayer::Kind::kEltwise;
  v.output_u8 = y->type.dtype == DType::kU8;
  v.eltwise = npu::EltwiseLayer::ChannelLookup(n.name(), NumElements(d), channels, std::move(npu_table));
  return v;
}

}  // namespace

StatusOr<VectorLayer> VectorLayerOf(const Node& n) {
  VectorLayer v;
  if (n.op() == OpKind::kQLinearLayerNormalization || n.op() == OpKind::kQLinearGroupNormalization ||
      n.op() == OpKind::kQLinearSoftmax) {
    ASSIGN_OR_RETURN(v.norm, NormLayerOf(n));
    v.kind = VectorLayer::Kind::kNorm;
    v.output_u8 = n.output(0)->type.dtype == DType::kU8;
    return v;
  }
  if (IsDepthwise(n)) {
    ASSIGN_OR_RETURN(v.depthwise, DepthwiseLayerOf(n));
    v.kind = VectorLayer::Kind::kDepthwise;
    v.output_u8 = n.output(0)->type.dtype == DType::kU8;
    return v;
  }
  if (n.op() == OpKind::kResize) {
    ASSIGN_OR_RETURN(v.resize, ResizeLayerOf(n));
    v.kind = VectorLayer::Kind::kResize;
    v.output_u8 = n.output(0)->type.dtype == DType::kU8;
    return v;
  }
  if (n.op() == OpKind::kGather && n.input(1) && !n.input(1)->is_constant()) {
    ASSIGN_OR_RETURN(v.gather, GatherLayerOf(n));
    v.kind = VectorLayer::Kind::kGather;
    v.output_u8 = n.output(0)->type.dtype == DType::kU8;
    return v;
  }
  if (n.op() == OpKind::kArgMax || n.op() == OpKind::kArgMin) {
    ASSIGN_OR_RETURN(v.argmax, ArgMaxLayerOf(n));
    v.kind = VectorLayer::Kind::kArgMax;
    return v;
  }
  if (n.op() == OpKind::kGlobalMaxPool || n.op() == OpKind::kReduceMax || n.op() == OpKind::kReduceMin) {
    ASSIGN_OR_RETURN(v.pool, ReducePoolLayerOf(n));
    v.kind = VectorLayer::Kind::kPool;
    v.output_u8 = n.output(0)->type.dtype == DType::kU8;
    return v;
  }
  if (n.op() == OpKind::kQLinearAveragePool) {
    ASSIGN_OR_RETURN(v.pool, AveragePoolLayerOf(n));
    v.kind = VectorLayer::Kind::kPool;
    v.output_u8 = n.output(0)->type.dtype == DType::kU8;
    return v;
  }
  if (IsMoveNode(n)) {
    ASSIGN_OR_RETURN(v.move, MoveLayerOf(n));
    v.kind = VectorLayer::Kind::kMove;
    return v;
  }
  const Value* y = n.output(0);
  auto is8 = Is8;
  // In the NPU's i8 terms: u8 values and their zero points shift by -128.
  auto s8 = [](const Value* x, int32_t z) { return x->type.dtype == DType::kU8 ? z - 128 : z; };
  if (IsFloatBoundary(n)) {
    const bool q = n.op() == OpKind::kQuantizeLinear;
    const Value* x = n.input(0);
    const Value* i8 = q ? y : x;
    if (!x->type.IsStatic() || !y->type.IsStatic()) return Unimplemented("dynamic shape");
    const Tensor* scale = ConstInput(n, 1);
    const Tensor* zp = n.num_inputs() > 2 && n.input(2) ? ConstInput(n, 2) : nullptr;
    if (!scale || scale->numel() != 1 || (n.num_inputs() > 2 && n.input(2) && (!zp || zp->numel() != 1)))
      return Unimplemented("{} not per tensor with constant parameters", OpName(n.op()));
    const float sc = static_cast<float>(scale->ToDoubleVector()[0]);
    const int32_t z = s8(i8, zp ? static_cast<int32_t>(zp->ToInt64Vector()[0]) : 0);
    const int64_t elements = NumElements(y->type.dims);
    v.kind = VectorLayer::Kind::kEltwise;
    v.output_u8 = y->type.dtype == DType::kU8;
    v.eltwise = q ? npu::EltwiseLayer::Quantize(n.name(), elements, sc, z, -128, 127)
                  : npu::EltwiseLayer::Dequantize(n.name(), elements, sc, z);
    // The f32 side stays in the caller's NCHW order (runtime ToNpu): a 4-d tensor whose NCHW
    // and NHWC orders differ is read or written planar (tests/lower/npu_float_boundary_test.cc).
    const Dims& d = y->type.dims;
    if (!q && x->type.dtype == DType::kI16) v.eltwise.a_bytes = 2;
    if (d.size() == 4 && d[1] > 1 && d[2] * d[3] > 1) {  // an int16 output too (2-byte NHWC side)
      v.eltwise.planes = d[1];
      v.eltwise.pixels = d[2] * d[3];
    }
    return v;
  }
  if (n.op() == OpKind::kQLinearRequantize) {  // 8 <-> 16 bits (quant/rescale.h)
    const Value* x = n.input(0);
    auto width = [&](const Value* v) { return v->type.dtype == DType::kI16 ? 2 : is8(v) ? 1 : 0; };
    if (!width(x) || !width(y)) return Unimplemented("dtype not 8- or 16-bit");
    if (!x->type.IsStatic()) return Unimplemented("dynamic shape");
    ASSIGN_OR_RETURN(std::vector<double> sx, Scales(n, 1, "X scale"));
    ASSIGN_OR_RETURN(std::vector<double> sy, Scales(n, 3, "Y scale"));
    ASSIGN_OR_RETURN(int32_t zx, ScalarZeroPoint(n, 2, "X zero point"));
    ASSIGN_OR_RETURN(int32_t zy, ScalarZeroPoint(n, 4, "Y zero point"));
    if (sx.size() != 1 || sy.size() != 1) return Unimplemented("per-axis scales not lowered");
    const int32_t lo = width(y) == 2 ? -32768 : -128, hi = width(y) == 2 ? 32767 : 127;
    auto p = quant::MakeRescale(sx[0], s8(x, zx), sy[0], s8(y, zy), lo, hi);
    if (!p.ok()) return Unimplemented("{}", p.status().message());
    v.kind = VectorLayer::Kind::kEltwise;
    v.output_u8 = y->type.dtype == DType::kU8;
    v.eltwise = npu::EltwiseLayer::Rescale(n.name(), NumElements(y->type.dims), *p, width(x), width(y));
    return v;
  }
  if (n.op() == OpKind::kQuantizedLookup) {
    const Value* x = n.input(0);
    // An int16 x (the SiLU after an int16 GroupNorm): 65536 entries, index x + 32768.
    const bool wide = x->type.dtype == DType::kI16;
    const int64_t entries = wide ? 65536 : 256;
    if ((!is8(x) && !wide) || !is8(y)) return Unimplemented("dtype not 8-bit (or an int16 index)");
    if (!x->type.IsStatic()) return Unimplemented("dynamic shape");
    const Tensor* table = ConstInput(n, 1);
    if (table && table->rank() == 2) return ChannelLookupLayerOf(n);
    if (!table || table->numel() != entries || DTypeSize(table->dtype()) != 1)
      return Unimplemented("lookup table is not {} constant bytes", entries);
    // Index = the NPU's value + 128 (+ 32768) = the reference's index (x - lowest).
    const uint8_t flip = y->type.dtype == DType::kU8 ? 0x80 : 0;
    const auto* t = static_cast<const uint8_t*>(table->raw());
    std::vector<int8_t> npu_table(entries);
    for (int64_t i = 0; i < entries; ++i) npu_table[i] = static_cast<int8_t>(t[i] ^ flip);
    v.kind = VectorLayer::Kind::kEltwise;
    v.output_u8 = y->type.dtype == DType::kU8;
    v.eltwise = npu::EltwiseLayer::Lookup(n.name(), NumElements(y->type.dims), std::move(npu_table));
    if (wide) v.eltwise.a_bytes = 2;
    return v;
  }
  if (n.op() == OpKind::kQLinearAdd || n.op() == OpKind::kQLinearMul) {
    const bool add = n.op() == OpKind::kQLinearAdd;
    const char* what = add ? "add" : "mul";
    const Value* a = n.input(0);
    const Value* b = n.input(3);
    // int16 operands or result (the mixed precision's points): 2-byte elements; a multiply
    // takes one int16 operand at most (two int16 differences multiply past int32).
    auto bytes = [&](const Value* v) { return v->type.dtype == DType::kI16 ? 2 : is8(v) ? 1 : 0; };
    if (!bytes(a) || !bytes(b) || !bytes(y)) return Unimplemented("dtype not 8-bit or int16");
    if (!add && bytes(a) == 2 && bytes(b) == 2) return Unimplemented("a product of two int16 operands");
    if (!a->type.IsStatic() || !b->type.IsStatic() || !y->type.IsStatic()) return Unimplemented("dynamic shape");
    // How an operand covers the result in the NPU's layout: the whole tensor, one channel row
    // (the innermost dim: C of a 4-d NHWC tensor, the last dim otherwise) or one value.
    const Dims& yd = y->type.dims;
    const int rank = static_cast<int>(yd.size());
    const int channel = rank == 4 ? 1 : rank - 1;
    using B = npu::EltwiseLayer::Broadcast;
    auto cover = [&](const Value* x) -> std::optional<B> {
      const Dims& d = x->type.dims;
      if (NumElements(d) == 1) return B::kScalar;
      if (static_cast<int>(d.size()) > rank) return std::nullopt;
      Dims al(rank - d.size(), 1);
      al.insert(al.end(), d.begin(), d.end());
      if (al == yd) return B::kFull;
      for (int i = 0; i < rank; ++i)
        if (i == channel ? al[i] != yd[i] : al[i] != 1) return std::nullopt;
      return B::kRow;
    };
    const std::optional<B> ca = cover(a), cb = cover(b);
    if (!ca || !cb || (*ca != B::kFull && *cb != B::kFull) || (*ca == B::kFull && a->is_constant()) ||
        (*cb == B::kFull && *ca != B::kFull && b->is_constant()))
      return Unimplemented("broadcasting {} {} {} {} not lowered", what, DimsToString(a->type.dims), add ? "+" : "*",
                           DimsToString(b->type.dims));
    // The full operand is the VEC's a; the other (broadcast) its b; both operations commute.
    const bool swap = *ca != B::kFull;
    const int ia = swap ? 3 : 0, ib = swap ? 0 : 3;
    const Value* va = n.input(ia);
    const Value* vb = n.input(ib);
    ASSIGN_OR_RETURN(std::vector<double> sa, Scales(n, ia + 1, "A scale"));
    ASSIGN_OR_RETURN(std::vector<double> sb, Scales(n, ib + 1, "B scale"));
    ASSIGN_OR_RETURN(std::vector<double> sy, Scales(n, 6, "C scale"));
    ASSIGN_OR_RETURN(int32_t za, ScalarZeroPoint(n, ia + 2, "A zero point"));
    ASSIGN_OR_RETURN(int32_t zb, ScalarZeroPoint(n, ib + 2, "B zero point"));
    ASSIGN_OR_RETURN(int32_t zy, ScalarZeroPoint(n, 7, "C zero point"));
    if (sa.size() != 1 || sb.size() != 1 || sy.size() != 1) return Unimplemented("per-axis scales not lowered");
    v.output_u8 = y->type.dtype == DType::kU8;
    const bool wide = bytes(a) == 2 || bytes(b) == 2;
    const auto [qmin, qmax] = bytes(y) == 2 ? ClampInI16(n) : ClampInI8(n, v.output_u8);
    // The scales as the reference reads them (f32).
    const float fa = static_cast<float>(sa[0]), fb = static_cast<float>(sb[0]), fy = static_cast<float>(sy[0]);
    if (add) {
      auto p = quant::MakeQuantizedAdd(fa, s8(va, za), fb, s8(vb, zb), fy, s8(y, zy), qmin, qmax,
                                       wide ? quant::kWideAddLeftShift : quant::kAddLeftShift);
      if (!p.ok()) return Unimplemented("{}", p.status().message());
      v.eltwise = npu::EltwiseLayer::Add(n.name(), NumElements(yd), *p);
    } else {
      auto p = quant::MakeQuantizedMul(fa, s8(va, za), fb, s8(vb, zb), fy, s8(y, zy), qmin, qmax);
      if (!p.ok()) return Unimplemented("{}", p.status().message());
      v.eltwise = npu::EltwiseLayer::Mul(n.name(), NumElements(yd), *p);
    }
    v.eltwise.a_bytes = bytes(va);
    v.eltwise.b_bytes = bytes(vb);
    v.eltwise.y_bytes = bytes(y);
    npu::EltwiseLayer& e = v.eltwise;
    e.broadcast = swap ? *ca : *cb;
    if (e.broadcast == B::kRow) e.cols = yd[channel];
    if (vb->is_constant()) {
      const Tensor& c = vb->constant();
      if (bytes(vb) != 1) return Unimplemented("a constant int16 operand");
      const uint8_t flip = vb->type.dtype == DType::kU8 ? 0x80 : 0;
      const auto* d = static_cast<const uint8_t*>(c.raw());
      for (int64_t i = 0; i < c.numel(); ++i) e.b_const.push_back(static_cast<int8_t>(d[i] ^ flip));
    }
    // Regions follow the node's data inputs in order (".input", ".input1").
    if (swap && !vb->is_constant()) std::swap(e.a_region, e.b_region);
    if (!swap && va->is_constant()) e.a_region = ".input1";  // not reached: a full constant is refused
    v.kind = VectorLayer::Kind::kEltwise;
    return v;
  }
  if (n.op() == OpKind::kQLinearGlobalAveragePool) {
    const Value* x = n.input(0);
    if (!is8(x) || !is8(y)) return Unimplemented("dtype not 8-bit");
    ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
    if (xd.size() != 4) return Unimplemented("{}-d global average pool (only 2-d)", static_cast<int>(xd.size()) - 2);
    ASSIGN_OR_RETURN(std::vector<double> sx, Scales(n, 1, "X scale"));
    ASSIGN_OR_RETURN(std::vector<double> sy, Scales(n, 3, "Y scale"));
    ASSIGN_OR_RETURN(int32_t zx, ScalarZeroPoint(n, 2, "X zero point"));
    ASSIGN_OR_RETURN(int32_t zy, ScalarZeroPoint(n, 4, "Y zero point"));
    npu::PoolLayer& l = v.pool;
    v.kind = VectorLayer::Kind::kPool;
    v.output_u8 = y->type.dtype == DType::kU8;
    l.name = n.name();
    l.max = false;
    l.batch = static_cast<int>(xd[0]);
    l.channels = static_cast<int>(xd[1]);
    l.in_h = l.kernel_h = static_cast<int>(xd[2]);
    l.in_w = l.kernel_w = static_cast<int>(xd[3]);
    l.x_zero_point = x->type.dtype == DType::kU8 ? zx - 128 : zx;
    l.y_zero_point = v.output_u8 ? zy - 128 : zy;
    std::tie(l.act_min, l.act_max) = ClampInI8(n, v.output_u8);
    // As the reference's fixed-point mode: f32 scales, x_scale / (y_scale * count).
    const double real = static_cast<double>(static_cast<float>(sx[0])) / static_cast<float>(sy[0]) /
                        static_cast<double>(xd[2] * xd[3]);
    auto m = quant::QuantizeMultiplier(real);
    if (!m.ok()) return Unimplemented("requantization multiplier {}: {}", real, m.status().message());
    l.mult = *m;
    return v;
  }
  if (n.op() == OpKind::kMaxPool) {
    const Value* x = n.input(0);
    if (!is8(x) || !is8(y)) return Unimplemented("dtype {} max pool not lowered (int8 only)", DTypeName(x->type.dtype));
    if (n.num_outputs() > 1 && n.output(1)) return Unimplemented("max pool with indices");
    ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
    if (xd.size() != 4) return Unimplemented("{}-d max pool (only 2-d)", static_cast<int>(xd.size()) - 2);
    WindowAttrOptions wo;
    wo.allow_ceil_mode = true;
    ASSIGN_OR_RETURN(WindowAttrs a, ReadWindowAttrs(n.attrs, 2, wo));
    ASSIGN_OR_RETURN(WindowGeometry g, ForwardWindowGeometry(a, Dims{xd[2], xd[3]}));
    for (int64_t d : g.dilations)
      if (d != 1) return Unimplemented("dilated max pool not lowered");
    v.kind = VectorLayer::Kind::kPool;
    npu::PoolLayer& l = v.pool;
    l.name = n.name();
    l.max = true;
    FillWindow(l, xd, g);
    if (a.ceil_mode) {
      // The last window of each axis reaches past the padded input: more end padding (the
      // max pool's −128, which no window maximum takes from a valid value) makes the
      // floor-rounded count the ceil-rounded one (NpuVectorOpsTest.CeilModeMaxPoolMatchesReference).
      l.pad_bottom += static_cast<int>(std::max<int64_t>(0, (g.out[0] - 1) * l.stride_h + l.kernel_h - (l.in_h + l.pad_top + l.pad_bottom)));
      l.pad_right += static_cast<int>(std::max<int64_t>(0, (g.out[1] - 1) * l.stride_w + l.kernel_w - (l.in_w + l.pad_left + l.pad_right)));
    }
    const Dims& yd = y->type.dims;
    if (yd.size() != 4 || yd[2] != l.out_h() || yd[3] != l.out_w())
      return Unimplemented("max pool output {} is not the floor-rounded window count", DimsToString(yd));
    v.output_u8 = y->type.dtype == DType::kU8;
    return v;
  }
  return Unimplemented("{} is not lowered to the NPU", OpName(n.op()));
}

StatusOr<npu::VectorTiling> ChooseVectorTiling(const VectorLayer& v, const npu::Target& t,
                                               const npu::TilerOptions& opt) {
  using K = VectorLayer::Kind;
  switch (v.kind) {
    case K::kEltwise: return npu::ChooseEltwiseTiling(v.eltwise, t, opt);
    case K::kPool: return npu::ChoosePoolTiling(v.pool, t, opt);
    case K::kMove: return npu::ChooseMoveTiling(v.move, t, opt);
    case K::kNorm: return npu::ChooseNormTiling(v.norm, t, opt);
    case K::kDepthwise: return npu::ChooseDepthwiseTiling(v.depthwise, t, opt);
    case K::kResize: return npu::ChooseResizeTiling(v.resize, t, opt);
    case K::kGather: return npu::ChooseGatherTiling(v.gather, t, opt);
    case K::kArgMax: return npu::ChooseArgMaxTiling(v.argmax, t, opt);
  }
  return Internal("vector layer kind {} has no tiler", static_cast<int>(v.kind));
}

}  // namespace edgec::lower
