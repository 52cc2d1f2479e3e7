// NHWC rows of the vector layer besides the f32 table of vec.h (vec/nhwc.cc): a kernel asks
// the one probe (cpu::OwnAvx512) before calling an AVX-512 one. Plain types only.
#pragma once

#include <cstdint>

namespace edgec::cpu::vec {

// y[i] = max over t < taps of x[t][i] for 1-byte elements (signed for i8), taps >= 1;
// AVX-512 BW, tails under a mask.
void WindowMax8Avx512(bool is_signed, const uint8_t* const* x, int taps, uint8_t* y, int64_t n);
// sum[c] += the f32 values of channels [0, channels) over `pixels` pixels of `channels`
// (row stride `channels`); AVX-512F.
void SumPixelsAvx512(const float* x, int64_t pixels, int64_t channels, float* sum);
// d[2i] = a[i], d[2i + 1] = b[i] for i < n (SSE2, any x86-64).
void Interleave2(const uint8_t* a, const uint8_t* b, uint8_t* d, int64_t n);
void Interleave2(const uint16_t* a, const uint16_t* b, uint16_t* d, int64_t n);
void Interleave2(const uint32_t* a, const uint32_t* b, uint32_t* d, int64_t n);
void Interleave2(const uint64_t* a, const uint64_t* b, uint64_t* d, int64_t n);

}  // namespace edgec::cpu::vec
