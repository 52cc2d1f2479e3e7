// Fast QLinearMatMul with a constant 2-D int8 B (the MatMul that `edgec quantize` makes):
// A's batch dims fold into rows, oneDNN's u8/s8 · s8 matmul sums into int32 in scratch (A's
// zero point as its run-time source zero point), then the requantization epilogue
// (int8_requant.h) with B's per-column scales. Exact under the same conditions as the int8
// convolution (int8_conv.cc).
#include <fmt/format.h>

#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

bool Int8SumsExact(DType src, const Tensor& w, bool unchecked, std::string* why);  // int8_conv.cc

namespace {

class Int8MatMulKernel final : public DnnlPrimitiveKernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    UseThreads(threads_);
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      prim_.Execute(GetDnnlContext(threads_).stream, in, out, scratch);
      return Status::Ok();
    }));
    const auto* acc = reinterpret_cast<const int32_t*>(static_cast<std::byte*>(scratch) + acc_offset_);
    ParallelFor(threads_, rows_, std::max<int64_t>(1, 4096 / cols_),
                [&](int64_t b, int64_t e) { rq_.Run(acc, cols_, b, e, out[0], cols_, 1); });
    return Status::Ok();
  }
  dnnl::memory weights_, src_zp_;
  Int8Requant rq_;
  int64_t rows_ = 0, cols_ = 0;
  size_t acc_offset_ = 0;
};

StatusOr<int32_t> ScalarInt(const KernelRequest& req, int i) {
  if (!InputOrNull(req, i)) return 0;
  const Tensor* t = ConstantOrNull(req, i);
  if (!t || t->numel() != 1) return Refuse(req, "input {} (zero point) is not a constant scalar", i);
  return static_cast<int32_t>(t->ToInt64Vector()[0]);
}
StatusOr<float> ScalarFloat(const KernelRequest& req, int i) {
  const Tensor* t = ConstantOrNull(req, i);
  if (!t || t->numel() != 1) return Refuse(req, "input {} (scale) is not a constant scalar", i);
  return static_cast<float>(t->ToDoubleVector()[0]);
}

}  // namespace

KernelOr CreateInt8MatMulKernel(const KernelRequest& req) {
  if (req.inputs.size() != 8 && req.inputs.size() != 9) return Refuse(req, "expected 8 or 9 inputs");
  const TensorDesc& a = req.inputs[0];
  const TensorDesc& b = req.inputs[3];
  const TensorDesc& y = req.outputs[0];
  auto quant = [](DType t) { return t == DType::kU8 || t == DType::kI8; };
  if (!quant(a.dtype) || b.dtype != DType::kI8 || !quant(y.dtype))
    return Refuse(req, "expected u8/i8 A and output and an i8 B");
  const Tensor* bt = ConstantOrNull(req, 3);
  if (!bt || b.dims.size() != 2) return Refuse(req, "B is not a constant 2-D tensor");
  if (a.dims.size() < 2 || a.layout != Layout::kRowMajor || !IsDense(a) || !IsDense(y))
    return Refuse(req, "A must be dense row-major of rank >= 2");
  const int64_t k = b.dims[0], n = b.dims[1];
  if (a.dims.back() != k) return Refuse(req, "A's last dim {} is not B's rows {}", a.dims.back(), k);
  ASSIGN_OR_RETURN(float a_scale, ScalarFloat(req, 1));
  ASSIGN_OR_RETURN(int32_t a_zp, ScalarInt(req, 2));
  ASSIGN_OR_RETURN(float y_scale, ScalarFloat(req, 6));
  ASSIGN_OR_RETURN(int32_t y_zp, ScalarInt(req, 7));
  const Tensor* bs = ConstantOrNull(req, 4);
  if (!bs || (bs->numel() != 1 && bs->numel() != n)) return Refuse(req, "B's scale is not per tensor or per column");
  if (InputOrNull(req, 5)) {
    const Tensor* bz = ConstantOrNull(req, 5);
    if (!bz) return Refuse(req, "B's zero point is not constant");
    for (int64_t v : bz->ToInt64Vector()) {
      if (v != 0) return Refuse(req, "B's zero point {} is not 0", v);
    }
  }
  std::string why;
  if (!Int8SumsExact(a.dtype, *bt, req.tuning.int8_unchecked, &why)) return Refuse(req, "{}", why);
  std::vector<float> b_scale;
  for (double v : bs->ToDoubleVector()) b_scale.push_back(static_cast<float>(v));
  const int32_t* bias = nullptr;  // edgec's int32 bias per column (input 8)
  if (req.inputs.size() > 8 && InputOrNull(req, 8)) {
    const Tensor* bt8 = ConstantOrNull(req, 8);
    if (!bt8 || bt8->dtype() != DType::kI32 || bt8->numel() != n) return Refuse(req, "bias is not a constant int32 [{}]", n);
    bias = bt8->data<int32_t>();
  }
  ASSIGN_OR_RETURN(Int8Requant rq, MakeInt8Requant(*req.attrs, req.label, a_scale, b_scale, n, y_scale, y_zp,
                                                   y.dtype, bias));
  const int64_t m = NumElements(a.dims) / k;
  const int threads = std::max(1, req.threads);
  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const dnnl_md src({m, k}, DnnlType(a.dtype), tag::ab);
    const dnnl_md w_user({k, n}, dt::s8, tag::ab);
    const dnnl_md w_any({k, n}, dt::s8, tag::any);
    const dnnl_md acc({m, n}, dt::s32, tag::ab);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (a_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, w_any, acc), attr, ctx.engine);
    auto kr = std::make_unique<Int8MatMulKernel>();
    kr->Init(req.label, threads);
    kr->rq_ = std::move(rq);
    kr->rows_ = m;
    kr->cols_ = n;
    kr->weights_ = PackConstant(w_user, bt->raw(), pd.weights_desc(), ctx);
    using Src = BoundPrimitive::Source;
    auto align = [](size_t v) { return (v + 63) / 64 * 64; };
    const size_t pad_offset = align(acc.get_size());
    kr->prim_ = BoundPrimitive(dnnl::primitive(pd), ctx.engine);
    kr->prim_.Bind(DNNL_ARG_SRC, src, Src::kInput, 0);
    kr->prim_.Fix(DNNL_ARG_WEIGHTS, kr->weights_);
    kr->prim_.Bind(DNNL_ARG_DST, acc, Src::kScratch, 0);
    if (a_zp != 0) {
      kr->src_zp_ = dnnl::memory(dnnl_md({1}, dt::s32, tag::x), ctx.engine);
      *static_cast<int32_t*>(kr->src_zp_.get_data_handle()) = a_zp;
      kr->prim_.Fix(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, kr->src_zp_);
    }
    const dnnl_md scratchpad = pd.scratchpad_desc();
    kr->prim_.BindScratchpad(scratchpad, static_cast<int64_t>(pad_offset));
    kr->acc_offset_ = 0;
    kr->scratch_bytes_ = pad_offset + scratchpad.get_size();
    kr->describe_ = fmt::format("onednn matmul {}->s32 [{}] + own {}", DTypeName(a.dtype), pd.impl_info_str(),
                                kr->rq_.Word());
    return std::unique_ptr<Kernel>(std::move(kr));
  });
}

}  // namespace edgec::cpu
