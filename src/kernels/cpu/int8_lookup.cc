// The fast 256-entry lookup (QuantizedLookup): y = table[x - lowest(type)], AVX-512 VBMI
// byte permutes where the CPU has them.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

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

// Per channel (ops.def: Table [C, 256], attribute axis): the buffer is `outer` runs of C
// channels of `inner` contiguous bytes each. A channel's run of at least kRunBytes bytes is one
// call of LookupBytes with that channel's table; shorter runs (NHWC, channels innermost)
// index the C tables element by element (tests/kernels/cpu/int8_test.cc PerChannelLookup*).
class ChannelLookupKernel final : public Kernel {
 public:
  static constexpr int64_t kRunBytes = 64;
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const uint8_t*>(in[0]);
    auto* y = static_cast<uint8_t*>(out[0]);
    const int64_t runs = outer_ * channels_;
    if (inner_ >= kRunBytes) {
      ParallelFor(threads_, runs, std::max<int64_t>(1, kInt8Grain / inner_), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r)
          LookupBytes(by_byte_.data() + r % channels_ * 256, x + r * inner_, y + r * inner_, inner_);
      });
      return Status::Ok();
    }
    const int64_t row = channels_ * inner_;  // one run of every channel
    ParallelFor(threads_, outer_, std::max<int64_t>(1, kInt8Grain / row), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const uint8_t* xr = x + o * row;
        uint8_t* yr = y + o * row;
        for (int64_t c = 0; c < channels_; ++c) {
          const uint8_t* t = by_byte_.data() + c * 256;
          for (int64_t i = 0; i < inner_; ++i) yr[c * inner_ + i] = t[xr[c * inner_ + i]];
        }
      }
    });
    return Status::Ok();
  }
  std::string Describe() const override {
    return fmt::format("own per-channel 256-entry lookup ({} tables, runs of {}{})", channels_, inner_,
                       inner_ >= kRunBytes && HasVbmi() ? ", avx512vbmi" : "");
  }
  std::vector<uint8_t> by_byte_;  // [C][256], each table indexed by the input's raw byte
  int64_t outer_ = 0, channels_ = 0, inner_ = 0;
  int threads_ = 1;
};

KernelOr CreateChannelLookupKernel(const KernelRequest& req, const Tensor& t) {
  const TensorDesc& x = req.inputs[0];
  if (x.dtype != DType::kU8 && x.dtype != DType::kI8) return Refuse(req, "a per-channel table for {} input", DTypeName(x.dtype));
  if (t.rank() != 2 || t.dim(1) != 256) return Refuse(req, "the per-channel table is {}, expected [C, 256]", t.TypeString());
  if (!IsDense(x) || !IsDense(req.outputs[0]) || x.layout != req.outputs[0].layout)
    return Refuse(req, "input and output are not dense in one layout");
  const int rank = static_cast<int>(x.dims.size());
  const int64_t given = req.attrs ? req.attrs->GetInt("axis", 1) : 1;
  const int64_t axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis >= rank) return Refuse(req, "attribute axis {} for a {}-d input", given, rank);
  // The channel axis in memory order: NHWC keeps channel axis 1 of a 4-d tensor innermost.
  Dims mem = x.dims;
  int64_t at = axis;
  if (x.layout == Layout::kNHWC && rank == 4) {
    mem = {x.dims[0], x.dims[2], x.dims[3], x.dims[1]};
    at = axis == 1 ? 3 : axis == 0 ? 0 : axis - 1;
  } else if (x.layout != Layout::kRowMajor) {
    return Refuse(req, "layout {} of a per-channel lookup", LayoutName(x.layout));
  }
  auto k = std::make_unique<ChannelLookupKernel>();
  k->channels_ = mem[at];
  if (t.dim(0) != k->channels_) return Refuse(req, "{} tables for {} channels", t.dim(0), k->channels_);
  k->outer_ = 1;
  k->inner_ = 1;
  for (int64_t d = 0; d < at; ++d) k->outer_ *= mem[d];
  for (int64_t d = at + 1; d < rank; ++d) k->inner_ *= mem[d];
  const uint8_t flip = x.dtype == DType::kI8 ? 0x80 : 0;  // i8 byte b is entry b ^ 0x80
  const auto* raw = static_cast<const uint8_t*>(t.raw());
  k->by_byte_.resize(k->channels_ * 256);
  for (int64_t c = 0; c < k->channels_; ++c)
    for (int b = 0; b < 256; ++b) k->by_byte_[c * 256 + b] = raw[c * 256 + (b ^ flip)];
  k->threads_ = std::max(1, req.threads);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace

KernelOr CreateLookupKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs");
  if (const Tensor* pc = ConstantOrNull(req, 1); pc && pc->rank() == 2) return CreateChannelLookupKernel(req, *pc);
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
