// Own RNN, GRU and LSTM (f32, constant weights): the formulas of kernels/ref/recurrent.cc,
// one step at a time. W and R are packed once into column panels of vec::kGemvPanel gate rows
// (each panel's input rows one after another, as gemv.cc does), so a step is two packed
// matrix-vector products (x·Wᵀ and h·Rᵀ) plus the gate arithmetic, the activations on the
// vector layer. Batch entries and directions are independent and split over threads. The
// activations must be ones the vector layer computes (Sigmoid, Tanh, Relu, LeakyRelu,
// HardSigmoid, Softsign, Softplus), without `clip`; other nodes stay on the reference.
// Guarded by tests/kernels/cpu/recurrent_test.cc.
#include <algorithm>
#include <cstring>

#include "ir/recurrent.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kP = vec::kGemvPanel;

// rows [row0, row0 + n) of a row-major [rows, k] matrix as the columns of ceil(n / kP)
// panels of k x kP (zero-padded).
std::vector<float> PackRows(const float* m, int64_t k, int64_t row0, int64_t n) {
  const int64_t panels = (n + kP - 1) / kP;
  std::vector<float> out(static_cast<size_t>(panels * k * kP), 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t t = 0; t < k; ++t) out[((j / kP) * k + t) * kP + j % kP] = m[(row0 + j) * k + t];
  }
  return out;
}

// y[0, n) = x · (packed columns): one gemv_panel per panel into scratch `acc` (kP floats).
void PackedGemv(const vec::Table& t, const float* x, const std::vector<float>& packed, int64_t k, int64_t n, float* y) {
  alignas(64) float acc[kP];
  for (int64_t p = 0; p * kP < n; ++p) {
    t.gemv_panel(x, packed.data() + p * k * kP, k, acc);
    std::memcpy(y + p * kP, acc, static_cast<size_t>(std::min(kP, n - p * kP)) * sizeof(float));
  }
}

StatusOr<vec::UnaryFn> VectorActivation(const KernelRequest& req, const RecurrentActivation& a) {
  vec::UnaryFn f;
  f.alpha = static_cast<float>(a.alpha);
  f.beta = static_cast<float>(a.beta);
  if (a.name == "Sigmoid") f.kind = vec::Unary::kSigmoid;
  else if (a.name == "Tanh") f.kind = vec::Unary::kTanh;
  else if (a.name == "Relu") f.kind = vec::Unary::kRelu;
  else if (a.name == "LeakyRelu") f.kind = vec::Unary::kLeakyRelu;
  else if (a.name == "HardSigmoid") f.kind = vec::Unary::kHardSigmoid;
  else if (a.name == "Softsign") f.kind = vec::Unary::kSoftsign;
  else if (a.name == "Softplus") f.kind = vec::Unary::kSoftplus;
  else return Refuse(req, "activation {} has no vector form", a.name);
  return f;
}

struct Direction {
  bool reverse = false;
  std::vector<float> w, r, r_n;  // packed: W (all gates), R (all gates, or GRU's z and r), GRU's Rn
  std::vector<float> bias;       // per gate row: Wb + Rb (GRU's n row: Wbn only)
  std::vector<float> rb_n;       // GRU: Rbn (added to Rn h, or to Rn (r ⊙ h))
  std::vector<float> peep;       // LSTM: Pi, Po, Pf (3H) or empty
  vec::UnaryFn f, g, h;
};

class RecurrentKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    const auto* x = static_cast<const float*>(in[0]);
    const auto* lens = static_cast<const int32_t*>(in.size() > 4 ? in[4] : nullptr);
    const auto* h0 = static_cast<const float*>(in.size() > 5 ? in[5] : nullptr);
    const auto* c0 = static_cast<const float*>(lstm_ && in.size() > 6 ? in[6] : nullptr);
    auto* y = static_cast<float*>(out.size() > 0 ? out[0] : nullptr);
    auto* yh = static_cast<float*>(out.size() > 1 ? out[1] : nullptr);
    auto* yc = static_cast<float*>(out.size() > 2 ? out[2] : nullptr);
    for (int64_t b = 0; lens && b < batch_; ++b) {
      if (lens[b] < 0 || lens[b] > seq_) return Internal("{}: sequence_lens[{}] = {} is outside [0, {}]", label_, b, lens[b], seq_);
    }
    if (y) std::memset(y, 0, static_cast<size_t>(seq_ * dirs_.size() * batch_ * hidden_) * sizeof(float));
    const vec::Table& t = vec::Kernels();
    const int64_t dirs = static_cast<int64_t>(dirs_.size());
    ParallelFor(threads_, dirs * batch_, 1, [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t d = job / batch_, b = job % batch_;
        float* s = static_cast<float*>(scratch) + job * per_job_;
        RunOne(t, dirs_[d], d, b, lens ? lens[b] : seq_, x, h0, c0, y, yh, yc, s);
      }
    });
    return Status::Ok();
  }

  size_t scratch_bytes() const override {
    return static_cast<size_t>(per_job_ * static_cast<int64_t>(dirs_.size()) * batch_) * sizeof(float);
  }
  std::string Describe() const override { return fmt::format("own {} {} f32 ({})", kind_, vec::Kernels().isa, describe_); }

  void RunOne(const vec::Table& t, const Direction& dir, int64_t d, int64_t b, int64_t len, const float* x,
              const float* h0, const float* c0, float* y, float* yh, float* yc, float* s) const {
    const int64_t H = hidden_, GH = gates_ * hidden_, dirs = static_cast<int64_t>(dirs_.size());
    float* h = s;           // H
    float* c = h + H;       // H
    float* gx = c + H;      // GH (+ panel padding)
    float* gh = gx + padded_;
    float* tmp = gh + padded_;  // H (+ padding)
    auto state_at = [&](int64_t dd, int64_t bb) { return (batch_first_ ? bb * dirs + dd : dd * batch_ + bb) * H; };
    if (h0) std::memcpy(h, h0 + state_at(d, b), static_cast<size_t>(H) * sizeof(float));
    else std::fill(h, h + H, 0.0f);
    if (c0) std::memcpy(c, c0 + state_at(d, b), static_cast<size_t>(H) * sizeof(float));
    else std::fill(c, c + H, 0.0f);
    for (int64_t step = 0; step < len; ++step) {
      const int64_t ts = dir.reverse ? len - 1 - step : step;
      const float* xs = x + (batch_first_ ? b * seq_ + ts : ts * batch_ + b) * input_;
      PackedGemv(t, xs, dir.w, input_, GH, gx);
      for (int64_t j = 0; j < GH; ++j) gx[j] += dir.bias[j];
      if (lstm_) {
        PackedGemv(t, h, dir.r, H, GH, gh);
        float *gi = gx, *go = gx + H, *gf = gx + 2 * H, *gc = gx + 3 * H;
        for (int64_t j = 0; j < GH; ++j) gx[j] += gh[j];
        if (!dir.peep.empty()) {
          for (int64_t j = 0; j < H; ++j) gi[j] += dir.peep[j] * c[j], gf[j] += dir.peep[2 * H + j] * c[j];
        }
        t.unary(dir.f, gi, gi, H);
        if (input_forget_) {
          for (int64_t j = 0; j < H; ++j) gf[j] = 1 - gi[j];
        } else {
          t.unary(dir.f, gf, gf, H);
        }
        t.unary(dir.g, gc, gc, H);
        for (int64_t j = 0; j < H; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
        if (!dir.peep.empty()) {
          for (int64_t j = 0; j < H; ++j) go[j] += dir.peep[H + j] * c[j];
        }
        t.unary(dir.f, go, go, H);
        t.unary(dir.h, c, tmp, H);
        for (int64_t j = 0; j < H; ++j) h[j] = go[j] * tmp[j];
      } else if (gru_) {
        PackedGemv(t, h, dir.r, H, 2 * H, gh);  // z and r rows
        float *z = gx, *r = gx + H, *n = gx + 2 * H;
        for (int64_t j = 0; j < 2 * H; ++j) gx[j] += gh[j];
        t.unary(dir.f, gx, gx, 2 * H);
        if (linear_before_reset_) {
          PackedGemv(t, h, dir.r_n, H, H, tmp);
          for (int64_t j = 0; j < H; ++j) n[j] += r[j] * (tmp[j] + dir.rb_n[j]);
        } else {
          for (int64_t j = 0; j < H; ++j) gh[j] = r[j] * h[j];
          PackedGemv(t, gh, dir.r_n, H, H, tmp);
          for (int64_t j = 0; j < H; ++j) n[j] += tmp[j] + dir.rb_n[j];
        }
        t.unary(dir.g, n, n, H);
        for (int64_t j = 0; j < H; ++j) h[j] = (1 - z[j]) * n[j] + z[j] * h[j];
      } else {
        PackedGemv(t, h, dir.r, H, H, gh);
        for (int64_t j = 0; j < H; ++j) gx[j] += gh[j];
        t.unary(dir.f, gx, h, H);
      }
      if (y) {
        const int64_t at = (batch_first_ ? (b * seq_ + ts) * dirs + d : (ts * dirs + d) * batch_ + b) * H;
        std::memcpy(y + at, h, static_cast<size_t>(H) * sizeof(float));
      }
    }
    if (yh) std::memcpy(yh + state_at(d, b), h, static_cast<size_t>(H) * sizeof(float));
    if (yc) std::memcpy(yc + state_at(d, b), c, static_cast<size_t>(H) * sizeof(float));
  }

  bool lstm_ = false, gru_ = false, batch_first_ = false, input_forget_ = false, linear_before_reset_ = false;
  int64_t gates_ = 1, seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0, padded_ = 0, per_job_ = 0;
  std::vector<Direction> dirs_;
  int threads_ = 1;
  std::string label_, kind_, describe_;
};

}  // namespace

KernelOr CreateRecurrentKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req, {0, 1, 2, 3, 5, 6, 7}));
  for (const TensorDesc& o : req.outputs) {
    if (Present(o) && o.dtype != DType::kF32) return Refuse(req, "outputs are {}; this kernel is f32 only", DTypeName(o.dtype));
  }
  RETURN_IF_ERROR(ExpectLayouts(req, Layout::kRowMajor));
  if (req.attrs->Has("clip")) return Refuse(req, "clip is not supported by this kernel");
  for (int i : {1, 2, 3, 7}) {
    if (InputOrNull(req, i) && !ConstantOrNull(req, i)) return Refuse(req, "input {} is not constant", i);
  }
  if (const TensorDesc* l = InputOrNull(req, 4); l && l->dtype != DType::kI32) return Refuse(req, "sequence_lens is not i32");
  auto k = std::make_unique<RecurrentKernel>();
  k->lstm_ = req.op == OpKind::kLSTM;
  k->gru_ = req.op == OpKind::kGRU;
  k->gates_ = RecurrentGates(req.op);
  k->batch_first_ = req.attrs->GetInt("layout", 0) == 1;
  k->input_forget_ = req.attrs->GetInt("input_forget", 0) != 0;
  k->linear_before_reset_ = req.attrs->GetInt("linear_before_reset", 0) != 0;
  const TensorDesc& x = req.inputs[0];
  k->seq_ = x.dims[k->batch_first_ ? 1 : 0];
  k->batch_ = x.dims[k->batch_first_ ? 0 : 1];
  k->input_ = x.dims[2];
  const Tensor& w = *req.constants[1];
  const Tensor& r = *req.constants[2];
  k->hidden_ = r.dim(2);
  const int64_t H = k->hidden_, G = k->gates_, GH = G * H;
  if (H == 0 || k->input_ == 0) return Refuse(req, "empty hidden or input size");
  const std::string direction = req.attrs->GetString("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  auto acts = ReadRecurrentActivations(req.op, *req.attrs, static_cast<int>(dirs));
  if (!acts.ok()) return Refuse(req, "{}", acts.status().message());
  const size_t per_dir = acts->size() / static_cast<size_t>(dirs);
  const Tensor* bias = ConstantOrNull(req, 3);
  const Tensor* peep = k->lstm_ ? ConstantOrNull(req, 7) : nullptr;
  for (int64_t d = 0; d < dirs; ++d) {
    Direction dir;
    dir.reverse = direction == "reverse" || d == 1;
    ASSIGN_OR_RETURN(dir.f, VectorActivation(req, (*acts)[d * per_dir]));
    if (per_dir > 1) {
      ASSIGN_OR_RETURN(dir.g, VectorActivation(req, (*acts)[d * per_dir + 1]));
    }
    if (per_dir > 2) {
      ASSIGN_OR_RETURN(dir.h, VectorActivation(req, (*acts)[d * per_dir + 2]));
    }
    const float* wd = w.data<float>() + d * GH * k->input_;
    const float* rd = r.data<float>() + d * GH * H;
    dir.w = PackRows(wd, k->input_, 0, GH);
    dir.r = PackRows(rd, H, 0, k->gru_ ? 2 * H : GH);
    if (k->gru_) dir.r_n = PackRows(rd, H, 2 * H, H);
    dir.bias.assign(static_cast<size_t>(GH), 0.0f);
    dir.rb_n.assign(static_cast<size_t>(H), 0.0f);
    if (bias) {
      const float* wb = bias->data<float>() + d * 2 * GH;
      const float* rb = wb + GH;
      for (int64_t j = 0; j < GH; ++j) {
        const bool gru_n = k->gru_ && j >= 2 * H;
        dir.bias[j] = wb[j] + (gru_n ? 0.0f : rb[j]);
        if (gru_n) dir.rb_n[j - 2 * H] = rb[j];
      }
    }
    if (peep) dir.peep.assign(peep->data<float>() + d * 3 * H, peep->data<float>() + (d + 1) * 3 * H);
    k->dirs_.push_back(std::move(dir));
  }
  k->padded_ = (GH + kP - 1) / kP * kP;
  k->per_job_ = 2 * H + 2 * k->padded_ + (H + kP - 1) / kP * kP;
  k->threads_ = std::max(1, req.threads);
  k->label_ = req.label;
  k->kind_ = k->lstm_ ? "lstm" : k->gru_ ? "gru" : "rnn";
  k->describe_ = fmt::format("{} direction{}, hidden {}", dirs, dirs > 1 ? "s" : "", H);
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
