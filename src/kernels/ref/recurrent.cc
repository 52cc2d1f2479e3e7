// Reference kernels for the recurrent family (see ops.def): RNN, GRU, LSTM in double, one
// batch entry and one step at a time. Direction "reverse" (and the second direction of
// "bidirectional") runs each batch entry from its last valid step back to 0; steps at or
// beyond sequence_lens[b] leave Y at 0, and Y_h / Y_c hold the state after the last valid
// step. A `clip` attribute clamps every gate's input to [−clip, clip] before its activation.
//   RNN   h' = f(W x + R h + Wb + Rb)
//   GRU   z = f(Wz x + Rz h + bz), r = f(Wr x + Rr h + br),
//         n = g(Wn x + Rn (r ⊙ h) + Rbn + Wbn)   (linear_before_reset = 0)
//         n = g(Wn x + r ⊙ (Rn h + Rbn) + Wbn)   (linear_before_reset = 1),  h' = (1 − z) ⊙ n + z ⊙ h
//   LSTM  i = f(Wi x + Ri h + Pi ⊙ c + bi), f = f(Wf x + Rf h + Pf ⊙ c + bf) (1 − i with
//         input_forget), c' = f ⊙ c + i ⊙ g(Wc x + Rc h + bc), o = f(Wo x + Ro h + Po ⊙ c' + bo),
//         h' = o ⊙ h(c')
#include <algorithm>
#include <vector>

#include "ir/recurrent.h"
#include "kernels/ref/kernel.h"
#include "support/name_list.h"

namespace edgec::ref {

namespace {

Status RunRecurrent(KernelContext& ctx) {
  const OpKind op = ctx.op;
  const bool lstm = op == OpKind::kLSTM, gru = op == OpKind::kGRU;
  const int64_t gates = RecurrentGates(op);
  const Tensor& xt = *ctx.inputs[0];
  const std::vector<double> x = xt.ToDoubleVector(), w = ctx.inputs[1]->ToDoubleVector(),
                            r = ctx.inputs[2]->ToDoubleVector();
  auto optional = [&](int i) { return ctx.input(i) ? ctx.input(i)->ToDoubleVector() : std::vector<double>(); };
  const std::vector<double> bias = optional(3), h0 = optional(5), c0 = lstm ? optional(6) : std::vector<double>(),
                            peep = lstm ? optional(7) : std::vector<double>();
  const std::string direction = ctx.attrs.GetString("direction", "forward");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const bool batch_first = ctx.attrs.GetInt("layout", 0) == 1;
  const int64_t seq = xt.dim(batch_first ? 1 : 0), batch = xt.dim(batch_first ? 0 : 1), in = xt.dim(2);
  const int64_t hidden = ctx.inputs[2]->dim(2);
  const bool has_clip = ctx.attrs.Has("clip");
  const double clip = ctx.attrs.GetFloat("clip", 0.0f);
  const bool input_forget = ctx.attrs.GetInt("input_forget", 0) != 0;
  const bool linear_before_reset = ctx.attrs.GetInt("linear_before_reset", 0) != 0;
  ASSIGN_OR_RETURN(std::vector<RecurrentActivation> acts, ReadRecurrentActivations(op, ctx.attrs, static_cast<int>(dirs)));
  const size_t per_dir = acts.size() / static_cast<size_t>(dirs);
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (const Tensor* l = ctx.input(4)) {
    for (int64_t b = 0; b < batch; ++b) {
      lens[b] = LoadAsInt64(l->dtype(), l->raw(), b);
      if (lens[b] < 0 || lens[b] > seq) return ctx.Error("sequence_lens[{}] = {} is outside [0, {}]", b, lens[b], seq);
    }
  }
  // Element offsets in the layouts: X [t, b, k], Y [t, d, b, j], state [d, b, j].
  auto x_at = [&](int64_t t, int64_t b) { return (batch_first ? b * seq + t : t * batch + b) * in; };
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return (batch_first ? ((b * seq + t) * dirs + d) : ((t * dirs + d) * batch + b)) * hidden;
  };
  auto state_at = [&](int64_t d, int64_t b) { return (batch_first ? b * dirs + d : d * batch + b) * hidden; };
  std::vector<double> y(static_cast<size_t>(seq * dirs * batch * hidden), 0.0);
  std::vector<double> yh(static_cast<size_t>(dirs * batch * hidden)), yc(yh.size());
  auto clamp = [&](double v) { return has_clip ? std::clamp(v, -clip, clip) : v; };
  std::vector<double> gx(static_cast<size_t>(gates * hidden)), gh(gx.size());
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const RecurrentActivation* act = &acts[d * per_dir];
    const double* wd = w.data() + d * gates * hidden * in;
    const double* rd = r.data() + d * gates * hidden * hidden;
    const double* wb = bias.empty() ? nullptr : bias.data() + d * 2 * gates * hidden;
    const double* rb = wb ? wb + gates * hidden : nullptr;
    const double* pd = peep.empty() ? nullptr : peep.data() + d * 3 * hidden;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(static_cast<size_t>(hidden), 0.0), c(h.size(), 0.0), next(h.size());
      if (!h0.empty()) std::copy_n(h0.begin() + state_at(d, b), hidden, h.begin());
      if (!c0.empty()) std::copy_n(c0.begin() + state_at(d, b), hidden, c.begin());
      for (int64_t s = 0; s < lens[b]; ++s) {
        const int64_t t = reverse ? lens[b] - 1 - s : s;
        const double* xs = x.data() + x_at(t, b);
        // gx = W x + Wb, gh = R h + Rb per gate row.
        for (int64_t row = 0; row < gates * hidden; ++row) {
          double sx = wb ? wb[row] : 0, sh = rb ? rb[row] : 0;
          for (int64_t k = 0; k < in; ++k) sx += wd[row * in + k] * xs[k];
          for (int64_t k = 0; k < hidden; ++k) sh += rd[row * hidden + k] * h[k];
          gx[row] = sx;
          gh[row] = sh;
        }
        for (int64_t j = 0; j < hidden; ++j) {
          if (lstm) {
            const double pi = pd ? pd[j] : 0, po = pd ? pd[hidden + j] : 0, pf = pd ? pd[2 * hidden + j] : 0;
            const double ig = act[0](clamp(gx[j] + gh[j] + pi * c[j]));
            const double fg = input_forget ? 1 - ig : act[0](clamp(gx[2 * hidden + j] + gh[2 * hidden + j] + pf * c[j]));
            const double cand = act[1](clamp(gx[3 * hidden + j] + gh[3 * hidden + j]));
            c[j] = fg * c[j] + ig * cand;
            const double og = act[0](clamp(gx[hidden + j] + gh[hidden + j] + po * c[j]));
            next[j] = og * act[2](c[j]);
          } else if (gru) {
            const double z = act[0](clamp(gx[j] + gh[j]));
            const double rg = act[0](clamp(gx[hidden + j] + gh[hidden + j]));
            double pre;
            if (linear_before_reset) {
              pre = gx[2 * hidden + j] + rg * gh[2 * hidden + j];
            } else {
              // Rn (r ⊙ h) + Rbn: the recurrent product again, with the reset state.
              pre = gx[2 * hidden + j] + (rb ? rb[2 * hidden + j] : 0);
              for (int64_t k = 0; k < hidden; ++k) {
                const double hk = act[0](clamp(gx[hidden + k] + gh[hidden + k])) * h[k];
                pre += rd[(2 * hidden + j) * hidden + k] * hk;
              }
            }
            const double n = act[1](clamp(pre));
            next[j] = (1 - z) * n + z * h[j];
          } else {
            next[j] = act[0](clamp(gx[j] + gh[j]));
          }
        }
        h = next;
        std::copy(h.begin(), h.end(), y.begin() + y_at(t, d, b));
      }
      std::copy(h.begin(), h.end(), yh.begin() + state_at(d, b));
      std::copy(c.begin(), c.end(), yc.begin() + state_at(d, b));
    }
  }
  const std::vector<double>* results[] = {&y, &yh, &yc};
  for (size_t i = 0; i < ctx.outputs.size() && i < 3; ++i) {
    Tensor& out = ctx.outputs[i];
    if (out.numel() != static_cast<int64_t>(results[i]->size())) {
      return ctx.Error("output {} {} does not hold {} values", i, out.TypeString(), results[i]->size());
    }
    for (int64_t k = 0; k < out.numel(); ++k) StoreFromDouble(out.dtype(), out.raw(), k, (*results[i])[k]);
  }
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(KernelContext, RunRecurrent, RNN, GRU, LSTM)

}  // namespace edgec::ref
