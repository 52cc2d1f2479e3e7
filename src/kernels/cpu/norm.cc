// Own LayerNormalization and RmsNormalization: one vectorized row kernel per normalized
// row (the dims from `axis` on), rows split over threads. Scale and bias are per element
// of a row; constant ones that broadcast are expanded to full rows once, at creation.
// InstanceNormalization (row-major) normalizes each (n, c) plane with per-channel scale
// and bias.
#include <cmath>
#include <cstring>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

// A per-row parameter (Scale, B): read from the input buffer when it already has one
// element per row element, else expanded once from its constant value.
struct RowParam {
  int input = -1;             // -1: absent
  std::vector<float> values;  // the expanded row when the input does not hold one
  const float* Get(std::span<const void* const> in) const {
    if (input < 0) return nullptr;
    return values.empty() ? static_cast<const float*>(in[input]) : values.data();
  }
};

StatusOr<RowParam> MakeRowParam(const KernelRequest& req, int i, const Dims& row_dims) {
  RowParam p;
  const TensorDesc* d = InputOrNull(req, i);
  if (!d) return p;
  p.input = i;
  const int64_t inner = NumElements(row_dims);
  if (NumElements(d->dims) == inner) return p;  // broadcasting to X keeps the element order
  const Tensor* t = ConstantOrNull(req, i);
  if (!t) {
    return Refuse(req, "input {} {} broadcasts within a row and is not constant", i,
                  DimsToString(d->dims));
  }
  // Right-aligned broadcast of t over row_dims.
  const int r = static_cast<int>(row_dims.size()), tr = t->rank();
  if (tr > r) return Refuse(req, "input {} {} has more dims than a row", i, DimsToString(d->dims));
  std::vector<int64_t> strides(r, 0);
  const std::vector<int64_t> own = ContiguousStrides(t->dims());
  for (int k = 0; k < tr; ++k) {
    if (t->dim(k) != 1) strides[r - tr + k] = own[k];
  }
  const float* src = t->data<float>();
  p.values.resize(static_cast<size_t>(inner));
  std::vector<int64_t> index(r, 0);
  for (int64_t e = 0; e < inner; ++e) {
    int64_t off = 0;
    for (int k = 0; k < r; ++k) off += index[k] * strides[k];
    p.values[e] = src[off];
    for (int k = r - 1; k >= 0 && ++index[k] == row_dims[k]; --k) index[k] = 0;
  }
  return p;
}

class NormKernel final : public Kernel {
 public:
  NormKernel(bool rms, int64_t rows, int64_t n, float epsilon, RowParam scale, RowParam bias,
             bool mean_out, bool inv_std_out, int threads)
      : rms_(rms), rows_(rows), n_(n), epsilon_(epsilon), scale_(std::move(scale)),
        bias_(std::move(bias)), mean_out_(mean_out), inv_std_out_(inv_std_out), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    auto* y = static_cast<float*>(out[0]);
    const float* scale = scale_.Get(in);
    const float* bias = bias_.Get(in);
    float* mean = mean_out_ ? static_cast<float*>(out[1]) : nullptr;
    float* inv_std = inv_std_out_ ? static_cast<float*>(out[2]) : nullptr;
    const vec::Table& t = vec::Kernels();
    ParallelFor(threads_, rows_, std::max<int64_t>(1, 8192 / std::max<int64_t>(n_, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    if (rms_) {
                      t.rms_norm_row(x + r * n_, y + r * n_, n_, scale, epsilon_);
                      continue;
                    }
                    float m, s;
                    t.layer_norm_row(x + r * n_, y + r * n_, n_, scale, bias, epsilon_, &m, &s);
                    if (mean) mean[r] = m;
                    if (inv_std) inv_std[r] = s;
                  }
                });
    return Status::Ok();
  }

  std::string Describe() const override {
    return fmt::format("own {} {} f32", rms_ ? "rms-norm" : "layer-norm", vec::Kernels().isa);
  }

 private:
  bool rms_;
  int64_t rows_, n_;
  float epsilon_;
  RowParam scale_, bias_;
  bool mean_out_, inv_std_out_;
  int threads_;
};

class InstanceNormKernel final : public Kernel {
 public:
  InstanceNormKernel(int64_t batch, int64_t channels, int64_t plane, float epsilon, int threads)
      : batch_(batch), channels_(channels), plane_(plane), epsilon_(epsilon), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* x = static_cast<const float*>(in[0]);
    const auto* scale = static_cast<const float*>(in[1]);
    const auto* bias = static_cast<const float*>(in[2]);
    auto* y = static_cast<float*>(out[0]);
    const vec::Table& t = vec::Kernels();
    ParallelFor(threads_, batch_ * channels_, std::max<int64_t>(1, 8192 / std::max<int64_t>(plane_, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t p = begin; p < end; ++p) {
                    const int64_t c = p % channels_;
                    float mean, var;
                    t.moments_row(x + p * plane_, plane_, &mean, &var);
                    const float a = scale[c] / std::sqrt(var + epsilon_);
                    t.affine_row(x + p * plane_, y + p * plane_, plane_, a, bias[c] - mean * a);
                  }
                });
    return Status::Ok();
  }
  std::string Describe() const override { return fmt::format("own instance-norm {} f32", vec::Kernels().isa); }

 private:
  int64_t batch_, channels_, plane_;
  float epsilon_;
  int threads_;
};

KernelOr CreateInstanceNormKernel(const KernelRequest& req) {
  const TensorDesc& x = req.inputs[0];
  if (x.dims.size() < 3) return Refuse(req, "input has {} dims, expected at least 3", x.dims.size());
  for (int i = 1; i < 3; ++i) {
    const TensorDesc* d = InputOrNull(req, i);
    if (!d || NumElements(d->dims) != x.dims[1]) return Refuse(req, "input {} is not one value per channel", i);
  }
  const int64_t plane = NumElements(Dims(x.dims.begin() + 2, x.dims.end()));
  if (plane == 0) return Refuse(req, "empty planes");
  return std::unique_ptr<Kernel>(new InstanceNormKernel(x.dims[0], x.dims[1], plane,
                                                        req.attrs->GetFloat("epsilon", 1e-5f),
                                                        std::max(1, req.threads)));
}

}  // namespace

KernelOr CreateNormKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req));
  RETURN_IF_ERROR(ExpectLayouts(req, Layout::kRowMajor));
  if (req.op == OpKind::kInstanceNormalization) return CreateInstanceNormKernel(req);
  const bool rms = req.op == OpKind::kRmsNormalization;
  const TensorDesc& x = req.inputs[0];
  const int rank = static_cast<int>(x.dims.size());
  if (rank == 0) return Refuse(req, "scalar input");
  int64_t axis = req.attrs->GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Refuse(req, "axis {} out of range", axis);
  const Dims row_dims(x.dims.begin() + axis, x.dims.end());
  const int64_t n = NumElements(row_dims);
  if (n == 0) return Refuse(req, "empty rows");
  const int64_t rows = NumElements(x.dims) / n;
  ASSIGN_OR_RETURN(RowParam scale, MakeRowParam(req, 1, row_dims));
  if (scale.input < 0) return Refuse(req, "Scale is absent");
  RowParam bias;
  if (!rms) {
    ASSIGN_OR_RETURN(bias, MakeRowParam(req, 2, row_dims));
  }
  auto wants = [&](size_t i) { return i < req.outputs.size() && Present(req.outputs[i]); };
  return std::unique_ptr<Kernel>(new NormKernel(rms, rows, n, req.attrs->GetFloat("epsilon", 1e-5f),
                                                std::move(scale), std::move(bias), wants(1), wants(2),
                                                std::max(1, req.threads)));
}

}  // namespace edgec::cpu
