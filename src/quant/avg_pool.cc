// The quantized average pool's divisors and multipliers (see avg_pool.h).
#include "quant/avg_pool.h"

namespace edgec::quant {

std::vector<int64_t> AveragePoolDivisors(const WindowGeometry& g, bool count_include_pad) {
  // Per axis, per output index: the window positions counted.
  const int rank = g.rank();
  std::vector<std::vector<int64_t>> axis(rank);
  int64_t plane = 1;
  for (int a = 0; a < rank; ++a) {
    plane *= g.out[a];
    for (int64_t o = 0; o < g.out[a]; ++o) {
      int64_t n = 0;
      for (int64_t k = 0; k < g.kernel[a]; ++k) {
        const int64_t i = o * g.strides[a] - g.pad_begin[a] + k * g.dilations[a];
        if (i >= g.in[a] + g.pad_end[a]) continue;  // past the end pads: never counted
        if (count_include_pad || (i >= 0 && i < g.in[a])) ++n;
      }
      axis[a].push_back(n);
    }
  }
  std::vector<int64_t> d(plane, 1);
  for (int64_t p = 0; p < plane; ++p) {
    int64_t rest = p;
    for (int a = rank - 1; a >= 0; --a) {
      d[p] *= axis[a][rest % g.out[a]];
      rest /= g.out[a];
    }
  }
  return d;
}

StatusOr<FixedPointMultiplier> AveragePoolMultiplier(float x_scale, float y_scale, int64_t divisor) {
  return QuantizeMultiplier(static_cast<double>(x_scale) / static_cast<double>(y_scale) / static_cast<double>(divisor));
}

}  // namespace edgec::quant
