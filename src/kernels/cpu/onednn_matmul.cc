// oneDNN matmul for MatMul, Gemm and FusedMatMul: numpy batch broadcasting, 1-D operands,
// transA/transB as strides (no copies), alpha folded into constant weights (else an output
// scale), Gemm's C (scaled by beta when constant) and FusedMatMul's Bias as the primitive's
// bias when it is per column, else a binary post-op; the residual as a binary or sum
// post-op; the activation as eltwise post-ops. Constant weights are reordered once into
// the format oneDNN picks. Whatever oneDNN would only run in its reference implementation
// is left to the own broadcasting loops after the primitive.
#include <fmt/ranges.h>

#include <cstring>
#include <optional>
#include <set>
#include <tuple>

#include "kernels/cpu/onednn_util.h"

namespace edgec::cpu {

namespace {

// Where an epilogue term is computed.
enum class Where { kAbsent, kPrimitive, kBinary, kSum, kOwn };

struct Attempt {
  Where bias, residual;
  bool activation_in_primitive;
  auto key() const { return std::tuple(bias, residual, activation_in_primitive); }
};

class MatMulKernel final : public DnnlF32Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    UseThreads(threads_);
    if (residual_ == Where::kSum && in[3] != out[0]) std::memcpy(out[0], in[3], out_bytes_);
    if (residual_ == Where::kBinary && in[3] == out[0]) {
      return Internal("{}: the residual shares the output buffer; this kernel reads it as a "
                      "binary post-op and needs it separate", label_);
    }
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      prim_.Execute(GetDnnlContext(threads_).stream, in, out, scratch);
      return Status::Ok();
    }));
    own_.Run(in, static_cast<float*>(out[0]), out_numel_, threads_);
    return Status::Ok();
  }
  dnnl::memory weights_, bias_;
  std::vector<float> bias_values_;  // constant bias (beta applied), when not packed
  Where residual_ = Where::kAbsent;
};

// One operand as oneDNN sees it: logical dims [batch..., rows, cols] and element strides.
struct Operand {
  Dims dims;
  std::vector<int64_t> strides;
};

// The operand `d` viewed as a matrix (transposed when `trans`); a 1-D operand becomes a
// row (A) or a column (B).
Operand MatrixView(const TensorDesc& d, bool trans, bool is_a) {
  Operand o;
  const Dims& stored = d.dims;
  const std::vector<int64_t> strides = LogicalStrides(d);
  if (stored.size() == 1) {
    const int64_t k = stored[0], s = strides[0];
    o.dims = is_a ? Dims{1, k} : Dims{k, 1};
    o.strides = is_a ? std::vector<int64_t>{k * s, s} : std::vector<int64_t>{s, 1};
    return o;
  }
  o.dims = stored;
  o.strides = strides;
  const size_t r = stored.size();
  if (trans) {
    std::swap(o.dims[r - 2], o.dims[r - 1]);
    std::swap(o.strides[r - 2], o.strides[r - 1]);
  }
  return o;
}

// Prepends dims of 1 up to `rank`.
void PadToRank(Operand& o, size_t rank) {
  while (o.dims.size() < rank) {
    o.strides.insert(o.strides.begin(), o.dims[0] * o.strides[0]);
    o.dims.insert(o.dims.begin(), 1);
  }
}

// A [batch..., M, K] as one [batch x M, K] matrix when its memory allows (each non-1 batch
// or row dim steps over the next one exactly), else nullopt.
std::optional<Operand> FoldRows(const Operand& a) {
  const size_t r = a.dims.size();
  int64_t rows = 1, row_stride = 0;
  int last = -1;  // the innermost non-1 dim among batch and rows seen so far
  for (int i = static_cast<int>(r) - 2; i >= 0; --i) {
    if (a.dims[i] == 1) continue;
    if (last >= 0 && a.strides[i] != a.dims[last] * a.strides[last]) return std::nullopt;
    if (last < 0) row_stride = a.strides[i];
    last = i;
    rows *= a.dims[i];
  }
  const int64_t k = a.dims[r - 1], col_stride = a.strides[r - 1];
  if (last < 0) row_stride = k * col_stride;
  return Operand{{rows, k}, {row_stride, col_stride}};
}

// `d` right-aligned to `rank` dims with leading 1s.
Dims PaddedDims(const Dims& d, size_t rank) {
  Dims p(rank - std::min(rank, d.size()), 1);
  p.insert(p.end(), d.begin(), d.end());
  return p;
}

}  // namespace

KernelOr CreateMatMulKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req));
  if (auto gemv = CreateGemvKernel(req); gemv.ok()) return gemv;
  RETURN_IF_ERROR(ExpectLayouts(req, Layout::kRowMajor));
  if (req.inputs.size() < 2 || !Present(req.inputs[0]) || !Present(req.inputs[1])) {
    return Refuse(req, "A or B is absent");
  }
  const Attributes& attrs = *req.attrs;
  const bool is_gemm = req.op == OpKind::kGemm, fused = req.op == OpKind::kFusedMatMul;
  const bool trans_a = attrs.GetInt("transA", 0) != 0, trans_b = attrs.GetInt("transB", 0) != 0;
  const float alpha = req.op == OpKind::kMatMul ? 1.f : attrs.GetFloat("alpha", 1.f);
  const float beta = is_gemm ? attrs.GetFloat("beta", 1.f) : 1.f;
  ActivationSpec act;
  if (fused) {
    auto a = ReadActivation(attrs);
    if (!a.ok()) return a.status().WithContext(req.label);
    act = *a;
  }
  const TensorDesc& ad = req.inputs[0];
  const TensorDesc& bd = req.inputs[1];
  const TensorDesc* bias = InputOrNull(req, 2);
  const TensorDesc* residual = fused ? InputOrNull(req, 3) : nullptr;
  const TensorDesc& y = req.outputs[0];
  if (NumElements(y.dims) == 0 || NumElements(ad.dims) == 0 || NumElements(bd.dims) == 0) {
    return Refuse(req, "empty operands");
  }
  if (ad.dims.empty() || bd.dims.empty()) return Refuse(req, "scalar operands");
  const bool one_d = ad.dims.size() == 1 || bd.dims.size() == 1;

  // A constant operand is read from its (dense) Tensor at creation, whatever the run-time
  // buffer's strides.
  auto as_read = [&](const TensorDesc& d, int i) {
    TensorDesc r = d;
    if (ConstantOrNull(req, i)) r.strides.clear();
    return r;
  };
  Operand a = MatrixView(as_read(ad, 0), trans_a, true);
  Operand b = MatrixView(as_read(bd, 1), trans_b, false);
  const size_t rank = std::max(a.dims.size(), b.dims.size());
  PadToRank(a, rank);
  PadToRank(b, rank);
  Dims dst_dims(rank);
  for (size_t i = 0; i + 2 < rank; ++i) dst_dims[i] = std::max(a.dims[i], b.dims[i]);
  dst_dims[rank - 2] = a.dims[rank - 2];
  dst_dims[rank - 1] = b.dims[rank - 1];
  if (NumElements(dst_dims) != NumElements(y.dims)) return Refuse(req, "output size disagrees with A and B");
  const int64_t n = dst_dims[rank - 1];

  // The constant bias with beta applied, or the run-time one (beta must then be 1).
  const Tensor* bias_const = ConstantOrNull(req, 2);
  if (bias && beta != 1.f && !bias_const) return Refuse(req, "beta {} with a non-constant C", beta);
  const Tensor* b_const = ConstantOrNull(req, 1);
  const bool fold_alpha = alpha != 1.f && b_const != nullptr;
  const bool output_scale = alpha != 1.f && !fold_alpha;
  // A bias of one value per column fits the primitive's bias argument (it is added
  // before the output scale, so not with one).
  bool bias_per_column = false;
  if (bias && !one_d && !output_scale) {
    const Dims p = PaddedDims(bias->dims, rank);
    bias_per_column = p[rank - 1] == n || p[rank - 1] == 1;
    for (size_t i = 0; i + 1 < rank; ++i) bias_per_column &= p[i] == 1;
  }
  const bool residual_full = residual && residual->dims == y.dims;

  // A B shared by every batch: A's batch dims folded into its rows make one large GEMM of
  // a batch of small ones ([128, 1, 256] x [256, 768] is one 128-row GEMM, not 128 GEMVs).
  // The epilogue operands fold with it (a full residual, a per-column bias).
  bool folded = false;
  if (rank > 2 && !one_d && (!residual || residual_full)) {
    bool ok = true;
    for (size_t i = 0; i + 2 < rank; ++i) ok &= b.dims[i] == 1;
    if (bias) {
      for (size_t i = 0; i + 1 < bias->dims.size(); ++i) ok &= bias->dims[i] == 1;
    }
    if (ok) {
      auto rows = FoldRows(a);
      if (rows) {
        a = *rows;
        b = Operand{{b.dims[rank - 2], b.dims[rank - 1]}, {b.strides[rank - 2], b.strides[rank - 1]}};
        dst_dims = {a.dims[0], n};
        folded = true;
      }
    }
  }
  const size_t prim_rank = folded ? 2 : rank;
  // An epilogue operand's dims as the primitive sees them.
  auto prim_dims = [&](const Dims& d) -> Dims {
    if (!folded) return PaddedDims(d, rank);
    if (d == y.dims) return dst_dims;
    return {1, d.empty() ? 1 : d.back()};
  };

  // The splits of the epilogue to try, most fused first.
  std::vector<Attempt> attempts;
  std::set<std::tuple<Where, Where, bool>> seen;
  auto add = [&](Where bw, Where rw, bool act_prim) {
    if (!bias) bw = Where::kAbsent;
    if (!residual) rw = Where::kAbsent;
    if (one_d) {  // the own loops see the output's real dims
      if (bw != Where::kAbsent) bw = Where::kOwn;
      if (rw != Where::kAbsent) rw = Where::kOwn;
    }
    if (bw == Where::kPrimitive && !bias_per_column) bw = Where::kBinary;
    if (rw == Where::kSum && !residual_full) return;
    if (bw == Where::kOwn || rw == Where::kOwn || OwnActivationFaster(act)) act_prim = false;
    if (act.kind == Activation::kNone) act_prim = true;
    if (seen.insert(std::tuple(bw, rw, act_prim)).second) attempts.push_back({bw, rw, act_prim});
  };
  add(Where::kPrimitive, Where::kBinary, true);
  add(Where::kPrimitive, Where::kSum, true);
  add(Where::kPrimitive, Where::kOwn, false);
  add(bias_per_column ? Where::kPrimitive : Where::kOwn, Where::kOwn, false);
  add(Where::kOwn, Where::kOwn, false);

  const int threads = std::max(1, req.threads);
  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    const dnnl_md a_md = PlainDesc(a.dims, DType::kF32, a.strides);
    const dnnl_md b_md = PlainDesc(b.dims, DType::kF32, b.strides);
    const dnnl_md b_any(ToDnnlDims(b.dims), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
    const dnnl_md dst_md = PlainDesc(dst_dims, DType::kF32);
    Dims bias_prim_dims(prim_rank, 1);
    bias_prim_dims[prim_rank - 1] = bias ? prim_dims(bias->dims).back() : 1;
    const dnnl_md bias_prim_md = PlainDesc(bias_prim_dims, DType::kF32);
    const dnnl_md bias_binary_md = bias ? PlainDesc(prim_dims(bias->dims), DType::kF32) : dnnl_md();
    const dnnl_md residual_md = residual ? PlainDesc(prim_dims(residual->dims), DType::kF32) : dnnl_md();

    auto make_pd = [&](const Attempt& at) {
      dnnl::post_ops po;
      if (at.bias == Where::kBinary) po.append_binary(dnnl::algorithm::binary_add, bias_binary_md);
      if (at.residual == Where::kBinary) po.append_binary(dnnl::algorithm::binary_add, residual_md);
      if (at.residual == Where::kSum) po.append_sum(1.f);
      if (at.activation_in_primitive) AppendActivation(po, act);
      dnnl::primitive_attr attr;
      attr.set_post_ops(po);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      if (output_scale) attr.set_output_scales(0, {alpha});
      const dnnl_md& weights = b_const ? b_any : b_md;
      if (at.bias == Where::kPrimitive) {
        return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, weights, bias_prim_md, dst_md), attr, ctx.engine);
      }
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, weights, dst_md), attr, ctx.engine);
    };
    std::optional<dnnl::matmul::primitive_desc> pd;
    Attempt chosen{};
    std::string last_error;
    for (size_t i = 0; i < attempts.size(); ++i) {
      try {
        auto candidate = make_pd(attempts[i]);
        if (!IsReferenceImpl(candidate) || i + 1 == attempts.size() || !pd) {
          pd = candidate;
          chosen = attempts[i];
          if (!IsReferenceImpl(candidate)) break;
        }
      } catch (const dnnl::error& e) {
        last_error = e.what();
      }
    }
    if (!pd) return Refuse(req, "oneDNN has no matmul for this problem ({})", last_error);

    auto kernel = std::make_unique<MatMulKernel>();
    kernel->Init(req.label, threads);
    kernel->residual_ = chosen.residual;
    kernel->SetOutput(y.dims);
    kernel->prim_ = BoundPrimitive(dnnl::primitive(*pd), ctx.engine);
    BoundPrimitive& p = kernel->prim_;
    p.Bind(DNNL_ARG_SRC, a_md, BoundPrimitive::Source::kInput, 0);
    p.Bind(DNNL_ARG_DST, dst_md, BoundPrimitive::Source::kOutput, 0);
    if (b_const) {
      const float* data = b_const->data<float>();
      std::vector<float> scaled;
      if (fold_alpha) {
        scaled.assign(data, data + b_const->numel());
        for (float& v : scaled) v *= alpha;
        data = scaled.data();
      }
      kernel->weights_ = PackConstant(b_md, data, pd->weights_desc(), ctx);
      p.Fix(DNNL_ARG_WEIGHTS, kernel->weights_);
    } else {
      p.Bind(DNNL_ARG_WEIGHTS, b_md, BoundPrimitive::Source::kInput, 1);
    }
    // The bias: a constant one is kept (beta applied); a run-time one is read from input 2.
    const float* bias_fixed = nullptr;
    if (bias && bias_const) {
      const float* src = bias_const->data<float>();
      kernel->bias_values_.assign(src, src + bias_const->numel());
      for (float& v : kernel->bias_values_) v *= beta;
      bias_fixed = kernel->bias_values_.data();
    }
    auto bind_bias = [&](int arg, const dnnl_md& md) {
      if (bias_fixed) {
        kernel->bias_ = dnnl::memory(md, ctx.engine, const_cast<float*>(bias_fixed));
        p.Fix(arg, kernel->bias_);
      } else {
        p.Bind(arg, md, BoundPrimitive::Source::kInput, 2);
      }
    };
    int post_index = 0;
    if (chosen.bias == Where::kPrimitive) bind_bias(DNNL_ARG_BIAS, bias_prim_md);
    if (chosen.bias == Where::kBinary) bind_bias(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_index++) | DNNL_ARG_SRC_1, bias_binary_md);
    if (chosen.residual == Where::kBinary) {
      p.Bind(DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_index++) | DNNL_ARG_SRC_1, residual_md,
             BoundPrimitive::Source::kInput, 3);
    }
    p.BindScratchpad(pd->scratchpad_desc(), 0);
    kernel->scratch_bytes_ = pd->scratchpad_desc().get_size();

    if (chosen.bias == Where::kOwn) {
      kernel->own_.addends.push_back({bias_fixed ? -1 : 2, bias_fixed, MakeStridedLoop(y, y, *bias)});
    }
    if (chosen.residual == Where::kOwn) kernel->own_.addends.push_back({3, nullptr, MakeStridedLoop(y, y, *residual)});
    if (!chosen.activation_in_primitive && act.kind != Activation::kNone) {
      kernel->own_.own_activation = true;
      kernel->own_.act = ToUnaryFn(act);
    }

    std::vector<std::string> post;
    if (output_scale) post.push_back(fmt::format("scale {}", alpha));
    if (chosen.bias == Where::kBinary) post.emplace_back("binary-add bias");
    if (chosen.residual == Where::kBinary) post.emplace_back("binary-add");
    if (chosen.residual == Where::kSum) post.emplace_back("sum");
    if (chosen.activation_in_primitive && act.kind != Activation::kNone) post.push_back(ActivationWord(act));
    kernel->describe_ = fmt::format("onednn matmul f32 [{}]{}", pd->impl_info_str(), folded ? " batch folded into rows" : "");
    if (!post.empty()) kernel->describe_ += fmt::format(" (post-ops: {})", fmt::join(post, ", "));
    if (!kernel->own_.empty()) {
      std::vector<std::string> own;
      if (chosen.bias == Where::kOwn) own.emplace_back("bias");
      if (chosen.residual == Where::kOwn) own.emplace_back("add");
      if (kernel->own_.own_activation) own.push_back(ActivationWord(act));
      kernel->describe_ += fmt::format(" + own epilogue: {}", fmt::join(own, ", "));
    }
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace edgec::cpu
