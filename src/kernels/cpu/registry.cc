// Fast CPU kernel registry: which family serves each op, the layouts each accepts, and the
// request checks the families share.

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "kernels/cpu/common.h"

namespace edgec::cpu {

KernelOr CreateGatherKernel(const KernelRequest& req);  // gather.cc
KernelOr CreateConvTransposePatchKernel(const KernelRequest& req);  // conv_transpose_patch.cc

namespace {

// Strided (non-dense) buffers: the binary loops and the copies read and write any strides;
// matmul and attention read strided operands; every other kernel needs dense buffers.
Status ExpectSupportedStrides(const KernelRequest& req) {
  if (HasTrait(req.op, op_trait::kBroadcast)) return Status::Ok();
  switch (req.op) {
    case OpKind::kTranspose: case OpKind::kConcat: case OpKind::kSplit: case OpKind::kSlice:
    case OpKind::kChannelShuffle:
      return Status::Ok();
    case OpKind::kMatMul: case OpKind::kGemm: case OpKind::kFusedMatMul:
      return ExpectDense(req, {0, 1});
    case OpKind::kAttention:  // the output may be written transposed (a strided view)
      return ExpectDense(req, {0, 1, 2}, true);
    default:
      return ExpectDense(req);
  }
}

// Multiply-adds of a convolution, matrix product or recurrent layer (0 for other ops or
// unknown sizes).
int64_t ProductMacs(const KernelRequest& req) {
  if (req.inputs.size() < 2 || req.outputs.empty()) return 0;
  const TensorDesc &a = req.inputs[0], &w = req.inputs[1], &y = req.outputs[0];
  if (a.dims.empty() || w.dims.empty() || y.dims.empty()) return 0;
  switch (req.op) {
    case OpKind::kConv: case OpKind::kFusedConv:  // per output: I/g · kernel taps
      return w.dims[0] > 0 ? NumElements(y.dims) * (NumElements(w.dims) / w.dims[0]) : 0;
    case OpKind::kConvTranspose:  // per input: O/g · kernel taps
      return w.dims[0] > 0 ? NumElements(a.dims) * (NumElements(w.dims) / w.dims[0]) : 0;
    case OpKind::kMatMul: case OpKind::kFusedMatMul:
      return NumElements(y.dims) * a.dims.back();
    case OpKind::kGemm:
      return NumElements(y.dims) * (req.attrs && req.attrs->GetInt("transA", 0) ? a.dims.front() : a.dims.back());
    case OpKind::kRNN: case OpKind::kGRU: case OpKind::kLSTM: {  // X · Wᵀ and H · Rᵀ for every step
      if (a.dims.size() != 3 || w.dims.size() != 3 || req.inputs.size() < 3 || req.inputs[2].dims.size() != 3) return 0;
      const int64_t hidden = req.inputs[2].dims[2];
      return a.dims[0] * a.dims[1] * w.dims[0] * w.dims[1] * (a.dims[2] + hidden);
    }
    default:
      return 0;
  }
}

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelRequest& request) {
  // A convolution, matrix product or recurrent layer of fewer than tuning.min_parallel_macs
  // multiply-adds runs on the calling thread: waking the other threads for it costs more
  // than its work (tests/kernels/cpu/onednn_test.cc SmallProductsRunOnOneThread,
  // recurrent_test.cc SmallLayersRunOnOneThread).
  KernelRequest one_thread;
  const bool small = request.threads > 1 && ProductMacs(request) > 0 && ProductMacs(request) < request.tuning.min_parallel_macs;
  if (small) {
    one_thread = request;
    one_thread.threads = 1;
  }
  const KernelRequest& req = small ? one_thread : request;
  RETURN_IF_ERROR(ExpectKnownLayouts(req));
  RETURN_IF_ERROR(ExpectSupportedStrides(req));
  // Elementwise ops (ops.def traits): the unary and binary families take those the vector
  // layer computes and refuse the others with the reason.
  // Casts and comparisons of integers and bools (a loop counter, a branch condition).
  if (req.op == OpKind::kCast && req.inputs.size() == 1 && req.outputs.size() == 1 &&
      (req.inputs[0].dtype != DType::kF32 || req.outputs[0].dtype != DType::kF32)) {
    return CreateCastKernel(req);
  }
  if (req.op == OpKind::kEqual || req.op == OpKind::kLess || req.op == OpKind::kGreater ||
      req.op == OpKind::kLessOrEqual || req.op == OpKind::kGreaterOrEqual) {
    return CreateCompareKernel(req);
  }
  // Integer Add/Sub/Mul and Shape (a loop body's counter, a sequence map's shapes).
  if ((req.op == OpKind::kAdd || req.op == OpKind::kSub || req.op == OpKind::kMul) && req.outputs.size() == 1 &&
      (req.outputs[0].dtype == DType::kI64 || req.outputs[0].dtype == DType::kI32)) {
    return CreateIntArithKernel(req);
  }
  if (req.op == OpKind::kShape) return CreateShapeKernel(req);
  if (req.op == OpKind::kNot && !req.inputs.empty() && req.inputs[0].dtype == DType::kBool) return CreateNotKernel(req);
  if (HasTrait(req.op, op_trait::kUnary)) return CreateUnaryKernel(req);
  if (HasTrait(req.op, op_trait::kBroadcast)) return CreateBinaryKernel(req);
  switch (req.op) {
    case OpKind::kSoftmax: case OpKind::kLogSoftmax:
      return CreateSoftmaxKernel(req);
    case OpKind::kLayerNormalization: case OpKind::kRmsNormalization: case OpKind::kInstanceNormalization:
      return CreateNormKernel(req);
    case OpKind::kBatchNormalization:
      return CreateBatchNormKernel(req);
    case OpKind::kRNN: case OpKind::kGRU: case OpKind::kLSTM:
      return CreateRecurrentKernel(req);
    case OpKind::kAttention:
      return CreateAttentionKernel(req);
    case OpKind::kResize:
      return CreateResizeKernel(req);
    case OpKind::kConcat: case OpKind::kSplit: case OpKind::kSlice: case OpKind::kTranspose:
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kChannelShuffle: case OpKind::kDepthToSpace:
      return CreateMovementKernel(req);
    case OpKind::kConvTranspose: {
      KernelOr own = CreateConvTransposePatchKernel(req);
      if (own.ok()) return own;
      return CreateConvKernel(req);
    }
    case OpKind::kConv: case OpKind::kFusedConv:
      return CreateConvKernel(req);
    case OpKind::kMatMul: case OpKind::kGemm: case OpKind::kFusedMatMul:
      return CreateMatMulKernel(req);
    case OpKind::kMaxPool: {
      KernelOr own = CreateMaxPoolNhwcKernel(req);
      if (own.ok()) return own;
      return CreatePoolKernel(req);
    }
    case OpKind::kGlobalAveragePool: {
      KernelOr own = CreateGlobalAveragePoolNhwcKernel(req);
      if (own.ok()) return own;
      return CreatePoolKernel(req);
    }
    case OpKind::kAveragePool: case OpKind::kGlobalMaxPool:
      return CreatePoolKernel(req);
    case OpKind::kReduceMean: case OpKind::kReduceSum: case OpKind::kReduceMax: case OpKind::kReduceMin:
    case OpKind::kReduceProd: case OpKind::kReduceL1: case OpKind::kReduceL2: case OpKind::kReduceSumSquare:
      return CreateReduceKernel(req);
    case OpKind::kQLinearConv:
      return CreateInt8ConvKernel(req);
    case OpKind::kGather:
      return CreateGatherKernel(req);
    case OpKind::kQLinearMatMul: {
      KernelOr dnnl = CreateInt8MatMulKernel(req);
      if (dnnl.ok()) return dnnl;
      return CreateInt8ActMatMulKernel(req);  // B an activation, or a B oneDNN's kernel refused
    }
    case OpKind::kQuantizeLinear: case OpKind::kDequantizeLinear:
      return CreateQuantizeKernel(req);
    case OpKind::kQuantizedLookup:
      return CreateLookupKernel(req);
    case OpKind::kQLinearAdd: case OpKind::kQLinearMul:
      return CreateQuantizedBinaryKernel(req);
    case OpKind::kQLinearGlobalAveragePool:
      return CreateQuantizedGlobalAveragePoolKernel(req);
    case OpKind::kQLinearAveragePool:
      return CreateQuantizedAveragePoolKernel(req);
    default:
      return Refuse(req, "no fast CPU kernel for {}", OpName(req.op));
  }
}

// --- request checks shared by the families ---

Status ExpectF32(const KernelRequest& req) {
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    if (Present(req.inputs[i]) && req.inputs[i].dtype != DType::kF32) {
      return Refuse(req, "input {} is {}; this fast kernel is f32 only", i,
                    DTypeName(req.inputs[i].dtype));
    }
  }
  for (size_t i = 0; i < req.outputs.size(); ++i) {
    if (Present(req.outputs[i]) && req.outputs[i].dtype != DType::kF32) {
      return Refuse(req, "output {} is {}; this fast kernel is f32 only", i,
                    DTypeName(req.outputs[i].dtype));
    }
  }
  return Status::Ok();
}

Status ExpectF32(const KernelRequest& req, std::initializer_list<int> inputs) {
  for (int i : inputs) {
    const TensorDesc* d = InputOrNull(req, i);
    if (d && d->dtype != DType::kF32) {
      return Refuse(req, "input {} is {}; this fast kernel is f32 only", i, DTypeName(d->dtype));
    }
  }
  return Status::Ok();
}

Status ExpectLayouts(const KernelRequest& req, Layout layout) {
  auto check = [&](const TensorDesc& d, const char* what, size_t i) -> Status {
    if (!Present(d)) return Status::Ok();
    const Layout want = d.dims.size() == 4 ? layout : Layout::kRowMajor;
    if (d.layout != want) {
      return Refuse(req, "{} {} is {}, expected {}", what, i, LayoutWord(d.layout), LayoutWord(want));
    }
    return Status::Ok();
  };
  for (size_t i = 0; i < req.inputs.size(); ++i) RETURN_IF_ERROR(check(req.inputs[i], "input", i));
  for (size_t i = 0; i < req.outputs.size(); ++i) RETURN_IF_ERROR(check(req.outputs[i], "output", i));
  return Status::Ok();
}

Status ExpectKnownLayouts(const KernelRequest& req) {
  auto check = [&](const TensorDesc& d, const char* what, size_t i) -> Status {
    if (!Present(d) || d.layout == Layout::kRowMajor) return Status::Ok();
    if (d.layout == Layout::kNHWC && d.dims.size() == 4) return Status::Ok();
    return Refuse(req, "{} {} has layout {} on {} dims; fast kernels take row-major or 4-d NHWC",
                  what, i, LayoutName(d.layout), d.dims.size());
  };
  for (size_t i = 0; i < req.inputs.size(); ++i) RETURN_IF_ERROR(check(req.inputs[i], "input", i));
  for (size_t i = 0; i < req.outputs.size(); ++i) RETURN_IF_ERROR(check(req.outputs[i], "output", i));
  return Status::Ok();
}

namespace {

std::vector<int64_t> DenseStrides(const TensorDesc& d) {
  std::vector<int64_t> s = ContiguousStrides(d.dims);
  if (d.layout == Layout::kNHWC && d.dims.size() == 4) {
    const int64_t c = d.dims[1], h = d.dims[2], w = d.dims[3];
    s = {h * w * c, 1, w * c, c};
  }
  return s;
}

}  // namespace

std::vector<int64_t> LogicalStrides(const TensorDesc& d) {
  return d.strides.size() == d.dims.size() && !d.strides.empty() ? d.strides : DenseStrides(d);
}

bool IsDense(const TensorDesc& d) {
  if (d.strides.empty()) return true;
  const std::vector<int64_t> dense = DenseStrides(d);
  for (size_t i = 0; i < d.dims.size(); ++i) {
    if (d.dims[i] != 1 && (i >= d.strides.size() || d.strides[i] != dense[i])) return false;
  }
  return true;
}

std::vector<int> MemoryOrder(const TensorDesc& d) {
  std::vector<int> order(d.dims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  if (!IsDense(d)) {
    const std::vector<int64_t> s = LogicalStrides(d);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return s[a] > s[b]; });
    return order;
  }
  if (d.layout == Layout::kNHWC && d.dims.size() == 4) return {0, 2, 3, 1};
  return order;
}

Status ExpectDense(const KernelRequest& req, std::initializer_list<int> strided_ok, bool strided_outputs_ok) {
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    if (!Present(req.inputs[i]) || IsDense(req.inputs[i])) continue;
    if (std::find(strided_ok.begin(), strided_ok.end(), static_cast<int>(i)) != strided_ok.end()) continue;
    return Refuse(req, "input {} is a strided view {}; this kernel reads dense buffers", i,
                  DimsToString(req.inputs[i].strides));
  }
  for (size_t i = 0; i < req.outputs.size() && !strided_outputs_ok; ++i) {
    if (Present(req.outputs[i]) && !IsDense(req.outputs[i])) {
      return Refuse(req, "output {} is strided {}; this kernel writes dense buffers", i,
                    DimsToString(req.outputs[i].strides));
    }
  }
  return Status::Ok();
}

std::string LayoutWord(Layout l) { return l == Layout::kNHWC ? "nhwc" : std::string(LayoutName(l)); }

std::pair<double, double> TimeTwoKernels(Kernel& a, Kernel& b, const std::vector<size_t>& in_bytes,
                                         const std::vector<size_t>& out_bytes) {
  auto buffer = [](size_t bytes) { return Tensor(DType::kU8, {static_cast<int64_t>(bytes)}); };  // zero-filled
  std::vector<Tensor> keep;
  std::vector<const void*> in;
  std::vector<void*> out;
  for (size_t n : in_bytes) in.push_back(keep.emplace_back(buffer(n)).raw());
  for (size_t n : out_bytes) out.push_back(keep.emplace_back(buffer(n)).raw());
  Tensor scratch = buffer(std::max(a.scratch_bytes(), b.scratch_bytes()));
  // One untimed run each (caches, first-touch pages), then the best of alternated runs:
  // VM speed drifts over seconds, so the two are measured side by side, not one after the other.
  double best[2] = {1e30, 1e30};
  Kernel* k[2] = {&a, &b};
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 2; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (!k[i]->Run(in, out, scratch.raw()).ok()) return {i == 0 ? 1e30 : 0.0, i == 0 ? 0.0 : 1e30};
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (round > 0) best[i] = std::min(best[i], ms);
    }
  }
  return {best[0], best[1]};
}

}  // namespace edgec::cpu
