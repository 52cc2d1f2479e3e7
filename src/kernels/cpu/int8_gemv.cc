// The own int8 GEMV for a QLinearConv of one pixel through a 1x1 kernel (AVX-512 VNNI).
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_conv_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec/int8.h"

namespace edgec::cpu {

namespace {

// A QLinearConv of a single pixel through a 1x1 kernel (squeeze-excitation FCs, classifiers
// exported as convs): one row times the weights, where a oneDNN call costs several
// microseconds of overhead for a few thousand MACs. With AVX-512 VNNI each vpdpbusd adds
// four u8 x s8 products to 16 int32 outputs: the weights are packed per 16 outputs and 4
// inputs (64 bytes) in the order they are read, the row's bytes broadcast 4 at a time. An i8
// row is made u8 by adding 128 (folded into the bias with the zero point). Exact.
class Int8GemvKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    // The row as u8 in scratch; bytes past k_ up to a whole quad are left as they are (their
    // packed weights are 0).
    auto* row = static_cast<uint8_t*>(scratch);
    auto* acc = reinterpret_cast<int32_t*>(row + row_bytes_);
    const auto* x = static_cast<const uint8_t*>(in[0]);
    for (int64_t n = 0; n < images_; ++n) {
      const uint8_t* xn = x + n * k_;
      for (int64_t i = 0; i < k_; ++i) row[i] = static_cast<uint8_t>(xn[i] ^ flip_);
      ParallelFor(threads_, blocks_, grain_, [&](int64_t b, int64_t e) { vec::Int8GemvBlocks(row, packed_.data(), quads_, b, e, acc); });
      rq_.Run(acc, m_, 0, 1, static_cast<uint8_t*>(out[0]) + n * m_, m_, 1);
    }
    return Status::Ok();
  }
  size_t scratch_bytes() const override { return row_bytes_ + blocks_ * 16 * sizeof(int32_t); }
  std::string Describe() const override { return describe_; }

  std::vector<int8_t> packed_;  // [block][quad][16 outputs][4 inputs]
  Int8Requant rq_;
  int64_t images_ = 1, k_ = 0, m_ = 0, quads_ = 0, blocks_ = 0, grain_ = 1;
  size_t row_bytes_ = 0;
  uint8_t flip_ = 0;  // 0x80 for an i8 row
  int threads_ = 1;
  std::string describe_;
};

}  // namespace

// The Int8GemvKernel of `req` when it is such a convolution and the CPU has AVX-512 VNNI
// (within the vector ISA cap); nullptr otherwise.
StatusOr<std::unique_ptr<Kernel>> MaybeInt8Gemv(const KernelRequest& req, const Tensor& wt, float x_scale,
                                                int32_t x_zp, const std::vector<float>& w_scale, float y_scale,
                                                int32_t y_zp, const int32_t* bias) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (!OwnAvx512(Avx512Ext::kVnni)) return std::unique_ptr<Kernel>();
  if (x.dims[2] != 1 || x.dims[3] != 1 || y.dims[2] != 1 || y.dims[3] != 1 || wt.dim(2) != 1 || wt.dim(3) != 1 ||
      req.attrs->GetInt("group", 1) != 1 || !IsDense(x) || !IsDense(y)) {
    return std::unique_ptr<Kernel>();
  }
  for (int64_t p : req.attrs->GetInts("pads")) {
    if (p != 0) return std::unique_ptr<Kernel>();
  }
  auto k = std::make_unique<Int8GemvKernel>();
  k->images_ = x.dims[0];
  k->k_ = x.dims[1];
  k->m_ = wt.dim(0);
  k->quads_ = (k->k_ + 3) / 4;
  k->blocks_ = (k->m_ + 15) / 16;
  k->row_bytes_ = (static_cast<size_t>(k->quads_) * 4 + 63) / 64 * 64;
  k->flip_ = x.dtype == DType::kI8 ? 0x80 : 0;
  const int32_t zp = x.dtype == DType::kI8 ? x_zp + 128 : x_zp;  // of the u8 row
  const int8_t* w = wt.data<int8_t>();
  k->packed_.assign(static_cast<size_t>(k->blocks_ * k->quads_ * 64), 0);
  std::vector<int32_t> folded(k->m_);
  for (int64_t o = 0; o < k->m_; ++o) {
    int64_t sum = 0;
    for (int64_t i = 0; i < k->k_; ++i) {
      const int8_t v = w[o * k->k_ + i];
      sum += v;
      k->packed_[((o / 16 * k->quads_ + i / 4) * 16 + o % 16) * 4 + i % 4] = v;
    }
    const int64_t b = (bias ? bias[o] : 0) - static_cast<int64_t>(zp) * sum;
    if (b < INT32_MIN || b > INT32_MAX) return std::unique_ptr<Kernel>();  // the general path refuses it
    folded[o] = static_cast<int32_t>(b);
  }
  ASSIGN_OR_RETURN(k->rq_, MakeInt8Requant(*req.attrs, req.label, x_scale, w_scale, k->m_, y_scale, y_zp, y.dtype,
                                           folded.data()));
  k->threads_ = std::max(1, req.threads);
  k->grain_ = std::max<int64_t>(1, (64 << 10) / (k->quads_ * 64));  // 64 KB of weights per thread at least
  k->describe_ = fmt::format("own int8 gemv avx512_vnni {}x{} ({} {} -> {}) + own {}", k->k_, k->m_, DTypeName(x.dtype),
                             "s8", DTypeName(y.dtype), k->rq_.Word());
  return std::unique_ptr<Kernel>(std::move(k));
}
}  // namespace edgec::cpu
