// oneDNN reduction for ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2 and ReduceSumSquare over constant axes, f32, row-major or NHWC. keepdims only
// changes the output's logical dims, not its memory, so the destination is described with
// the reduced axes kept as 1s.
#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

namespace {

struct Algorithm {
  dnnl::algorithm alg;
  float p = 0.f;
};

std::optional<Algorithm> AlgorithmOf(OpKind op) {
  using a = dnnl::algorithm;
  switch (op) {
    case OpKind::kReduceMean: return Algorithm{a::reduction_mean};
    case OpKind::kReduceSum: return Algorithm{a::reduction_sum};
    case OpKind::kReduceMax: return Algorithm{a::reduction_max};
    case OpKind::kReduceMin: return Algorithm{a::reduction_min};
    case OpKind::kReduceProd: return Algorithm{a::reduction_mul};
    case OpKind::kReduceL1: return Algorithm{a::reduction_norm_lp_sum, 1.f};
    case OpKind::kReduceL2: return Algorithm{a::reduction_norm_lp_sum, 2.f};
    case OpKind::kReduceSumSquare: return Algorithm{a::reduction_norm_lp_power_p_sum, 2.f};
    default: return std::nullopt;
  }
}

}  // namespace

KernelOr CreateReduceKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req, {0}));
  const std::optional<Algorithm> algorithm = AlgorithmOf(req.op);
  if (!algorithm) return Refuse(req, "{} is not a reduction of this kernel", OpName(req.op));
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (y.dtype != DType::kF32) return Refuse(req, "output is not f32");
  const int rank = static_cast<int>(x.dims.size());
  if (rank == 0 || NumElements(x.dims) == 0) return Refuse(req, "scalar or empty input");
  std::vector<int64_t> axes;
  if (InputOrNull(req, 1)) {
    const Tensor* t = ConstantOrNull(req, 1);
    if (!t) return Refuse(req, "axes is not constant");
    axes = t->ToInt64Vector();
  } else {
    axes = req.attrs->GetInts("axes");
  }
  std::vector<bool> reduced(rank, axes.empty());
  if (axes.empty() && req.attrs->GetInt("noop_with_empty_axes", 0) != 0) {
    return Refuse(req, "noop_with_empty_axes with no axes (an identity)");
  }
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  Dims kept = x.dims;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) kept[d] = 1;
  }
  if (NumElements(kept) != NumElements(y.dims)) return Refuse(req, "output size disagrees with the axes");
  if (kept == x.dims) return Refuse(req, "only axes of size 1 are reduced (oneDNN needs a real reduction)");
  // The destination in the source's rank: the output buffer's own layout when it kept the
  // dims, else its row-major order with the reduced axes as 1s.
  const dnnl_md dst = y.dims.size() == kept.size() ? PlainDesc(TensorDesc{y.dtype, kept, y.layout, y.strides})
                                                     : PlainDesc(kept, y.dtype);
  const int threads = std::max(1, req.threads);
  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    const dnnl_md src = PlainDesc(x);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(algorithm->alg, src, dst, algorithm->p, 0.f), attr,
                                       ctx.engine);
    // Its reference loop on nhwc is slower than a row-major copy plus an optimized reduction.
    if (x.layout != Layout::kRowMajor && IsReferenceImpl(pd)) return Refuse(req, "oneDNN has only its reference reduction for {}", LayoutWord(x.layout));
    return SinglePrimitiveKernel::Make(pd, src, dst, req.label,
                                       fmt::format("{} {} f32", OpName(req.op), LayoutWord(x.layout)), threads, ctx);
  });
}

}  // namespace edgec::cpu
