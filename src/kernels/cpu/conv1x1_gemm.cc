// 1x1 convolutions on row-major (NCHW) activations as one GEMM per image: Y[n] = W · X[n]
// with W [M, C] and X[n] read as [C, H·W] where they lie, so no reorders to and from
// oneDNN's blocked format (which cost more than the GEMM itself on small channel counts).
// The conv's epilogue maps onto the matmul's: bias per output channel is a per-row bias, the
// residual a full-size addend, the activation the same. Used from 256 pixels per image up
// (below, the GEMM's N is too narrow and the blocked convolution wins; the measurements are
// in docs/cpu_runtime.md). KernelTuning::conv1x1_gemm_min_pixels moves the threshold.
#include <cstdlib>
#include <optional>

#include "ir/epilogue.h"
#include "kernels/cpu/common.h"

namespace edgec::cpu {

namespace {

class Conv1x1GemmKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    // The matmul's operands: A = W (kept here), B = X, bias, residual.
    const void* args[4] = {weights_.data(), in[0], in.size() > 2 ? in[2] : nullptr, in.size() > 3 ? in[3] : nullptr};
    return matmul_->Run(std::span<const void* const>(args, 4), out, scratch);
  }
  size_t scratch_bytes() const override { return matmul_->scratch_bytes(); }
  std::string Describe() const override { return "1x1 conv as gemm: " + matmul_->Describe(); }

  std::vector<float> weights_;
  std::unique_ptr<Kernel> matmul_;
};

}  // namespace

KernelOr CreateConv1x1GemmKernel(const KernelRequest& req) {
  if (req.op != OpKind::kConv && req.op != OpKind::kFusedConv) return Refuse(req, "not a convolution");
  if (req.inputs.size() < 2 || !Present(req.inputs[0]) || !Present(req.inputs[1])) return Refuse(req, "X or W absent");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& w = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  const Tensor* w_const = ConstantOrNull(req, 1);
  if (!w_const || x.dtype != DType::kF32 || w.dtype != DType::kF32 || y.dtype != DType::kF32) {
    return Refuse(req, "needs f32 and a constant W");
  }
  if (x.dims.size() < 3 || w.dims.size() != x.dims.size() || y.dims.size() != x.dims.size()) {
    return Refuse(req, "needs 1 to 3 spatial dims");
  }
  if (x.layout != Layout::kRowMajor || y.layout != Layout::kRowMajor || !IsDense(x) || !IsDense(y)) {
    return Refuse(req, "needs dense row-major X and Y");
  }
  if (req.attrs->GetInt("group", 1) != 1) return Refuse(req, "grouped");
  for (size_t i = 2; i < x.dims.size(); ++i) {
    if (w.dims[i] != 1 || y.dims[i] != x.dims[i]) return Refuse(req, "not a 1x1 stride-1 unpadded convolution");
  }
  const std::vector<int64_t> strides = req.attrs->GetInts("strides", {});
  for (int64_t s : strides) {
    if (s != 1) return Refuse(req, "strided");
  }
  const TensorDesc* bias = InputOrNull(req, 2);
  const TensorDesc* residual = req.op == OpKind::kFusedConv ? InputOrNull(req, 3) : nullptr;
  if (residual && (residual->dims != y.dims || residual->layout != Layout::kRowMajor || !IsDense(*residual))) {
    return Refuse(req, "the residual is not a dense row-major tensor of Y's shape");
  }
  const int64_t n = x.dims[0], c = x.dims[1], m = y.dims[1];
  const int64_t pixels = NumElements(x.dims) / std::max<int64_t>(n * c, 1);
  if (w.dims[0] != m || w.dims[1] != c) return Refuse(req, "W does not match X and Y");
  // Few pixels make a narrow GEMM (N = pixels) that runs slower than the blocked
  // convolution, whose reorders are then cheap.
  const int64_t min_pixels = req.tuning.conv1x1_gemm_min_pixels;
  if (pixels < min_pixels) return Refuse(req, "{} pixels; the GEMM form pays from {}", pixels, min_pixels);

  Attributes attrs;
  if (req.op == OpKind::kFusedConv) {
    auto act = ReadActivation(*req.attrs);
    if (!act.ok()) return act.status().WithContext(req.label);
    WriteActivation(*act, attrs);
  }
  auto kernel = std::make_unique<Conv1x1GemmKernel>();
  kernel->weights_.assign(w_const->data<float>(), w_const->data<float>() + w_const->numel());
  KernelRequest mm;
  mm.op = OpKind::kFusedMatMul;
  mm.attrs = &attrs;
  mm.label = req.label;
  mm.threads = req.threads;
  mm.inputs = {TensorDesc{DType::kF32, {m, c}}, TensorDesc{DType::kF32, {n, c, pixels}}};
  mm.constants = {nullptr, nullptr};  // W is read from the kernel's own copy at run time
  mm.inputs.push_back(bias ? TensorDesc{DType::kF32, {m, 1}} : TensorDesc{DType::kUndefined, {}});
  const Tensor* bias_const = ConstantOrNull(req, 2);
  std::optional<Tensor> bias_view;
  if (bias && bias_const) bias_view = Tensor::View(DType::kF32, {m, 1}, const_cast<void*>(bias_const->raw()));
  mm.constants.push_back(bias_view ? &*bias_view : nullptr);
  if (residual) {
    mm.inputs.push_back(TensorDesc{DType::kF32, {n, m, pixels}});
    mm.constants.push_back(nullptr);
  }
  mm.outputs = {TensorDesc{DType::kF32, {n, m, pixels}}};
  ASSIGN_OR_RETURN(kernel->matmul_, CreateMatMulKernel(mm));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace edgec::cpu
