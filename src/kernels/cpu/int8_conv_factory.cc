// The making of the fast QLinearConv kernel (int8_conv_kernel.h): the exactness checks of
// oneDNN's sums and epilogue, the zero point's border sums, the bands of output rows and
// their primitives, and the edgec_quantize_input wrapper. How it is exact: int8_conv.cc.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "ir/conv_geometry.h"
#include "kernels/cpu/int8_conv_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/onednn_util.h"

#include "kernels/cpu/int8_conv_kernel.h"

namespace edgec::cpu {

namespace {

// The int32 accumulators of one band of output rows (see CreateInt8ConvKernel).
constexpr int64_t kInt8BandBytes = 512 << 10;

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
bool Int8SumsExact(DType src, const Tensor& w, bool unchecked, std::string* why) {
  // `unchecked` (KernelTuning::int8_unchecked) skips the check: only for measuring oneDNN's
  // non-VNNI paths.
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

// Whether oneDNN's own int8 epilogue can requantize this layer bit for bit like the
// reference (and the own requantization): it computes f32(sum(x w)) + f32(bias), times the
// channel's f32 multiplier (one rounding, as the reference's f32(acc) * m), then the post-ops
// (with a zero point: round half to even, + zero point; a clamp), exact on whole numbers, and
// the saturating conversion, which itself rounds half to even. That is the reference's
// arithmetic when the sums and the bias are exact in f32:
// |sum(x w)| + |bias| <= 2^24 for every channel, bounded by the source's largest magnitude
// times sum |w|. The zero point's border sums have no place in oneDNN's epilogue (one bias
// per channel), nor has the fixed-point mode.
bool OnednnRequantExact(const Int8Requant& rq, DType src, const Tensor& w, int64_t channels, bool border_sums) {
  if (rq.fixed_point || border_sums) return false;
  const int64_t per_channel = w.numel() / channels, largest = src == DType::kU8 ? 255 : 128;
  const int8_t* wp = w.data<int8_t>();
  for (int64_t c = 0; c < channels; ++c) {
    int64_t sum = 0;
    for (int64_t i = 0; i < per_channel; ++i) sum += std::abs(static_cast<int>(wp[c * per_channel + i]));
    if (largest * sum + std::abs(static_cast<int64_t>(rq.bias[c])) > (int64_t{1} << 24)) return false;
  }
  return true;
}


namespace {

// A QLinearConv with edgec_quantize_input whose kernel does not quantize its input itself:
// the input quantized into scratch (in parallel, QuantizeLinear's arithmetic), then that kernel.
class QuantizeInputKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    auto* q = static_cast<uint8_t*>(scratch);
    const auto* x = static_cast<const float*>(in[0]);
    ParallelFor(threads_, numel_, 16384, [&](int64_t b, int64_t e) { QuantizeInterleave(x, 1, numel_, b, e, scale_, zp_, u8_, q); });
    std::array<const void*, 9> inner_in{};
    for (size_t i = 0; i < in.size() && i < inner_in.size(); ++i) inner_in[i] = in[i];
    inner_in[0] = q;
    return inner_->Run(std::span<const void* const>(inner_in.data(), in.size()), out,
                       inner_->scratch_bytes() ? static_cast<std::byte*>(scratch) + offset_ : nullptr);
  }
  size_t scratch_bytes() const override { return offset_ + inner_->scratch_bytes(); }
  std::string Describe() const override { return "own quantize in, then " + inner_->Describe(); }

  std::unique_ptr<Kernel> inner_;
  float scale_ = 1;
  int32_t zp_ = 0;
  bool u8_ = true;
  int64_t numel_ = 0;
  size_t offset_ = 0;  // of the inner kernel's scratch: after the quantized input, 64-byte aligned
  int threads_ = 1;
};

KernelOr CreateQuantizedInt8Conv(const KernelRequest& req);

}  // namespace

// edgec_quantize_input (lower/cpu_fuse_input_quantize.cc): the kernel for the quantized input,
// told to quantize the f32 image as it interleaves it, or else wrapped in a quantize.
KernelOr CreateInt8ConvKernel(const KernelRequest& req) {
  if (!req.attrs || req.attrs->GetInt("edgec_quantize_input", 0) == 0) return CreateQuantizedInt8Conv(req);
  if (req.inputs.size() < 8 || req.inputs[0].dtype != DType::kF32 || !InputOrNull(req, 2) || !IsQuantType(req.inputs[2].dtype))
    return Refuse(req, "edgec_quantize_input needs an f32 input 0 and a u8/i8 zero point (input 2)");
  if (!IsDense(req.inputs[0])) return Refuse(req, "edgec_quantize_input with a strided input");
  ASSIGN_OR_RETURN(float scale, ScalarScale(req, 1));
  ASSIGN_OR_RETURN(int32_t zp, ScalarZeroPoint(req, 2));
  Attributes attrs = *req.attrs;
  attrs.Erase("edgec_quantize_input");
  KernelRequest quantized = req;
  quantized.attrs = &attrs;
  quantized.inputs[0].dtype = req.inputs[2].dtype;
  ASSIGN_OR_RETURN(std::unique_ptr<Kernel> inner, CreateQuantizedInt8Conv(quantized));
  const bool u8 = req.inputs[2].dtype == DType::kU8;
  if (auto* conv = dynamic_cast<Int8ConvKernel*>(inner.get()); conv && conv->interleave_channels_ > 0) {
    conv->quantize_input_ = true;
    conv->in_scale_ = scale;
    conv->in_zero_point_ = zp;
    conv->in_u8_ = u8;
    const std::string from = " via own interleave in";
    if (const size_t at = conv->describe_.find(from); at != std::string::npos)
      conv->describe_.replace(at, from.size(), " via own quantize + interleave in");
    return inner;
  }
  auto k = std::make_unique<QuantizeInputKernel>();
  k->numel_ = NumElements(req.inputs[0].dims);
  k->offset_ = static_cast<size_t>((k->numel_ + 63) / 64 * 64);
  k->inner_ = std::move(inner);
  k->scale_ = scale;
  k->zp_ = zp;
  k->u8_ = u8;
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

namespace {

// The zero point's part of the bias, -zp sum(w) per channel (`folded`), and its border sums
// (see the file comment of int8_conv.cc): per output row the kernel rows whose input row is
// padding, per column the kernel columns likewise; a class per distinct set, and the bias of
// each (row class, column class) in `class_bias` (empty: no output's window meets padding).
struct ZeroPointBias {
  std::vector<int32_t> folded, class_bias;
  std::vector<int> row_class;
  std::vector<Int8ConvKernel::ColumnRun> column_runs;
  int col_classes = 1;
};

StatusOr<ZeroPointBias> FoldZeroPoint(const KernelRequest& req, const Tensor& wt, const Dims& w_spatial,
                                      const Dims& x_spatial, const WindowGeometry& geom, int64_t m, int32_t x_zp,
                                      const int32_t* bias) {
  ZeroPointBias zb;
  const int64_t kh = w_spatial[0], kw = w_spatial[1], taps = kh * kw, per_channel = wt.numel() / m;
  const int8_t* wp = wt.data<int8_t>();
  std::vector<int64_t> tap_sum(m * taps, 0);  // [c][i][j]: sum over the channel's inputs
  for (int64_t c = 0; c < m; ++c)
    for (int64_t i = 0; i < per_channel; ++i) tap_sum[c * taps + i % taps] += wp[c * per_channel + i];
  for (int64_t c = 0; c < m; ++c) {
    int64_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += tap_sum[c * taps + t];
    const int64_t b = (bias ? bias[c] : 0) - static_cast<int64_t>(x_zp) * sum;
    if (b < INT32_MIN || b > INT32_MAX)
      return Refuse(req, "B with the zero point {} folded in exceeds int32 (channel {})", x_zp, c);
    zb.folded.push_back(static_cast<int32_t>(b));
  }
  // Which kernel taps along one axis fall into the padding, per output position.
  auto classes = [&](int axis, std::vector<std::vector<bool>>* masks) {
    std::vector<int> cls;
    masks->assign(1, std::vector<bool>(w_spatial[axis], false));
    for (int64_t o = 0; o < geom.out[axis]; ++o) {
      std::vector<bool> mask(w_spatial[axis]);
      for (int64_t k = 0; k < w_spatial[axis]; ++k) {
        const int64_t at = o * geom.strides[axis] - geom.pad_begin[axis] + k * geom.dilations[axis];
        mask[k] = at < 0 || at >= x_spatial[axis];
      }
      auto it = std::find(masks->begin(), masks->end(), mask);
      cls.push_back(static_cast<int>(it - masks->begin()));
      if (it == masks->end()) masks->push_back(mask);
    }
    return cls;
  };
  std::vector<std::vector<bool>> row_masks, col_masks;
  zb.row_class = classes(0, &row_masks);
  const std::vector<int> col_class = classes(1, &col_masks);
  zb.col_classes = static_cast<int>(col_masks.size());
  if (row_masks.size() > 1 || col_masks.size() > 1) {
    for (size_t rc = 0; rc < row_masks.size(); ++rc)
      for (size_t cc = 0; cc < col_masks.size(); ++cc)
        for (int64_t c = 0; c < m; ++c) {
          int64_t padded = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              if (row_masks[rc][i] || col_masks[cc][j]) padded += tap_sum[c * taps + i * kw + j];
          const int64_t b = zb.folded[c] + static_cast<int64_t>(x_zp) * padded;
          if (b < INT32_MIN || b > INT32_MAX) return Refuse(req, "B with the zero point's border sums exceeds int32");
          zb.class_bias.push_back(static_cast<int32_t>(b));
        }
    for (int64_t ow = 0; ow < static_cast<int64_t>(col_class.size()); ++ow) {
      if (ow == 0 || col_class[ow] != col_class[ow - 1]) zb.column_runs.push_back({ow, ow + 1, col_class[ow]});
      else zb.column_runs.back().end = ow + 1;
    }
  }
  return zb;
}

KernelOr CreateQuantizedInt8Conv(const KernelRequest& req) {
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
  {
    ASSIGN_OR_RETURN(std::unique_ptr<Kernel> gemv, MaybeInt8Gemv(req, *wt, x_scale, x_zp, w_scale, y_scale, y_zp, bias));
    if (gemv) return gemv;
  }
  std::string why;
  if (!Int8SumsExact(x.dtype, *wt, req.tuning.int8_unchecked, &why)) return Refuse(req, "{}", why);

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
  ZeroPointBias zb;
  if (x_zp != 0) {
    ASSIGN_OR_RETURN(zb, FoldZeroPoint(req, *wt, w_spatial, x_spatial, *geom, m, x_zp, bias));
  }
  ASSIGN_OR_RETURN(Int8Requant rq, MakeInt8Requant(*req.attrs, req.label, x_scale, w_scale, m, y_scale, y_zp,
                                                   y.dtype, x_zp != 0 ? zb.folded.data() : bias));
  const int threads = std::max(1, req.threads);
  const bool onednn_requant = OnednnRequantExact(rq, x.dtype, *wt, m, !zb.class_bias.empty());

  const bool dilated = geom->dilations[0] != 1 || geom->dilations[1] != 1;
  // The kernel on oneDNN's first implementation for each of its convolutions, or with
  // `skip_amx` on the first that is not AMX (always for dilated layers, see make_pd); with
  // `fused` oneDNN requantizes in its epilogue (see OnednnRequantExact) and writes u8/i8.
  auto build = [&](bool skip_amx, bool fused) -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::dims xd = ToDnnlDims(x.dims), yd = ToDnnlDims(y.dims);
    const dnnl_md src_user = PlainDesc(x);
    const dnnl_md src_nhwc(xd, DnnlType(x.dtype), tag::nhwc);
    Dims wd = group == 1 ? Dims{m, w.dims[1]} : Dims{group, m / group, w.dims[1]};
    wd.insert(wd.end(), w_spatial.begin(), w_spatial.end());
    const dnnl_md w_user = PlainDesc(wd, DType::kI8);
    const dnnl_md w_any(ToDnnlDims(wd), dt::s8, tag::any);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (fused) {
      using alg = dnnl::algorithm;
      attr.set_output_scales(1 << 1, rq.multiplier);  // per output channel
      dnnl::post_ops po;
      // Without a zero point the conversion's own rounding (half to even) is the reference's,
      // and clamping to whole bounds before it equals clamping after. With one, the value is
      // rounded first so that adding the zero point is exact in f32.
      if (rq.zero_point != 0) {
        po.append_eltwise(1.f, alg::eltwise_round, 0.f, 0.f);  // half to even, as MXCSR's default
        po.append_eltwise(1.f, alg::eltwise_linear, 1.f, static_cast<float>(rq.zero_point));
      }
      const int32_t tmin = rq.u8 ? 0 : -128, tmax = rq.u8 ? 255 : 127;
      if (rq.qmin != tmin || rq.qmax != tmax)
        po.append_eltwise(1.f, alg::eltwise_clip_v2, static_cast<float>(rq.qmin), static_cast<float>(rq.qmax));
      attr.set_post_ops(po);
    }
    const dnnl_md bias_md = fused ? dnnl_md({m}, dt::s32, tag::x) : dnnl_md();
    // oneDNN 2.6's older AMX int8 convolutions (jit, jit_1x1: not brgemm) are never used: the
    // jit one sums some layers with a source zero point and dilated windows wrongly
    // (CpuInt8.QLinearConvAmxAndVnniCandidatesEqualReference; docs/quantization.md has the
    // cases), and both are slower than the VNNI convolution.
    auto older_amx = [](const dnnl::convolution_forward::primitive_desc& p) {
      return IsAmxImpl(p) && std::string(p.impl_info_str()).rfind("brg", 0) != 0;
    };
    // Why oneDNN's pick cannot serve this layer, or null when it can.
    auto unusable = [&](const dnnl::convolution_forward::primitive_desc& p) -> const char* {
      if (IsReferenceImpl(p)) return "oneDNN has only its reference int8 convolution here";
      if (older_amx(p)) return "oneDNN has only its older AMX int8 convolution here, which sums some layers wrongly";
      if (skip_amx && IsAmxImpl(p))
        return dilated ? "oneDNN has only its AMX int8 convolution here, not trusted with dilations"
                       : "oneDNN has only its AMX int8 convolution here";
      return nullptr;
    };
    // The convolution of `images` images of `in_rows` input rows into `out_rows` output rows,
    // with these top and bottom pads (the width's are the node's).
    auto make_pd = [&](int64_t images, int64_t in_rows, int64_t out_rows, int64_t pad_t, int64_t pad_b) {
      const dnnl_md src({images, xd[1], in_rows, xd[3]}, DnnlType(x.dtype), tag::nhwc);
      const dnnl_md dst({images, yd[1], out_rows, yd[3]}, fused ? DnnlType(y.dtype) : dt::s32, tag::nhwc);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        src, w_any, bias_md, dst, strides, dilates, {pad_t, pad_l[1]},
                                        {pad_b, pad_r[1]});
      dnnl::convolution_forward::primitive_desc made(d, attr, ctx.engine);
      // oneDNN 2.6's AMX int8 convolution computes dilated windows wrongly
      // (CpuInt8.QLinearConvEqualsReference), so a dilated layer skips every AMX one. The walk
      // stops at the first usable implementation: walking on past some raises SIGFPE inside
      // oneDNN 2.6 (docs/quantization.md).
      while ((older_amx(made) || (skip_amx && IsAmxImpl(made))) && made.next_impl()) {
      }
      return made;
    };
    const dnnl::convolution_forward::primitive_desc pd = make_pd(xd[0], xd[2], yd[2], pad_l[0], pad_r[0]);
    if (const char* why = unusable(pd)) return Refuse(req, "{}", why);

    auto k = std::make_unique<Int8ConvKernel>();
    k->label_ = req.label;
    k->threads_ = threads;
    k->rq_ = rq;  // a copy: build runs once per candidate
    k->fused_ = fused;
    k->channels_ = m;
    k->out_width_ = y.dims[3];
    k->image_rows_ = y.dims[2];
    k->image_pixels_ = y.dims[2] * y.dims[3];
    k->class_bias_ = zb.class_bias;
    k->row_class_ = zb.row_class;
    k->column_runs_ = zb.column_runs;
    k->col_classes_ = zb.col_classes;
    k->src_row_bytes_ = x.dims[1] * x.dims[3];  // 1-byte elements
    k->image_src_bytes_ = k->src_row_bytes_ * x.dims[2];
    k->nhwc_out_ = y.layout == Layout::kNHWC && IsDense(y);
    if (!k->nhwc_out_ && !(y.layout == Layout::kRowMajor && IsDense(y))) return Refuse(req, "strided output");

    // Bands of output rows whose int32 accumulators stay in L2 (kInt8BandBytes) while they
    // are requantized: a large layer's accumulators would otherwise make a round trip through
    // memory (4 bytes per output, written by oneDNN and read back). One primitive per band
    // shape (the first and last bands have the image's padding); every band of every image
    // is one call. A layer that fits runs as one call over all images.
    // With several threads a banded layer runs its bands side by side instead, each thread a
    // contiguous share of whole bands with single-threaded primitives (a band's convolution
    // and requantization then stay on one core, with no barrier between them); the band count
    // is made a multiple of the threads. Layers of fewer rows than threads keep oneDNN's own
    // threading.
    const int64_t out_rows = y.dims[2], row_acc_bytes = y.dims[3] * m * (fused ? 1 : 4);
    int64_t band_rows = std::max<int64_t>(1, kInt8BandBytes / row_acc_bytes);
    if (threads > 1 && out_rows >= threads) {
      const int64_t count = (out_rows + band_rows - 1) / band_rows;
      const int64_t per_image = y.dims[0] % threads == 0 ? count : (count + threads - 1) / threads * threads;
      band_rows = (out_rows + per_image - 1) / per_image;
      k->lanes_ = threads;
      UseThreads(1);  // the band primitives are made for one thread
    }
    std::vector<dnnl::convolution_forward::primitive_desc> pds;
    if (out_rows > band_rows) {
      const int64_t window = (w_spatial[0] - 1) * (dilates[0] + 1) + 1, in_rows = x.dims[2];
      std::map<std::array<int64_t, 4>, int> shapes;
      for (int64_t o = 0; o < out_rows; o += band_rows) {
        const int64_t rows = std::min(band_rows, out_rows - o);
        const int64_t first = o * strides[0] - pad_l[0], end = (o + rows - 1) * strides[0] - pad_l[0] + window;
        const int64_t in_row = std::max<int64_t>(first, 0), in_count = std::min(end, in_rows) - in_row;
        if (in_count < 1) {  // a band of padding only: run unbanded
          k->bands_.clear();
          break;
        }
        const std::array<int64_t, 4> shape = {in_count, rows, in_row - first, std::max<int64_t>(end - in_rows, 0)};
        auto [it, added] = shapes.emplace(shape, static_cast<int>(pds.size()));
        if (added) {
          pds.push_back(make_pd(1, shape[0], shape[1], shape[2], shape[3]));
          if (unusable(pds.back())) {
            k->bands_.clear();
            break;
          }
        }
        k->bands_.push_back({o, in_row, rows * y.dims[3], it->second});
      }
    }
    if (k->bands_.empty()) {
      k->lanes_ = 1;
      pds = {pd};
      k->bands_.push_back({0, 0, y.dims[0] * y.dims[2] * y.dims[3], 0});
    } else {
      k->images_ = y.dims[0];
    }
    UseThreads(threads);

    // Scratch: [src in NHWC (when reordered) | the u8/i8 result in NHWC before its reorder
    // (row-major outputs) | per lane: int32 accumulators of a band, oneDNN's scratchpad].
    using Src = BoundPrimitive::Source;
    auto align = [](size_t v) { return (v + 63) / 64 * 64; };
    const bool reorder = src_user != src_nhwc;
    const dnnl_md q_nhwc(yd, DnnlType(y.dtype), tag::nhwc);
    const size_t q_offset = align(reorder ? src_nhwc.get_size() : 0);
    const size_t acc_offset = align(q_offset + (k->nhwc_out_ ? 0 : q_nhwc.get_size()));
    int64_t acc_pixels = 0;
    for (const auto& b : k->bands_) acc_pixels = std::max(acc_pixels, b.pixels);
    size_t pad_bytes = 0;
    for (const auto& band_pd : pds) pad_bytes = std::max(pad_bytes, band_pd.scratchpad_desc().get_size());
    const size_t acc_bytes = fused ? 0 : align(static_cast<size_t>(acc_pixels * m) * sizeof(int32_t));
    k->lane_bytes_ = align(acc_bytes + pad_bytes);
    if (!k->nhwc_out_) {
      const dnnl_md y_user = PlainDesc(y);
      k->reorder_dst_ = BoundPrimitive(
          dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, q_nhwc, ctx.engine, y_user)), ctx.engine);
      k->reorder_dst_.Bind(DNNL_ARG_FROM, q_nhwc, Src::kScratch, static_cast<int64_t>(q_offset));
      k->reorder_dst_.Bind(DNNL_ARG_TO, y_user, Src::kOutput, 0);
    }
    k->q_offset_ = q_offset;
    if (reorder && x.layout == Layout::kRowMajor && IsDense(x) && x.dims.size() == 4 && x.dims[1] == 3) {
      k->interleave_channels_ = 3;
      k->interleave_pixels_ = x.dims[2] * x.dims[3];
      k->images_in_ = x.dims[0];
    } else if (reorder) {
      k->reorder_src_ = BoundPrimitive(
          dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, src_user, ctx.engine, src_nhwc)), ctx.engine);
      k->reorder_src_.Bind(DNNL_ARG_FROM, src_user, Src::kInput, 0);
      k->reorder_src_.Bind(DNNL_ARG_TO, src_nhwc, Src::kScratch, 0);
    }
    k->prims_per_lane_ = static_cast<int>(pds.size());
    if (fused) k->bias_ = dnnl::memory(bias_md, ctx.engine, k->rq_.bias.data());
    for (int lane = 0; lane < k->lanes_; ++lane) {
      const size_t lane_offset = acc_offset + lane * k->lane_bytes_;
      if (k->lanes_ > 1) k->lane_streams_.emplace_back(ctx.engine);
      for (const auto& band_pd : pds) {
        // The weights, packed once per format the band shapes ask for.
        const dnnl_md wmd = band_pd.weights_desc();
        dnnl::memory* packed = nullptr;
        for (dnnl::memory& w : k->weights_)
          if (w.get_desc() == wmd) packed = &w;
        if (!packed) packed = &k->weights_.emplace_back(PackConstant(w_user, wt->raw(), wmd, ctx));
        BoundPrimitive& p = k->band_prims_.emplace_back(dnnl::primitive(band_pd), ctx.engine);
        p.Bind(DNNL_ARG_SRC, band_pd.src_desc(), reorder ? Src::kScratch : Src::kInput, 0);
        p.Fix(DNNL_ARG_WEIGHTS, *packed);
        if (!fused) p.Bind(DNNL_ARG_DST, band_pd.dst_desc(), Src::kScratch, static_cast<int64_t>(lane_offset));
        else if (k->nhwc_out_) p.Bind(DNNL_ARG_DST, band_pd.dst_desc(), Src::kOutput, 0);
        else p.Bind(DNNL_ARG_DST, band_pd.dst_desc(), Src::kScratch, static_cast<int64_t>(q_offset));
        if (fused) p.Fix(DNNL_ARG_BIAS, k->bias_);
        p.BindScratchpad(band_pd.scratchpad_desc(), static_cast<int64_t>(lane_offset + acc_bytes));
      }
    }
    k->acc_offset_ = acc_offset;
    k->scratch_bytes_ = acc_offset + k->lanes_ * k->lane_bytes_;
    const std::string banded = k->images_ > 1 || k->bands_.size() > 1
                                   ? fmt::format(" in bands of {} rows{}", band_rows,
                                                 k->lanes_ > 1 ? fmt::format(" on {} threads side by side", k->lanes_) : "")
                                   : std::string();
    k->impl_ = pds[0].impl_info_str();
    const std::string requant = fused ? fmt::format(" with its requant{}", k->rq_.table.empty() ? "" : ", then own 256-entry lookup")
                                      : " + own " + k->rq_.Word();
    k->describe_ = fmt::format("onednn conv {} {}->{} [{}]{}{}{}{}", LayoutWord(y.layout), DTypeName(x.dtype),
                               fused ? DTypeName(y.dtype) : "s32", k->impl_, banded,
                               !reorder ? (k->nhwc_out_ ? "" : " via reorder out")
                               : k->interleave_channels_ ? (k->nhwc_out_ ? " via own interleave in" : " via own interleave in, reorder out")
                               : (k->nhwc_out_ ? " via reorder in" : " via reorders in out"),
                               requant,
                               x_zp == 0 ? "" : zb.class_bias.empty() ? " (zero point in the bias)" : " (zero point in the bias and border sums)");
    for (const auto& band_pd : pds) k->amx_ = k->amx_ || IsAmxImpl(band_pd);
    return std::unique_ptr<Kernel>(std::move(k));
  };
  return CatchDnnl(req.label, [&]() -> KernelOr {
    // oneDNN's epilogue where it is exact and oneDNN has it for this layer, else the own one.
    auto build_best = [&](bool skip_amx) -> KernelOr {
      if (onednn_requant) {
        KernelOr k = CatchDnnl(req.label, [&] { return build(skip_amx, true); });
        if (k.ok()) return k;
      }
      return build(skip_amx, false);
    };
    ASSIGN_OR_RETURN(std::unique_ptr<Kernel> first, build_best(dilated));
    const MeasuredChoice choice = req.tuning.measured_choice;
    if (!static_cast<Int8ConvKernel&>(*first).amx_ || choice == MeasuredChoice::kFirst) return first;
    KernelOr other = build_best(/*skip_amx=*/true);
    if (!other.ok()) return first;  // AMX is all oneDNN has here
    if (choice == MeasuredChoice::kSecond) return other;
    // oneDNN's brgemm AMX convolutions win on large layers (resnet18's 3x3s 2-3.7x) and lose
    // on small ones (mobilenet_v3_small's squeeze-excite 1x1s), with no size rule that
    // separates them on the zoo: the two kernels are timed here, on this CPU.
    const auto [ms_first, ms_other] = TimeTwoKernels(*first, **other, {PlainDesc(x).get_size()},
                                                     {PlainDesc(y).get_size()});
    auto& keep = static_cast<Int8ConvKernel&>(ms_first <= ms_other ? *first : **other);
    const auto& lose = static_cast<const Int8ConvKernel&>(ms_first <= ms_other ? **other : *first);
    keep.describe_ += fmt::format("; measured faster than [{}]: {:.3f} vs {:.3f} ms", lose.impl_,
                                  std::min(ms_first, ms_other), std::max(ms_first, ms_other));
    if (ms_first <= ms_other) return first;
    return other;
  });
}

}  // namespace

}  // namespace edgec::cpu
