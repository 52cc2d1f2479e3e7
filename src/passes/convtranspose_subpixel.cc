// convtranspose-subpixel: a 2-d ConvTranspose (group 1, no dilation, constant weights) as one
// Conv computing all s_h·s_w output phases ("sub-pixel convolution") and a pixel shuffle:
// output row o = q·s + r − p of the transposed conv sums x[q − j]·w[j·s + r] over j, so phase
// r is a plain convolution of x with the flipped taps w[(J − 1 − m)·s + r] (J = ⌈k / s⌉, taps
// past k zero, padding J − 1 on both sides, Q = in + J − 1 outputs). The phases are the Conv's
// output channels (r_h, r_w, c_out); DepthToSpace (DCR) interleaves them when s_h = s_w
// (else Reshape → Transpose → Reshape), and a Slice drops the transposed conv's pads. The MAC
// array and the quantizer then see a Conv, and the pixel shuffle is data movement on 8-bit
// values (one strided DMA on the NPU: in NHWC each input pixel's s·K bytes of a phase row
// are one output row segment).
//
// Before:  %y = ConvTranspose(%x [N, C, H, W], %w [C, K, kh, kw], %b) {strides=[2, 2]}
// After:   %z = Conv(%x, %w' [4K, C, J, J], %b') {pads=[J-1 ...]};
//          %y = Slice(DepthToSpace(%z) {blocksize=2, mode=DCR})
//
// Run by PrepareForQuantization (not by the -O levels: the CPU's deconvolution kernel is
// faster in float). Guarded by tests/passes/convtranspose_subpixel_test.cc.
#include "ir/conv_geometry.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "support/status.h"

namespace edgec::passes {
namespace {

StatusOr<bool> Rewrite(Graph& g, Node* n, PassContext& ctx) {
  Value* x = n->input(0);
  Value* wv = n->input(1);
  Value* bv = n->input(2);
  Value* y = n->output(0);
  if (!x->type.IsStatic() || x->type.rank() != 4 || !y->type.IsStatic() || !IsFloat(x->type.dtype))
    return Unimplemented("input is not a static 4-d float tensor");
  if (!wv || !wv->is_constant() || (bv && !bv->is_constant())) return Unimplemented("weights or bias not constant");
  if (n->attrs.GetInt("group", 1) != 1) return Unimplemented("group != 1");
  const Dims wd = wv->type.dims;
  const Dims kernel = {wd[2], wd[3]};
  WindowAttrOptions o;
  o.kernel_from_weights = &kernel;
  o.transpose = true;
  ASSIGN_OR_RETURN(WindowAttrs a, ReadWindowAttrs(n->attrs, 2, o));
  ASSIGN_OR_RETURN(WindowGeometry geo, TransposeWindowGeometry(a, Dims{x->type.dims[2], x->type.dims[3]}));
  for (int64_t d : geo.dilations)
    if (d != 1) return Unimplemented("dilated");
  const int64_t N = x->type.dims[0], C = wd[0], K = wd[1];
  const int64_t sh = geo.strides[0], sw = geo.strides[1], kh = kernel[0], kw = kernel[1];
  const int64_t Jh = (kh + sh - 1) / sh, Jw = (kw + sw - 1) / sw;
  const int64_t Qh = x->type.dims[2] + Jh - 1, Qw = x->type.dims[3] + Jw - 1;
  const int64_t ph = geo.pad_begin[0], pw = geo.pad_begin[1], oh = geo.out[0], ow = geo.out[1];
  if (ph < 0 || pw < 0 || ph + oh > Qh * sh || pw + ow > Qw * sw)
    return Unimplemented("output reaches past the phases (output_padding beyond the kernel)");
  // Weights [(rh, rw, k), c, mh, mw] and the bias per phase.
  const std::vector<double> w = wv->constant().ToDoubleVector();
  Tensor w2(DType::kF32, {sh * sw * K, C, Jh, Jw});
  float* wp = w2.data<float>();
  for (int64_t rh = 0; rh < sh; ++rh)
    for (int64_t rw = 0; rw < sw; ++rw)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t mh = 0; mh < Jh; ++mh)
            for (int64_t mw = 0; mw < Jw; ++mw) {
              const int64_t th = (Jh - 1 - mh) * sh + rh, tw = (Jw - 1 - mw) * sw + rw;
              const int64_t out = ((((rh * sw + rw) * K + k) * C + c) * Jh + mh) * Jw + mw;
              wp[out] = th < kh && tw < kw ? static_cast<float>(w[((c * K + k) * kh + th) * kw + tw]) : 0.f;
            }
  std::vector<Value*> conv_in = {x, g.AddConstant(g.FreshName(wv->name() + "/subpixel"), w2.CastTo(x->type.dtype))};
  if (bv) {
    const std::vector<double> b = bv->constant().ToDoubleVector();
    Tensor b2(DType::kF32, {sh * sw * K});
    for (int64_t i = 0; i < sh * sw * K; ++i) b2.data<float>()[i] = static_cast<float>(b[i % K]);
    conv_in.push_back(g.AddConstant(g.FreshName(bv->name() + "/subpixel"), b2.CastTo(x->type.dtype)));
  }
  Attributes ca;
  ca.Set("kernel_shape", std::vector<int64_t>{Jh, Jw});
  ca.Set("pads", std::vector<int64_t>{Jh - 1, Jw - 1, Jh - 1, Jw - 1});
  const std::string base = n->name() + "/subpixel";
  ASSIGN_OR_RETURN(Node* conv, AddInferredNode(g, OpKind::kConv, g.FreshName(base), conv_in, ca, 1, n));
  auto shape = [&](Dims d) { return g.AddConstant(g.FreshName(base + "/shape"), Tensor::VectorI64(d)); };
  // An elementwise activation that is the only reader of the output commutes with the
  // shuffle and the crop: it runs on the phases, where the Conv fuses it (a Relu) or the
  // quantizer tabulates it next to the Conv (a Sigmoid). Guarded by
  // ConvTransposeSubpixel.ActivationRunsOnThePhases.
  Value* phases = conv->output(0);
  Node* act = nullptr;
  if (!y->is_graph_output() && y->uses().size() == 1) {
    Node* u = y->uses()[0].node;
    bool params_constant = true;
    for (int i = 1; i < u->num_inputs(); ++i) params_constant &= !u->input(i) || u->input(i)->is_constant();
    if (HasTrait(u->op(), op_trait::kUnary) && u->input(0) == y && u->num_outputs() == 1 && params_constant) act = u;
  }
  if (act) {
    std::vector<Value*> in = act->inputs();
    in[0] = phases;
    ASSIGN_OR_RETURN(Node* a2, AddInferredNode(g, act->op(), g.FreshName(act->name()), in, act->attrs, 1, act));
    phases = a2->output(0);
  }
  Value* out = nullptr;
  if (sh == sw) {  // the shuffle is DepthToSpace (DCR): one move, rows of s·K bytes in NHWC
    Attributes da;
    da.Set("blocksize", sh);
    ASSIGN_OR_RETURN(Node* d2s, AddInferredNode(g, OpKind::kDepthToSpace, g.FreshName(base + "/shuffle"),
                                                {phases}, da, 1, n));
    out = d2s->output(0);
  } else {
    ASSIGN_OR_RETURN(Node* r1, AddInferredNode(g, OpKind::kReshape, g.FreshName(base + "/phases"),
                                               {phases, shape({N, sh, sw, K, Qh, Qw})}, {}, 1, n));
    Attributes ta;
    ta.Set("perm", std::vector<int64_t>{0, 3, 4, 1, 5, 2});
    ASSIGN_OR_RETURN(Node* tr, AddInferredNode(g, OpKind::kTranspose, g.FreshName(base + "/shuffle"), {r1->output(0)}, ta, 1, n));
    ASSIGN_OR_RETURN(Node* r2, AddInferredNode(g, OpKind::kReshape, g.FreshName(base + "/interleave"),
                                               {tr->output(0), shape({N, K, Qh * sh, Qw * sw})}, {}, 1, n));
    out = r2->output(0);
  }
  if (ph || pw || oh != Qh * sh || ow != Qw * sw) {
    ASSIGN_OR_RETURN(Node* sl, AddInferredNode(g, OpKind::kSlice, g.FreshName(base + "/crop"),
                                               {out, shape({ph, pw}), shape({ph + oh, pw + ow}), shape({2, 3})}, {}, 1, n));
    out = sl->output(0);
  }
  Value* replaced = act ? act->output(0) : y;
  if (!ReplaceValue(g, replaced, out)) return Internal("{}: cannot replace its output", n->Label());
  ctx.stats().rewrites["ConvTranspose -> sub-pixel Conv"]++;
  return true;
}

}  // namespace

Status RunConvTransposeSubpixel(Graph& g, PassContext& ctx, const PassOptions&) {
  for (Node* n : g.nodes()) {
    if (n->op() != OpKind::kConvTranspose) continue;
    auto done = Rewrite(g, n, ctx);
    if (!done.ok()) ctx.Explain("convtranspose-subpixel", *n, done.status().message());
  }
  ctx.stats().nodes_removed += RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
