// Own Softmax / LogSoftmax (opset-13 single axis). The tensor is viewed in memory order as
// [outer, n, inner] around the axis: inner == 1 runs contiguous rows, otherwise columns
// of `inner` lanes. NHWC tensors map the logical axis onto its memory position (softmax
// over channels of an NHWC tensor is then a contiguous row).
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(bool log, int64_t outer, int64_t n, int64_t inner, int threads)
      : log_(log), outer_(outer), n_(n), inner_(inner), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    const vec::Table& t = vec::Kernels();
    if (inner_ == 1) {
      ParallelFor(threads_, outer_, std::max<int64_t>(1, 4096 / std::max<int64_t>(n_, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t o = begin; o < end; ++o) {
                      t.softmax_row(x + o * n_, y + o * n_, n_, log_, 1.0f, nullptr, 0);
                    }
                  });
      return Status::Ok();
    }
    // Work items: (outer, column block of 64 lanes).
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (inner_ + kBlock - 1) / kBlock;
    ParallelFor(threads_, outer_ * blocks, std::max<int64_t>(1, 4096 / std::max<int64_t>(n_ * kBlock, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t w = begin; w < end; ++w) {
                    const int64_t o = w / blocks, j = (w % blocks) * kBlock;
                    const int64_t base = o * n_ * inner_ + j;
                    t.softmax_columns(x + base, y + base, n_, inner_, std::min(kBlock, inner_ - j), log_);
                  }
                });
    return Status::Ok();
  }

  std::string Describe() const override {
    return fmt::format("own {}softmax {} f32 ({})", log_ ? "log-" : "", vec::Kernels().isa,
                       inner_ == 1 ? "rows" : "columns");
  }

 private:
  bool log_;
  int64_t outer_, n_, inner_;
  int threads_;
};

}  // namespace

KernelOr CreateSoftmaxKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req));
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if (x.layout != y.layout || x.dims != y.dims) return Refuse(req, "input and output placements differ");
  const int rank = static_cast<int>(x.dims.size());
  if (rank == 0) return Refuse(req, "scalar input");
  int64_t axis = req.attrs->GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Refuse(req, "axis {} out of range", axis);
  // Position of the axis in memory order and the extents around it.
  const std::vector<int> order = MemoryOrder(x);
  int pos = 0;
  while (order[pos] != axis) ++pos;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < pos; ++i) outer *= x.dims[order[i]];
  for (int i = pos + 1; i < rank; ++i) inner *= x.dims[order[i]];
  return std::unique_ptr<Kernel>(new SoftmaxKernel(req.op == OpKind::kLogSoftmax, outer,
                                                   x.dims[axis], inner, std::max(1, req.threads)));
}

}  // namespace edgec::cpu
