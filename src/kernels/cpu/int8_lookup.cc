// The fast 256-entry lookup (QuantizedLookup): y = table[x - lowest(type)], AVX-512 VBMI
// byte permutes where the CPU has them.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec.h"
#include "kernels/cpu/vec/int8.h"
#include "quant/exact_scale.h"
#include "quant/fixed_point.h"
#include "quant/ratio_forms.h"

namespace edgec::cpu {

namespace {

bool HasVbmi() { return OwnAvx512(Avx512Ext::kVbmi); }

}  // namespace

void LookupBytes(const uint8_t* by_byte, const uint8_t* x, uint8_t* y, int64_t n) {
  int64_t i = HasVbmi() ? vec::LookupVbmi(by_byte, x, y, 0, n) : 0;
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
