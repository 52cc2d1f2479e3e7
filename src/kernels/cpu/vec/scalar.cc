// The portable build of the row kernels (vec/impl.inc): one lane, plain float arithmetic,
// for CPUs without AVX2 and for tests of the fallback (cpu::CapVectorIsa).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/vec.h"

namespace edgec::cpu::vec {
namespace scalar {
namespace {

using V = float;
using M = bool;
constexpr int kW = 1;

inline V Load(const float* p) { return *p; }
inline void Store(float* p, V v) { *p = v; }
inline V LoadN(const float* p, int64_t n) { return n > 0 ? *p : 0.0f; }
inline void StoreN(float* p, V v, int64_t n) {
  if (n > 0) *p = v;
}
inline V Set(float f) { return f; }
inline V TailFill(V v, int64_t n, float f) { return n >= 1 ? v : f; }
inline V Add(V a, V b) { return a + b; }
inline V Sub(V a, V b) { return a - b; }
inline V Mul(V a, V b) { return a * b; }
inline V Div(V a, V b) { return a / b; }
inline V Fma(V a, V b, V c) { return a * b + c; }
inline V Max(V a, V b) { return a > b ? a : b; }
inline V Min(V a, V b) { return a < b ? a : b; }
inline V Sqrt(V a) { return std::sqrt(a); }
inline V Floor(V a) { return std::floor(a); }
inline V Ceil(V a) { return std::ceil(a); }
inline V Round(V a) { return std::nearbyint(a); }
inline V Abs(V a) { return std::fabs(a); }
inline V Neg(V a) { return -a; }
inline M Lt(V a, V b) { return a < b; }
inline M Gt(V a, V b) { return a > b; }
inline M Ge(V a, V b) { return a >= b; }
inline M Unordered(V a, V b) { return std::isnan(a) || std::isnan(b); }
inline V Select(M m, V a, V b) { return m ? a : b; }
inline float ReduceAdd(V v) { return v; }
inline float ReduceMax(V v) { return v; }
inline V Frexp(V x, V* e) {
  int exponent = 0;
  const float m = std::frexp(x, &exponent);
  *e = static_cast<float>(exponent);
  return m;
}
// 2^n for a whole n in [-126, 127]. A NaN n (the exp of a NaN input) gives 2^0, so that the
// product stays NaN as in the vector tables; casting NaN to int is undefined in C++
// (CpuElementwise.SpecialValues, under the undefined-behaviour sanitizer).
inline V Pow2n(V n) {
  const int32_t whole = std::isnan(n) ? 0 : static_cast<int32_t>(n);
  const uint32_t bits = static_cast<uint32_t>(whole + 127) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline V ScalePow2(V p, V n) { return Mul(p, Pow2n(n)); }

#include "kernels/cpu/vec/impl.inc"

}  // namespace
}  // namespace scalar

const Table kScalarTable = scalar::MakeTable("scalar");

}  // namespace edgec::cpu::vec
