// Reference kernels for the elementwise family, part 2: ops whose inputs broadcast together
// (numpy multidirectional broadcasting, see ForEachBroadcast) — binary arithmetic (Mod
// included), comparison and logic, the variadic Max/Min/Sum/Mean, Where and PRelu.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/elementwise_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// out[o] = fn(a[.], b[.]) over the broadcast of a and b. A and B are the input element
// types, R the output's; fn takes and returns math types (MathT).
template <typename A, typename B, typename R, typename Fn>
void BroadcastBinary(const Tensor& a, const Tensor& b, Tensor& out, Fn& fn) {
  const Dims* dims[] = {&a.dims(), &b.dims()};
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  R* po = out.data<R>();
  ForEachBroadcast(out.dims(), dims, [&](int64_t o, const int64_t* in) {
    po[o] = FromMath<R>(fn(ToMath(pa[in[0]]), ToMath(pb[in[1]])));
  });
}

// Both inputs and the output of one numeric dtype.
template <typename Fn>
Status SameTypeBinary(KernelContext& ctx, Fn fn) {
  const Tensor& a = *ctx.inputs[0];
  return VisitAll(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return Internal("{}: bool inputs reached an arithmetic kernel", ctx.label);
    } else {
      BroadcastBinary<T, T, T>(a, *ctx.inputs[1], ctx.outputs[0], fn);
      return Status::Ok();
    }
  });
}

// Inputs of one dtype (bool allowed), bool output.
template <typename Fn>
Status Compare(KernelContext& ctx, Fn fn) {
  const Tensor& a = *ctx.inputs[0];
  return VisitAll(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BroadcastBinary<T, T, bool>(a, *ctx.inputs[1], ctx.outputs[0], fn);
    return Status::Ok();
  });
}

template <typename Fn>
Status Logic(KernelContext& ctx, Fn fn) {
  BroadcastBinary<bool, bool, bool>(*ctx.inputs[0], *ctx.inputs[1], ctx.outputs[0], fn);
  return Status::Ok();
}

// out[o] = fn(...fn(fn(in0, in1), in2)..., in_{n-1}) over the broadcast of all inputs, in the
// math type; `mean` divides the result by n.
template <typename Fn>
Status Fold(KernelContext& ctx, Fn fn, bool mean = false) {
  Tensor& out = ctx.outputs[0];
  return VisitNumeric(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = MathT<T>;
    std::vector<const Dims*> dims;
    std::vector<const T*> data;
    for (const Tensor* t : ctx.inputs) {
      dims.push_back(&t->dims());
      data.push_back(t->data<T>());
    }
    const size_t n = data.size();
    T* po = out.data<T>();
    ForEachBroadcast(out.dims(), dims, [&](int64_t o, const int64_t* in) {
      M acc = ToMath(data[0][in[0]]);
      for (size_t k = 1; k < n; ++k) acc = fn(acc, ToMath(data[k][in[k]]));
      if (mean) acc = acc / static_cast<M>(n);
      po[o] = FromMath<T>(acc);
    });
    return Status::Ok();
  });
}

template <typename M>
M Maximum(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
  }
  return a < b ? b : a;
}

template <typename M>
M Minimum(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<M>::quiet_NaN();
  }
  return b < a ? b : a;
}

template <typename M>
M Plus(M a, M b) {
  if constexpr (std::is_integral_v<M>) return WrapAdd(a, b);
  else return a + b;
}

// Integer base and exponent: exact repeated squaring (wrapping like other integer
// arithmetic); a negative exponent gives the truncated real power.
template <typename A, typename B>
A IntPow(A base, B exp) {
  if constexpr (std::is_signed_v<B>) {
    if (exp < 0) {
      return FloatToInt<A>(std::pow(static_cast<double>(base), static_cast<double>(exp)));
    }
  }
  A result = 1;
  while (exp != 0) {
    if (exp & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    exp = static_cast<B>(exp / 2);
  }
  return result;
}

// base ** exponent for element types A (base, and result) and B (exponent).
template <typename A, typename B>
MathT<A> Power(MathT<A> x, MathT<B> e) {
  if constexpr (std::is_integral_v<MathT<A>> && std::is_integral_v<MathT<B>>) {
    return IntPow(x, e);
  } else {
    const double r = std::pow(static_cast<double>(x), static_cast<double>(e));
    if constexpr (std::is_integral_v<MathT<A>>) return FloatToInt<A>(r);
    else return static_cast<MathT<A>>(r);
  }
}

// Integer remainder. Python's % (the divisor's sign) unless `c_fmod` (C's %, the dividend's
// sign). The divisor must not be 0; lowest % -1 is 0 (C leaves it undefined).
template <typename M>
M IntMod(M a, M b, bool c_fmod) {
  if constexpr (std::is_signed_v<M>) {
    if (b == -1) return M(0);
  }
  M r = static_cast<M>(a % b);
  if constexpr (std::is_signed_v<M>) {
    if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<M>(r + b);
  }
  return r;
}

// An integer divisor (input 1) with a zero element is an error naming the first one; float
// divisors and empty outputs pass (tests/kernels/elementwise_test.cc and
// elementwise_more_test.cc guard the division and modulo messages).
Status ExpectNonZeroIntegerDivisor(const KernelContext& ctx, const char* what) {
  const Tensor& b = *ctx.inputs[1];
  if (!IsInteger(b.dtype()) || ctx.outputs[0].numel() == 0) return Status::Ok();
  for (int64_t i = 0; i < b.numel(); ++i) {
    if (LoadAsInt64(b.dtype(), b.raw(), i) == 0)
      return ctx.Error("integer {} by zero (input 1 {} is 0 at flat index {})", what, b.TypeString(), i);
  }
  return Status::Ok();
}

}  // namespace

// broadcasting binary arithmetic
Status Add(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto a, auto b) { return Plus(a, b); });
}

Status Sub(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return WrapSub(a, b);
    else return a - b;
  });
}

Status Mul(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return WrapMul(a, b);
    else return a * b;
  });
}

// Integer division truncates toward zero as in C; a zero divisor is an error.
Status Div(KernelContext& ctx) {
  RETURN_IF_ERROR(ExpectNonZeroIntegerDivisor(ctx, "division"));
  return SameTypeBinary(ctx, [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return IntDiv(a, b);
    else return a / b;
  });
}

// Mod: integer remainder with the divisor's sign (fmod=0) or the dividend's (fmod=1); floats
// (fmod=1, checked by inference) use C's fmod. A zero integer divisor is an error.
Status Mod(KernelContext& ctx) {
  RETURN_IF_ERROR(ExpectNonZeroIntegerDivisor(ctx, "modulo"));
  const bool c_fmod = ctx.attrs.GetInt("fmod", 0) != 0;
  return SameTypeBinary(ctx, [c_fmod](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return IntMod(a, b, c_fmod);
    else return std::fmod(a, b);
  });
}

// Pow: base and exponent dtypes may differ; the result has the base's dtype.
Status Pow(KernelContext& ctx) {
  const Tensor& base = *ctx.inputs[0];
  const Tensor& exponent = *ctx.inputs[1];
  return VisitNumeric(base.dtype(), [&](auto base_tag) {
    using A = typename decltype(base_tag)::type;
    return VisitNumeric(exponent.dtype(), [&](auto exp_tag) {
      using B = typename decltype(exp_tag)::type;
      auto power = [](MathT<A> x, MathT<B> e) { return Power<A, B>(x, e); };
      BroadcastBinary<A, B, A>(base, exponent, ctx.outputs[0], power);
      return Status::Ok();
    });
  });
}

// PRelu: y = x < 0 ? slope * x : x, the slope broadcast to x.
Status PRelu(KernelContext& ctx) {
  return SameTypeBinary(ctx, [](auto x, auto slope) {
    using M = decltype(x);
    if constexpr (std::is_unsigned_v<M>) return x;
    else if constexpr (std::is_integral_v<M>) return x < M(0) ? WrapMul(slope, x) : x;
    else return x < M(0) ? slope * x : x;
  });
}

// variadic
Status Max(KernelContext& ctx) {
  return Fold(ctx, [](auto a, auto b) { return Maximum(a, b); });
}
Status Min(KernelContext& ctx) {
  return Fold(ctx, [](auto a, auto b) { return Minimum(a, b); });
}
Status Sum(KernelContext& ctx) {
  return Fold(ctx, [](auto a, auto b) { return Plus(a, b); });
}
Status Mean(KernelContext& ctx) {
  return Fold(ctx, [](auto a, auto b) { return Plus(a, b); }, /*mean=*/true);
}

// comparison and logic
Status Equal(KernelContext& ctx) {
  return Compare(ctx, [](auto a, auto b) { return a == b; });
}
Status Less(KernelContext& ctx) {
  return Compare(ctx, [](auto a, auto b) { return a < b; });
}
Status Greater(KernelContext& ctx) {
  return Compare(ctx, [](auto a, auto b) { return a > b; });
}
Status LessOrEqual(KernelContext& ctx) {
  return Compare(ctx, [](auto a, auto b) { return a <= b; });
}
Status GreaterOrEqual(KernelContext& ctx) {
  return Compare(ctx, [](auto a, auto b) { return a >= b; });
}
Status And(KernelContext& ctx) {
  return Logic(ctx, [](bool a, bool b) { return a && b; });
}
Status Or(KernelContext& ctx) {
  return Logic(ctx, [](bool a, bool b) { return a || b; });
}
Status Xor(KernelContext& ctx) {
  return Logic(ctx, [](bool a, bool b) { return a != b; });
}

// BitShift: unsigned shift; a shift by the width or more gives 0 (C++ would not define it).
Status BitShift(KernelContext& ctx) {
  const bool left = ctx.attrs.GetString("direction", "") == "LEFT";
  return SameTypeBinary(ctx, [left](auto a, auto b) {
    using M = decltype(a);
    if constexpr (std::is_unsigned_v<M>) {
      if (b >= sizeof(M) * 8) return M(0);
      return left ? M(a << b) : M(a >> b);
    } else {
      return a;  // inference admits unsigned integers only
    }
  });
}

// select
Status Where(KernelContext& ctx) {
  const Tensor& cond = *ctx.inputs[0];
  const Tensor& x = *ctx.inputs[1];
  const Tensor& y = *ctx.inputs[2];
  Tensor& out = ctx.outputs[0];
  return VisitAll(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Dims* dims[] = {&cond.dims(), &x.dims(), &y.dims()};
    const bool* pc = cond.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out.data<T>();
    ForEachBroadcast(out.dims(), dims, [&](int64_t o, const int64_t* in) {
      po[o] = pc[in[0]] ? px[in[1]] : py[in[2]];
    });
    return Status::Ok();
  });
}

}  // namespace edgec::ref
