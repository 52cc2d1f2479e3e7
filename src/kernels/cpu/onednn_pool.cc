// oneDNN pooling: MaxPool (without the Indices output), AveragePool (count_include_pad
// either way), GlobalAveragePool and GlobalMaxPool, 1 to 3 spatial dims, row-major or NHWC.
// ceil_mode extends the end pads to the windows the geometry counts; an average that would
// then count padding oneDNN cannot see falls back.
#include "ir/conv_geometry.h"
#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

namespace {

struct PoolSetup {
  dnnl::algorithm algorithm;
  dnnl::memory::dims strides, kernel, dilation, pad_l, pad_r;
};

StatusOr<PoolSetup> MakePoolSetup(const KernelRequest& req) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const int spatial = static_cast<int>(x.dims.size()) - 2;
  if (spatial < 1 || spatial > 3) return Refuse(req, "input has {} dims; 3 to 5 are supported", x.dims.size());
  PoolSetup s;
  using alg = dnnl::algorithm;
  if (req.op == OpKind::kGlobalAveragePool || req.op == OpKind::kGlobalMaxPool) {
    s.algorithm = req.op == OpKind::kGlobalMaxPool ? alg::pooling_max : alg::pooling_avg_exclude_padding;
    for (int i = 0; i < spatial; ++i) {
      s.strides.push_back(1);
      s.kernel.push_back(x.dims[2 + i]);
      s.dilation.push_back(0);
      s.pad_l.push_back(0);
      s.pad_r.push_back(0);
    }
    return s;
  }
  const bool is_max = req.op == OpKind::kMaxPool;
  if (is_max && req.outputs.size() > 1 && Present(req.outputs[1])) {
    return Refuse(req, "the Indices output is not produced by the fast kernel");
  }
  WindowAttrOptions options;
  options.allow_ceil_mode = true;
  auto attrs = ReadWindowAttrs(*req.attrs, spatial, options);
  if (!attrs.ok()) return attrs.status().WithContext(req.label);
  auto g = ForwardWindowGeometry(*attrs, Dims(x.dims.begin() + 2, x.dims.end()));
  if (!g.ok()) return g.status().WithContext(req.label);
  const bool include_pad = req.attrs->GetInt("count_include_pad", 0) == 1;
  s.algorithm = is_max ? alg::pooling_max
                       : (include_pad ? alg::pooling_avg_include_padding : alg::pooling_avg_exclude_padding);
  for (int i = 0; i < spatial; ++i) {
    if (g->out[i] != y.dims[2 + i]) return Refuse(req, "output dims disagree with the window geometry");
    const int64_t reach = (g->kernel[i] - 1) * g->dilations[i] + 1;
    // The end pad oneDNN needs so that its floor formula gives the same output size (more
    // than the attribute's under ceil_mode).
    const int64_t needed = (g->out[i] - 1) * g->strides[i] + reach - g->in[i] - g->pad_begin[i];
    const int64_t pad_r = std::max(needed, g->pad_end[i]);
    if (pad_r < 0 || g->pad_begin[i] < 0) return Refuse(req, "negative pads");
    if (!is_max && include_pad && pad_r > g->pad_end[i]) {
      return Refuse(req, "ceil_mode windows past the end pads with count_include_pad");
    }
    if (g->pad_begin[i] >= reach || pad_r >= reach) {
      return Refuse(req, "a pad as large as the window (windows entirely in padding)");
    }
    s.strides.push_back(g->strides[i]);
    s.kernel.push_back(g->kernel[i]);
    s.dilation.push_back(g->dilations[i] - 1);
    s.pad_l.push_back(g->pad_begin[i]);
    s.pad_r.push_back(pad_r);
  }
  return s;
}

}  // namespace

KernelOr CreatePoolKernel(const KernelRequest& req) {
  // Max pooling also on u8/i8 (int8 execution; exact), everything else in f32.
  const bool int8_max = (req.op == OpKind::kMaxPool || req.op == OpKind::kGlobalMaxPool) && !req.outputs.empty() &&
                        (req.inputs[0].dtype == DType::kU8 || req.inputs[0].dtype == DType::kI8) &&
                        req.outputs[0].dtype == req.inputs[0].dtype;
  if (!int8_max) RETURN_IF_ERROR(ExpectF32(req, {0}));
  if (req.outputs.empty() || (!int8_max && req.outputs[0].dtype != DType::kF32)) return Refuse(req, "output is not f32");
  ASSIGN_OR_RETURN(PoolSetup s, MakePoolSetup(req));
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const int threads = std::max(1, req.threads);
  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    const dnnl_md src = PlainDesc(x), dst = PlainDesc(y);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, s.algorithm, src, dst, s.strides,
                                     s.kernel, s.dilation, s.pad_l, s.pad_r);
    dnnl::pooling_v2_forward::primitive_desc pd(d, attr, ctx.engine);
    return SinglePrimitiveKernel::Make(pd, src, dst, req.label,
                                       fmt::format("{} {} {}", OpName(req.op), LayoutWord(y.layout), DTypeName(y.dtype)), threads, ctx);
  });
}

}  // namespace edgec::cpu
