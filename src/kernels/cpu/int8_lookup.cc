// The fast 256-entry lookup (QuantizedLookup): y = table[x - lowest(type)], AVX-512 VBMI
// byte permutes where the CPU has them.
#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"
#include "quant/ratio_forms.h"

namespace edgec::cpu {

namespace {

// 64 lookups at a time: two 128-entry byte permutes (AVX-512 VBMI), the index's top bit
// choosing between them. `table` is indexed by the raw byte.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t LookupVbmi(const uint8_t* table, const uint8_t* x,
                                                                           uint8_t* y, int64_t b, int64_t e) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = b;
  for (; i + 64 <= e; i += 64) {
    const __m512i idx = _mm512_loadu_si512(x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);  // entries 0..127 (bit 6 picks t0/t1)
    const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);  // entries 128..255
    const __mmask64 top = _mm512_movepi8_mask(idx);             // bit 7
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(top, lo, hi));
  }
  return i;
}

bool HasVbmi() {
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return has && &vec::Kernels() != &vec::kScalarTable;
}

}  // namespace

void LookupBytes(const uint8_t* by_byte, const uint8_t* x, uint8_t* y, int64_t n) {
  int64_t i = HasVbmi() ? LookupVbmi(by_byte, x, y, 0, n) : 0;
  for (; i < n; ++i) y[i] = by_byte[x[i]];
}

namespace {

class LookupKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    ParallelFor(threads_, numel_, kInt8Grain, [&](int64_t b, int64_t e) {
      LookupBytes(by_byte_, x + b, y + b, e - b);
    });
    return Status::Ok();
  }
  std::string Describe() const override { return HasVbmi() ? "own 256-entry lookup avx512vbmi" : "own 256-entry lookup"; }
  uint8_t by_byte_[256] = {};  // the table indexed by the input's raw byte
  int64_t numel_ = 0;
  int threads_ = 1;
};

}  // namespace

KernelOr CreateLookupKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs");
  const Tensor* t = ConstantOrNull(req, 1);
  if (!t || t->numel() != 256) return Refuse(req, "the table is not a constant of 256 values");
  if (req.inputs[0].layout != req.outputs[0].layout && req.inputs[0].dims.size() == 4)
    return Refuse(req, "input and output layouts differ");
  auto k = std::make_unique<LookupKernel>();
  const uint8_t flip = req.inputs[0].dtype == DType::kI8 ? 0x80 : 0;  // i8 byte b is entry b ^ 0x80
  for (int b = 0; b < 256; ++b) k->by_byte_[b] = static_cast<const uint8_t*>(t->raw())[b ^ flip];
  k->numel_ = NumElements(req.inputs[0].dims);
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
