#include "ir/dtype.h"

#include <climits>
#include <cmath>

namespace edgec {

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kUndefined: return "undefined";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kI16: return "i16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU8: return "u8";
    case DType::kU16: return "u16";
    case DType::kU32: return "u32";
    case DType::kU64: return "u64";
    case DType::kBool: return "bool";
  }
  return "?";
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kUndefined: return 0;
    case DType::kF64: case DType::kI64: case DType::kU64: return 8;
    case DType::kF32: case DType::kI32: case DType::kU32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: case DType::kU16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
  }
  return 0;
}

bool IsFloat(DType t) {
  return t == DType::kF32 || t == DType::kF64 || t == DType::kF16 || t == DType::kBF16;
}
bool IsSignedInt(DType t) {
  return t == DType::kI8 || t == DType::kI16 || t == DType::kI32 || t == DType::kI64;
}
bool IsUnsignedInt(DType t) {
  return t == DType::kU8 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ff;
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  }
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // result is subnormal or zero
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t e = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    // value = mant * 2^(e-150); half subnormal unit = 2^-24 -> q = mant * 2^(e-126)
    uint32_t total_shift = 126 - e;
    uint32_t q = mant >> total_shift;
    uint32_t rem = mant & ((1u << total_shift) - 1);
    uint32_t halfway = 1u << (total_shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t e = (absx >> 23) - 127 + 15;
  uint32_t mant = absx & 0x7fffffu;
  uint32_t q = (e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;  // may carry into exponent: fine
  return static_cast<uint16_t>(sign | q);
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

double LoadAsDouble(DType t, const void* data, int64_t i) {
  switch (t) {
    case DType::kF16: return HalfToFloat(static_cast<const uint16_t*>(data)[i]);
    case DType::kBF16: return BFloat16ToFloat(static_cast<const uint16_t*>(data)[i]);
    default: break;
  }
  EDGEC_DISPATCH_NUMERIC(t, return static_cast<double>(static_cast<const T*>(data)[i]), break)
  if (t == DType::kBool) return static_cast<const bool*>(data)[i] ? 1.0 : 0.0;
  return 0.0;
}

void StoreFromDouble(DType t, void* data, int64_t i, double v) {
  switch (t) {
    case DType::kF16: static_cast<uint16_t*>(data)[i] = FloatToHalf(static_cast<float>(v)); return;
    case DType::kBF16:
      static_cast<uint16_t*>(data)[i] = FloatToBFloat16(static_cast<float>(v));
      return;
    case DType::kBool: static_cast<bool*>(data)[i] = v != 0.0; return;
    default: break;
  }
  if (IsInteger(t)) {
    // Float -> integer as the Cast kernel does: NaN -> 0, truncation toward zero, values
    // outside int64 clamped, then two's-complement wrap to the width (never UB).
    int64_t w;
    if (std::isnan(v)) w = 0;
    else if (v >= 9.2233720368547758e18) w = INT64_MAX;
    else if (v <= -9.2233720368547758e18) w = INT64_MIN;
    else w = static_cast<int64_t>(v);
    if (t == DType::kU64 && v >= 9.2233720368547758e18 && v < 1.8446744073709552e19) {
      static_cast<uint64_t*>(data)[i] = static_cast<uint64_t>(v);
      return;
    }
    EDGEC_DISPATCH_NUMERIC(t, static_cast<T*>(data)[i] = static_cast<T>(static_cast<uint64_t>(w)); return, return)
  }
  EDGEC_DISPATCH_NUMERIC(t, static_cast<T*>(data)[i] = static_cast<T>(v); return, return)
}

int64_t LoadAsInt64(DType t, const void* data, int64_t i) {
  if (IsFloat(t)) return static_cast<int64_t>(LoadAsDouble(t, data, i));
  if (t == DType::kBool) return static_cast<const bool*>(data)[i] ? 1 : 0;
  EDGEC_DISPATCH_NUMERIC(t, return static_cast<int64_t>(static_cast<const T*>(data)[i]), break)
  return 0;
}

}  // namespace edgec
