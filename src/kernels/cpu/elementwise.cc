// Own vectorized elementwise kernels (vec.h rows, split over threads): unary math and
// activations, Gelu, and the broadcasting binary ops with FusedAdd (add + activation).
// Elementwise ops are layout-agnostic: any layout works when input and output share it;
// the binary ops also mix layouts (each input is read through its own strides).
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"

namespace edgec::cpu {

namespace {

std::string_view UnaryName(vec::Unary u) {
  switch (u) {
    case vec::Unary::kIdentity: return "identity";
    case vec::Unary::kRelu: return "relu";
    case vec::Unary::kLeakyRelu: return "leaky_relu";
    case vec::Unary::kClip: return "clip";
    case vec::Unary::kHardSigmoid: return "hard_sigmoid";
    case vec::Unary::kHardSwish: return "hard_swish";
    case vec::Unary::kSigmoid: return "sigmoid";
    case vec::Unary::kTanh: return "tanh";
    case vec::Unary::kSilu: return "silu";
    case vec::Unary::kGelu: return "gelu";
    case vec::Unary::kGeluTanh: return "gelu_tanh";
    case vec::Unary::kErf: return "erf";
    case vec::Unary::kExp: return "exp";
    case vec::Unary::kLog: return "log";
    case vec::Unary::kSqrt: return "sqrt";
    case vec::Unary::kReciprocal: return "reciprocal";
    case vec::Unary::kNeg: return "neg";
    case vec::Unary::kAbs: return "abs";
    case vec::Unary::kFloor: return "floor";
    case vec::Unary::kCeil: return "ceil";
    case vec::Unary::kSoftplus: return "softplus";
    case vec::Unary::kSoftsign: return "softsign";
  }
  return "?";
}

// --- unary ---

class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(vec::UnaryFn f, int64_t n, int threads) : f_(f), n_(n), threads_(threads) {}
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    RunUnary(f_, static_cast<const float*>(in[0]), static_cast<float*>(out[0]), n_, threads_);
    return Status::Ok();
  }
  std::string Describe() const override {
    return fmt::format("own {} {} f32", UnaryName(f_.kind), vec::Kernels().isa);
  }

 private:
  vec::UnaryFn f_;
  int64_t n_;
  int threads_;
};

// Identity of any dtype: a copy (nothing when the buffers are the same).
class CopyKernel final : public Kernel {
 public:
  CopyKernel(size_t bytes, int threads) : bytes_(bytes), threads_(threads) {}
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* src = static_cast<const std::byte*>(in[0]);
    auto* dst = static_cast<std::byte*>(out[0]);
    if (src == dst) return Status::Ok();
    ParallelFor(threads_, static_cast<int64_t>(bytes_), 1 << 20, [&](int64_t b, int64_t e) {
      std::memcpy(dst + b, src + b, static_cast<size_t>(e - b));
    });
    return Status::Ok();
  }
  std::string Describe() const override { return "own copy"; }

 private:
  size_t bytes_;
  int threads_;
};

// A scalar attribute-like input (Clip's min/max): its value when constant.
StatusOr<float> ConstantScalar(const KernelRequest& req, int i, float absent) {
  if (!InputOrNull(req, i)) return absent;
  const Tensor* t = ConstantOrNull(req, i);
  if (!t) return Refuse(req, "input {} is not a constant; the fast kernel bakes it in", i);
  if (t->numel() != 1) return Refuse(req, "input {} has {} elements, expected 1", i, t->numel());
  return static_cast<float>(t->ToDoubleVector()[0]);
}

StatusOr<vec::UnaryFn> UnaryFnOf(const KernelRequest& req) {
  using vec::Unary;
  const Attributes& a = *req.attrs;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (req.op) {
    case OpKind::kRelu: return vec::UnaryFn{Unary::kRelu};
    case OpKind::kLeakyRelu: return vec::UnaryFn{Unary::kLeakyRelu, a.GetFloat("alpha", 0.01f)};
    case OpKind::kClip: {
      ASSIGN_OR_RETURN(float lo, ConstantScalar(req, 1, -kInf));
      ASSIGN_OR_RETURN(float hi, ConstantScalar(req, 2, kInf));
      return vec::UnaryFn{Unary::kClip, lo, hi};
    }
    case OpKind::kSigmoid: return vec::UnaryFn{Unary::kSigmoid};
    case OpKind::kHardSigmoid:
      return vec::UnaryFn{Unary::kHardSigmoid, a.GetFloat("alpha", 0.2f), a.GetFloat("beta", 0.5f)};
    case OpKind::kHardSwish: return vec::UnaryFn{Unary::kHardSwish};
    case OpKind::kTanh: return vec::UnaryFn{Unary::kTanh};
    case OpKind::kErf: return vec::UnaryFn{Unary::kErf};
    case OpKind::kExp: return vec::UnaryFn{Unary::kExp};
    case OpKind::kLog: return vec::UnaryFn{Unary::kLog};
    case OpKind::kSqrt: return vec::UnaryFn{Unary::kSqrt};
    case OpKind::kReciprocal: return vec::UnaryFn{Unary::kReciprocal};
    case OpKind::kNeg: return vec::UnaryFn{Unary::kNeg};
    case OpKind::kAbs: return vec::UnaryFn{Unary::kAbs};
    case OpKind::kFloor: return vec::UnaryFn{Unary::kFloor};
    case OpKind::kCeil: return vec::UnaryFn{Unary::kCeil};
    case OpKind::kSoftplus: return vec::UnaryFn{Unary::kSoftplus};
    case OpKind::kSoftsign: return vec::UnaryFn{Unary::kSoftsign};
    case OpKind::kGelu: {
      const std::string approx = a.GetString("approximate", "none");
      if (approx == "none") return vec::UnaryFn{Unary::kGelu};
      if (approx == "tanh") return vec::UnaryFn{Unary::kGeluTanh};
      return Refuse(req, "approximate '{}' is not 'none' or 'tanh'", approx);
    }
    default: return Refuse(req, "{} is not a unary op of this kernel", OpName(req.op));
  }
}

// Input 0 and output 0 hold the same elements in the same order.
Status ExpectSamePlacement(const KernelRequest& req) {
  if (req.inputs.empty() || req.outputs.empty() || !Present(req.inputs[0])) {
    return Refuse(req, "expected an input and an output");
  }
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (NumElements(x.dims) != NumElements(y.dims)) {
    return Refuse(req, "input {} and output {} differ in size", DimsToString(x.dims), DimsToString(y.dims));
  }
  if (x.layout != y.layout && x.dims.size() == 4) {
    return Refuse(req, "input is {} but output is {}; elementwise kernels keep the layout",
                  LayoutWord(x.layout), LayoutWord(y.layout));
  }
  return Status::Ok();
}

// --- binary ---

enum class BinaryKind { kTable, kPow, kPowSquare };

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(StridedLoop loop, BinaryKind kind, vec::Binary op, vec::UnaryFn act,
               std::string name, int threads)
      : loop_(std::move(loop)), kind_(kind), op_(op), act_(act), name_(std::move(name)),
        threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* a = static_cast<const float*>(in[0]);
    const auto* b = static_cast<const float*>(in[1]);
    auto* y = static_cast<float*>(out[0]);
    switch (kind_) {
      case BinaryKind::kTable: RunBinaryLoop(loop_, op_, act_, a, b, y, threads_); break;
      case BinaryKind::kPow: RunPowLoop(loop_, a, b, y, threads_); break;
      case BinaryKind::kPowSquare: RunBinaryLoop(loop_, vec::Binary::kMul, act_, a, a, y, threads_); break;
    }
    return Status::Ok();
  }
  std::string Describe() const override {
    std::string s = fmt::format("own {} {} f32", name_, vec::Kernels().isa);
    if (act_.kind != vec::Unary::kIdentity) s += fmt::format(" (+{})", UnaryName(act_.kind));
    return s;
  }

 private:
  StridedLoop loop_;
  BinaryKind kind_;
  vec::Binary op_;
  vec::UnaryFn act_;
  std::string name_;
  int threads_;
};

}  // namespace

KernelOr CreateUnaryKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectSamePlacement(req));
  const TensorDesc& x = req.inputs[0];
  const int threads = std::max(1, req.threads);
  if (req.op == OpKind::kIdentity) {
    if (x.dtype != req.outputs[0].dtype) return Refuse(req, "input and output dtypes differ");
    return std::unique_ptr<Kernel>(
        new CopyKernel(static_cast<size_t>(NumElements(x.dims)) * DTypeSize(x.dtype), threads));
  }
  RETURN_IF_ERROR(ExpectF32(req, {0}));
  if (req.outputs[0].dtype != DType::kF32) return Refuse(req, "output is not f32");
  ASSIGN_OR_RETURN(vec::UnaryFn f, UnaryFnOf(req));
  return std::unique_ptr<Kernel>(new UnaryKernel(f, NumElements(x.dims), threads));
}

KernelOr CreateBinaryKernel(const KernelRequest& req) {
  if (NumPresent(req.inputs) != 2 || !Present(req.inputs[0]) || !Present(req.inputs[1])) {
    return Refuse(req, "{} with {} inputs; the fast kernel takes exactly 2", OpName(req.op),
                  NumPresent(req.inputs));
  }
  if (req.outputs.empty() || req.outputs[0].dtype != DType::kF32) {
    return Refuse(req, "output is not f32; this fast kernel is f32 only");
  }
  const TensorDesc& a = req.inputs[0];
  const TensorDesc& b = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  for (const TensorDesc* d : {&a, &b}) {
    if (d->dims.size() > y.dims.size()) return Refuse(req, "an input has more dims than the output");
  }
  const int threads = std::max(1, req.threads);
  vec::UnaryFn act;
  BinaryKind kind = BinaryKind::kTable;
  vec::Binary op = vec::Binary::kAdd;
  std::string name;
  switch (req.op) {
    case OpKind::kAdd: op = vec::Binary::kAdd; name = "add"; break;
    case OpKind::kSub: op = vec::Binary::kSub; name = "sub"; break;
    case OpKind::kMul: op = vec::Binary::kMul; name = "mul"; break;
    case OpKind::kDiv: op = vec::Binary::kDiv; name = "div"; break;
    case OpKind::kMax: op = vec::Binary::kMax; name = "max"; break;
    case OpKind::kMin: op = vec::Binary::kMin; name = "min"; break;
    case OpKind::kPRelu: op = vec::Binary::kPRelu; name = "prelu"; break;
    case OpKind::kFusedAdd: {
      auto spec = ReadActivation(*req.attrs);
      if (!spec.ok()) return spec.status().WithContext(req.label);
      act = ToUnaryFn(*spec);
      op = vec::Binary::kAdd;
      name = "add";
      break;
    }
    case OpKind::kPow: {
      kind = BinaryKind::kPow;
      name = "pow";
      const Tensor* e = ConstantOrNull(req, 1);
      if (e && e->numel() == 1 && e->ToDoubleVector()[0] == 2.0) {
        kind = BinaryKind::kPowSquare;  // x * x, the common case (variance, RMS)
        name = "pow(x, 2)";
      } else if (b.dtype != DType::kF32) {
        return Refuse(req, "exponent is {}; the fast Pow takes f32 or a constant 2", DTypeName(b.dtype));
      }
      break;
    }
    default: return Refuse(req, "{} is not a binary op of this kernel", OpName(req.op));
  }
  RETURN_IF_ERROR(ExpectF32(req, {0}));
  if (kind == BinaryKind::kTable) RETURN_IF_ERROR(ExpectF32(req, {1}));
  // The squared base is read through the loop's 'a' strides twice.
  StridedLoop loop = MakeStridedLoop(y, a, kind == BinaryKind::kPowSquare ? a : b);
  if (kind == BinaryKind::kPowSquare) loop.b = loop.a;
  if (loop.out.back() != 1 && loop.numel() > 1) {
    return Refuse(req, "the output's innermost stride is {}; rows must be contiguous", loop.out.back());
  }
  return std::unique_ptr<Kernel>(new BinaryKernel(std::move(loop), kind, op, act, name, threads));
}

}  // namespace edgec::cpu
