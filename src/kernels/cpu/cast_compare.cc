// Fast Cast and comparisons for the small integer and bool values of control flow and
// detector tails (a loop's trip count cast to int64, a branch condition `x > t`): dense
// buffers of f32, i64, i32, u8, i8 and bool; comparisons broadcast like the binary kernels
// (broadcast.h) and write bool. Float -> integer casts follow ONNX Cast as the reference does:
// NaN -> 0, truncation toward zero, values outside int64 clamped, then wrapped to the width.
// tests/kernels/cpu/cast_compare_test.cc against the reference (NaN, +-inf, out-of-range and
// negative values, every dtype pair, broadcasting).
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/common.h"

namespace edgec::cpu {

namespace {

template <typename To>
To FromFloat(double v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else {
    if (std::isnan(v)) return To(0);
    if (v >= 9223372036854775808.0) return static_cast<To>(std::numeric_limits<int64_t>::max());
    if (v < -9223372036854775808.0) return static_cast<To>(std::numeric_limits<int64_t>::min());
    return static_cast<To>(static_cast<int64_t>(v));
  }
}

template <typename To, typename From>
To CastOne(From v) {
  if constexpr (std::is_floating_point_v<From>) return FromFloat<To>(static_cast<double>(v));
  else if constexpr (std::is_same_v<To, bool>) return v != From(0);
  else return static_cast<To>(v);
}

// Calls fn(tag) with the C++ type of `t` (one of the dtypes these kernels take).
template <typename Fn>
bool VisitSmall(DType t, Fn fn) {
  switch (t) {
    case DType::kF32: fn(float{}); return true;
    case DType::kI64: fn(int64_t{}); return true;
    case DType::kI32: fn(int32_t{}); return true;
    case DType::kU8: fn(uint8_t{}); return true;
    case DType::kI8: fn(int8_t{}); return true;
    case DType::kBool: fn(bool{}); return true;
    default: return false;
  }
}

class CastKernel final : public Kernel {
 public:
  using Fn = void (*)(const void*, void*, int64_t);
  CastKernel(Fn fn, int64_t n, std::string what) : fn_(fn), n_(n), what_(std::move(what)) {}
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    fn_(in[0], out[0], n_);
    return Status::Ok();
  }
  std::string Describe() const override { return what_; }

 private:
  Fn fn_;
  int64_t n_;
  std::string what_;
};

template <typename From, typename To>
void CastRow(const void* x, void* y, int64_t n) {
  const From* a = static_cast<const From*>(x);
  To* b = static_cast<To*>(y);
  if constexpr (std::is_same_v<From, To>) {
    std::memcpy(b, a, static_cast<size_t>(n) * sizeof(From));
  } else {
    for (int64_t i = 0; i < n; ++i) b[i] = CastOne<To>(a[i]);
  }
}

enum class Cmp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };

class CompareKernel final : public Kernel {
 public:
  using Fn = void (*)(const StridedLoop&, Cmp, const void*, const void*, bool*);
  CompareKernel(Fn fn, StridedLoop loop, Cmp cmp, std::string what)
      : fn_(fn), loop_(std::move(loop)), cmp_(cmp), what_(std::move(what)) {}
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    fn_(loop_, cmp_, in[0], in[1], static_cast<bool*>(out[0]));
    return Status::Ok();
  }
  std::string Describe() const override { return what_; }

 private:
  Fn fn_;
  StridedLoop loop_;
  Cmp cmp_;
  std::string what_;
};

template <typename T>
bool Compare(Cmp c, T a, T b) {
  switch (c) {
    case Cmp::kEqual: return a == b;
    case Cmp::kLess: return a < b;
    case Cmp::kGreater: return a > b;
    case Cmp::kLessOrEqual: return a <= b;
    case Cmp::kGreaterOrEqual: return a >= b;
  }
  return false;
}

// Over the broadcast loop (ForEachStridedElement).
template <typename T>
void CompareLoop(const StridedLoop& loop, Cmp c, const void* a, const void* b, bool* y) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  ForEachStridedElement(loop, [&](int64_t ia, int64_t ib, int64_t iy) { y[iy] = Compare(c, pa[ia], pb[ib]); });
}

}  // namespace

KernelOr CreateCastKernel(const KernelRequest& req) {
  if (req.inputs.size() != 1 || req.outputs.size() != 1) return Refuse(req, "expected 1 input and 1 output");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (!IsDense(x) || !IsDense(y) || x.layout != y.layout || x.dims != y.dims) {
    return Refuse(req, "input and output must be dense buffers of one layout and shape");
  }
  CastKernel::Fn fn = nullptr;
  const bool known = VisitSmall(x.dtype, [&](auto from) {
    VisitSmall(y.dtype, [&](auto to) { fn = &CastRow<decltype(from), decltype(to)>; });
  });
  if (!known || !fn) {
    return Refuse(req, "cast {} -> {}; the fast Cast takes f32, i64, i32, u8, i8 and bool", DTypeName(x.dtype),
                  DTypeName(y.dtype));
  }
  return std::unique_ptr<Kernel>(std::make_unique<CastKernel>(
      fn, NumElements(x.dims), fmt::format("own cast {} -> {}", DTypeName(x.dtype), DTypeName(y.dtype))));
}

KernelOr CreateCompareKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs and 1 output");
  const TensorDesc& a = req.inputs[0];
  const TensorDesc& b = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  if (a.dtype != b.dtype || y.dtype != DType::kBool) return Refuse(req, "expected inputs of one dtype and a bool output");
  if (a.dtype == DType::kBool && req.op != OpKind::kEqual) return Refuse(req, "{} of bools", OpName(req.op));
  for (const TensorDesc* d : {&a, &b, &y}) {
    if (!IsDense(*d)) return Refuse(req, "strided buffers are not taken by the fast comparison");
    if (d->dims.size() > y.dims.size()) return Refuse(req, "an input has more dims than the output");
  }
  Cmp cmp;
  switch (req.op) {
    case OpKind::kEqual: cmp = Cmp::kEqual; break;
    case OpKind::kLess: cmp = Cmp::kLess; break;
    case OpKind::kGreater: cmp = Cmp::kGreater; break;
    case OpKind::kLessOrEqual: cmp = Cmp::kLessOrEqual; break;
    case OpKind::kGreaterOrEqual: cmp = Cmp::kGreaterOrEqual; break;
    default: return Refuse(req, "{} is not a comparison", OpName(req.op));
  }
  CompareKernel::Fn fn = nullptr;
  const bool known = VisitSmall(a.dtype, [&](auto t) { fn = &CompareLoop<decltype(t)>; });
  if (!known) return Refuse(req, "inputs are {}; the fast comparison takes f32, i64, i32, u8, i8 and bool", DTypeName(a.dtype));
  return std::unique_ptr<Kernel>(std::make_unique<CompareKernel>(
      fn, MakeStridedLoop(y, a, b), cmp, fmt::format("own compare {} -> bool", DTypeName(a.dtype))));
}

}  // namespace edgec::cpu
