// Helpers shared by the elementwise and softmax reference kernels: one numpy broadcasting
// walker, dtype visitors that hand a lambda the element type, the "math type" that 16-bit
// floats compute in, wrapping integer arithmetic and the element conversion Cast uses.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "support/status.h"
#include "ir/dtype.h"
#include "ir/tensor.h"

namespace edgec::ref {

// ---- broadcasting ----

// Calls fn(out_index, in_index) for every element of a result of dims `out`, where
// in_index[k] is the flat row-major index of the element of input k (dims ins[k]) that
// numpy multidirectional broadcasting pairs with it. Inputs may have lower rank (aligned
// to the right), size-1 dims (repeated) and rank 0 (one element for all).
template <typename Fn>
void ForEachBroadcast(const Dims& out, std::span<const Dims* const> ins, Fn&& fn) {
  const int64_t count = NumElements(out);
  if (count == 0) return;
  const size_t k = ins.size();
  std::vector<int64_t> offsets(k, 0);

  bool all_same = true;
  for (const Dims* d : ins) all_same = all_same && *d == out;
  if (all_same) {
    for (int64_t o = 0; o < count; ++o) {
      for (size_t j = 0; j < k; ++j) offsets[j] = o;
      fn(o, offsets.data());
    }
    return;
  }

  // strides[j * rank + d]: step in input j for one step along output dim d (0 = repeated).
  const size_t rank = out.size();
  std::vector<int64_t> strides(k * rank, 0);
  for (size_t j = 0; j < k; ++j) {
    const Dims& in = *ins[j];
    const size_t lead = rank - in.size();
    int64_t step = 1;
    for (size_t d = in.size(); d-- > 0;) {
      if (in[d] != 1) strides[j * rank + lead + d] = step;
      step *= in[d];
    }
  }
  std::vector<int64_t> counter(rank, 0);
  for (int64_t o = 0; o < count; ++o) {
    fn(o, offsets.data());
    for (size_t d = rank; d-- > 0;) {  // odometer increment, last dim fastest
      for (size_t j = 0; j < k; ++j) offsets[j] += strides[j * rank + d];
      if (++counter[d] < out[d]) break;
      for (size_t j = 0; j < k; ++j) offsets[j] -= strides[j * rank + d] * out[d];
      counter[d] = 0;
    }
  }
}

// ---- element types ----

template <typename T> struct TypeTag { using type = T; };

template <typename T>
constexpr bool kIs16BitFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsFloatElem = kIs16BitFloat<T> || std::is_floating_point_v<T>;
template <typename T>
constexpr bool kIsIntElem = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic on an element type happens in: float for f16/bf16, else itself.
template <typename T>
using MathT = std::conditional_t<kIs16BitFloat<T>, float, T>;

template <typename T>
MathT<T> ToMath(T v) {
  if constexpr (std::is_same_v<T, Half>) return HalfToFloat(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16ToFloat(v.bits);
  else return v;
}

// Stores an arithmetic result of math type into element type T (16-bit floats round to
// nearest even).
template <typename T, typename M>
T FromMath(M v) {
  if constexpr (std::is_same_v<T, Half>) return Half{FloatToHalf(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{FloatToBFloat16(static_cast<float>(v))};
  else return static_cast<T>(v);
}

// Visitors: call fn(TypeTag<T>{}) with the element type of `dt` (ir/dtype.h's CppTypeOf), or
// fail for a dtype outside the set (inference rejects those first, so that is a bug).
// VisitDTypes<Ds...>: fn for the one of Ds that dt is, else otherwise().
template <DType... Ds, typename Fn, typename Otherwise>
Status VisitDTypes(DType dt, Fn&& fn, Otherwise&& otherwise) {
  Status result = Status::Ok();
  const bool found = ((dt == Ds && (result = fn(TypeTag<typename CppTypeOf<Ds>::type>{}), true)) || ...);
  return found ? result : otherwise();
}

template <typename Fn>
Status VisitFloat(DType dt, Fn&& fn) {
  return VisitDTypes<DType::kF32, DType::kF64, DType::kF16, DType::kBF16>(
      dt, fn, [&] { return Internal("reference kernel got non-float dtype {}", DTypeName(dt)); });
}

template <typename Fn>
Status VisitNumeric(DType dt, Fn&& fn) {
  return VisitDTypes<DType::kI8, DType::kI16, DType::kI32, DType::kI64, DType::kU8, DType::kU16, DType::kU32,
                     DType::kU64>(dt, fn, [&] { return VisitFloat(dt, fn); });
}

template <typename Fn>
Status VisitAll(DType dt, Fn&& fn) {
  if (dt == DType::kBool) return fn(TypeTag<bool>{});
  return VisitNumeric(dt, fn);
}

// ---- integer arithmetic without undefined behaviour: two's-complement wrap-around ----

template <typename T>
using WrapT = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, T>>;

template <typename T> T WrapAdd(T a, T b) { return static_cast<T>(static_cast<WrapT<T>>(a) + static_cast<WrapT<T>>(b)); }
template <typename T> T WrapSub(T a, T b) { return static_cast<T>(static_cast<WrapT<T>>(a) - static_cast<WrapT<T>>(b)); }
template <typename T> T WrapMul(T a, T b) { return static_cast<T>(static_cast<WrapT<T>>(a) * static_cast<WrapT<T>>(b)); }
template <typename T> T WrapNeg(T a) { return WrapSub<T>(T(0), a); }

// C division (truncates toward zero); the one overflowing case, lowest / -1, wraps to lowest.
// The divisor must not be 0.
template <typename T>
T IntDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return WrapNeg(a);
  }
  return static_cast<T>(a / b);
}

// ---- element conversion as Cast defines it ----

// A float to an integer type: truncation toward zero as static_cast does for values in
// range. Outside it (where static_cast is undefined) the value is first clamped to int64
// (NaN -> 0) and then wrapped to the target width, which is what numpy does on x86 for
// the common cases (-1.0 -> u8 is 255).
template <typename To>
To FloatToInt(double v) {
  if (std::isnan(v)) return To(0);
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (v >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
    if (v >= 9223372036854775808.0) return static_cast<uint64_t>(v);
  }
  if (v >= 9223372036854775808.0) return static_cast<To>(std::numeric_limits<int64_t>::max());
  if (v < -9223372036854775808.0) return static_cast<To>(std::numeric_limits<int64_t>::min());
  return static_cast<To>(static_cast<int64_t>(v));
}

// A double rounded to float with round-to-odd, so that a second rounding to a narrower
// float (f16, bf16) gives the correctly rounded result of the double.
inline float DoubleToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(f) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= 1u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// float -> bf16 by truncation (dropping the low 16 bits), which is what ONNX's Cast test
// data (onnx 1.12) expects; NaN stays a quiet NaN.
inline uint16_t FloatToBFloat16Truncate(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>(bits >> 16);
}

// Converts one element from type From to type To as ONNX Cast does.
template <typename To, typename From>
To CastElement(From v) {
  if constexpr (kIs16BitFloat<From>) {
    return CastElement<To>(ToMath(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, Half>) {
    if constexpr (std::is_same_v<From, float>) return Half{FloatToHalf(v)};
    else return Half{FloatToHalf(DoubleToFloatRoundToOdd(static_cast<double>(v)))};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, float>) return BFloat16{FloatToBFloat16Truncate(v)};
    else return BFloat16{FloatToBFloat16Truncate(DoubleToFloatRoundToOdd(static_cast<double>(v)))};
  } else if constexpr (kIsIntElem<To> && std::is_floating_point_v<From>) {
    return FloatToInt<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);  // int <-> int (wraps), int/bool -> float, float <-> float
  }
}

}  // namespace edgec::ref
