#include "kernels/cpu/own_conv.h"

#include "kernels/cpu/broadcast.h"

namespace edgec::cpu {

std::string OwnConvEpilogue::Words() const {
  return act.kind != Activation::kNone ? fmt::format(" (epilogue: {})", ActivationToString(act)) : std::string();
}

void OwnConvEpilogue::Activate(float* y, int64_t count) const {
  if (act.kind != Activation::kNone) RunUnary(act_fn, y, y, count, 1);
}

StatusOr<OwnConv> ReadOwnConv(const KernelRequest& req) {
  if (req.op != OpKind::kConv && req.op != OpKind::kFusedConv) return Refuse(req, "not a convolution");
  if (req.inputs.size() < 2 || !Present(req.inputs[0]) || !Present(req.inputs[1])) return Refuse(req, "X or W absent");
  OwnConv c;
  c.x = &req.inputs[0];
  c.y = &req.outputs[0];
  c.w = ConstantOrNull(req, 1);
  const TensorDesc& w = req.inputs[1];
  if (!c.w || c.x->dtype != DType::kF32 || w.dtype != DType::kF32 || c.y->dtype != DType::kF32) {
    return Refuse(req, "needs f32 and a constant W");
  }
  if (c.x->dims.size() != 4 || w.dims.size() != 4 || c.y->dims.size() != 4) return Refuse(req, "needs 2 spatial dims");
  if (req.attrs->GetInt("group", 1) != 1) return Refuse(req, "needs one group");
  if (w.dims[0] != c.y->dims[1] || w.dims[1] != c.x->dims[1]) return Refuse(req, "W {} disagrees with the channels", DimsToString(w.dims));
  if (req.op == OpKind::kFusedConv && InputOrNull(req, 3)) return Refuse(req, "a residual");
  const Dims ws(w.dims.begin() + 2, w.dims.end());
  WindowAttrOptions options;
  options.kernel_from_weights = &ws;
  auto attrs = ReadWindowAttrs(*req.attrs, 2, options);
  if (!attrs.ok()) return attrs.status().WithContext(req.label);
  auto geom = ForwardWindowGeometry(*attrs, Dims(c.x->dims.begin() + 2, c.x->dims.end()));
  if (!geom.ok()) return geom.status().WithContext(req.label);
  for (int i = 0; i < 2; ++i) {
    if (geom->dilations[i] != 1) return Refuse(req, "dilated");
    if (geom->out[i] != c.y->dims[2 + i] || geom->pad_begin[i] < 0) return Refuse(req, "output dims disagree with the window");
  }
  c.geom = *std::move(geom);
  if (req.op == OpKind::kFusedConv) {
    auto a = ReadActivation(*req.attrs);
    if (!a.ok()) return a.status().WithContext(req.label);
    c.epilogue.act = *a;
    c.epilogue.act_fn = ToUnaryFn(*a);
  }
  if (const Tensor* b = ConstantOrNull(req, 2)) {
    c.epilogue.bias.assign(b->data<float>(), b->data<float>() + c.y->dims[1]);
  } else if (InputOrNull(req, 2)) {
    return Refuse(req, "the bias is not constant");
  }
  return c;
}

}  // namespace edgec::cpu
