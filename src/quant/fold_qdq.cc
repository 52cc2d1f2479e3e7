#include "quant/fold_qdq.h"

#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/infer.h"
#include "passes/pass_util.h"
#include "quant/fold_util.h"
#include "quant/int_resize.h"
#include "quant/points.h"
#include "runtime/reference_executor.h"

namespace edgec::quant {

Node* DqOf(const Value* v) { return passes::ProducerOf(v, OpKind::kDequantizeLinear); }

std::optional<QParams> ParamsOf(const Node* n, DType dtype) {
  const Tensor* st = passes::ConstantOf(n->input(1));
  if (!st || st->numel() != 1) return std::nullopt;
  QParams p{st->ToDoubleVector()[0], 0, dtype};
  if (n->num_inputs() > 2 && n->input(2)) {
    const Tensor* zt = passes::ConstantOf(n->input(2));
    if (!zt || zt->numel() != 1) return std::nullopt;
    p.zero_point = zt->ToInt64Vector()[0];
  }
  return p;
}


namespace {

bool IsTabulable(OpKind op) { return HasTrait(op, op_trait::kTabulable); }

using passes::ConstantOf;
using passes::HasSingleUse;

bool PerTensor(const Value* v) { return v && v->type.rank_known && NumElements(v->type.dims) == 1; }

bool IsEightBit(DType t) { return t == DType::kU8 || t == DType::kI8; }

// The integer range of a quantized type (u8, i8, or the mixed precision's i16).
std::pair<int64_t, int64_t> TypeRange(DType t) {
  if (t == DType::kU8) return {0, 255};
  if (t == DType::kI16) return {-32768, 32767};
  return {-128, 127};
}

struct Match {
  Node* op = nullptr;
  Node* x_dq = nullptr;
  Node* w_dq = nullptr;
  Node* b_dq = nullptr;
  Node* bias_add = nullptr;  // a MatMul's bias Add (b_dq feeds it)
  double scale = 1;          // a MatMul of two activations: the product's constant factor
  Node* act = nullptr;  // Relu or Clip between the op and the Q
  Node* q = nullptr;
};

// Why `n` does not fold ("" when it does); fills `m`.
std::string MatchAround(Node* n, Match& m) {
  m.op = n;
  m.x_dq = DqOf(n->input(0));
  if (!m.x_dq || !PerTensor(m.x_dq->input(1))) return "input 0 is not a per-tensor DequantizeLinear";
  m.w_dq = DqOf(n->input(1));
  const bool b_input = n->op() == OpKind::kMatMul && m.w_dq && !ConstantOf(m.w_dq->input(0)) &&
                       PerTensor(m.w_dq->input(1)) &&
                       (m.w_dq->input(0)->type.dtype == DType::kI8 || m.w_dq->input(0)->type.dtype == DType::kU8);
  if (!b_input && (!m.w_dq || !ConstantOf(m.w_dq->input(0)) || m.w_dq->input(0)->type.dtype != DType::kI8))
    return "input 1 is not a DequantizeLinear of int8 constant weights";
  if (!ConstantOf(m.w_dq->input(1))) return "weight scale is not a constant";
  if (n->num_inputs() > 2 && n->input(2)) {
    m.b_dq = DqOf(n->input(2));
    if (!m.b_dq || !ConstantOf(m.b_dq->input(0)) || m.b_dq->input(0)->type.dtype != DType::kI32)
      return "bias is not a DequantizeLinear of an int32 constant";
  }
  Value* y = n->output(0);
  if (!HasSingleUse(y)) return "output has other uses than one Q";
  Node* next = y->uses()[0].node;
  if (b_input && (next->op() == OpKind::kMul || next->op() == OpKind::kDiv) && next->num_inputs() == 2) {
    // Attention's 1/√d (qdq_rewrite.h: ScoreScale): the output scale absorbs it.
    const int i = next->input(0) == y ? 1 : 0;
    const Tensor* c = ConstantOf(next->input(i));
    const double v = c && c->numel() == 1 ? c->ToDoubleVector()[0] : 0;
    if (v > 0 && std::isfinite(v) && (next->op() == OpKind::kMul || i == 1)) {
      m.scale = next->op() == OpKind::kMul ? v : 1.0 / v;
      y = next->output(0);
      if (!HasSingleUse(y)) return "scaled output has other uses than one Q";
      next = y->uses()[0].node;
    }
  }
  if (n->op() == OpKind::kMatMul && next->op() == OpKind::kAdd && next->num_inputs() == 2) {
    // A bias Add (qdq_rewrite.h: MatMulBiasAdd) of an int32 constant [N] at x_scale · w_scale.
    Node* bdq = DqOf(next->input(next->input(0) == y ? 1 : 0));
    const Value* w = m.w_dq->input(0);
    if (bdq && ConstantOf(bdq->input(0)) && bdq->input(0)->type.dtype == DType::kI32 &&
        bdq->input(0)->type.rank() == 1 && w->type.rank() == 2 && bdq->input(0)->type.dims[0] == w->type.dims[1]) {
      m.b_dq = bdq;
      m.bias_add = next;
      y = next->output(0);
      if (!HasSingleUse(y)) return "bias add output has other uses than one Q";
      next = y->uses()[0].node;
    }
  }
  if (next->op() == OpKind::kRelu || next->op() == OpKind::kClip) {
    m.act = next;
    if (!HasSingleUse(next->output(0))) return "activation output has other uses than one Q";
    next = next->output(0)->uses()[0].node;
  }
  if (next->op() != OpKind::kQuantizeLinear || !PerTensor(next->input(1)))
    return "output is not quantized per tensor";
  // An int16 output is an int16 point of the mixed precision: the requantize writes it
  // (QLinearConv / QLinearMatMul with an i16 y_zero_point, Int16Quantize.WritersFoldToIntegerOps).
  // An int16 input is read through its 8-bit requantize (DQ16 → Q8 → DQ8) instead.
  const DType yt = next->output(0)->type.dtype;
  if (!IsEightBit(m.x_dq->input(0)->type.dtype) || (!IsEightBit(yt) && yt != DType::kI16))
    return "an int16 input (read through its 8-bit requantize) or an output that is not 8 or 16 bits";
  if (m.scale != 1 && !ConstantOf(next->input(1))) return "scaled output's scale is not a constant";
  m.q = next;
  return "";
}

// The bias DQ scale must be x_scale · w_scale (what an int32 bias added to the
// accumulator means).
bool BiasScaleMatches(const Match& m) {
  if (!m.b_dq) return true;
  const double sx = ConstantOf(m.x_dq->input(1))->ToDoubleVector()[0];
  const std::vector<double> sw = ConstantOf(m.w_dq->input(1))->ToDoubleVector();
  const Tensor* sbt = ConstantOf(m.b_dq->input(1));
  if (!sbt) return false;
  const std::vector<double> sb = sbt->ToDoubleVector();
  for (size_t c = 0; c < std::max(sb.size(), sw.size()); ++c) {
    const double want = sx * sw[sw.size() == 1 ? 0 : c], got = sb[sb.size() == 1 ? 0 : c];
    if (std::abs(got - want) > 1e-6 * std::abs(want)) return false;
  }
  return true;
}

// True when the activation changes nothing once the output is quantized with (s, z).
bool ActivationIsNoOp(const Node* act, const Node* q) {
  const Tensor* st = ConstantOf(q->input(1));
  if (!st) return false;
  const double s = st->ToDoubleVector()[0];
  const Value* zv = q->input(2);
  const Tensor* zt = zv ? ConstantOf(zv) : nullptr;
  const double z = zt ? zt->ToDoubleVector()[0] : 0;
  const auto [tmin, tmax] = TypeRange(q->output(0)->type.dtype);
  const double qmin = static_cast<double>(tmin), qmax = static_cast<double>(tmax);
  const double lo_q = (qmin - z) * s, hi_q = (qmax - z) * s;
  if (act->op() == OpKind::kRelu) return z == qmin;
  auto bound = [&](int i, double def) {
    const Value* b = act->input(i);
    return b && ConstantOf(b) ? ConstantOf(b)->ToDoubleVector()[0] : def;
  };
  return lo_q >= bound(1, -INFINITY) && hi_q <= bound(2, INFINITY) && z == qmin;
}

// The output clamp [qmin, qmax] that applies `act` on the quantized output, when its bounds
// are constants: Q(lo) and Q(hi) with QuantizeLinear's arithmetic (f32 division, round half
// to even, saturation).
bool ActivationClamp(const Node* act, const Node* q, int64_t* qmin, int64_t* qmax) {
  const Tensor* st = ConstantOf(q->input(1));
  if (!st) return false;
  const float s = static_cast<float>(st->ToDoubleVector()[0]);
  const Value* zv = q->input(2);
  const Tensor* zt = zv ? ConstantOf(zv) : nullptr;
  if (zv && !zt) return false;
  const int64_t z = zt ? zt->ToInt64Vector()[0] : 0;
  const auto range = TypeRange(q->output(0)->type.dtype);
  const int64_t lo_t = range.first, hi_t = range.second;  // plain names: a lambda captures them
  auto quantize = [&](float v) {
    const float r = std::nearbyint(v / s) + static_cast<float>(z);
    return static_cast<int64_t>(std::min(std::max(r, static_cast<float>(lo_t)), static_cast<float>(hi_t)));
  };
  *qmin = lo_t;
  *qmax = hi_t;
  if (act->op() == OpKind::kRelu) {
    *qmin = std::max(lo_t, z);
    return true;
  }
  for (int i = 1; i < act->num_inputs(); ++i) {
    const Value* b = act->input(i);
    if (!b) continue;
    const Tensor* bt = ConstantOf(b);
    if (!bt || bt->numel() != 1) return false;
    const int64_t qb = quantize(static_cast<float>(bt->ToDoubleVector()[0]));
    if (i == 1) *qmin = std::max(*qmin, qb);
    else *qmax = std::min(*qmax, qb);
  }
  return true;
}

Value* Const(Graph& g, const std::string& base, Tensor t) { return g.AddConstant(g.FreshName(base), std::move(t)); }

StatusOr<Value*> Fold(Graph& g, const Match& m, const FoldOptions& options) {
  Node* n = m.op;
  // The integer op's own attributes: requantization mode and the activation as a clamp.
  Attributes qattrs;
  qattrs.Set("edgec_requant", std::string(options.fixed_point ? "fixed_point" : "float"));
  int64_t qmin = 0, qmax = 0;
  const bool clamp = m.act && !ActivationIsNoOp(m.act, m.q) && ActivationClamp(m.act, m.q, &qmin, &qmax);
  if (clamp) {
    qattrs.Set("edgec_qmin", qmin);
    qattrs.Set("edgec_qmax", qmax);
  }
  auto with = [&](Attributes a) {
    for (const auto& [k, v] : qattrs.map()) a.Set(k, v);
    return a;
  };
  Value* xq = m.x_dq->input(0);
  Value* sx = m.x_dq->input(1);
  Value* zx = m.x_dq->input(2);
  Value* wq = m.w_dq->input(0);
  Value* sw = m.w_dq->input(1);
  Value* zw = m.w_dq->input(2);
  Value* sy = m.q->input(1);
  Value* zy = m.q->input(2);
  Value* bq = m.b_dq ? m.b_dq->input(0) : nullptr;
  const std::string name = n->name() + "/int8";
  Value* result = nullptr;
  if (n->op() == OpKind::kConv) {
    std::vector<Value*> in = {xq, sx, zx, wq, sw, zw, sy, zy};
    if (bq) in.push_back(bq);
    ASSIGN_OR_RETURN(Node* qc, passes::AddInferredNode(g, OpKind::kQLinearConv, g.FreshName(name), in,
                                                       with(n->attrs), 1, n));
    result = qc->output(0);
  } else if (n->op() == OpKind::kGemm) {
    // As a 1×1 QLinearConv: weights [N, K, 1, 1] (transposed when transB = 0).
    const Tensor& w = wq->constant();
    const bool trans_b = n->attrs.GetInt("transB", 0) != 0;
    const int64_t nn = trans_b ? w.dim(0) : w.dim(1), k = trans_b ? w.dim(1) : w.dim(0);
    Tensor w4(DType::kI8, {nn, k, 1, 1});
    const int8_t* src = w.data<int8_t>();
    int8_t* dst = w4.data<int8_t>();
    for (int64_t o = 0; o < nn; ++o)
      for (int64_t i = 0; i < k; ++i) dst[o * k + i] = trans_b ? src[o * k + i] : src[i * nn + o];
    const int64_t rows = xq->type.dims[0];
    Value* w4v = Const(g, wq->name() + "_1x1", w4);
    Value* to4 = Const(g, name + "_shape4", Tensor::VectorI64({rows, k, 1, 1}));
    Value* to2 = Const(g, name + "_shape2", Tensor::VectorI64({rows, nn}));
    ASSIGN_OR_RETURN(Node* r1, passes::AddInferredNode(g, OpKind::kReshape, g.FreshName(name + "/to_nchw"),
                                                       {xq, to4}, {}, 1, n));
    std::vector<Value*> in = {r1->output(0), sx, zx, w4v, sw, zw, sy, zy};
    if (bq) in.push_back(bq);
    ASSIGN_OR_RETURN(Node* qc, passes::AddInferredNode(g, OpKind::kQLinearConv, g.FreshName(name), in, with({}), 1, n));
    ASSIGN_OR_RETURN(Node* r2, passes::AddInferredNode(g, OpKind::kReshape, g.FreshName(name + "/to_2d"),
                                                       {qc->output(0), to2}, {}, 1, n));
    result = r2->output(0);
  } else {
    Value* sy_op = sy;
    if (m.scale != 1) {  // Q(c · v, s) = Q(v, s / c)
      const float s = static_cast<float>(ConstantOf(sy)->ToDoubleVector()[0] / m.scale);
      sy_op = Const(g, name + "_y_scale", Tensor::FromVector<float>(DType::kF32, {}, {s}));
    }
    std::vector<Value*> in = {xq, sx, zx, wq, sw, zw, sy_op, zy};
    if (bq) in.push_back(bq);
    ASSIGN_OR_RETURN(Node* qm, passes::AddInferredNode(g, OpKind::kQLinearMatMul, g.FreshName(name), in, with({}), 1, n));
    result = qm->output(0);
  }
  if (m.act && !ActivationIsNoOp(m.act, m.q) && !clamp) {
    // DQ -> activation -> Q with the output's own scale: exact on the grid.
    ASSIGN_OR_RETURN(Node* dq, passes::AddInferredNode(g, OpKind::kDequantizeLinear, g.FreshName(name + "/act_dq"),
                                                       {result, sy, zy}, {}, 1, m.act));
    std::vector<Value*> act_in = {dq->output(0)};
    for (int i = 1; i < m.act->num_inputs(); ++i) act_in.push_back(m.act->input(i));
    ASSIGN_OR_RETURN(Node* a, passes::AddInferredNode(g, m.act->op(), g.FreshName(name + "/act"), act_in,
                                                      m.act->attrs, 1, m.act));
    ASSIGN_OR_RETURN(Node* q, passes::AddInferredNode(g, OpKind::kQuantizeLinear, g.FreshName(name + "/act_q"),
                                                      {a->output(0), sy, zy}, {}, 1, m.act));
    result = q->output(0);
  }
  return result;
}

// --- int8 data movement: op(DQ(q)) = DQ(op(q)) for ops that only move or compare values ---

// The zero point of the per-tensor DQ `d` as a scalar constant of its integer type.
Value* ZeroPointConstant(Graph& g, Node* d, const std::string& base) {
  const DType t = d->input(0)->type.dtype;
  const int64_t z = ParamsOf(d, t)->zero_point;
  Tensor c = t == DType::kU8 ? Tensor::FromVector<uint8_t>(t, {}, {static_cast<uint8_t>(z)})
                             : Tensor::FromVector<int8_t>(t, {}, {static_cast<int8_t>(z)});
  return g.AddConstant(g.FreshName(base), std::move(c));
}

// Moves the DQs feeding `n` (a value-moving op) after it: n on the int8 values, then one DQ.
// MaxPool commutes with DQ because DQ is monotonic; the others only move elements. All data
// inputs must come from DQs with equal parameters (Concat), the others be constants.
// A Split (kKeepsValues with several outputs) gives each output its DQ; a Pad that keeps its
// input's quantization (points.h: PadKeepsQuantization) pads with the zero point, which is
// DQ(0) exactly (Fold.PadOfZeroIsExact).
StatusOr<bool> PushDequantizeDown(Graph& g, Node* n, int* moved) {
  const bool pad = n->op() == OpKind::kPad && PadKeepsQuantization(*n);
  if (!(HasTrait(n->op(), op_trait::kMovesValues) || KeepsQuantization(*n) || pad)) return false;
  if (n->num_outputs() != 1 && !(HasTrait(n->op(), op_trait::kKeepsValues) && n->op() != OpKind::kMaxPool))
    return false;
  for (const Value* y : n->outputs())
    if (!y || y->is_graph_output()) return false;
  Node* first = nullptr;
  std::optional<QParams> params;
  std::vector<Value*> inputs;
  for (int i = 0; i < n->num_inputs(); ++i) {
    Value* v = n->input(i);
    const bool data = i == 0 || n->op() == OpKind::kConcat;
    if (!data) {
      if (v && !ConstantOf(v)) return false;
      inputs.push_back(v);
      continue;
    }
    Node* dq = DqOf(v);
    if (!dq) return false;
    auto p = ParamsOf(dq, dq->input(0)->type.dtype);
    if (!p || (p->dtype != DType::kU8 && p->dtype != DType::kI8) || (params && !(*p == *params))) return false;
    params = p;
    if (!first) first = dq;
    inputs.push_back(dq->input(0));
  }
  if (!first) return false;
  if (pad && n->attrs.GetString("mode", "constant") == "constant") {
    inputs.resize(std::max<size_t>(inputs.size(), 3));
    inputs[2] = ZeroPointConstant(g, first, n->name() + "/pad_value");
  }
  ASSIGN_OR_RETURN(Node* moved_op, passes::AddInferredNode(g, n->op(), g.FreshName(n->name() + "/int8"), inputs,
                                                           n->attrs, n->num_outputs(), n));
  for (int k = 0; k < n->num_outputs(); ++k) {
    std::vector<Value*> dq_in = {moved_op->output(k), first->input(1)};
    if (first->num_inputs() > 2 && first->input(2)) dq_in.push_back(first->input(2));
    ASSIGN_OR_RETURN(Node* dq, passes::AddInferredNode(g, OpKind::kDequantizeLinear, g.FreshName(n->name() + "/dq"),
                                                       dq_in, first->attrs, 1, n));
    if (!passes::ReplaceValue(g, n->output(k), dq->output(0)))
      return Internal("{}: cannot replace its output '{}'", n->Label(), n->output(k)->name());
  }
  ++*moved;
  return true;
}

// ArgMax/ArgMin(DQ(q)) = ArgMax/ArgMin(q): DQ is strictly increasing, so the order and the
// ties (the same index) are the same (Fold.ArgMaxOfDequantizeIsExact).
StatusOr<bool> FoldArgReduce(Graph& g, Node* n, int* moved) {
  if (n->op() != OpKind::kArgMax && n->op() != OpKind::kArgMin) return false;
  Node* dq = DqOf(n->input(0));
  if (!dq) return false;
  auto p = ParamsOf(dq, dq->input(0)->type.dtype);
  if (!p || !(p->scale > 0) || (p->dtype != DType::kU8 && p->dtype != DType::kI8)) return false;
  ASSIGN_OR_RETURN(Node* moved_op, passes::AddInferredNode(g, n->op(), g.FreshName(n->name() + "/int8"),
                                                           {dq->input(0)}, n->attrs, 1, n));
  if (!passes::ReplaceValue(g, n->output(0), moved_op->output(0)))
    return Internal("{}: cannot replace its output '{}'", n->Label(), n->output(0)->name());
  ++*moved;
  return true;
}

// --- integer add and pool: the QLinear form of DQ ─► op ─► [activation] ─► Q ---

// Why input `i` is not a DQ from u8/i8 with per-tensor constant parameters ("" when it is).
std::string WhyNotQuantizedInput(const Node* dq, int i, bool int16 = false) {
  if (!dq) return fmt::format("input {} is not a DequantizeLinear", i);
  const DType t = dq->input(0)->type.dtype;
  if ((!IsEightBit(t) && !(int16 && t == DType::kI16)) || !ParamsOf(dq, t))
    return fmt::format("input {} is not dequantized per tensor from u8/i8{} with constant parameters", i,
                       int16 ? "/i16" : "");
  return "";
}

// The Q taking `y` (through one Relu/Clip when `act` is given), or why there is none. An
// int16 Q only when `int16` (the norms and softmax: quant/int16_norm.h).
std::string MatchOutputQ(Value* y, Node** act, Node** q, bool int16 = false) {
  if (!HasSingleUse(y)) return "output has other uses than one Q";
  Node* next = y->uses()[0].node;
  if (act && (next->op() == OpKind::kRelu || next->op() == OpKind::kClip)) {
    *act = next;
    if (!HasSingleUse(next->output(0))) return "activation output has other uses than one Q";
    next = next->output(0)->uses()[0].node;
  }
  if (next->op() != OpKind::kQuantizeLinear || !ParamsOf(next, next->output(0)->type.dtype))
    return "output is not quantized per tensor with constant parameters";
  const DType t = next->output(0)->type.dtype;
  if (!IsEightBit(t) && !(int16 && t == DType::kI16)) return fmt::format("output is quantized to {}", DTypeName(t));
  *q = next;
  return "";
}

// The zero point of a DQ/Q node as an input of a QLinear op: its own, or a zero of `t`.
Value* ZeroPointOf(Graph& g, Node* d, DType t) {
  if (d->num_inputs() > 2 && d->input(2)) return d->input(2);
  return Const(g, d->name() + "/zero_point", Tensor(t, {}));  // zero-filled
}

// Adds `op` (inputs `in`, provenance `from`) in place of `q`'s output.
StatusOr<std::string> ReplaceByIntegerOp(Graph& g, OpKind op, Node* n, std::vector<Value*> in, Attributes attrs,
                                         Node* from, Node* q) {
  ASSIGN_OR_RETURN(Node* folded, passes::AddInferredNode(g, op, g.FreshName(n->name() + "/int8"), std::move(in),
                                                         std::move(attrs), 1, from));
  if (!passes::ReplaceValue(g, q->output(0), folded->output(0)))
    return Internal("{}: cannot replace the quantized output '{}'", n->Label(), q->output(0)->name());
  return std::string();
}

Attributes RequantAttrs(const FoldOptions& options) {
  Attributes attrs;
  attrs.Set("edgec_requant", std::string(options.fixed_point ? "fixed_point" : "float"));
  return attrs;
}

// Folds DQ(a) + DQ(b) → [Relu|Clip] → Q (per-tensor constant parameters) into one QLinearAdd,
// and DQ(a) · DQ(b) likewise into one QLinearMul, the activation as its output clamp. Returns
// why not ("" when folded).
StatusOr<std::string> FoldBinary(Graph& g, Node* n, const FoldOptions& options) {
  if (n->num_inputs() != 2) return fmt::format("not a two-input {}", OpName(n->op()));
  // int16 operands and result (the residual Add beside an int16 LayerNorm: quant/fixed_point.h
  // lifts them by 2^15); a product of two int16 values has no int32 fixed-point form.
  Node* dq[2] = {DqOf(n->input(0)), DqOf(n->input(1))};
  const bool add = n->op() == OpKind::kAdd;
  for (int i = 0; i < 2; ++i)
    if (std::string why = WhyNotQuantizedInput(dq[i], i, true); !why.empty()) return why;
  if (!add && dq[0]->input(0)->type.dtype == DType::kI16 && dq[1]->input(0)->type.dtype == DType::kI16)
    return std::string("a product of two int16 operands");
  Node* act = nullptr;
  Node* q = nullptr;
  if (std::string why = MatchOutputQ(n->output(0), &act, &q, true); !why.empty()) return why;
  Attributes attrs = RequantAttrs(options);
  if (act && !ActivationIsNoOp(act, q)) {
    int64_t qmin = 0, qmax = 0;
    if (!ActivationClamp(act, q, &qmin, &qmax)) return std::string("activation bounds are not constants");
    attrs.Set("edgec_qmin", qmin);
    attrs.Set("edgec_qmax", qmax);
  }
  return ReplaceByIntegerOp(g, n->op() == OpKind::kAdd ? OpKind::kQLinearAdd : OpKind::kQLinearMul, n,
                            {dq[0]->input(0), dq[0]->input(1), ZeroPointOf(g, dq[0], dq[0]->input(0)->type.dtype),
                             dq[1]->input(0), dq[1]->input(1), ZeroPointOf(g, dq[1], dq[1]->input(0)->type.dtype),
                             q->input(1), ZeroPointOf(g, q, q->output(0)->type.dtype)},
                            std::move(attrs), act ? act : n, q);
}

// Folds DQ(x) → GlobalAveragePool → Q (per-tensor constant parameters) into one
// QLinearGlobalAveragePool. Returns why not ("" when folded).
StatusOr<std::string> FoldGlobalAveragePool(Graph& g, Node* n, const FoldOptions& options) {
  Node* dq = DqOf(n->input(0));
  if (std::string why = WhyNotQuantizedInput(dq, 0); !why.empty()) return why;
  Node* q = nullptr;
  if (std::string why = MatchOutputQ(n->output(0), nullptr, &q); !why.empty()) return why;
  return ReplaceByIntegerOp(g, OpKind::kQLinearGlobalAveragePool, n,
                            {dq->input(0), dq->input(1), ZeroPointOf(g, dq, dq->input(0)->type.dtype), q->input(1),
                             ZeroPointOf(g, q, q->output(0)->type.dtype)},
                            RequantAttrs(options), n, q);
}

// Folds DQ(x) → AveragePool → Q (per-tensor constant parameters, 8-bit) into one
// QLinearAveragePool with the pool's attributes. Returns why not ("" when folded).
StatusOr<std::string> FoldAveragePool(Graph& g, Node* n, const FoldOptions& options) {
  Node* dq = DqOf(n->input(0));
  if (std::string why = WhyNotQuantizedInput(dq, 0); !why.empty()) return why;
  Node* q = nullptr;
  if (std::string why = MatchOutputQ(n->output(0), nullptr, &q); !why.empty()) return why;
  Attributes attrs = n->attrs;
  const Attributes requant = RequantAttrs(options);
  for (const auto& [name, value] : requant.map()) attrs.Set(name, value);
  return ReplaceByIntegerOp(g, OpKind::kQLinearAveragePool, n,
                            {dq->input(0), dq->input(1), ZeroPointOf(g, dq, dq->input(0)->type.dtype), q->input(1),
                             ZeroPointOf(g, q, q->output(0)->type.dtype)},
                            std::move(attrs), n, q);
}

// Folds DQ(x) → LayerNormalization / GroupNormalization / InstanceNormalization / Softmax → Q
// (per-tensor constant parameters, constant f32 Scale and B) into its integer form
// (QLinearLayerNormalization, QLinearGroupNormalization with num_groups = C for an
// InstanceNormalization, QLinearSoftmax). Returns why not ("" when folded).
StatusOr<std::string> FoldNormalization(Graph& g, Node* n) {
  Node* dq = DqOf(n->input(0));
  if (std::string why = WhyNotQuantizedInput(dq, 0, true); !why.empty()) return why;
  Node* q = nullptr;
  if (std::string why = MatchOutputQ(n->output(0), nullptr, &q, true); !why.empty()) return why;
  const TensorType& xt = n->input(0)->type;
  if (!xt.IsStatic()) return std::string("dynamic shape");
  std::vector<Value*> in = {dq->input(0), dq->input(1), ZeroPointOf(g, dq, dq->input(0)->type.dtype)};
  Attributes attrs;
  OpKind op = OpKind::kQLinearSoftmax;
  if (n->op() == OpKind::kSoftmax) {
    const int64_t axis = n->attrs.GetInt("axis", -1);
    if (axis != -1 && axis != xt.rank() - 1) return fmt::format("softmax over axis {} (only the last)", axis);
  } else {
    for (int i = 1; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (v && (!ConstantOf(v) || v->type.dtype != DType::kF32)) return fmt::format("input {} is not an f32 constant", i);
    }
    attrs.Set("epsilon", n->attrs.GetFloat("epsilon", 1e-5f));
    if (n->op() == OpKind::kLayerNormalization) {
      op = OpKind::kQLinearLayerNormalization;
      attrs.Set("axis", n->attrs.GetInt("axis", -1));
    } else {
      op = OpKind::kQLinearGroupNormalization;
      attrs.Set("num_groups", n->op() == OpKind::kInstanceNormalization ? xt.dims[1] : n->attrs.GetInt("num_groups", 1));
    }
    in.push_back(n->input(1));
    in.push_back(n->num_inputs() > 2 ? n->input(2) : nullptr);
  }
  in.push_back(q->input(1));
  in.push_back(ZeroPointOf(g, q, q->output(0)->type.dtype));
  return ReplaceByIntegerOp(g, op, n, std::move(in), std::move(attrs), n, q);
}

bool IsFoldedNormalization(OpKind op) {
  return op == OpKind::kLayerNormalization || op == OpKind::kGroupNormalization ||
         op == OpKind::kInstanceNormalization || op == OpKind::kSoftmax;
}

// Q(DQ(q)) with the same parameters is q.
bool CancelRequantize(Graph& g, Node* q) {
  if (q->op() != OpKind::kQuantizeLinear || q->output(0)->is_graph_output()) return false;
  Node* dq = DqOf(q->input(0));
  if (!dq) return false;
  auto a = ParamsOf(dq, dq->input(0)->type.dtype), b = ParamsOf(q, q->output(0)->type.dtype);
  if (!a || !b || !(*a == *b)) return false;
  return passes::ReplaceValue(g, q->output(0), dq->input(0));
}

// Q(DQ(x)) between an int16 and an 8-bit quantization (the mixed precision's int16 point and
// its 8-bit neighbour: DQ16 → Q8 before a MatMul, DQ8 → Q16) is one QLinearRequantize, an
// integer op the NPU runs (Int16Quantize.RequantizeBetweenWidthsFolds).
StatusOr<bool> FoldRequantize(Graph& g, Node* q, const FoldOptions& options) {
  if (q->op() != OpKind::kQuantizeLinear) return false;
  Node* dq = DqOf(q->input(0));
  if (!dq) return false;
  const DType xt = dq->input(0)->type.dtype, yt = q->output(0)->type.dtype;
  if ((xt == DType::kI16) == (yt == DType::kI16) || !ParamsOf(dq, xt) || !ParamsOf(q, yt)) return false;
  if (!IsEightBit(xt) && xt != DType::kI16) return false;
  if (!IsEightBit(yt) && yt != DType::kI16) return false;
  RETURN_IF_ERROR(ReplaceByIntegerOp(g, OpKind::kQLinearRequantize, q,
                                     {dq->input(0), dq->input(1), ZeroPointOf(g, dq, xt), q->input(1),
                                      ZeroPointOf(g, q, yt)},
                                     RequantAttrs(options), q, q)
                      .status());
  return true;
}

}  // namespace

StatusOr<FoldSummary> FoldQdqToInteger(Graph& g, const FoldOptions& options) {
  FoldSummary s;
  for (Node* n : g.nodes()) {
    if (n->op() == OpKind::kMul && MatchUnaryIsland(n)) continue;  // x·U(x): a table below
    // An Add/Mul of one value and a scalar constant (x + c, x·c) is an island: a table below.
    if ((n->op() == OpKind::kAdd || n->op() == OpKind::kMul) && ElementwiseIslandSource(n)) continue;
    if (IsFoldedNormalization(n->op())) {
      if (!options.integer_norm) continue;
      ASSIGN_OR_RETURN(std::string why, FoldNormalization(g, n));
      if (why.empty()) ++s.folded;
      else s.skipped.push_back(n->Label() + ": " + why);
      continue;
    }
    const bool binary = (n->op() == OpKind::kAdd && options.integer_add) || (n->op() == OpKind::kMul && options.integer_mul);
    if (binary || n->op() == OpKind::kGlobalAveragePool || n->op() == OpKind::kAveragePool) {
      ASSIGN_OR_RETURN(std::string why, binary                                     ? FoldBinary(g, n, options)
                                        : n->op() == OpKind::kAveragePool ? FoldAveragePool(g, n, options)
                                                                          : FoldGlobalAveragePool(g, n, options));
      if (why.empty()) ++s.folded;
      else s.skipped.push_back(n->Label() + ": " + why);
      continue;
    }
    if (n->op() != OpKind::kConv && n->op() != OpKind::kGemm && n->op() != OpKind::kMatMul) continue;
    Match m;
    std::string why = MatchAround(n, m);
    if (why.empty() && n->op() == OpKind::kGemm &&
        (n->attrs.GetInt("transA", 0) != 0 || n->attrs.GetFloat("alpha", 1.f) != 1.f ||
         n->attrs.GetFloat("beta", 1.f) != 1.f || m.x_dq->input(0)->type.rank() != 2))
      why = "Gemm with transA, alpha/beta != 1 or a non-2-D input";
    if (why.empty() && !BiasScaleMatches(m)) why = "bias scale is not x_scale * w_scale";
    if (!why.empty()) {
      s.skipped.push_back(n->Label() + ": " + why);
      continue;
    }
    ASSIGN_OR_RETURN(Value * result, Fold(g, m, options));
    Value* old = m.q->output(0);
    if (!passes::ReplaceValue(g, old, result))
      return Internal("{}: cannot replace the quantized output '{}'", n->Label(), old->name());
    ++s.folded;
  }
  passes::RemoveDeadNodes(g);
  for (Node* n : g.nodes()) RETURN_IF_ERROR(HoistNarrowingQuantize(g, n).status());
  RETURN_IF_ERROR(g.TopoSort());
  // Data movement and max pooling on the int8 values, to a fixpoint (chains such as
  // Reshape → Transpose → Reshape move one op per round).
  for (int round = 0; round < 64 && options.int8_movement; ++round) {
    bool changed = false;
    for (Node* n : g.nodes()) {
      ASSIGN_OR_RETURN(bool pushed, PushDequantizeDown(g, n, &s.int8_movement));
      changed |= pushed;
      ASSIGN_OR_RETURN(bool arg, FoldArgReduce(g, n, &s.int8_movement));
      changed |= arg;
    }
    for (Node* n : g.nodes()) changed |= CancelRequantize(g, n);
    if (!changed) break;
    passes::RemoveDeadNodes(g);
    RETURN_IF_ERROR(g.TopoSort());
  }
  for (Node* n : g.nodes()) {
    ASSIGN_OR_RETURN(bool folded, FoldRequantize(g, n, options));
    s.folded += folded;
  }
  if (options.tabulate) {
    for (Node* n : g.nodes()) {
      ASSIGN_OR_RETURN(const bool done, TabulateIsland(g, n, &s.tabulated));
      if (!done) RETURN_IF_ERROR(TabulateChannelIsland(g, n, &s.tabulated).status());
    }
  }
  passes::RemoveDeadNodes(g);
  RETURN_IF_ERROR(g.TopoSort());
  RETURN_IF_ERROR(Verify(g));
  return s;
}

}  // namespace edgec::quant
