// Own RNN, GRU and LSTM (f32, constant weights): the formulas of kernels/ref/recurrent.cc.
// The input projection of every time step does not depend on the state, so it runs first
// as one product per direction, X [seq * batch, input] · Wᵀ + biases, 4 rows at a time
// (vec::Table::gemm_acc; the row blocks split over threads). The recurrence then adds
// h · Rᵀ to each step's row (Rᵀ packed once, row-major, its columns padded to
// vec::kGemmAccAlign) and applies the gate arithmetic, the activations on the vector layer;
// batch entries and directions are independent and split over threads. The activations
// must be ones the vector layer computes (Sigmoid, Tanh, Relu, LeakyRelu, HardSigmoid,
// Softsign, Softplus), without `clip`; other nodes stay on the reference.
// Guarded by tests/kernels/cpu/recurrent_test.cc (every ISA cap, every direction, layout,
// sequence lengths, GRU's linear_before_reset, LSTM's peepholes and input_forget).
#include <algorithm>
#include <cstring>

#include "ir/recurrent.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"
#include "support/status.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kAlign = vec::kGemmAccAlign;
constexpr int64_t kRowBlock = 16;  // rows of the input projection per parallel job
// Multiply-adds of all directions' input projections from which they get a parallel region
// of their own when there are fewer recurrence jobs than threads.
constexpr int64_t kSplitMacs = int64_t{4} << 20;

int64_t Padded(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Rows [row0, row0 + n) of a row-major [rows, k] matrix, transposed: [k, Padded(n)],
// zero in the padding columns.
std::vector<float> PackTransposed(const float* m, int64_t k, int64_t row0, int64_t n) {
  const int64_t np = Padded(n);
  std::vector<float> out(static_cast<size_t>(k * np), 0.0f);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t t = 0; t < k; ++t) out[t * np + j] = m[(row0 + j) * k + t];
  }
  return out;
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
  std::vector<float> w;     // Wᵀ, all gates: [input, Padded(G H)]
  std::vector<float> r;     // Rᵀ, all gates (GRU: z and r): [H, Padded(G H)] (GRU: Padded(2H))
  std::vector<float> r_n;   // GRU: Rnᵀ [H, Padded(H)]
  std::vector<float> bias;  // per gate row: Wb + Rb (GRU's n row: Wbn only), padded with 0
  std::vector<float> rb_n;  // GRU: Rbn (added to Rn h, or to Rn (r ⊙ h))
  std::vector<float> peep;  // LSTM: Pi, Po, Pf (3H) or empty
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
    const int64_t dirs = static_cast<int64_t>(dirs_.size()), rows = seq_ * batch_;
    auto* gx = static_cast<float*>(scratch);  // [dirs][rows][gate_stride_]
    // With a recurrence job for every thread, each job projects its own rows inside the one
    // parallel region; otherwise (fewer jobs than threads) a large projection is split by
    // row blocks first, and a small one stays with its job (a parallel region costs more).
    const int64_t jobs = dirs * batch_;
    const bool split = jobs < threads_ && rows * input_ * gate_stride_ >= kSplitMacs;
    if (split) {
      const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
      ParallelFor(threads_, dirs * blocks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t job = begin; job < end; ++job) {
          const int64_t d = job / blocks, r0 = job % blocks * kRowBlock;
          Project(t, dirs_[d], x, r0, std::min(kRowBlock, rows - r0), 1, gx + d * rows * gate_stride_);
        }
      });
    }
    float* state = gx + dirs * rows * gate_stride_;
    ParallelFor(threads_, jobs, 1, [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t d = job / batch_, b = job % batch_;
        float* gxd = gx + d * rows * gate_stride_;
        if (!split) {
          // Batch entry b's rows: seq of them, contiguous (batch-first, or a batch of 1) or
          // every batch_-th.
          if (batch_first_ || batch_ == 1) Project(t, dirs_[d], x, b * seq_, seq_, 1, gxd);
          else Project(t, dirs_[d], x, b, seq_, batch_, gxd);
        }
        RunOne(t, dirs_[d], d, b, lens ? lens[b] : seq_, gxd, h0, c0, y, yh, yc, state + job * per_job_);
      }
    });
    return Status::Ok();
  }

  size_t scratch_bytes() const override {
    const int64_t dirs = static_cast<int64_t>(dirs_.size());
    return static_cast<size_t>(dirs * seq_ * batch_ * gate_stride_ + per_job_ * dirs * batch_) * sizeof(float);
  }
  std::string Describe() const override { return fmt::format("own {} {} f32 ({})", kind_, vec::Kernels().isa, describe_); }

  // Rows r0, r0 + step, ... (n of them) of gx = X · Wᵀ + biases for one direction.
  void Project(const vec::Table& t, const Direction& dir, const float* x, int64_t r0, int64_t n, int64_t step,
               float* gx) const {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(gx + (r0 + i * step) * gate_stride_, dir.bias.data(), dir.bias.size() * sizeof(float));
    }
    if (step == 1) {
      t.gemm_acc(x + r0 * input_, n, input_, dir.w.data(), gate_stride_, gx + r0 * gate_stride_);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = r0 + i * step;
      t.gemm_acc(x + r * input_, 1, input_, dir.w.data(), gate_stride_, gx + r * gate_stride_);
    }
  }

  // One direction of one batch entry; `gx` holds the direction's input projections, one row
  // of gate_stride_ per (time step, batch entry) as X's rows, and is consumed in place.
  void RunOne(const vec::Table& t, const Direction& dir, int64_t d, int64_t b, int64_t len, float* gx,
              const float* h0, const float* c0, float* y, float* yh, float* yc, float* s) const {
    const int64_t H = hidden_, HP = Padded(H), dirs = static_cast<int64_t>(dirs_.size());
    float* h = s;         // HP
    float* c = h + HP;    // HP
    float* tmp = c + HP;  // HP
    float* rh = tmp + HP;  // Padded(2H)
    auto state_at = [&](int64_t dd, int64_t bb) { return (batch_first_ ? bb * dirs + dd : dd * batch_ + bb) * H; };
    if (h0) std::memcpy(h, h0 + state_at(d, b), static_cast<size_t>(H) * sizeof(float));
    else std::fill(h, h + H, 0.0f);
    if (c0) std::memcpy(c, c0 + state_at(d, b), static_cast<size_t>(H) * sizeof(float));
    else std::fill(c, c + H, 0.0f);
    for (int64_t step = 0; step < len; ++step) {
      const int64_t ts = dir.reverse ? len - 1 - step : step;
      float* g = gx + (batch_first_ ? b * seq_ + ts : ts * batch_ + b) * gate_stride_;
      if (lstm_) {
        t.gemm_acc(h, 1, H, dir.r.data(), gate_stride_, g);
        float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
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
        std::fill(tmp, tmp + HP, 0.0f);
        if (tmp_zr_) std::fill(rh, rh + Padded(2 * H), 0.0f);
        t.gemm_acc(h, 1, H, dir.r.data(), Padded(2 * H), tmp_zr_ ? rh : g);  // z and r rows
        float *z = g, *r = g + H, *n = g + 2 * H;
        if (tmp_zr_) {
          for (int64_t j = 0; j < 2 * H; ++j) g[j] += rh[j];
        }
        t.unary(dir.f, g, g, 2 * H);
        if (linear_before_reset_) {
          t.gemm_acc(h, 1, H, dir.r_n.data(), HP, tmp);
          for (int64_t j = 0; j < H; ++j) n[j] += r[j] * (tmp[j] + dir.rb_n[j]);
        } else {
          for (int64_t j = 0; j < H; ++j) rh[j] = r[j] * h[j];
          t.gemm_acc(rh, 1, H, dir.r_n.data(), HP, tmp);
          for (int64_t j = 0; j < H; ++j) n[j] += tmp[j] + dir.rb_n[j];
        }
        t.unary(dir.g, n, n, H);
        for (int64_t j = 0; j < H; ++j) h[j] = (1 - z[j]) * n[j] + z[j] * h[j];
      } else {
        t.gemm_acc(h, 1, H, dir.r.data(), gate_stride_, g);
        t.unary(dir.f, g, h, H);
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
  bool tmp_zr_ = false;  // GRU: Padded(2H) reaches into the n columns, so h · Rzrᵀ goes to scratch first
  int64_t gates_ = 1, seq_ = 0, batch_ = 0, input_ = 0, hidden_ = 0, gate_stride_ = 0, per_job_ = 0;
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
    dir.w = PackTransposed(wd, k->input_, 0, GH);
    dir.r = PackTransposed(rd, H, 0, k->gru_ ? 2 * H : GH);
    if (k->gru_) dir.r_n = PackTransposed(rd, H, 2 * H, H);
    dir.bias.assign(static_cast<size_t>(Padded(GH)), 0.0f);
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
  k->gate_stride_ = Padded(GH);
  k->tmp_zr_ = k->gru_ && Padded(2 * H) > 2 * H;
  k->per_job_ = 3 * Padded(H) + Padded(2 * H);
  k->threads_ = std::max(1, req.threads);
  k->label_ = req.label;
  k->kind_ = k->lstm_ ? "lstm" : k->gru_ ? "gru" : "rnn";
  k->describe_ = fmt::format("{} direction{}, hidden {}, {} thread{}", dirs, dirs > 1 ? "s" : "", H, k->threads_,
                             k->threads_ > 1 ? "s" : "");
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
