// fuse-conv-bn: an inference-mode BatchNormalization (or an Add or Mul by a constant that
// varies at most per channel, such as a UNet's baked time embedding) whose input is read only by it and
// comes from a Conv / FusedConv / ConvTranspose (channel dim 1) or a Gemm / MatMul /
// FusedMatMul with a rank-2 output (channel dim 1 = the last dim) with constant weights is
// folded into the weights and bias: with s = scale / sqrt(var + eps), W' = W * s (per output
// channel) and b' = (b - mean) * s + B. Computed in double, written in the weight dtype. A
// fused node keeps its epilogue only when it is empty (an activation or residual comes after
// the sum). ConvTranspose's weights are [C_in, C_out / group, k...]: output channel
// g · (C_out / group) + j is column j of the rows of group g. A BatchNormalization that
// folds nowhere runs on the per-channel affine kernel (kernels/cpu/batch_norm.cc).
// Guarded by tests/passes/fuse_epilogue_test.cc (FuseConvBn.*).
//
// Before:  %c = Conv(%x, %w, %b); %y = BatchNormalization(%c, %scale, %B, %mean, %var)
//          %m = MatMul(%a, %k); %z = BatchNormalization(%m, ...)        (a: f32[N, K])
//          %t = ConvTranspose(%x, %u) {group=2}; %v = BatchNormalization(%t, ...)
// After:   %y = Conv(%x, %w', %b')
//          %z = Gemm(%a, %k', %c')
//          %v = ConvTranspose(%x, %u', %d') {group=2}
#include <cmath>

#include "passes/epilogue_util.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {

namespace {

// BatchNormalization as y = x * scale[c] + shift[c].
struct ChannelAffine {
  std::vector<double> scale, shift;
};

std::optional<ChannelAffine> ReadBatchNorm(const Node* bn, int64_t channels, std::string* why) {
  if (bn->attrs.GetInt("training_mode", 0) != 0) {
    *why = "BatchNormalization is in training mode";
    return std::nullopt;
  }
  for (int i = 1; i < bn->num_outputs(); ++i) {
    if (!bn->output(i)->uses().empty() || bn->output(i)->is_graph_output()) {
      *why = "BatchNormalization's running statistics are used";
      return std::nullopt;
    }
  }
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  std::vector<std::vector<double>> p(4);
  for (int i = 0; i < 4; ++i) {
    const Tensor* t = ConstantOf(bn->input(i + 1));
    if (!t) {
      *why = fmt::format("BatchNormalization {} is not constant", names[i]);
      return std::nullopt;
    }
    if (t->numel() != channels) {
      *why = fmt::format("BatchNormalization {} has {} entries, the producer {} channels", names[i],
                         t->numel(), channels);
      return std::nullopt;
    }
    p[i] = t->ToDoubleVector();
  }
  const double eps = bn->attrs.GetFloat("epsilon", 1e-5f);
  ChannelAffine a;
  for (int64_t c = 0; c < channels; ++c) {
    const double s = p[0][c] / std::sqrt(p[3][c] + eps);
    a.scale.push_back(s);
    a.shift.push_back(p[1][c] - p[2][c] * s);
  }
  return a;
}

// Add(y, c) or Mul(y, c) with c a constant that varies at most along y's channel dim 1 (a
// scalar, [C], [C, 1, 1], [1, C, 1, 1], ...) as y * scale[c] + shift[c].
std::optional<ChannelAffine> ReadConstantAffine(const Node* op, const Value* y, int64_t channels, std::string* why) {
  const Value* other = op->input(op->input(0) == y ? 1 : 0);
  const Tensor* c = ConstantOf(other);
  if (!c || !IsFloat(c->dtype())) {
    *why = fmt::format("{}'s other operand is not a float constant", op->Label());
    return std::nullopt;
  }
  const int r = y->type.rank(), k = c->rank();
  bool per_channel = false;
  for (int d = 0; d < k; ++d) {
    const int od = r - k + d;
    if (c->dim(d) == 1) continue;
    if (od == 1 && c->dim(d) == channels) {
      per_channel = true;
      continue;
    }
    *why = fmt::format("{}'s constant {} varies along more than the channels", op->Label(), DimsToString(c->dims()));
    return std::nullopt;
  }
  if (k > r) {
    *why = fmt::format("{}'s constant {} has a higher rank than its input", op->Label(), DimsToString(c->dims()));
    return std::nullopt;
  }
  const std::vector<double> v = c->ToDoubleVector();
  ChannelAffine a;
  for (int64_t ch = 0; ch < channels; ++ch) {
    const double x = v[per_channel ? ch : 0];
    a.scale.push_back(op->op() == OpKind::kMul ? x : 1.0);
    a.shift.push_back(op->op() == OpKind::kAdd ? x : 0.0);
  }
  return a;
}

// w with every slice along `axis` (index c) multiplied by s[c].
Tensor ScaleAlongAxis(const Tensor& w, int axis, const std::vector<double>& s) {
  int64_t inner = 1;
  for (int d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
  Tensor out(w.dtype(), w.dims());
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t c = (i / inner) % w.dim(axis);
    StoreFromDouble(w.dtype(), out.raw(), i, LoadAsDouble(w.dtype(), w.raw(), i) * s[c]);
  }
  return out;
}

// ConvTranspose weights [C_in, C_out / group, k...] with output channel
// (i / (C_in / group)) · (C_out / group) + j of element [i, j, ...] multiplied by s.
Tensor ScaleConvTransposeWeights(const Tensor& w, int64_t group, const std::vector<double>& s) {
  const int64_t per_group_out = w.dim(1), per_group_in = w.dim(0) / group;
  int64_t kernel = 1;
  for (int d = 2; d < w.rank(); ++d) kernel *= w.dim(d);
  Tensor out(w.dtype(), w.dims());
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t row = i / (per_group_out * kernel), j = (i / kernel) % per_group_out;
    const int64_t c = (row / per_group_in) * per_group_out + j;
    StoreFromDouble(w.dtype(), out.raw(), i, LoadAsDouble(w.dtype(), w.raw(), i) * s[c]);
  }
  return out;
}

// (bias_scale * bias - mean) * s + B over the channels (the last dim), the old bias
// broadcast to it: dims = broadcast(bias dims, [C]).
Tensor FoldedBias(const Tensor* bias, double bias_scale, DType dt, const ChannelAffine& a) {
  const int64_t channels = static_cast<int64_t>(a.scale.size());
  Dims dims = {channels};
  if (bias) dims = *BroadcastDims(bias->dims(), {channels});
  Tensor out(dt, dims);
  // Strides of the old bias over `dims` (0 where it is broadcast).
  std::vector<int64_t> strides(dims.size(), 0);
  if (bias) {
    int64_t step = 1;
    for (int d = bias->rank(); d-- > 0;) {
      const size_t od = dims.size() - bias->rank() + d;
      if (bias->dim(d) != 1) strides[od] = step;
      step *= bias->dim(d);
    }
  }
  for (int64_t i = 0; i < out.numel(); ++i) {
    double b = 0;
    if (bias) {
      int64_t rest = i, at = 0;
      for (size_t d = dims.size(); d-- > 0;) {
        at += (rest % dims[d]) * strides[d];
        rest /= dims[d];
      }
      b = bias_scale * LoadAsDouble(bias->dtype(), bias->raw(), at);
    }
    const int64_t c = i % channels;
    StoreFromDouble(dt, out.raw(), i, b * a.scale[c] + a.shift[c]);
  }
  return out;
}

bool BiasBroadcastsOverChannels(const Tensor* bias, int64_t channels) {
  if (!bias) return true;
  auto dims = BroadcastDims(bias->dims(), {channels});
  return dims.ok() && dims->back() == channels;
}

Value* NewConstant(Graph& g, const Value* like, Tensor t, const char* suffix) {
  return g.AddConstant(g.FreshName(like ? like->name() + suffix : std::string("bn") + suffix), std::move(t));
}

// `affine_op` (BatchNormalization, or Add / Mul by a per-channel constant) after `producer_op`.
Pattern ChannelAffinePattern(OpKind producer_op, OpKind affine_op) {
  Pattern p;
  p.name = fmt::format("{}+{}", OpName(producer_op), OpName(affine_op));
  p.anchors = {affine_op};
  p.apply = [producer_op, affine_op](Graph& g, Node* bn, PassContext&, std::string* why) {
    Node* n = ProducerOf(bn->input(0), producer_op);
    if (!n && affine_op != OpKind::kBatchNormalization) n = ProducerOf(bn->input(1), producer_op);
    if (!n) {
      *why = fmt::format("input is not a {}", OpName(producer_op));
      return false;
    }
    const Value* out = n->output(0);
    if (!HasSingleUse(out)) {
      *why = fmt::format("{} output has other uses", n->Label());
      return false;
    }
    const bool transposed = producer_op == OpKind::kConvTranspose;
    const bool is_conv = producer_op == OpKind::kConv || producer_op == OpKind::kFusedConv || transposed;
    if (!out->type.rank_known || (is_conv ? out->type.rank() < 3 : out->type.rank() != 2)) {
      *why = fmt::format("{} output {}: BatchNormalization's channel dim 1 is not {}", n->Label(),
                         out->type.ToString(), is_conv ? "the conv's output channels" : "the last dim");
      return false;
    }
    if (IsEpilogueOp(producer_op)) {
      auto form = ToFusedForm(g, n, why);
      if (!form) return false;
      if (form->residual() || form->activation().kind != Activation::kNone) {
        *why = fmt::format("{} has a residual or an activation before the BatchNormalization", n->Label());
        return false;
      }
    }
    const Tensor* w = ConstantOf(n->input(1));
    if (!w) {
      *why = fmt::format("{} weights are not constant", n->Label());
      return false;
    }
    const DType wdt = w->dtype();
    if (wdt != DType::kF32 && wdt != DType::kF64 && wdt != DType::kF16 && wdt != DType::kBF16) {
      *why = fmt::format("weights are {}, not a float type", DTypeName(wdt));
      return false;
    }
    if (!is_conv && (w->rank() != 2 || !n->input(0)->type.rank_known || n->input(0)->type.rank() != 2)) {
      *why = fmt::format("{} operands are not both rank 2", n->Label());
      return false;
    }
    const bool trans_b = n->attrs.GetInt("transB", 0) != 0;
    const int channel_axis = is_conv ? 0 : (trans_b ? 0 : 1);
    const int64_t group = transposed ? n->attrs.GetInt("group", 1) : 1;
    if (transposed && (group < 1 || w->rank() < 3 || w->dim(0) % group != 0)) {
      *why = fmt::format("{} weights {} do not split into {} groups", n->Label(), DimsToString(w->dims()), group);
      return false;
    }
    const int64_t channels = transposed ? w->dim(1) * group : w->dim(channel_axis);
    // The old bias: Conv's B, Gemm's C (scaled by beta), FusedMatMul's Bias.
    Value* bias_value = producer_op == OpKind::kMatMul ? nullptr : n->input(2);
    const Tensor* bias = ConstantOf(bias_value);
    if (bias_value && !bias) {
      *why = fmt::format("{} bias is not constant", n->Label());
      return false;
    }
    if (!BiasBroadcastsOverChannels(bias, channels)) {
      *why = fmt::format("{} bias does not broadcast over the channels", n->Label());
      return false;
    }
    auto affine = affine_op == OpKind::kBatchNormalization ? ReadBatchNorm(bn, channels, why)
                                                            : ReadConstantAffine(bn, out, channels, why);
    if (!affine) return false;

    const double bias_scale = producer_op == OpKind::kGemm ? n->attrs.GetFloat("beta", 1.0f) : 1.0;
    Value* new_w = NewConstant(g, n->input(1),
                               transposed ? ScaleConvTransposeWeights(*w, group, affine->scale)
                                          : ScaleAlongAxis(*w, channel_axis, affine->scale),
                               ".bn");
    Value* new_b = NewConstant(g, bias_value, FoldedBias(bias, bias_scale, wdt, *affine), ".bn");
    FusedForm f;
    f.op = producer_op == OpKind::kMatMul ? OpKind::kGemm : producer_op;
    f.attrs = n->attrs;
    f.inputs = {n->input(0), new_w, new_b};
    if (f.op == OpKind::kGemm) f.attrs.Set("beta", 1.0f);
    return ReplaceWithFused(g, bn->output(0), f, {n, bn}, why);
  };
  return p;
}

}  // namespace

Status RunFuseConvBn(Graph& g, PassContext& ctx, const PassOptions&) {
  static const std::vector<Pattern> patterns = [] {
    std::vector<Pattern> v;
    for (OpKind affine : {OpKind::kBatchNormalization, OpKind::kAdd, OpKind::kMul}) {
      for (OpKind producer : {OpKind::kConv, OpKind::kFusedConv, OpKind::kGemm, OpKind::kMatMul,
                              OpKind::kFusedMatMul, OpKind::kConvTranspose})
        v.push_back(ChannelAffinePattern(producer, affine));
    }
    return v;
  }();
  const int before = g.num_nodes();
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  ctx.stats().nodes_fused += before - g.num_nodes();
  return Status::Ok();
}

}  // namespace edgec::passes
