// The own Winograd convolution for 3x3 stride-2 f32 convs on dense NHWC activations (oneDNN
// 2.6 has Winograd for stride 1 only): per axis the even taps run as Winograd F(2, 2) and the
// odd tap as a plain product (vec/wino_s2.h has the arithmetic), so a tile of 2x2 outputs
// takes 25 products per channel pair instead of 36. Weights are transformed once,
// [4][4][C][M] (positions 3 and 4 of an axis share the odd tap), and must stay L2-resident:
// C x M at most 8192 (64 x 128); channel counts are multiples of 16; one group, no dilation,
// no residual. Threads split the tile rows (grouped up to 16 tiles); every output sums its
// products in one fixed order, so the bits depend on neither the threads nor the group or
// block a tile falls in. Taken whenever it fits on AVX-512 (KernelTuning::winograd = false
// keeps oneDNN's): a rule, never a timing. tests/kernels/cpu/conv3x3_s2_wino_test.cc: against
// the reference conv over pads, odd sizes, channel counts, batches, biases, activations and
// threads, and the same bits at 1 and 2 threads.
#include "kernels/cpu/context.h"
#include "kernels/cpu/own_conv.h"
#include "kernels/cpu/vec/wino_s2.h"
#include "support/status.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kMaxWeightPairs = 64 * 128;  // C x M: 512 KiB of transformed weights

class WinoS2ConvKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    const int64_t tile_rows = (oh_ + 1) / 2, groups = (tile_rows + group_rows_ - 1) / group_rows_;
    UseThreads(threads_);
    ParallelFor(threads_, n_ * groups, 1, [&](int64_t begin, int64_t end) {
      float* mine = static_cast<float*>(scratch) + omp_get_thread_num() * per_thread_floats_;
      vec::WinoS2Rows r{nullptr, ih_, iw_, c_, pad_top_, pad_left_, weights_.data(),
                        epi_.bias_or_null(), m_, nullptr, oh_, ow_, mine, mine + v_floats_};
      for (int64_t g = begin; g < end; ++g) {
        const int64_t n = g / groups, ty = g % groups * group_rows_, rows = std::min(group_rows_, tile_rows - ty);
        r.x = x + n * ih_ * iw_ * c_;
        r.y = y + n * oh_ * ow_ * m_;
        vec::WinoS2TileRowsAvx512(r, ty, rows);
        epi_.Activate(r.y + 2 * ty * ow_ * m_, std::min(2 * rows, oh_ - 2 * ty) * ow_ * m_);
      }
    });
    return Status::Ok();
  }
  size_t scratch_bytes() const override { return threads_ * per_thread_floats_ * sizeof(float); }
  std::string Describe() const override {
    return "own winograd 3x3 stride 2 nhwc avx512 f32 (F(2,2) on the even taps)" + epi_.Words();
  }

  int64_t n_ = 0, c_ = 0, ih_ = 0, iw_ = 0, m_ = 0, oh_ = 0, ow_ = 0, pad_top_ = 0, pad_left_ = 0;
  int64_t group_rows_ = 1, v_floats_ = 0, per_thread_floats_ = 0;
  std::vector<float> weights_;
  OwnConvEpilogue epi_;
  int threads_ = 1;
};

// The transformed taps of one axis: kind 0 w0, 1 w0 + w2, 2 w2, 3 w1 (vec/wino_s2.h).
float AxisTap(int kind, const float* w, int64_t stride) {
  switch (kind) {
    case 0: return w[0];
    case 1: return w[0] + w[2 * stride];
    case 2: return w[2 * stride];
    default: return w[stride];
  }
}

}  // namespace

KernelOr CreateWinoS2ConvKernel(const KernelRequest& req) {
  if (!req.tuning.winograd) return Refuse(req, "Winograd is turned off");
  if (VectorIsa() != "avx512") return Refuse(req, "the stride-2 Winograd conv needs AVX-512");
  ASSIGN_OR_RETURN(OwnConv conv, ReadOwnConv(req));
  const TensorDesc& x = *conv.x;
  const TensorDesc& y = *conv.y;
  if (x.layout != Layout::kNHWC || !IsDense(x) || y.layout != Layout::kNHWC || !IsDense(y)) {
    return Refuse(req, "needs dense NHWC activations");
  }
  const Dims& ks = conv.geom.kernel;
  if (ks[0] != 3 || ks[1] != 3) return Refuse(req, "needs a 3x3 kernel");
  const int64_t c = x.dims[1], m = y.dims[1];
  if (c % 16 != 0 || m % 16 != 0) return Refuse(req, "needs multiples of 16 channels");
  if (c * m > kMaxWeightPairs) return Refuse(req, "{} x {} channels: the transformed weights would leave L2", c, m);
  if (conv.geom.strides[0] != 2 || conv.geom.strides[1] != 2) return Refuse(req, "needs stride 2");

  auto k = std::make_unique<WinoS2ConvKernel>();
  k->n_ = x.dims[0], k->c_ = c, k->ih_ = x.dims[2], k->iw_ = x.dims[3];
  k->m_ = m, k->oh_ = y.dims[2], k->ow_ = y.dims[3];
  k->pad_top_ = conv.geom.pad_begin[0], k->pad_left_ = conv.geom.pad_begin[1];
  k->threads_ = std::max(1, req.threads);
  // Tile rows go together until they hold 16 tiles (blocks of 6, 5 and 5): a narrow image's
  // row alone makes blocks too small to keep the FMA units busy. Each thread keeps a group at
  // least (the bits do not depend on the grouping).
  const int64_t tiles_x = (k->ow_ + 1) / 2, tile_rows = (k->oh_ + 1) / 2;
  k->group_rows_ = std::max<int64_t>(
      1, std::min((16 + tiles_x - 1) / tiles_x, (tile_rows + k->threads_ - 1) / k->threads_));
  const int64_t tiles = k->group_rows_ * tiles_x;
  k->v_floats_ = tiles * 25 * c;
  k->per_thread_floats_ = (k->v_floats_ + tiles * 4 * m + 15) / 16 * 16;
  // W [m][c][3][3] -> [row kind][column kind][c][m].
  const float* src = conv.w->data<float>();
  k->weights_.resize(16 * c * m);
  for (int qa = 0; qa < 4; ++qa) {
    for (int qb = 0; qb < 4; ++qb) {
      float* dst = k->weights_.data() + (qa * 4 + qb) * c * m;
      for (int64_t o = 0; o < m; ++o) {
        for (int64_t i = 0; i < c; ++i) {
          const float* taps = src + (o * c + i) * 9;
          float rows[3];
          for (int kh = 0; kh < 3; ++kh) rows[kh] = AxisTap(qb, taps + kh * 3, 1);
          dst[i * m + o] = AxisTap(qa, rows, 1);
        }
      }
    }
  }
  k->epi_ = std::move(conv.epilogue);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
