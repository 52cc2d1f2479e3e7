// oneDNN convolutions: Conv, ConvTranspose (deconvolution) and FusedConv, 1 to 3 spatial
// dims, grouped and depthwise, dilated, with the pads that the window geometry resolves
// (auto_pad included). Activations are row-major (nc[d]hw) or NHWC; the constant weights
// are reordered once into the format oneDNN picks. When oneDNN has only its im2col+gemm or
// reference implementation for the buffers' formats (typical for row-major activations),
// the convolution runs in the format it prefers (blocked) with reorders in and out through
// scratch. FusedConv's epilogue becomes post-ops (residual as sum or binary add, activation
// as eltwise) when the primitive supports them optimized; otherwise the own broadcasting
// loops add the rest after it.
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>

#include "ir/conv_geometry.h"
#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

namespace {

enum class ResidualMode { kNone, kSum, kBinary, kOwn };

std::string_view ResidualWord(ResidualMode m) {
  switch (m) {
    case ResidualMode::kSum: return "sum";
    case ResidualMode::kBinary: return "binary-add";
    default: return "";
  }
}

class ConvKernel final : public DnnlF32Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    UseThreads(threads_);
    if (residual_mode_ == ResidualMode::kBinary && in[3] == out[0]) {
      return Internal("{}: the residual shares the output buffer; this kernel reads it as a "
                      "binary post-op and needs it separate", label_);
    }
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      dnnl::stream& stream = GetDnnlContext(threads_).stream;
      if (reorder_src_.valid()) reorder_src_.Execute(stream, in, out, scratch);
      if (residual_mode_ == ResidualMode::kSum) {
        if (reorder_residual_.valid()) reorder_residual_.Execute(stream, in, out, scratch);
        else if (in[3] != out[0]) std::memcpy(out[0], in[3], out_bytes_);
      }
      prim_.Execute(stream, in, out, scratch);
      if (reorder_dst_.valid()) reorder_dst_.Execute(stream, in, out, scratch);
      return Status::Ok();
    }));
    own_.Run(in, static_cast<float*>(out[0]), out_numel_, threads_);
    return Status::Ok();
  }
  BoundPrimitive reorder_src_, reorder_dst_, reorder_residual_;  // valid when formats differ
  dnnl::memory weights_, bias_;
  ResidualMode residual_mode_ = ResidualMode::kNone;
  std::string impl_;  // oneDNN's implementation name
};

// The conv problem in oneDNN's terms.
struct ConvSetup {
  bool transpose = false;
  dnnl_md src, dst, user_weights, weights_any, bias;
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
};

StatusOr<ConvSetup> MakeSetup(const KernelRequest& req, bool transpose) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& w = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  const int spatial = static_cast<int>(x.dims.size()) - 2;
  if (spatial < 1 || spatial > 3 || w.dims.size() != x.dims.size()) {
    return Refuse(req, "X {} and W {}: 1 to 3 spatial dims are supported", DimsToString(x.dims),
                  DimsToString(w.dims));
  }
  const Dims w_spatial(w.dims.begin() + 2, w.dims.end());
  WindowAttrOptions options;
  options.kernel_from_weights = &w_spatial;
  options.transpose = transpose;
  auto attrs = ReadWindowAttrs(*req.attrs, spatial, options);
  if (!attrs.ok()) return attrs.status().WithContext(req.label);
  const Dims x_spatial(x.dims.begin() + 2, x.dims.end());
  auto geom = transpose ? TransposeWindowGeometry(*attrs, x_spatial) : ForwardWindowGeometry(*attrs, x_spatial);
  if (!geom.ok()) return geom.status().WithContext(req.label);
  for (int i = 0; i < spatial; ++i) {
    if (geom->out[i] != y.dims[2 + i]) return Refuse(req, "output dims disagree with the window geometry");
    if (!transpose && (geom->pad_begin[i] < 0 || geom->pad_end[i] < 0)) return Refuse(req, "negative pads");
  }
  const int64_t group = req.attrs->GetInt("group", 1);
  if (group < 1) return Refuse(req, "group {}", group);

  ConvSetup s;
  s.transpose = transpose;
  s.src = PlainDesc(x);
  s.dst = PlainDesc(y);
  const DType dt = w.dtype;
  const int64_t k = NumElements(w_spatial);
  Dims wd;  // oneDNN's logical weights dims
  std::vector<int64_t> ws;  // their strides in ONNX's W
  if (!transpose) {
    // ONNX W (M, C/g, k...) is oneDNN's (g, M/g, C/g, k...) read contiguously.
    const int64_t m = w.dims[0], cg = w.dims[1];
    wd = group == 1 ? Dims{m, cg} : Dims{group, m / group, cg};
    wd.insert(wd.end(), w_spatial.begin(), w_spatial.end());
    ws = ContiguousStrides(wd);
  } else {
    // ONNX W (C, M/g, k...): oneDNN wants (g, M/g, C/g, k...), i.e. the two channel dims swapped.
    const int64_t c = w.dims[0], mg = w.dims[1], cg = c / group;
    const std::vector<int64_t> ks = ContiguousStrides(w_spatial);
    if (group == 1) {
      wd = {mg, c};
      ws = {k, mg * k};
    } else {
      wd = {group, mg, cg};
      ws = {cg * mg * k, k, mg * k};
    }
    wd.insert(wd.end(), w_spatial.begin(), w_spatial.end());
    ws.insert(ws.end(), ks.begin(), ks.end());
  }
  s.user_weights = PlainDesc(wd, dt, ws);
  s.weights_any = dnnl_md(ToDnnlDims(wd), DnnlType(dt), dnnl::memory::format_tag::any);
  s.bias = PlainDesc(Dims{y.dims[1]}, dt);
  for (int i = 0; i < spatial; ++i) {
    s.strides.push_back(geom->strides[i]);
    s.dilates.push_back(geom->dilations[i] - 1);
    s.pad_l.push_back(geom->pad_begin[i]);
    // A transposed conv's output_padding extends the end: oneDNN sees it as a smaller
    // (possibly negative) end pad, the one its size formula needs.
    const int64_t reach = (geom->kernel[i] - 1) * geom->dilations[i] + 1;
    s.pad_r.push_back(transpose ? (geom->in[i] - 1) * geom->strides[i] + reach - geom->pad_begin[i] - geom->out[i]
                                : geom->pad_end[i]);
    if (s.pad_l.back() < 0 || s.pad_r.back() < 0) {
      return Refuse(req, "the output reaches past the transposed conv's full result on spatial axis {} "
                    "(effective pads {} and {}; oneDNN needs pads >= 0)", i, s.pad_l.back(), s.pad_r.back());
    }
  }
  return s;
}

// Whether Winograd F(2x2 or 4x4, 3x3) should replace the direct convolution: 2-D 3x3,
// stride 1, no dilation, one group, and enough channels and pixels that its 2-4x fewer
// multiplies outweigh the transforms and the reorders to and from the blocked format: at
// least 24 input and output channels and 144 output pixels (docs/cpu_runtime.md has the
// measurements). Its error stays near 1e-6 relative in f32 (CpuConv tests). KernelTuning::winograd turns it off and winograd_min_channels
// moves the channel threshold (24) for such measurements.
bool WinogradPays(const KernelRequest& req, const ConvSetup& s) {
  if (!req.tuning.winograd || s.transpose || s.strides.size() != 2) return false;
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& w = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  if (req.attrs->GetInt("group", 1) != 1 || w.dims[2] != 3 || w.dims[3] != 3) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (s.strides[i] != 1 || s.dilates[i] != 0) return false;
  }
  const int64_t min_channels = req.tuning.winograd_min_channels;
  return x.dims[1] >= min_channels && y.dims[1] >= min_channels && y.dims[2] * y.dims[3] >= 144;
}

// oneDNN's first-layer kernel (reading a row-major image as it is) against brgconv after a
// reorder of the source, by a rule rather than a timing at plan time, so that a model's
// kernel does not depend on the load when its plan was made: the first-layer kernel up to 48
// output channels, brgconv from 64 (the measurements behind it: docs/cpu_runtime.md, Kernel
// choices). Guarded by CpuConv.FewChannelRowMajorSourceBothCandidatesMatchReference.
constexpr int64_t kFirstLayerMaxChannels = 48;
bool FirstLayerKernelPays(const TensorDesc& y) { return y.dims[1] <= kFirstLayerMaxChannels; }

// One way to split the epilogue between the primitive and the own loops.
struct Attempt {
  ResidualMode residual;
  bool activation_in_primitive;
};

}  // namespace

KernelOr CreateConvKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req));
  if (req.op != OpKind::kConvTranspose) {
    if (auto gemv = CreateGemvKernel(req); gemv.ok()) return gemv;
    auto gemm = CreateConv1x1GemmKernel(req);
    if (gemm.ok()) return gemm;
    if (auto wino = CreateWinoS2ConvKernel(req); wino.ok()) return wino;
  }
  if (req.inputs.size() < 2 || !Present(req.inputs[1])) return Refuse(req, "W is absent");
  if (!ConstantOrNull(req, 1)) return Refuse(req, "W is not constant; weights are packed at creation");
  const bool transpose = req.op == OpKind::kConvTranspose;
  const bool fused = req.op == OpKind::kFusedConv;
  ActivationSpec act;
  if (fused) {
    auto a = ReadActivation(*req.attrs);
    if (!a.ok()) return a.status().WithContext(req.label);
    act = *a;
  }
  ASSIGN_OR_RETURN(ConvSetup s, MakeSetup(req, transpose));
  const TensorDesc* bias_desc = InputOrNull(req, 2);
  const TensorDesc* residual = fused ? InputOrNull(req, 3) : nullptr;
  const TensorDesc& y = req.outputs[0];
  const int threads = std::max(1, req.threads);

  // Attempts with the buffers' own formats: the residual as a sum post-op (needs dst's
  // layout) or a binary post-op; oneDNN's gemm-based convolutions read a binary operand as
  // if it had dst's layout (wrong results otherwise), so another layout goes to the own loops.
  // An activation the own loop does faster is never a post-op.
  const bool act_prim = !OwnActivationFaster(act);
  std::vector<Attempt> plain_attempts, internal_attempts;
  if (residual) {
    if (residual->dims == y.dims && residual->layout == y.layout) {
      plain_attempts.push_back({ResidualMode::kSum, act_prim});
      plain_attempts.push_back({ResidualMode::kBinary, act_prim});
    }
    plain_attempts.push_back({ResidualMode::kOwn, false});
    internal_attempts = {{ResidualMode::kSum, act_prim}, {ResidualMode::kOwn, false}};
  } else {
    plain_attempts.push_back({ResidualMode::kNone, act_prim});
    if (act.kind != Activation::kNone && act_prim) plain_attempts.push_back({ResidualMode::kNone, false});
    internal_attempts = plain_attempts;
  }

  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    using prop = dnnl::prop_kind;
    using alg = dnnl::algorithm;
    const dnnl_md no_bias;
    const dnnl_md& bias_md = bias_desc ? s.bias : no_bias;
    const dnnl_md src_any(s.src.dims(), s.src.data_type(), dnnl::memory::format_tag::any);
    const dnnl_md dst_any(s.dst.dims(), s.dst.data_type(), dnnl::memory::format_tag::any);
    // internal: the activations in the format oneDNN prefers (keep_src: the source as it is).
    auto make_pd = [&](const Attempt& at, bool internal, alg conv_alg, bool keep_src, const dnnl_md* dst_as) {
      dnnl::post_ops po;
      if (at.residual == ResidualMode::kSum) po.append_sum(1.f);
      if (at.residual == ResidualMode::kBinary) po.append_binary(alg::binary_add, PlainDesc(*residual));
      if (at.activation_in_primitive) AppendActivation(po, act);
      dnnl::primitive_attr attr;
      attr.set_post_ops(po);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl_md& src = internal && !keep_src ? src_any : s.src;
      const dnnl_md& dst = dst_as ? *dst_as : internal ? dst_any : s.dst;
      if (s.transpose) {
        dnnl::deconvolution_forward::desc d(prop::forward_inference, alg::deconvolution_direct, src, s.weights_any,
                                            bias_md, dst, s.strides, s.dilates, s.pad_l, s.pad_r);
        return dnnl::primitive_desc(dnnl::deconvolution_forward::primitive_desc(d, attr, ctx.engine));
      }
      dnnl::convolution_forward::desc d(prop::forward_inference, conv_alg, src, s.weights_any,
                                        bias_md, dst, s.strides, s.dilates, s.pad_l, s.pad_r);
      return dnnl::primitive_desc(dnnl::convolution_forward::primitive_desc(d, attr, ctx.engine));
    };
    // The first attempt oneDNN runs optimized (else the last one it accepts at all).
    std::string last_error;
    auto search = [&](const std::vector<Attempt>& attempts, bool internal, alg conv_alg = alg::convolution_direct,
                      bool keep_src = false, const dnnl_md* dst_as = nullptr) {
      std::optional<std::pair<dnnl::primitive_desc, Attempt>> found;
      for (size_t i = 0; i < attempts.size(); ++i) {
        try {
          dnnl::primitive_desc candidate = make_pd(attempts[i], internal, conv_alg, keep_src, dst_as);
          const bool optimized = !IsReferenceImpl(candidate);
          if (optimized || i + 1 == attempts.size() || !found) found.emplace(candidate, attempts[i]);
          if (optimized) break;
        } catch (const dnnl::error& e) {
          last_error = e.what();
        }
      }
      return found;
    };
    // With the buffers' formats when oneDNN has a direct kernel for them; otherwise (its
    // reference or im2col+gemm implementation, typical for row-major or mixed layouts) in
    // the format it prefers, with reorders in and out.
    auto slow = [](const dnnl::primitive_desc& pd) {
      const std::string impl = pd.impl_info_str();
      return IsReferenceImpl(pd) || impl.find("gemm") != std::string::npos;
    };
    std::optional<std::pair<dnnl::primitive_desc, Attempt>> choice;
    bool internal = false;
    if (WinogradPays(req, s)) {
      // Winograd runs in oneDNN's blocked format only: reorders in and out.
      choice = search(internal_attempts, true, alg::convolution_winograd);
      if (choice && std::string(choice->first.impl_info_str()).find("wino") != std::string::npos) internal = true;
      else choice.reset();
    }
    if (!choice) choice = search(plain_attempts, false);
    // A source of a few channels (an image) in row-major: oneDNN's first-layer kernel reads
    // it as it is and writes its blocked format (reordered out; with 16 output channels
    // nChw16c is NHWC itself). Against brgconv after a reorder of the source it is taken by
    // a fixed rule, FirstLayerKernelPays, never by a timing.
    std::optional<std::pair<dnnl::primitive_desc, Attempt>> first_layer;
    bool first_layer_in_place = false;
    if (!internal && !s.transpose && req.inputs[0].layout == Layout::kRowMajor && req.inputs[0].dims[1] <= 4 &&
        (!choice || slow(choice->first))) {
      if (y.layout == Layout::kNHWC && y.dims.size() == 4 && y.dims[1] == 16 && IsDense(y)) {
        const dnnl_md blocked(s.dst.dims(), s.dst.data_type(), dnnl::memory::format_tag::nChw16c);
        first_layer = search(internal_attempts, true, alg::convolution_direct, /*keep_src=*/true, &blocked);
        first_layer_in_place = first_layer.has_value();
      }
      if (!first_layer) first_layer = search(internal_attempts, true, alg::convolution_direct, /*keep_src=*/true);
      if (first_layer && slow(first_layer->first)) first_layer.reset(), first_layer_in_place = false;
    }
    if (!internal && (!choice || slow(choice->first))) {
      // In the format oneDNN prefers (the source reordered in, the output out).
      auto other = search(internal_attempts, true);
      if (other && (!choice || !slow(other->first) || IsReferenceImpl(choice->first))) {
        choice = other;
        internal = true;
      }
    }
    if (!choice && first_layer) {
      choice = first_layer;
      internal = true;
      first_layer.reset();
    }
    if (!choice) return Refuse(req, "oneDNN has no {} for this problem ({})", transpose ? "deconvolution" : "convolution", last_error);

    // The kernel of one choice; `dst_is_output`: its dst desc is another spelling of the
    // output buffer's layout (bound to it, no reorder).
    auto build = [&](const std::pair<dnnl::primitive_desc, Attempt>& c, bool internal, bool dst_is_output)
        -> std::unique_ptr<ConvKernel> {
      const dnnl::primitive_desc& pd = c.first;
      const Attempt chosen = c.second;

      auto kernel = std::make_unique<ConvKernel>();
      kernel->Init(req.label, threads);
      kernel->residual_mode_ = chosen.residual;
      kernel->SetOutput(y.dims);
      const dnnl_md weights_md = pd.query_md(dnnl::query::weights_md, 0);
      kernel->weights_ = PackConstant(s.user_weights, ConstantOrNull(req, 1)->raw(), weights_md, ctx);

      // Scratch: [reordered src | conv dst before its reorder | the primitive's scratchpad].
      using Src = BoundPrimitive::Source;
      const dnnl_md conv_src = pd.query_md(dnnl::query::src_md, 0);
      const dnnl_md conv_dst = pd.query_md(dnnl::query::dst_md, 0);
      const bool reorder_src = internal && conv_src != s.src;
      const bool reorder_dst = internal && conv_dst != s.dst && !dst_is_output;
      auto align = [](size_t v) { return (v + 63) / 64 * 64; };
      const size_t src_offset = 0;
      const size_t dst_offset = align(reorder_src ? conv_src.get_size() : 0);
      const size_t pad_offset = align(dst_offset + (reorder_dst ? conv_dst.get_size() : 0));
      if (reorder_src) {
        kernel->reorder_src_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, s.src, ctx.engine, conv_src)), ctx.engine);
        kernel->reorder_src_.Bind(DNNL_ARG_FROM, s.src, Src::kInput, 0);
        kernel->reorder_src_.Bind(DNNL_ARG_TO, conv_src, Src::kScratch, src_offset);
      }
      if (reorder_dst) {
        kernel->reorder_dst_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, conv_dst, ctx.engine, s.dst)), ctx.engine);
        kernel->reorder_dst_.Bind(DNNL_ARG_FROM, conv_dst, Src::kScratch, dst_offset);
        kernel->reorder_dst_.Bind(DNNL_ARG_TO, s.dst, Src::kOutput, 0);
        if (chosen.residual == ResidualMode::kSum) {  // the sum post-op reads the residual in dst's format
          const dnnl_md r = PlainDesc(*residual);
          kernel->reorder_residual_ = BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, r, ctx.engine, conv_dst)), ctx.engine);
          kernel->reorder_residual_.Bind(DNNL_ARG_FROM, r, Src::kInput, 3);
          kernel->reorder_residual_.Bind(DNNL_ARG_TO, conv_dst, Src::kScratch, dst_offset);
        }
      }
      kernel->prim_ = BoundPrimitive(dnnl::primitive(pd), ctx.engine);
      BoundPrimitive& p = kernel->prim_;
      if (reorder_src) p.Bind(DNNL_ARG_SRC, conv_src, Src::kScratch, src_offset);
      else p.Bind(DNNL_ARG_SRC, s.src, Src::kInput, 0);
      if (reorder_dst) p.Bind(DNNL_ARG_DST, conv_dst, Src::kScratch, dst_offset);
      else p.Bind(DNNL_ARG_DST, dst_is_output ? conv_dst : s.dst, Src::kOutput, 0);
      p.Fix(DNNL_ARG_WEIGHTS, kernel->weights_);
      if (bias_desc) {
        if (const Tensor* b = ConstantOrNull(req, 2)) {
          kernel->bias_ = PackConstant(s.bias, b->raw(), s.bias, ctx);
          p.Fix(DNNL_ARG_BIAS, kernel->bias_);
        } else {
          p.Bind(DNNL_ARG_BIAS, s.bias, Src::kInput, 2);
        }
      }
      if (chosen.residual == ResidualMode::kBinary) {
        p.Bind(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, PlainDesc(*residual), Src::kInput, 3);
      }
      const dnnl_md scratchpad = pd.scratchpad_desc();
      p.BindScratchpad(scratchpad, static_cast<int64_t>(pad_offset));
      kernel->scratch_bytes_ = scratchpad.get_size() ? pad_offset + scratchpad.get_size() : pad_offset;

      if (chosen.residual == ResidualMode::kOwn) {
        kernel->own_.addends.push_back({3, nullptr, MakeStridedLoop(y, y, *residual)});
      }
      if (!chosen.activation_in_primitive && act.kind != Activation::kNone) {
        kernel->own_.own_activation = true;
        kernel->own_.act = ToUnaryFn(act);
      }

      std::vector<std::string> post;
      if (!ResidualWord(chosen.residual).empty()) post.emplace_back(ResidualWord(chosen.residual));
      if (chosen.activation_in_primitive && act.kind != Activation::kNone) post.push_back(ActivationWord(act));
      kernel->describe_ = fmt::format("onednn {} {} f32 [{}]", transpose ? "deconv" : "conv", LayoutWord(y.layout),
                                      pd.impl_info_str());
      if (reorder_src || reorder_dst) {
        kernel->describe_ += fmt::format(" via reorders{}{}", reorder_src ? " in" : "", reorder_dst ? " out" : "");
      }
      if (!post.empty()) kernel->describe_ += fmt::format(" (post-ops: {})", fmt::join(post, ", "));
      if (!kernel->own_.empty()) {
        kernel->describe_ += " + own epilogue";
        if (chosen.residual == ResidualMode::kOwn) kernel->describe_ += " add";
        if (kernel->own_.own_activation) kernel->describe_ += " " + ActivationWord(act);
      }
      kernel->impl_ = pd.impl_info_str();
      return kernel;
    };

    std::unique_ptr<ConvKernel> kernel = build(*choice, internal, false);
    const MeasuredChoice measured = req.tuning.measured_choice;
    if (first_layer && (measured == MeasuredChoice::kSecond ||
                        (measured == MeasuredChoice::kMeasure && FirstLayerKernelPays(y)))) {
      std::unique_ptr<ConvKernel> first = build(*first_layer, true, first_layer_in_place);
      if (measured == MeasuredChoice::kMeasure) {
        first->describe_ += fmt::format("; by rule (at most {} output channels) in place of [{}]",
                                        kFirstLayerMaxChannels, kernel->impl_);
      }
      kernel = std::move(first);
    } else if (first_layer && measured == MeasuredChoice::kMeasure) {
      kernel->describe_ += fmt::format("; by rule (more than {} output channels) in place of [{}]",
                                       kFirstLayerMaxChannels, first_layer->first.impl_info_str());
    }
    return PreferImageConv(req, std::unique_ptr<Kernel>(std::move(kernel)));
  });
}

}  // namespace edgec::cpu
