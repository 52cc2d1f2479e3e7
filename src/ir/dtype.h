// Element types. The numbering follows nothing external; the ONNX frontend maps
// TensorProto data types onto these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace edgec {

enum class DType : uint8_t {
  kUndefined = 0,
  kF32,
  kF64,
  kF16,
  kBF16,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kBool,
};

std::string_view DTypeName(DType t);  // "f32", "i64", ...
size_t DTypeSize(DType t);            // bytes per element; 0 for kUndefined
bool IsFloat(DType t);                // f32, f64, f16, bf16
bool IsSignedInt(DType t);
bool IsUnsignedInt(DType t);
inline bool IsInteger(DType t) { return IsSignedInt(t) || IsUnsignedInt(t); }

// 16-bit float storage types. Arithmetic on them goes through float.
struct Half {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);  // round to nearest even
inline float BFloat16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t FloatToBFloat16(float f);  // round to nearest even

// The C++ type that stores elements of a DType.
template <DType T> struct CppTypeOf;
template <> struct CppTypeOf<DType::kF32> { using type = float; };
template <> struct CppTypeOf<DType::kF64> { using type = double; };
template <> struct CppTypeOf<DType::kF16> { using type = Half; };
template <> struct CppTypeOf<DType::kBF16> { using type = BFloat16; };
template <> struct CppTypeOf<DType::kI8> { using type = int8_t; };
template <> struct CppTypeOf<DType::kI16> { using type = int16_t; };
template <> struct CppTypeOf<DType::kI32> { using type = int32_t; };
template <> struct CppTypeOf<DType::kI64> { using type = int64_t; };
template <> struct CppTypeOf<DType::kU8> { using type = uint8_t; };
template <> struct CppTypeOf<DType::kU16> { using type = uint16_t; };
template <> struct CppTypeOf<DType::kU32> { using type = uint32_t; };
template <> struct CppTypeOf<DType::kU64> { using type = uint64_t; };
template <> struct CppTypeOf<DType::kBool> { using type = bool; };

// Reads element i of a buffer of dtype t as double / writes a double into it (with the
// conversion a C++ static_cast does; f16/bf16 round to nearest even). Slow: for reference
// kernels and tests only.
double LoadAsDouble(DType t, const void* data, int64_t i);
void StoreFromDouble(DType t, void* data, int64_t i, double v);
// Exact for every integer type (doubles lose 64-bit integers).
int64_t LoadAsInt64(DType t, const void* data, int64_t i);

}  // namespace edgec

// Calls BODY with `using T = <C++ type>` for the DType value `dt`. The body may `return`.
// EDGEC_DISPATCH_ALL covers every dtype; _NUMERIC excludes bool and 16-bit floats.
#define EDGEC_DTYPE_CASE(DT, BODY)                        \
  case ::edgec::DType::DT: {                              \
    using T = typename ::edgec::CppTypeOf<::edgec::DType::DT>::type; \
    BODY;                                                 \
    break;                                                \
  }

// The eight integer dtypes (signed and unsigned, 8 to 64 bits).
#define EDGEC_DTYPE_INT_CASES(BODY) \
  EDGEC_DTYPE_CASE(kI8, BODY)       \
  EDGEC_DTYPE_CASE(kI16, BODY)      \
  EDGEC_DTYPE_CASE(kI32, BODY)      \
  EDGEC_DTYPE_CASE(kI64, BODY)      \
  EDGEC_DTYPE_CASE(kU8, BODY)       \
  EDGEC_DTYPE_CASE(kU16, BODY)      \
  EDGEC_DTYPE_CASE(kU32, BODY)      \
  EDGEC_DTYPE_CASE(kU64, BODY)

#define EDGEC_DISPATCH_NUMERIC(dt, BODY, DEFAULT) \
  switch (dt) {                                   \
    EDGEC_DTYPE_CASE(kF32, BODY)                  \
    EDGEC_DTYPE_CASE(kF64, BODY)                  \
    EDGEC_DTYPE_INT_CASES(BODY)                   \
    default: DEFAULT;                             \
  }

#define EDGEC_DISPATCH_ALL(dt, BODY, DEFAULT) \
  switch (dt) {                               \
    EDGEC_DTYPE_CASE(kF32, BODY)              \
    EDGEC_DTYPE_CASE(kF64, BODY)              \
    EDGEC_DTYPE_CASE(kF16, BODY)              \
    EDGEC_DTYPE_CASE(kBF16, BODY)             \
    EDGEC_DTYPE_INT_CASES(BODY)               \
    EDGEC_DTYPE_CASE(kBool, BODY)             \
    default: DEFAULT;                         \
  }
