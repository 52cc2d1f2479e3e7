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

// An int8 max pool on row-major buffers: oneDNN 2.6 pools int8 optimized only in NHWC, so
// the source is reordered to NHWC in scratch, pooled there, and the result reordered back.
class Int8RowMajorPoolKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    UseThreads(threads_);
    return CatchDnnl(label_, [&] {
      dnnl::stream& stream = GetDnnlContext(threads_).stream;
      to_nhwc_.Execute(stream, in, out, scratch);
      pool_.Execute(stream, in, out, scratch);
      from_nhwc_.Execute(stream, in, out, scratch);
      return Status::Ok();
    });
  }
  size_t scratch_bytes() const override { return scratch_bytes_; }
  std::string Describe() const override { return describe_; }

  std::string label_, describe_;
  BoundPrimitive to_nhwc_, pool_, from_nhwc_;
  size_t scratch_bytes_ = 0;
  int threads_ = 1;
};

KernelOr MakeInt8RowMajorPool(const KernelRequest& req, const PoolSetup& s, int threads) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (x.dims.size() != 4) return Refuse(req, "oneDNN has only its reference int8 pooling for this layout");
  DnnlContext& ctx = GetDnnlContext(threads);
  using tag = dnnl::memory::format_tag;
  const dnnl_md src = PlainDesc(x), dst = PlainDesc(y);
  const dnnl_md src_nhwc(ToDnnlDims(x.dims), DnnlType(x.dtype), tag::nhwc);
  const dnnl_md dst_nhwc(ToDnnlDims(y.dims), DnnlType(y.dtype), tag::nhwc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, s.algorithm, src_nhwc, dst_nhwc, s.strides,
                                   s.kernel, s.dilation, s.pad_l, s.pad_r);
  dnnl::pooling_v2_forward::primitive_desc pd(d, attr, ctx.engine);
  if (IsReferenceImpl(pd)) return Refuse(req, "oneDNN has only its reference int8 pooling here");
  auto k = std::make_unique<Int8RowMajorPoolKernel>();
  k->label_ = req.label;
  k->threads_ = threads;
  auto align = [](size_t v) { return (v + 63) / 64 * 64; };
  const size_t dst_off = align(src_nhwc.get_size()), pad_off = align(dst_off + dst_nhwc.get_size());
  using Src = BoundPrimitive::Source;
  k->to_nhwc_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, src, ctx.engine, src_nhwc)), ctx.engine);
  k->to_nhwc_.Bind(DNNL_ARG_FROM, src, Src::kInput, 0);
  k->to_nhwc_.Bind(DNNL_ARG_TO, src_nhwc, Src::kScratch, 0);
  k->pool_ = BoundPrimitive(dnnl::primitive(pd), ctx.engine);
  k->pool_.Bind(DNNL_ARG_SRC, src_nhwc, Src::kScratch, 0);
  k->pool_.Bind(DNNL_ARG_DST, dst_nhwc, Src::kScratch, static_cast<int64_t>(dst_off));
  k->pool_.BindScratchpad(pd.scratchpad_desc(), static_cast<int64_t>(pad_off));
  k->from_nhwc_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, dst_nhwc, ctx.engine, dst)), ctx.engine);
  k->from_nhwc_.Bind(DNNL_ARG_FROM, dst_nhwc, Src::kScratch, static_cast<int64_t>(dst_off));
  k->from_nhwc_.Bind(DNNL_ARG_TO, dst, Src::kOutput, 0);
  k->scratch_bytes_ = pad_off + pd.scratchpad_desc().get_size();
  k->describe_ = fmt::format("onednn {} {} {} [{}] via reorders in out", OpName(req.op), LayoutWord(y.layout),
                             DTypeName(y.dtype), pd.impl_info_str());
  return std::unique_ptr<Kernel>(std::move(k));
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
    // oneDNN 2.6 pools int8 optimized only in NHWC (row-major int8 gets its reference
    // implementation, ~10x slower than the edgec reference kernel): reorders around it.
    if (int8_max && IsReferenceImpl(pd)) return MakeInt8RowMajorPool(req, s, threads);
    return SinglePrimitiveKernel::Make(pd, src, dst, req.label,
                                       fmt::format("{} {} {}", OpName(req.op), LayoutWord(y.layout), DTypeName(y.dtype)), threads, ctx);
  });
}

}  // namespace edgec::cpu
