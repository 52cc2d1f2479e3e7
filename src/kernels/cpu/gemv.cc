// Matrix-vector products: MatMul/Gemm/FusedMatMul whose A is one row (the classifier of a
// CNN at batch 1) and 1x1 convolutions of a single pixel (the squeeze-excitation FCs). The
// constant B is packed once into column panels of vec::kGemvPanel columns, each panel's K
// rows one after another, so every thread streams its panels from memory in one pass; the
// epilogue (bias, residual, activation) is applied per panel while it is in cache.
//
// Why not oneDNN here: with one row its matmul reads the weights at about 11 GB/s when they
// come from DRAM, as they do once per inference (1280 x 1000 f32, 5 MB, cold cache, this
// machine, 1 thread: 0.42 ms; 2 threads 0.28 ms), while one pass over packed panels reaches
// 17 GB/s (0.30 ms; 2 threads 0.13 ms). With the weights in cache both take 0.07 ms.
// KernelTuning::gemv = false turns this kernel off (for such measurements).
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>

#include "ir/epilogue.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/onednn_util.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kP = vec::kGemvPanel;

// y[n] = act(alpha * sum_k a[k] * B[k, n] + bias[n] + residual[n]), B given as `b` with
// element (k, n) at b[k * sk + n * sn].
struct GemvProblem {
  int64_t k = 0, n = 0;
  const float* b = nullptr;
  int64_t sk = 0, sn = 0;
  float alpha = 1.f;
  std::vector<float> bias;  // n values (already scaled by beta), or empty
  int residual_input = -1;  // run-time input holding n values, or -1
  ActivationSpec act;
};

class GemvKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const float* a = static_cast<const float*>(in[0]);
    const float* residual = residual_input_ >= 0 ? static_cast<const float*>(in[residual_input_]) : nullptr;
    float* y = static_cast<float*>(out[0]);
    const vec::Table& t = vec::Kernels();
    const int64_t panels = (n_ + kP - 1) / kP;
    ParallelFor(threads_, panels, 1, [&](int64_t begin, int64_t end) {
      alignas(64) float acc[kP];
      for (int64_t p = begin; p < end; ++p) {
        t.gemv_panel(a, panels_.data() + p * k_ * kP, k_, acc);
        const int64_t j0 = p * kP, width = std::min(kP, n_ - j0);
        for (int64_t j = 0; j < width; ++j) {
          float v = acc[j];
          if (!bias_.empty()) v += bias_[j0 + j];
          if (residual) v += residual[j0 + j];
          y[j0 + j] = v;
        }
        if (act_.kind != vec::Unary::kIdentity) t.unary(act_, y + j0, y + j0, width);
      }
    });
    return Status::Ok();
  }
  std::string Describe() const override { return describe_; }

  int64_t k_ = 0, n_ = 0;
  std::vector<float> panels_;  // ceil(n / kP) panels of k x kP, zero-padded columns
  std::vector<float> bias_;
  int residual_input_ = -1;
  vec::UnaryFn act_;
  int threads_ = 1;
  std::string describe_;
};

KernelOr Build(const KernelRequest& req, GemvProblem p) {
  // Few columns would read mostly the zero padding of one panel.
  if (p.n < kP / 2) return Refuse(req, "{} output columns; the panel form pays from {}", p.n, kP / 2);
  auto kernel = std::make_unique<GemvKernel>();
  kernel->k_ = p.k;
  kernel->n_ = p.n;
  const int64_t panels = (p.n + kP - 1) / kP;
  kernel->panels_.assign(static_cast<size_t>(panels * p.k * kP), 0.f);
  for (int64_t c = 0; c < p.n; ++c) {
    float* dst = kernel->panels_.data() + (c / kP) * p.k * kP + c % kP;
    for (int64_t r = 0; r < p.k; ++r) dst[r * kP] = p.alpha * p.b[r * p.sk + c * p.sn];
  }
  kernel->bias_ = std::move(p.bias);
  kernel->residual_input_ = p.residual_input;
  kernel->act_ = ToUnaryFn(p.act);
  kernel->threads_ = std::max(1, req.threads);
  std::vector<std::string> epilogue;
  if (!kernel->bias_.empty()) epilogue.emplace_back("bias");
  if (p.residual_input >= 0) epilogue.emplace_back("add");
  if (p.act.kind != Activation::kNone) epilogue.push_back(ActivationWord(p.act));
  kernel->describe_ = fmt::format("own gemv {} f32 {}x{} in {} panels", vec::Kernels().isa, p.k, p.n, panels);
  if (!epilogue.empty()) kernel->describe_ += fmt::format(" (+ {})", fmt::join(epilogue, ", "));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

// `d` holds exactly n values in the order of a row of n: dense dims [..., n], leading 1s.
bool IsRowOf(const TensorDesc& d, int64_t n) {
  return NumElements(d.dims) == n && IsDense(d) && !d.dims.empty() && d.dims.back() == n;
}

// The bias input `i` as n values (scaled by `beta`); an error when it is not a constant
// per-column or single value.
Status ReadBias(const KernelRequest& req, size_t i, int64_t n, float beta, std::vector<float>* out) {
  const TensorDesc* bias = InputOrNull(req, i);
  if (!bias) return Status::Ok();
  const Tensor* c = ConstantOrNull(req, i);
  if (!c) return Refuse(req, "the bias is not constant");
  const int64_t count = c->numel();
  if (count != 1 && !(count == n && !bias->dims.empty() && bias->dims.back() == n)) {
    return Refuse(req, "the bias is not one value per output column");
  }
  out->resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) (*out)[j] = beta * c->data<float>()[count == 1 ? 0 : j];
  return Status::Ok();
}

Status ReadResidual(const KernelRequest& req, size_t i, int64_t n, GemvProblem* p) {
  const TensorDesc* r = InputOrNull(req, i);
  if (!r) return Status::Ok();
  if (!IsRowOf(*r, n)) return Refuse(req, "the residual is not one value per output column");
  p->residual_input = static_cast<int>(i);
  return Status::Ok();
}

KernelOr FromMatMul(const KernelRequest& req) {
  if (req.inputs.size() < 2 || !Present(req.inputs[0]) || !Present(req.inputs[1])) return Refuse(req, "A or B is absent");
  const Attributes& attrs = *req.attrs;
  const bool trans_b = req.op != OpKind::kMatMul && attrs.GetInt("transB", 0) != 0;
  const TensorDesc& a = req.inputs[0];
  const TensorDesc& b = req.inputs[1];
  const Tensor* b_const = ConstantOrNull(req, 1);
  if (!b_const || b.dims.size() != 2) return Refuse(req, "B is not a constant matrix");
  GemvProblem p;
  p.k = b.dims[trans_b ? 1 : 0];
  p.n = b.dims[trans_b ? 0 : 1];
  p.b = b_const->data<float>();
  p.sk = trans_b ? 1 : p.n;
  p.sn = trans_b ? p.k : 1;
  // Y has n values, so A (whatever its batch dims) is one row of k values, in order when dense.
  if (NumElements(a.dims) != p.k || !IsDense(a)) return Refuse(req, "A is not a single dense row");
  if (NumElements(req.outputs[0].dims) != p.n || !IsDense(req.outputs[0])) return Refuse(req, "Y is not a single row");
  p.alpha = req.op == OpKind::kMatMul ? 1.f : attrs.GetFloat("alpha", 1.f);
  const float beta = req.op == OpKind::kGemm ? attrs.GetFloat("beta", 1.f) : 1.f;
  if (req.op != OpKind::kMatMul) RETURN_IF_ERROR(ReadBias(req, 2, p.n, beta, &p.bias));
  if (req.op == OpKind::kFusedMatMul) {
    RETURN_IF_ERROR(ReadResidual(req, 3, p.n, &p));
    ASSIGN_OR_RETURN(p.act, ReadActivation(attrs));
  }
  return Build(req, std::move(p));
}

KernelOr FromConv(const KernelRequest& req) {
  if (req.inputs.size() < 2 || !Present(req.inputs[0]) || !Present(req.inputs[1])) return Refuse(req, "X or W is absent");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& w = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  const Tensor* w_const = ConstantOrNull(req, 1);
  if (!w_const || w.dims.size() != x.dims.size() || y.dims.size() != x.dims.size() || x.dims.size() < 3) {
    return Refuse(req, "needs a constant W");
  }
  if (x.dims[0] != 1 || req.attrs->GetInt("group", 1) != 1) return Refuse(req, "not one image, ungrouped");
  for (size_t i = 2; i < x.dims.size(); ++i) {
    if (x.dims[i] != 1 || w.dims[i] != 1 || y.dims[i] != 1) return Refuse(req, "not a 1x1 convolution of one pixel");
  }
  for (int64_t pad : req.attrs->GetInts("pads", {})) {
    if (pad != 0) return Refuse(req, "padded");
  }
  const std::string auto_pad = req.attrs->GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return Refuse(req, "auto_pad {}", auto_pad);
  // One pixel: X, Y (and the residual) hold their channels in order in any layout.
  if (!IsDense(x) || !IsDense(y)) return Refuse(req, "X or Y is strided");
  GemvProblem p;
  p.k = x.dims[1];
  p.n = y.dims[1];
  if (w.dims[0] != p.n || w.dims[1] != p.k) return Refuse(req, "W does not match X and Y");
  p.b = w_const->data<float>();  // W [n, k]: element (k, n) at n * k_total + k
  p.sk = 1;
  p.sn = p.k;
  RETURN_IF_ERROR(ReadBias(req, 2, p.n, 1.f, &p.bias));
  if (req.op == OpKind::kFusedConv) {
    const TensorDesc* r = InputOrNull(req, 3);
    if (r && (NumElements(r->dims) != p.n || !IsDense(*r))) return Refuse(req, "the residual is not one pixel");
    if (r) p.residual_input = 3;
    ASSIGN_OR_RETURN(p.act, ReadActivation(*req.attrs));
  }
  return Build(req, std::move(p));
}

}  // namespace

KernelOr CreateGemvKernel(const KernelRequest& req) {
  if (!req.tuning.gemv) return Refuse(req, "turned off (KernelTuning::gemv)");
  RETURN_IF_ERROR(ExpectF32(req));
  switch (req.op) {
    case OpKind::kMatMul: case OpKind::kGemm: case OpKind::kFusedMatMul:
      RETURN_IF_ERROR(ExpectLayouts(req, Layout::kRowMajor));
      return FromMatMul(req);
    case OpKind::kConv: case OpKind::kFusedConv:
      return FromConv(req);
    default:
      return Refuse(req, "not a matrix product");
  }
}

}  // namespace edgec::cpu
