// Own inference-mode BatchNormalization: a per-channel affine y = x · a[c] + b[c] with
// a = scale / sqrt(var + eps) and b = B − mean · a (computed in double, once at creation when
// the four parameters are constant, else per run into the scratch). Row-major X [N, C, ...]
// runs one affine row per (n, c) plane; NHWC X runs one channel row (a, b as vectors) per
// pixel. What fuse-conv-bn cannot fold lands here (after a ConvTranspose with another
// reader, after an activation, a BatchNormalization alone). Training mode and the running
// statistics outputs stay on the reference kernel. Guarded by
// tests/kernels/cpu/batch_norm_test.cc.
#include <cmath>
#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

// a and b of C channels from scale, B, mean, var (each C floats).
void ChannelAffine(const float* scale, const float* bias, const float* mean, const float* var, double epsilon,
                   int64_t channels, float* a, float* b) {
  for (int64_t c = 0; c < channels; ++c) {
    const double s = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + epsilon);
    a[c] = static_cast<float>(s);
    b[c] = static_cast<float>(static_cast<double>(bias[c]) - static_cast<double>(mean[c]) * s);
  }
}

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(int64_t batch, int64_t channels, int64_t plane, bool nhwc, double epsilon,
                  std::vector<float> folded, int threads)
      : batch_(batch), channels_(channels), plane_(plane), nhwc_(nhwc), epsilon_(epsilon),
        folded_(std::move(folded)), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    const float* a = folded_.data();
    if (folded_.empty()) {
      auto* s = static_cast<float*>(scratch);
      ChannelAffine(static_cast<const float*>(in[1]), static_cast<const float*>(in[2]),
                    static_cast<const float*>(in[3]), static_cast<const float*>(in[4]), epsilon_, channels_, s,
                    s + channels_);
      a = s;
    }
    const float* b = a + channels_;
    const vec::Table& t = vec::Kernels();
    if (nhwc_) {
      const int64_t pixels = batch_ * plane_;
      ParallelFor(threads_, pixels, std::max<int64_t>(1, 8192 / channels_), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) t.channel_affine_row(x + p * channels_, y + p * channels_, channels_, a, b);
      });
      return Status::Ok();
    }
    ParallelFor(threads_, batch_ * channels_, std::max<int64_t>(1, 8192 / plane_), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t c = p % channels_;
        t.affine_row(x + p * plane_, y + p * plane_, plane_, a[c], b[c]);
      }
    });
    return Status::Ok();
  }

  size_t scratch_bytes() const override {
    return folded_.empty() ? static_cast<size_t>(2 * channels_) * sizeof(float) : 0;
  }

  std::string Describe() const override {
    return fmt::format("own batch-norm {} {} f32{}", nhwc_ ? "nhwc" : "row-major", vec::Kernels().isa,
                       folded_.empty() ? "" : " (folded parameters)");
  }

 private:
  int64_t batch_, channels_, plane_;
  bool nhwc_;
  double epsilon_;
  std::vector<float> folded_;  // a then b, C each; empty: computed per run
  int threads_;
};

}  // namespace

KernelOr CreateBatchNormKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req));
  if (req.attrs->GetInt("training_mode", 0) != 0) return Refuse(req, "training mode");
  for (size_t i = 1; i < req.outputs.size(); ++i) {
    if (Present(req.outputs[i])) return Refuse(req, "output {} (running statistics) is requested", i);
  }
  if (req.inputs.size() != 5 || NumPresent(req.inputs) != 5) return Refuse(req, "expected 5 inputs");
  const TensorDesc& x = req.inputs[0];
  if (x.dims.empty()) return Refuse(req, "scalar input");
  if (x.layout != req.outputs[0].layout) {
    return Refuse(req, "input is {}, output {}", LayoutWord(x.layout), LayoutWord(req.outputs[0].layout));
  }
  const int64_t batch = x.dims[0];
  const int64_t channels = x.dims.size() == 1 ? 1 : x.dims[1];
  const int64_t plane = x.dims.size() <= 2 ? 1 : NumElements(Dims(x.dims.begin() + 2, x.dims.end()));
  if (batch * channels * plane == 0) return Refuse(req, "empty input {}", DimsToString(x.dims));
  for (int i = 1; i < 5; ++i) {
    if (NumElements(req.inputs[i].dims) != channels) {
      return Refuse(req, "input {} {} is not one value per channel ({})", i, DimsToString(req.inputs[i].dims),
                    channels);
    }
  }
  const double epsilon = req.attrs->GetFloat("epsilon", 1e-5f);
  std::vector<float> folded;
  if (ConstantOrNull(req, 1) && ConstantOrNull(req, 2) && ConstantOrNull(req, 3) && ConstantOrNull(req, 4)) {
    folded.resize(static_cast<size_t>(2 * channels));
    ChannelAffine(req.constants[1]->data<float>(), req.constants[2]->data<float>(), req.constants[3]->data<float>(),
                  req.constants[4]->data<float>(), epsilon, channels, folded.data(), folded.data() + channels);
  }
  const bool nhwc = x.layout == Layout::kNHWC;
  return std::unique_ptr<Kernel>(
      new BatchNormKernel(batch, channels, plane, nhwc, epsilon, std::move(folded), std::max(1, req.threads)));
}

}  // namespace edgec::cpu
