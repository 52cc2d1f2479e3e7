// Fast kernels for the integer bookkeeping of loop bodies and sequence maps: Add, Sub and
// Mul of i64 or i32 tensors (a loop counter plus one; numpy broadcasting as the binary kernels,
// wrapping on overflow as two's complement, which the reference's int64 arithmetic does on
// this target), and Shape (the input's dims, `start`/`end` applied, written as i64; the dims
// are known when the kernel is made, so a run writes constants), and Not of bools (a loop
// condition).
// tests/kernels/cpu/cast_compare_test.cc (IntegerArithmetic*, Shape*) against the reference;
// the ONNX node tests loop13_seq, loop16_seq_none and sequence_map_extract_shapes_expanded
// through the conformance runner's `run` path, which fails them on a reference step.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/common.h"

namespace edgec::cpu {

namespace {

enum class IntOp { kAdd, kSub, kMul };

template <typename T>
T Apply(IntOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;  // wraps instead of overflowing
  switch (op) {
    case IntOp::kAdd: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case IntOp::kSub: return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    case IntOp::kMul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
  return 0;
}

// Over the broadcast loop (ForEachStridedElement).
template <typename T>
void IntLoop(const StridedLoop& loop, IntOp op, const void* a, const void* b, void* y) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* py = static_cast<T*>(y);
  ForEachStridedElement(loop, [&](int64_t ia, int64_t ib, int64_t iy) { py[iy] = Apply(op, pa[ia], pb[ib]); });
}

class IntArithKernel final : public Kernel {
 public:
  using Fn = void (*)(const StridedLoop&, IntOp, const void*, const void*, void*);
  IntArithKernel(Fn fn, StridedLoop loop, IntOp op, std::string what)
      : fn_(fn), loop_(std::move(loop)), op_(op), what_(std::move(what)) {}
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    fn_(loop_, op_, in[0], in[1], out[0]);
    return Status::Ok();
  }
  std::string Describe() const override { return what_; }

 private:
  Fn fn_;
  StridedLoop loop_;
  IntOp op_;
  std::string what_;
};

class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  Status Run(std::span<const void* const>, std::span<void* const> out, void*) override {
    if (!dims_.empty()) std::memcpy(out[0], dims_.data(), dims_.size() * sizeof(int64_t));
    return Status::Ok();
  }
  std::string Describe() const override { return "own shape"; }

 private:
  std::vector<int64_t> dims_;
};

class NotKernel final : public Kernel {
 public:
  explicit NotKernel(int64_t n) : n_(n) {}
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const bool*>(in[0]);
    auto* y = static_cast<bool*>(out[0]);
    for (int64_t i = 0; i < n_; ++i) y[i] = !x[i];
    return Status::Ok();
  }
  std::string Describe() const override { return "own not bool"; }

 private:
  int64_t n_;
};

}  // namespace

KernelOr CreateNotKernel(const KernelRequest& req) {
  if (req.inputs.size() != 1 || req.outputs.size() != 1 || req.inputs[0].dtype != DType::kBool ||
      req.outputs[0].dtype != DType::kBool || !IsDense(req.inputs[0]) || !IsDense(req.outputs[0])) {
    return Refuse(req, "Not takes a dense bool tensor");
  }
  return std::unique_ptr<Kernel>(std::make_unique<NotKernel>(NumElements(req.outputs[0].dims)));
}

KernelOr CreateIntArithKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs and 1 output");
  const TensorDesc& a = req.inputs[0];
  const TensorDesc& b = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  if (a.dtype != y.dtype || b.dtype != y.dtype || (y.dtype != DType::kI64 && y.dtype != DType::kI32)) {
    return Refuse(req, "the integer kernel takes i64 or i32 inputs and output of one dtype");
  }
  for (const TensorDesc* d : {&a, &b, &y}) {
    if (!IsDense(*d)) return Refuse(req, "strided buffers are not taken by the integer kernel");
    if (d->dims.size() > y.dims.size()) return Refuse(req, "an input has more dims than the output");
  }
  IntOp op;
  switch (req.op) {
    case OpKind::kAdd: op = IntOp::kAdd; break;
    case OpKind::kSub: op = IntOp::kSub; break;
    case OpKind::kMul: op = IntOp::kMul; break;
    default: return Refuse(req, "{} of integers has no fast kernel", OpName(req.op));
  }
  IntArithKernel::Fn fn = y.dtype == DType::kI64 ? &IntLoop<int64_t> : &IntLoop<int32_t>;
  return std::unique_ptr<Kernel>(std::make_unique<IntArithKernel>(
      fn, MakeStridedLoop(y, a, b), op, fmt::format("own {} {}", OpName(req.op), DTypeName(y.dtype))));
}

KernelOr CreateShapeKernel(const KernelRequest& req) {
  if (req.inputs.size() != 1 || req.outputs.size() != 1 || req.outputs[0].dtype != DType::kI64) {
    return Refuse(req, "expected 1 input and an i64 output");
  }
  const Dims& x = req.inputs[0].dims;
  const int64_t rank = static_cast<int64_t>(x.size());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(req.attrs->GetInt("start", 0));
  const int64_t end = clamp(req.attrs->GetInt("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) dims.push_back(x[i]);
  if (req.outputs[0].dims != Dims{static_cast<int64_t>(dims.size())}) return Refuse(req, "output dims disagree with start/end");
  return std::unique_ptr<Kernel>(std::make_unique<ShapeKernel>(std::move(dims)));
}

}  // namespace edgec::cpu
