// Fast QLinearMatMul of two activations (B not a constant: attention's Q·Kᵀ and P·V after
// `edgec quantize`), batched over the leading dims: each batch's B minus its zero point is
// packed transposed as int16 [N, Kp] (Kp = K rounded up to 32, zero padded), each row of A
// minus its zero point widened to int16, and the int32 sums come from the vector layer's
// int16 dot rows (vec/int8_dot.cc; a scalar loop without AVX2), then the requantization
// epilogue of the other int8 kernels (int8_requant.h). Every sum is exact, so the bytes equal
// the reference's (tests/kernels/cpu/int8_act_matmul_test.cc, each ISA cap).
#include <omp.h>

#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/int8_eltwise_util.h"
#include "kernels/cpu/int8_requant.h"
#include "kernels/cpu/vec/int8.h"

namespace edgec::cpu {

namespace {

// K up to this keeps every int32 sum of (±255)·(±255) products exact.
constexpr int64_t kMaxK = 32768;

class Int8ActMatMulKernel final : public Kernel {
 public:
  // Two parallel regions per run (pack every B, then every row of every batch): a region per
  // batch would make each head wait for the slowest thread.
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    auto* base = static_cast<std::byte*>(scratch);
    auto* bt = reinterpret_cast<int16_t*>(base);
    const auto* a = static_cast<const uint8_t*>(in[0]);
    const auto* b = static_cast<const uint8_t*>(in[3]);
    auto* y = static_cast<uint8_t*>(out[0]);
    const bool avx512 = HasAvx512(), avx2 = HasAvx2();
    UseThreads(threads_);
    const int64_t b_count = b_batched_ ? batches_ : 1;
    ParallelFor(threads_, b_count * n_, std::max<int64_t>(1, 4096 / k_), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t batch = q / n_, j = q % n_;
        const uint8_t* bb = b + batch * k_ * n_;
        int16_t* row = bt + q * kp_;
        for (int64_t k = 0; k < k_; ++k) row[k] = static_cast<int16_t>(Value(bb[k * n_ + j], b_u8_) - b_zp_);
        std::fill(row + k_, row + kp_, int16_t{0});
      }
    });
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, n_ * k_));
    ParallelFor(threads_, batches_ * m_, grain, [&](int64_t q0, int64_t q1) {
      std::byte* mine = base + bt_bytes_ + omp_get_thread_num() * per_thread_;
      auto* arow = reinterpret_cast<int16_t*>(mine);
      auto* acc = reinterpret_cast<int32_t*>(mine + kp_ * sizeof(int16_t));
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t batch = q / m_, r = q % m_;
        const int16_t* bpack = bt + (b_batched_ ? batch : 0) * n_ * kp_;
        const uint8_t* src = a + ((a_batched_ ? batch : 0) * m_ + r) * k_;
        for (int64_t k = 0; k < k_; ++k) arow[k] = static_cast<int16_t>(Value(src[k], a_u8_) - a_zp_);
        std::fill(arow + k_, arow + kp_, int16_t{0});
        if (avx512) {
          vec::DotRowsI16Avx512(arow, bpack, kp_, n_, acc);
        } else if (avx2) {
          vec::DotRowsI16Avx2(arow, bpack, kp_, n_, acc);
        } else {
          for (int64_t j = 0; j < n_; ++j) {
            const int16_t* col = bpack + j * kp_;
            int32_t sum = 0;
            for (int64_t k = 0; k < k_; ++k) sum += static_cast<int32_t>(arow[k]) * col[k];
            acc[j] = sum;
          }
        }
        rq_.Run(acc, n_, 0, 1, y + q * n_, n_, 1);
      }
    });
    return Status::Ok();
  }
  size_t scratch_bytes() const override { return bt_bytes_ + static_cast<size_t>(threads_) * per_thread_; }
  std::string Describe() const override {
    return fmt::format("own int8 act matmul ({}) + {}", HasAvx512() ? "avx512" : HasAvx2() ? "avx2" : "scalar", rq_.Word());
  }

  static int32_t Value(uint8_t v, bool u8) { return u8 ? v : static_cast<int8_t>(v); }

  Int8Requant rq_;
  int64_t batches_ = 1, m_ = 0, k_ = 0, kp_ = 0, n_ = 0;
  bool a_batched_ = true, b_batched_ = true, a_u8_ = true, b_u8_ = true;
  int32_t a_zp_ = 0, b_zp_ = 0;
  size_t bt_bytes_ = 0, per_thread_ = 0;
  int threads_ = 1;
};

int64_t Batches(const Dims& d) {
  int64_t n = 1;
  for (size_t i = 0; i + 2 < d.size(); ++i) n *= d[i];
  return n;
}

}  // namespace

KernelOr CreateInt8ActMatMulKernel(const KernelRequest& req) {
  if (req.inputs.size() != 8 && req.inputs.size() != 9) return Refuse(req, "expected 8 or 9 inputs");
  const TensorDesc& a = req.inputs[0];
  const TensorDesc& b = req.inputs[3];
  const TensorDesc& y = req.outputs[0];
  auto quant = [](DType t) { return t == DType::kU8 || t == DType::kI8; };
  if (!quant(a.dtype) || !quant(b.dtype) || !quant(y.dtype)) return Refuse(req, "expected u8/i8 A, B and output");
  if (a.dims.size() < 2 || b.dims.size() < 2) return Refuse(req, "A and B must have rank >= 2");
  for (const TensorDesc* d : {&a, &b, &y}) {
    if (d->layout != Layout::kRowMajor || !IsDense(*d)) return Refuse(req, "A, B and the output must be dense row-major");
  }
  const int64_t m = a.dims[a.dims.size() - 2], k = a.dims.back(), n = b.dims.back();
  if (b.dims[b.dims.size() - 2] != k) return Refuse(req, "A's last dim {} is not B's rows {}", k, b.dims[b.dims.size() - 2]);
  if (k > kMaxK) return Refuse(req, "K {} > {}: int32 sums might overflow", k, kMaxK);
  // Batch dims: equal (after padding with 1s on the left), or all 1 on one side.
  const int64_t ab = Batches(a.dims), bb = Batches(b.dims), yb = Batches(y.dims);
  if (!((ab == bb && ab == yb) || (ab == 1 && bb == yb) || (bb == 1 && ab == yb))) {
    return Refuse(req, "batch dims of A {} and B {} broadcast in a way this kernel does not walk", DimsToString(a.dims),
                  DimsToString(b.dims));
  }
  if (ab == bb && ab > 1) {
    // Same count, same dims (right-aligned): a permuted broadcast like [2, 1] vs [1, 2] is refused.
    Dims pa(a.dims.begin(), a.dims.end() - 2), pb(b.dims.begin(), b.dims.end() - 2);
    while (pa.size() < pb.size()) pa.insert(pa.begin(), 1);
    while (pb.size() < pa.size()) pb.insert(pb.begin(), 1);
    if (pa != pb) return Refuse(req, "batch dims of A {} and B {} differ", DimsToString(a.dims), DimsToString(b.dims));
  }
  double a_scale = 0, b_scale = 0, y_scale = 0;
  int32_t a_zp = 0, b_zp = 0, y_zp = 0;
  RETURN_IF_ERROR(ScalarParams(req, 1, &a_scale, &a_zp));
  RETURN_IF_ERROR(ScalarParams(req, 4, &b_scale, &b_zp));
  RETURN_IF_ERROR(ScalarParams(req, 6, &y_scale, &y_zp));
  const int32_t* bias = nullptr;  // edgec's int32 bias per column (input 8)
  if (req.inputs.size() > 8 && InputOrNull(req, 8)) {
    const Tensor* bt8 = ConstantOrNull(req, 8);
    if (!bt8 || bt8->dtype() != DType::kI32 || bt8->numel() != n) return Refuse(req, "bias is not a constant int32 [{}]", n);
    bias = bt8->data<int32_t>();
  }
  ASSIGN_OR_RETURN(Int8Requant rq, MakeInt8Requant(*req.attrs, req.label, static_cast<float>(a_scale),
                                                   {static_cast<float>(b_scale)}, n, static_cast<float>(y_scale), y_zp,
                                                   y.dtype, bias));
  auto kr = std::make_unique<Int8ActMatMulKernel>();
  kr->rq_ = std::move(rq);
  kr->batches_ = yb;
  kr->a_batched_ = ab > 1;
  kr->b_batched_ = bb > 1;
  kr->m_ = m;
  kr->k_ = k;
  kr->kp_ = (k + 31) / 32 * 32;
  kr->n_ = n;
  kr->a_u8_ = a.dtype == DType::kU8;
  kr->b_u8_ = b.dtype == DType::kU8;
  kr->a_zp_ = a_zp;
  kr->b_zp_ = b_zp;
  kr->threads_ = std::max(1, req.threads);
  auto align = [](size_t v) { return (v + 63) / 64 * 64; };
  kr->bt_bytes_ = align(static_cast<size_t>((bb > 1 ? yb : 1) * n * kr->kp_) * sizeof(int16_t));
  kr->per_thread_ = align(static_cast<size_t>(kr->kp_) * sizeof(int16_t)) + align(static_cast<size_t>(n) * sizeof(int32_t));
  return std::unique_ptr<Kernel>(std::move(kr));
}

}  // namespace edgec::cpu
