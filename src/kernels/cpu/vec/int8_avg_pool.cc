// The QLinearAveragePool rows of the vector layer (vec/int8.h): NHWC channels widened and
// added into int32 window sums, one pixel at a time (AVX2) or a whole window per 16 channels
// in one register (AVX-512), what the kernel's scalar loop does (int8_avg_pool.cc; guarded
// by the CpuInt8 average-pool tests on every ISA).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/vec/int8.h"
#include "kernels/cpu/vec/int8_simd.h"

namespace edgec::cpu::vec {

__attribute__((target("avx2"))) int64_t AddBytesAvx2(const uint8_t* px, int64_t channels, bool u8, int32_t* isum) {
  int64_t c = 0;
  for (; c + 8 <= channels; c += 8) {
    auto* at = reinterpret_cast<__m256i*>(isum + c);
    _mm256_storeu_si256(at, _mm256_add_epi32(_mm256_loadu_si256(at), Widen8(px + c, u8)));
  }
  return c;
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void WindowSumsAvx512(const uint8_t* first, int64_t rows,
                                                                          int64_t cols, int64_t row_stride,
                                                                          int64_t channels, bool u8, int32_t* isum) {
  for (int64_t c = 0; c < channels; c += 16) {
    const int64_t n = std::min<int64_t>(16, channels - c);
    const __mmask16 m = static_cast<__mmask16>((uint32_t{1} << n) - 1);
    __m512i acc = _mm512_setzero_si512();
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* p = first + r * row_stride + c;
      for (int64_t k = 0; k < cols; ++k) acc = _mm512_add_epi32(acc, Widen16(p + k * channels, m, u8));
    }
    _mm512_mask_storeu_epi32(isum + c, m, acc);
  }
}

}  // namespace edgec::cpu::vec
