// A tensor of random raw bytes for the int8 NPU lowering tests (every bit pattern of the
// dtype's 8-bit values).
#pragma once

#include <random>

#include "ir/tensor.h"

namespace edgec::lower {

inline Tensor RandomQ(DType dt, const Dims& dims, std::mt19937& rng) {
  Tensor t = *Tensor::Create(dt, dims);
  auto* d = static_cast<uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = static_cast<uint8_t>(rng());
  return t;
}

}  // namespace edgec::lower
