#include "quant/qdq_rewrite.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "passes/pass_util.h"
#include "quant/fold_qdq.h"
#include "quant/mixed_precision.h"
#include "quant/points.h"

namespace edgec::quant {
namespace {

using passes::ConstantOf;

bool IsFloatActivation(const Value* v) {
  return v && !v->is_constant() && v->type.dtype == DType::kF32;
}

// Why `n` cannot be quantized ("" when it can).
std::string WhyNot(const Node* n) {
  const Value* w = n->input(1);
  switch (n->op()) {
    case OpKind::kConv:
      if (!IsFloatActivation(n->input(0))) return "input 0 is not a float activation";
      if (!ConstantOf(w) || w->type.dtype != DType::kF32) return "weights are not a float constant";
      if (n->input(2) && !ConstantOf(n->input(2))) return "bias is not a constant";
      return "";
    case OpKind::kGemm:
      if (n->attrs.GetFloat("alpha", 1.f) != 1.f) return "alpha != 1";
      if (n->attrs.GetFloat("beta", 1.f) != 1.f) return "beta != 1";
      if (n->attrs.GetInt("transA", 0) != 0) return "transA = 1";
      if (!IsFloatActivation(n->input(0))) return "input 0 is not a float activation";
      if (!ConstantOf(w) || w->type.rank() != 2) return "B is not a 2-D constant";
      if (n->input(2) && (!ConstantOf(n->input(2)) || n->input(2)->type.rank() != 1))
        return "C is not a 1-D constant";
      return "";
    case OpKind::kMatMul:
      if (!IsFloatActivation(n->input(0))) return "input 0 is not a float activation";
      if (!ConstantOf(w) || w->type.rank() != 2 || w->type.dtype != DType::kF32)
        return "B is not a 2-D float constant";
      return "";
    default:
      return "not a quantizable op";
  }
}

bool IsQuantizableKind(OpKind op) {
  return op == OpKind::kConv || op == OpKind::kGemm || op == OpKind::kMatMul;
}

}  // namespace

Node* MatMulBiasAdd(const Node* n) {
  if (n->op() != OpKind::kMatMul || !passes::HasSingleUse(n->output(0))) return nullptr;
  const Use& u = n->output(0)->uses()[0];
  Node* add = u.node;
  if (add->op() != OpKind::kAdd || add->num_inputs() != 2) return nullptr;
  const Value* b = add->input(1 - u.input_index);
  const Value* w = n->input(1);
  if (!ConstantOf(b) || b->type.dtype != DType::kF32 || !b->type.rank_known || b->type.rank() != 1) return nullptr;
  if (!w->type.rank_known || w->type.rank() != 2 || b->type.dims[0] != w->type.dims[1]) return nullptr;
  return add;
}

bool IsActivationMatMul(const Node* n) {
  return n->op() == OpKind::kMatMul && n->num_inputs() == 2 && IsFloatActivation(n->input(0)) &&
         IsFloatActivation(n->input(1));
}

std::optional<TableSum> MatchTableSum(const Node* add) {
  if (add->op() != OpKind::kAdd || add->num_inputs() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Value* t = add->input(i);
    const Value* c = add->input(1 - i);
    const Node* gather = t ? t->producer() : nullptr;
    if (!gather || gather->op() != OpKind::kGather || !passes::HasSingleUse(t) || t->is_graph_output()) continue;
    const Value* table = gather->input(0);
    if (!ConstantOf(table) || table->type.dtype != DType::kF32 || ConstantOf(gather->input(1))) continue;
    if (!ConstantOf(c) || c->type.dtype != DType::kF32) continue;
    return TableSum{const_cast<Node*>(gather), const_cast<Node*>(add), 1 - i};
  }
  return std::nullopt;
}

Node* ScoreScale(const Node* n, double* factor) {
  if (!IsActivationMatMul(n) || !passes::HasSingleUse(n->output(0))) return nullptr;
  const Use& u = n->output(0)->uses()[0];
  Node* s = u.node;
  if ((s->op() != OpKind::kMul && s->op() != OpKind::kDiv) || s->num_inputs() != 2) return nullptr;
  if (s->op() == OpKind::kDiv && u.input_index != 0) return nullptr;
  const Tensor* c = ConstantOf(s->input(1 - u.input_index));
  if (!c || c->numel() != 1 || s->input(1 - u.input_index)->type.dtype != DType::kF32) return nullptr;
  const double v = c->ToDoubleVector()[0];
  if (!(v > 0) || !std::isfinite(v)) return nullptr;
  if (factor) *factor = s->op() == OpKind::kMul ? v : 1.0 / v;
  return s;
}

Value* OutputPoint(const Node* n) {
  Value* y = n->output(0);
  if (const Node* add = MatMulBiasAdd(n)) y = add->output(0);
  if (const Node* scale = ScoreScale(n, nullptr)) y = scale->output(0);
  if (!passes::HasSingleUse(y)) return y;
  const Node* act = y->uses()[0].node;
  if (act->op() == OpKind::kRelu) return act->output(0);
  if (act->op() == OpKind::kClip && y->uses()[0].input_index == 0) {
    const bool bounds_const = (!act->input(1) || ConstantOf(act->input(1))) &&
                              (!act->input(2) || ConstantOf(act->input(2)));
    if (bounds_const) return act->output(0);
  }
  return y;
}

namespace {

// Output-channel axis of the weights.
int WeightAxis(const Node* n) {
  if (n->op() == OpKind::kGemm) return n->attrs.GetInt("transB", 0) ? 0 : 1;
  if (n->op() == OpKind::kMatMul) return 1;
  return 0;
}

template <typename T>
Tensor ScalarOf(DType dt, T v) {
  return Tensor::FromVector<T>(dt, {}, {v});
}

Tensor ZeroPoint(DType dt, int32_t zp) {
  if (dt == DType::kU8) return ScalarOf<uint8_t>(dt, static_cast<uint8_t>(zp));
  if (dt == DType::kI16) return ScalarOf<int16_t>(dt, static_cast<int16_t>(zp));
  return ScalarOf<int8_t>(dt, static_cast<int8_t>(zp));
}

}  // namespace

QuantizedWeight QuantizeWeight(const Tensor& w, int axis, int qmax) {
  QuantizedWeight out;
  const std::vector<double> v = w.ToDoubleVector();
  int64_t channels = 1, inner = w.numel();
  if (axis >= 0) {
    channels = w.dim(axis);
    inner = 1;
    for (int d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
  }
  auto channel_of = [&](int64_t i) { return axis >= 0 ? (i / inner) % channels : 0; };
  std::vector<double> amax(channels, 0.0);
  for (int64_t i = 0; i < w.numel(); ++i) amax[channel_of(i)] = std::max(amax[channel_of(i)], std::abs(v[i]));
  // A dead channel (trained-away filters: PP-OCRv4's recognizer has weights of 1e-38 and
  // less) is a zero channel with scale 1: its own scale would be a float subnormal, and the
  // bias scale x_scale * w_scale with it, which f32 holds with a few bits only (the folding of
  // Q/DQ refuses the conv then) and which would push the bias past int32. Dead means its
  // largest weight is below 2^-24 of the largest channel's (its outputs vanish under the
  // output's per-tensor scale) or its scale would not be a normal f32.
  const double largest = *std::max_element(amax.begin(), amax.end());
  out.scales.resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = amax[c] / qmax;
    const bool dead = amax[c] <= largest * 0x1p-24 || scale < std::numeric_limits<float>::min();
    out.scales[c] = dead ? 1.0f : static_cast<float>(scale);
    if (dead) amax[c] = 0;
  }
  out.q = Tensor(DType::kI8, w.dims());
  int8_t* q = out.q.data<int8_t>();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float r = amax[channel_of(i)] > 0 ? std::nearbyint(static_cast<float>(v[i]) / out.scales[channel_of(i)]) : 0.0f;
    q[i] = static_cast<int8_t>(std::clamp(r, -static_cast<float>(qmax), static_cast<float>(qmax)));
  }
  return out;
}


QuantizablePlan PlanQuantization(const Graph& g, const QuantizeOptions& o) {
  QuantizablePlan p;
  for (const Node* n : g.nodes()) {
    if (!IsQuantizableKind(n->op())) continue;
    if (IsActivationMatMul(n) && !o.keep_float.count(n->name())) continue;  // quantized at its points
    if (o.keep_float.count(n->name())) {
      p.skipped.push_back(n->Label() + ": kept in float");
      continue;
    }
    const std::string why = WhyNot(n);
    if (why.empty()) p.nodes.push_back(n);
    else p.skipped.push_back(n->Label() + ": " + why);
  }
  return p;
}

std::vector<std::string> QuantizationPoints(const Graph& g, const QuantizeOptions& o) {
  return PlanPoints(g, o).points;
}

StatusOr<RewriteSummary> RewriteToQdq(Graph& g, const ScaleTable& scales, const QuantizeOptions& o) {
  RewriteSummary summary;
  const QuantizablePlan plan = PlanQuantization(g, o);
  const PointPlan point_plan = PlanPoints(g, o);  // before weights change
  const std::vector<std::string>& points = point_plan.points;
  summary.float_ops = SummarizeFloatNodes(point_plan.float_nodes);
  for (const FloatNode& f : point_plan.float_nodes) summary.float_nodes.push_back(f.node->Label() + ": " + f.why);
  const std::set<std::string> int16_points = Int16Points(g, o);
  summary.skipped = plan.skipped;
  const DType adt = scales.dtype;
  auto act_scale = [&](const Value* v) -> StatusOr<ActivationScale> {
    auto it = scales.activations.find(v->name());
    if (it == scales.activations.end())
      return NotFound("no activation scale for value '{}' (scales file out of date?)", v->name());
    return it->second;
  };

  // 1. Weights and biases (they need the input scales, which do not change below).
  for (const Node* cn : plan.nodes) {
    Node* n = const_cast<Node*>(cn);
    ASSIGN_OR_RETURN(ActivationScale xs, act_scale(n->input(0)));
    const Value* wv = n->input(1);
    const int axis = o.per_channel ? WeightAxis(n) : -1;
    QuantizedWeight qw = QuantizeWeight(wv->constant(), axis, o.reduce_range ? 63 : 127);
    const int64_t ch = static_cast<int64_t>(qw.scales.size());
    const bool per_axis = axis >= 0;
    Value* wq = g.AddConstant(g.FreshName(wv->name() + "_quantized"), qw.q);
    Value* ws = g.AddConstant(g.FreshName(wv->name() + "_scale"),
                              per_axis ? Tensor::FromVector<float>(DType::kF32, {ch}, qw.scales)
                                       : ScalarOf<float>(DType::kF32, qw.scales[0]));
    Value* wz = g.AddConstant(g.FreshName(wv->name() + "_zero_point"),
                              per_axis ? Tensor(DType::kI8, {ch}) : ScalarOf<int8_t>(DType::kI8, 0));
    Attributes wa;
    if (per_axis) wa.Set("axis", static_cast<int64_t>(axis));
    ASSIGN_OR_RETURN(Node* wdq, passes::AddInferredNode(g, OpKind::kDequantizeLinear,
                                                        g.FreshName(n->name() + "/weight_dq"),
                                                        {wq, ws, wz}, wa, 1, n));
    g.SetInput(n, 1, wdq->output(0));
    // The bias: Conv's and Gemm's input 2, or the constant of a MatMul's bias Add.
    Node* bias_node = n;
    int bias_index = 2;
    if (Node* add = MatMulBiasAdd(n)) {
      bias_node = add;
      bias_index = add->input(0) == n->output(0) ? 1 : 0;
    }
    if (Value* bv = bias_node->num_inputs() > bias_index ? bias_node->input(bias_index) : nullptr) {
      const std::vector<double> b = bv->constant().ToDoubleVector();
      std::vector<float> bs(b.size());
      std::vector<int32_t> bq(b.size());
      for (size_t c = 0; c < b.size(); ++c) {
        bs[c] = xs.scale * qw.scales[per_axis ? c : 0];
        const double r = std::nearbyint(b[c] / bs[c]);
        bq[c] = static_cast<int32_t>(std::clamp<double>(r, std::numeric_limits<int32_t>::min(),
                                                        std::numeric_limits<int32_t>::max()));
      }
      const int64_t nb = static_cast<int64_t>(b.size());
      Value* bqv = g.AddConstant(g.FreshName(bv->name() + "_quantized"),
                                 Tensor::FromVector<int32_t>(DType::kI32, {nb}, bq));
      Value* bsv = g.AddConstant(g.FreshName(bv->name() + "_scale"),
                                 per_axis ? Tensor::FromVector<float>(DType::kF32, {nb}, bs)
                                          : ScalarOf<float>(DType::kF32, bs[0]));
      Value* bzv = g.AddConstant(g.FreshName(bv->name() + "_zero_point"),
                                 per_axis ? Tensor(DType::kI32, {nb}) : ScalarOf<int32_t>(DType::kI32, 0));
      Attributes ba;
      if (per_axis) ba.Set("axis", static_cast<int64_t>(0));
      ASSIGN_OR_RETURN(Node* bdq, passes::AddInferredNode(g, OpKind::kDequantizeLinear,
                                                          g.FreshName(n->name() + "/bias_dq"),
                                                          {bqv, bsv, bzv}, ba, 1, n));
      g.SetInput(bias_node, bias_index, bdq->output(0));
    }
    ++summary.quantized_nodes;
  }

  // 1b. Embedding sums (MatchTableSum): the Gather reads the table as int8 and hands a DQ of
  // the table's parameters to the Add, whose constant is a DQ of its own; the Add then folds
  // into a QLinearAdd (Qdq.EmbeddingSumFoldsToAnIntegerAdd).
  std::vector<TableSum> sums;
  for (Node* n : g.nodes())
    if (auto m = MatchTableSum(n); m && std::find(points.begin(), points.end(), OutputPoint(n)->name()) != points.end())
      sums.push_back(*m);
  for (const TableSum& m : sums) {
    auto quantized_constant = [&](Value* v) -> std::array<Value*, 3> {
      const Tensor& t = v->constant();
      const std::vector<double> x = t.ToDoubleVector();
      Range r;
      for (double e : x) r = {std::min(r.lo, e), std::max(r.hi, e)};
      const ScaleZeroPoint p = ParamsFromRange(r, adt, scales.symmetric);
      const int qmin = adt == DType::kU8 ? 0 : -128, qmax = adt == DType::kU8 ? 255 : 127;
      Tensor q(adt, t.dims());
      for (size_t i = 0; i < x.size(); ++i) {
        const float e = std::nearbyint(static_cast<float>(x[i]) / p.scale) + static_cast<float>(p.zero_point);
        const int c = static_cast<int>(std::clamp(e, static_cast<float>(qmin), static_cast<float>(qmax)));
        if (adt == DType::kU8) q.data<uint8_t>()[i] = static_cast<uint8_t>(c);
        else q.data<int8_t>()[i] = static_cast<int8_t>(c);
      }
      return {g.AddConstant(g.FreshName(v->name() + "_quantized"), std::move(q)),
              g.AddConstant(g.FreshName(v->name() + "_scale"), ScalarOf<float>(DType::kF32, p.scale)),
              g.AddConstant(g.FreshName(v->name() + "_zero_point"), ZeroPoint(adt, p.zero_point))};
    };
    const std::array<Value*, 3> tq = quantized_constant(m.gather->input(0));
    ASSIGN_OR_RETURN(Node* gq, passes::AddInferredNode(g, OpKind::kGather, g.FreshName(m.gather->name() + "/int8"),
                                                       {tq[0], m.gather->input(1)}, m.gather->attrs, 1, m.gather));
    ASSIGN_OR_RETURN(Node* gdq, passes::AddInferredNode(g, OpKind::kDequantizeLinear,
                                                        g.FreshName(m.gather->name() + "/dequantize"),
                                                        {gq->output(0), tq[1], tq[2]}, {}, 1, m.gather));
    g.SetInput(m.add, 1 - m.const_index, gdq->output(0));
    const std::array<Value*, 3> cq = quantized_constant(m.add->input(m.const_index));
    ASSIGN_OR_RETURN(Node* cdq, passes::AddInferredNode(g, OpKind::kDequantizeLinear,
                                                        g.FreshName(m.add->name() + "/constant_dq"),
                                                        {cq[0], cq[1], cq[2]}, {}, 1, m.add));
    g.SetInput(m.add, m.const_index, cdq->output(0));
  }
  if (!sums.empty()) passes::RemoveDeadNodes(g);  // the float Gathers

  // 2. Activations: one Q/DQ pair per quantization point.
  for (const std::string& name : points) {
    Value* v = g.FindValue(name);
    ASSIGN_OR_RETURN(ActivationScale s, act_scale(v));
    const std::vector<Use> uses = v->uses();
    const bool was_output = v->is_graph_output();
    const bool wide = int16_points.count(name) > 0;
    const ScaleZeroPoint p = wide ? Int16Params(s) : ScaleZeroPoint{s.scale, s.zero_point};
    Value* sv = g.AddConstant(g.FreshName(name + "_scale"), ScalarOf<float>(DType::kF32, p.scale));
    Value* zv = g.AddConstant(g.FreshName(name + "_zero_point"), ZeroPoint(wide ? DType::kI16 : adt, p.zero_point));
    summary.int16_pairs += wide;
    const Node* origin = v->producer();
    ASSIGN_OR_RETURN(Node* q, passes::AddInferredNode(g, OpKind::kQuantizeLinear,
                                                      g.FreshName(name + "/quantize"), {v, sv, zv},
                                                      {}, 1, origin));
    ASSIGN_OR_RETURN(Node* dq, passes::AddInferredNode(g, OpKind::kDequantizeLinear,
                                                       g.FreshName(name + "/dequantize"),
                                                       {q->output(0), sv, zv}, {}, 1, origin));
    for (const Use& u : uses) g.SetInput(u.node, u.input_index, dq->output(0));
    if (wide) {
      // The Conv / Gemm / MatMul consumers of an int16 point read it requantized to 8 bits
      // (DQ16 → Q8 → DQ8, the point's calibrated 8-bit parameters), so that they stay integer
      // ops on the MAC array; the norms, softmaxes and float islands read the int16 values
      // (quant/mixed_precision.h; Int16Quantize.MatMulAfterAnInt16PointStaysInt8).
      Node* dq8 = nullptr;
      for (const Use& u : uses) {
        if (u.node->op() != OpKind::kConv && u.node->op() != OpKind::kGemm && u.node->op() != OpKind::kMatMul) continue;
        if (!dq8) {
          Value* sv8 = g.AddConstant(g.FreshName(name + "_scale8"), ScalarOf<float>(DType::kF32, s.scale));
          Value* zv8 = g.AddConstant(g.FreshName(name + "_zero_point8"), ZeroPoint(adt, s.zero_point));
          ASSIGN_OR_RETURN(Node* q8, passes::AddInferredNode(g, OpKind::kQuantizeLinear, g.FreshName(name + "/quantize8"),
                                                             {dq->output(0), sv8, zv8}, {}, 1, origin));
          ASSIGN_OR_RETURN(dq8, passes::AddInferredNode(g, OpKind::kDequantizeLinear, g.FreshName(name + "/dequantize8"),
                                                        {q8->output(0), sv8, zv8}, {}, 1, origin));
          ++summary.activation_pairs;
        }
        g.SetInput(u.node, u.input_index, dq8->output(0));
      }
    }
    if (was_output) {
      // The output keeps its name: the float value is renamed and the DQ takes over.
      RETURN_IF_ERROR(g.RenameValue(v, g.FreshName(name + "_float")));
      RETURN_IF_ERROR(g.RenameValue(dq->output(0), name));
      g.ReplaceAllUses(v, dq->output(0));
      g.SetInput(q, 0, v);
    }
    ++summary.activation_pairs;
  }
  RETURN_IF_ERROR(g.TopoSort());
  RETURN_IF_ERROR(Verify(g));
  return summary;
}

}  // namespace edgec::quant
