// Fast QLinearConv: oneDNN's int8 convolution (u8 or s8 activations, s8 weights, the
// activation zero point as oneDNN's run-time source zero point, which also treats the
// padding as the zero point, as ONNX does) accumulating into int32 with no scales, then the
// own requantization epilogue (int8_requant.h) with the bias, per-channel multipliers and
// the fused clamp. Keeping oneDNN to the integer sum is what makes the kernel equal the
// reference bit for bit: its own f32 scale/bias/zero-point post-processing rounds and orders
// differently. The s32 accumulators are NHWC in scratch; a row-major source is reordered to
// NHWC in scratch first.
//
// Exactness depends on oneDNN's integer sum being exact: it is on CPUs with VNNI
// (vpdpbusd); without VNNI oneDNN 2.6 multiplies u8·s8 pairs with vpmaddubsw, whose 16-bit
// pair sums saturate (255·127·2 > 32767), and for s8 sources it halves the weights. The
// kernel therefore refuses (reference fallback) when the ISA has no VNNI unless the pair
// sums cannot saturate: 7-bit weights (|w| ≤ 64, `--reduce-range`) with u8 sources.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "ir/conv_geometry.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

namespace {

class Int8ConvKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    UseThreads(threads_);
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      dnnl::stream& stream = GetDnnlContext(threads_).stream;
      if (reorder_src_.valid()) reorder_src_.Execute(stream, in, out, scratch);
      prim_.Execute(stream, in, out, scratch);
      return Status::Ok();
    }));
    const auto* acc = reinterpret_cast<const int32_t*>(static_cast<std::byte*>(scratch) + acc_offset_);
    auto* y = static_cast<std::byte*>(out[0]);
    if (nhwc_out_) {
      ParallelFor(threads_, rows_, std::max<int64_t>(1, 4096 / channels_), [&](int64_t b, int64_t e) {
        rq_.Run(acc, channels_, b, e, y, channels_, 1);
      });
    } else {
      // Row-major output: requantize into NHWC in scratch (vectorized), then reorder.
      auto* q = static_cast<std::byte*>(scratch) + q_offset_;
      ParallelFor(threads_, rows_, std::max<int64_t>(1, 4096 / channels_), [&](int64_t b, int64_t e) {
        rq_.Run(acc, channels_, b, e, q, channels_, 1);
      });
      RETURN_IF_ERROR(CatchDnnl(label_, [&] {
        reorder_dst_.Execute(GetDnnlContext(threads_).stream, in, out, scratch);
        return Status::Ok();
      }));
    }
    return Status::Ok();
  }
  size_t scratch_bytes() const override { return scratch_bytes_; }
  std::string Describe() const override { return describe_; }

  std::string label_;
  BoundPrimitive prim_, reorder_src_, reorder_dst_;
  dnnl::memory weights_, src_zp_;
  Int8Requant rq_;
  int64_t rows_ = 0, channels_ = 0, batch_ = 1;
  bool nhwc_out_ = true;
  size_t acc_offset_ = 0, q_offset_ = 0, scratch_bytes_ = 0;
  int threads_ = 1;
  std::string describe_;
};

bool IsQuantType(DType t) { return t == DType::kU8 || t == DType::kI8; }

// A scalar (one-element) constant as float / int, or an error naming the input.
StatusOr<float> ScalarScale(const KernelRequest& req, int i) {
  const Tensor* t = ConstantOrNull(req, i);
  if (!t || t->numel() != 1) return Refuse(req, "input {} (scale) is not a constant scalar", i);
  return static_cast<float>(t->ToDoubleVector()[0]);
}
StatusOr<int32_t> ScalarZeroPoint(const KernelRequest& req, int i) {
  if (!InputOrNull(req, i)) return 0;
  const Tensor* t = ConstantOrNull(req, i);
  if (!t || t->numel() != 1) return Refuse(req, "input {} (zero point) is not a constant scalar", i);
  return static_cast<int32_t>(t->ToInt64Vector()[0]);
}

bool HasVnni() {
  const auto isa = dnnl::get_effective_cpu_isa();
  using I = dnnl::cpu_isa;
  return isa == I::avx512_core_vnni || isa == I::avx512_core_bf16 || isa == I::avx512_core_amx ||
         isa == I::avx2_vnni;
}

}  // namespace

// Whether oneDNN's integer sums are exact for these operands on this CPU (see the file
// comment); `why` says why not.
bool Int8SumsExact(DType src, const Tensor& w, std::string* why) {
  // EDGEC_INT8_UNCHECKED=1 skips the check: only for measuring oneDNN's non-VNNI paths.
  static const bool unchecked = [] {
    const char* v = std::getenv("EDGEC_INT8_UNCHECKED");
    return v && v[0] == '1';
  }();
  if (unchecked || HasVnni()) return true;
  if (src != DType::kU8) {
    *why = "s8 activations without VNNI (oneDNN halves the weights)";
    return false;
  }
  const int8_t* p = w.data<int8_t>();
  for (int64_t i = 0; i < w.numel(); ++i) {
    if (p[i] > 63 || p[i] < -64) {
      *why = "8-bit weights without VNNI (oneDNN's u8·s8 pair sums saturate 16 bits; --reduce-range avoids it)";
      return false;
    }
  }
  return true;
}

KernelOr CreateInt8ConvKernel(const KernelRequest& req) {
  if (req.inputs.size() < 8) return Refuse(req, "expected 8 or 9 inputs");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& w = req.inputs[3];
  const TensorDesc& y = req.outputs[0];
  if (!IsQuantType(x.dtype) || !IsQuantType(y.dtype) || w.dtype != DType::kI8)
    return Refuse(req, "x {}, w {}, y {}: expected u8/i8 activations and i8 weights", DTypeName(x.dtype),
                  DTypeName(w.dtype), DTypeName(y.dtype));
  if (x.dims.size() != 4 || w.dims.size() != 4) return Refuse(req, "only 2-D convolutions");
  const Tensor* wt = ConstantOrNull(req, 3);
  if (!wt) return Refuse(req, "W is not constant; weights are packed at creation");
  ASSIGN_OR_RETURN(float x_scale, ScalarScale(req, 1));
  ASSIGN_OR_RETURN(int32_t x_zp, ScalarZeroPoint(req, 2));
  ASSIGN_OR_RETURN(float y_scale, ScalarScale(req, 6));
  ASSIGN_OR_RETURN(int32_t y_zp, ScalarZeroPoint(req, 7));
  const int64_t m = w.dims[0];
  const Tensor* ws = ConstantOrNull(req, 4);
  if (!ws || (ws->numel() != 1 && ws->numel() != m)) return Refuse(req, "W's scale is not constant per tensor or per output channel");
  std::vector<float> w_scale;
  for (double v : ws->ToDoubleVector()) w_scale.push_back(static_cast<float>(v));
  if (InputOrNull(req, 5)) {
    const Tensor* wz = ConstantOrNull(req, 5);
    if (!wz) return Refuse(req, "W's zero point is not constant");
    for (int64_t v : wz->ToInt64Vector()) {
      if (v != 0) return Refuse(req, "W's zero point {} is not 0 (symmetric weights only)", v);
    }
  }
  const int32_t* bias = nullptr;
  if (const TensorDesc* b = InputOrNull(req, 8)) {
    const Tensor* bt = ConstantOrNull(req, 8);
    if (!bt || b->dtype != DType::kI32 || bt->numel() != m) return Refuse(req, "B is not a constant int32 vector of {}", m);
    bias = bt->data<int32_t>();
  }
  if (x.layout != Layout::kNHWC && x.layout != Layout::kRowMajor) return Refuse(req, "x layout");
  std::string why;
  if (!Int8SumsExact(x.dtype, *wt, &why)) return Refuse(req, "{}", why);

  const Dims w_spatial(w.dims.begin() + 2, w.dims.end());
  WindowAttrOptions options;
  options.kernel_from_weights = &w_spatial;
  auto attrs = ReadWindowAttrs(*req.attrs, 2, options);
  if (!attrs.ok()) return attrs.status().WithContext(req.label);
  const Dims x_spatial(x.dims.begin() + 2, x.dims.end());
  auto geom = ForwardWindowGeometry(*attrs, x_spatial);
  if (!geom.ok()) return geom.status().WithContext(req.label);
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  for (int i = 0; i < 2; ++i) {
    if (geom->out[i] != y.dims[2 + i]) return Refuse(req, "output dims disagree with the window geometry");
    if (geom->pad_begin[i] < 0 || geom->pad_end[i] < 0) return Refuse(req, "negative pads");
    strides.push_back(geom->strides[i]);
    dilates.push_back(geom->dilations[i] - 1);
    pad_l.push_back(geom->pad_begin[i]);
    pad_r.push_back(geom->pad_end[i]);
  }
  const int64_t group = req.attrs->GetInt("group", 1);
  if (group < 1 || m % group != 0 || x.dims[1] != w.dims[1] * group) return Refuse(req, "group {}", group);
  ASSIGN_OR_RETURN(Int8Requant rq, MakeInt8Requant(*req.attrs, req.label, x_scale, w_scale, m, y_scale, y_zp,
                                                   y.dtype, bias));
  const int threads = std::max(1, req.threads);

  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::dims xd = ToDnnlDims(x.dims), yd = ToDnnlDims(y.dims);
    const dnnl_md src_user = PlainDesc(x);
    const dnnl_md src_nhwc(xd, DnnlType(x.dtype), tag::nhwc);
    const dnnl_md acc_md(yd, dt::s32, tag::nhwc);
    Dims wd = group == 1 ? Dims{m, w.dims[1]} : Dims{group, m / group, w.dims[1]};
    wd.insert(wd.end(), w_spatial.begin(), w_spatial.end());
    const dnnl_md w_user = PlainDesc(wd, DType::kI8);
    const dnnl_md w_any(ToDnnlDims(wd), dt::s8, tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (x_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      src_nhwc, w_any, dnnl_md(), acc_md, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(d, attr, ctx.engine);
    if (IsReferenceImpl(pd)) return Refuse(req, "oneDNN has only its reference int8 convolution here");

    auto k = std::make_unique<Int8ConvKernel>();
    k->label_ = req.label;
    k->threads_ = threads;
    k->rq_ = std::move(rq);
    k->channels_ = m;
    k->batch_ = y.dims[0];
    k->rows_ = y.dims[0] * y.dims[2] * y.dims[3];
    k->nhwc_out_ = y.layout == Layout::kNHWC && IsDense(y);
    if (!k->nhwc_out_ && !(y.layout == Layout::kRowMajor && IsDense(y))) return Refuse(req, "strided output");
    k->weights_ = PackConstant(w_user, wt->raw(), pd.weights_desc(), ctx);

    // Scratch: [src in NHWC (when reordered) | int32 accumulators | oneDNN's scratchpad].
    using Src = BoundPrimitive::Source;
    auto align = [](size_t v) { return (v + 63) / 64 * 64; };
    const bool reorder = src_user != src_nhwc;
    const size_t acc_offset = align(reorder ? src_nhwc.get_size() : 0);
    // [... | the u8/i8 result in NHWC before its reorder (row-major outputs) | scratchpad]
    const dnnl_md q_nhwc(yd, DnnlType(y.dtype), tag::nhwc);
    const size_t q_offset = align(acc_offset + acc_md.get_size());
    const size_t pad_offset = align(q_offset + (k->nhwc_out_ ? 0 : q_nhwc.get_size()));
    if (!k->nhwc_out_) {
      const dnnl_md y_user = PlainDesc(y);
      k->reorder_dst_ = BoundPrimitive(
          dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, q_nhwc, ctx.engine, y_user)), ctx.engine);
      k->reorder_dst_.Bind(DNNL_ARG_FROM, q_nhwc, Src::kScratch, static_cast<int64_t>(q_offset));
      k->reorder_dst_.Bind(DNNL_ARG_TO, y_user, Src::kOutput, 0);
    }
    k->q_offset_ = q_offset;
    if (reorder) {
      k->reorder_src_ = BoundPrimitive(
          dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, src_user, ctx.engine, src_nhwc)), ctx.engine);
      k->reorder_src_.Bind(DNNL_ARG_FROM, src_user, Src::kInput, 0);
      k->reorder_src_.Bind(DNNL_ARG_TO, src_nhwc, Src::kScratch, 0);
    }
    k->prim_ = BoundPrimitive(dnnl::primitive(pd), ctx.engine);
    if (reorder) k->prim_.Bind(DNNL_ARG_SRC, src_nhwc, Src::kScratch, 0);
    else k->prim_.Bind(DNNL_ARG_SRC, src_nhwc, Src::kInput, 0);
    k->prim_.Fix(DNNL_ARG_WEIGHTS, k->weights_);
    k->prim_.Bind(DNNL_ARG_DST, acc_md, Src::kScratch, static_cast<int64_t>(acc_offset));
    if (x_zp != 0) {
      const dnnl_md zp_md({1}, dt::s32, tag::x);
      k->src_zp_ = dnnl::memory(zp_md, ctx.engine);
      *static_cast<int32_t*>(k->src_zp_.get_data_handle()) = x_zp;
      k->prim_.Fix(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, k->src_zp_);
    }
    const dnnl_md scratchpad = pd.scratchpad_desc();
    k->prim_.BindScratchpad(scratchpad, static_cast<int64_t>(pad_offset));
    k->acc_offset_ = acc_offset;
    k->scratch_bytes_ = pad_offset + scratchpad.get_size();
    k->describe_ = fmt::format("onednn conv {} {}->s32 [{}]{} + own {}", LayoutWord(y.layout), DTypeName(x.dtype),
                               pd.impl_info_str(),
                               reorder ? (k->nhwc_out_ ? " via reorder in" : " via reorders in out")
                                       : (k->nhwc_out_ ? "" : " via reorder out"),
                               k->rq_.Word());
    return std::unique_ptr<Kernel>(std::move(k));
  });
}

}  // namespace edgec::cpu
