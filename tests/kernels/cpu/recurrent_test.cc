// The own RNN, GRU and LSTM kernel (kernels/cpu/recurrent.cc) against the reference over
// seeded sizes, every direction and layout, with and without biases, initial states,
// sequence lengths, peepholes, input_forget, linear_before_reset and non-default
// activations, on every vector ISA; what it refuses, with the reason.
#include "cpu_test_util.h"
#include "ir/recurrent.h"

namespace edgec::testing_cpu {
namespace {

struct RecurrentConfig {
  OpKind op;
  std::string direction;
  int64_t layout, seq, batch, input, hidden;
  bool bias, initial, lens, peepholes;
};

FastCase RecurrentCase(const RecurrentConfig& c, std::mt19937& rng) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gates = RecurrentGates(c.op);
  const float s = 1.0f / std::sqrt(static_cast<float>(c.hidden));
  testing_mv::Inputs in(c.op == OpKind::kLSTM ? 8 : 6);
  in[0] = Random(c.layout == 0 ? Dims{c.seq, c.batch, c.input} : Dims{c.batch, c.seq, c.input}, rng, -2, 2);
  in[1] = Random({dirs, gates * c.hidden, c.input}, rng, -s, s);
  in[2] = Random({dirs, gates * c.hidden, c.hidden}, rng, -s, s);
  if (c.bias) in[3] = Random({dirs, 2 * gates * c.hidden}, rng, -0.5f, 0.5f);
  if (c.lens) {
    Tensor l(DType::kI32, {c.batch});
    for (int64_t b = 0; b < c.batch; ++b) l.data<int32_t>()[b] = static_cast<int32_t>(RandInt(rng, 0, c.seq));
    in[4] = l;
  }
  const Dims state = c.layout == 0 ? Dims{dirs, c.batch, c.hidden} : Dims{c.batch, dirs, c.hidden};
  if (c.initial) in[5] = Random(state, rng);
  if (c.op == OpKind::kLSTM && c.initial) in[6] = Random(state, rng);
  if (c.op == OpKind::kLSTM && c.peepholes) in[7] = Random({dirs, 3 * c.hidden}, rng, -0.5f, 0.5f);
  Attributes a;
  a.Set("direction", c.direction);
  a.Set("hidden_size", c.hidden);
  a.Set("layout", c.layout);
  FastCase f{c.op, in, a, c.op == OpKind::kLSTM ? 3 : 2};
  f.constants = {1, 2, 3, 7};
  return f;
}

TEST(CpuRecurrent, MatchesReference) {
  std::mt19937 rng(71);
  ForEachIsa([&] {
    for (int trial = 0; trial < 36; ++trial) {
      const OpKind op = trial % 3 == 0 ? OpKind::kLSTM : trial % 3 == 1 ? OpKind::kGRU : OpKind::kRNN;
      const char* dirs[] = {"forward", "reverse", "bidirectional"};
      RecurrentConfig c{op, dirs[(trial / 3) % 3], trial % 2, RandInt(rng, 1, 7), RandInt(rng, 1, 3),
                        RandInt(rng, 1, 40), RandInt(rng, 1, 40), trial % 4 != 0, trial % 5 != 0, trial % 3 == 2,
                        trial % 2 == 0};
      FastCase f = RecurrentCase(c, rng);
      if (op == OpKind::kGRU && trial % 4 == 1) f.attrs.Set("linear_before_reset", int64_t{1});
      if (op == OpKind::kLSTM && trial % 4 == 3) f.attrs.Set("input_forget", int64_t{1});
      if (trial % 7 == 0) {
        // Non-default activations with alpha/beta, per direction.
        std::vector<std::string> per = op == OpKind::kLSTM  ? std::vector<std::string>{"HardSigmoid", "Tanh", "Softsign"}
                                       : op == OpKind::kGRU ? std::vector<std::string>{"Sigmoid", "LeakyRelu"}
                                                            : std::vector<std::string>{"Relu"};
        std::vector<std::string> all;
        for (int d = 0; d < (c.direction == "bidirectional" ? 2 : 1); ++d) all.insert(all.end(), per.begin(), per.end());
        f.attrs.Set("activations", all);
        f.attrs.Set("activation_alpha", std::vector<float>{0.3f, 0.2f, 0.3f, 0.2f});
        f.attrs.Set("activation_beta", std::vector<float>{0.4f, 0.4f});
      }
      if (trial % 6 == 5) f.skip_outputs = {0};
      f.threads = trial % 2 ? 2 : 1;
      const std::string d = ExpectMatchesRef(
          f, 2e-5, 2e-5,
          fmt::format("{} {} layout {} seq {} batch {} input {} hidden {}", OpName(op), c.direction, c.layout, c.seq,
                      c.batch, c.input, c.hidden));
      EXPECT_NE(d.find("own"), std::string::npos) << d;
    }
  });
}

// One recurrence job at two threads with an input projection past the kernel's split
// threshold (4 M multiply-adds; the layer past 8 M, parallel under either wait policy): the
// projection runs by row blocks in a region of its own, then the recurrence; sizes off the
// vector widths so that every column block and row tail is used.
TEST(CpuRecurrent, SplitProjectionMatchesReference) {
  std::mt19937 rng(73);
  ForEachIsa([&] {
    for (OpKind op : {OpKind::kLSTM, OpKind::kGRU, OpKind::kRNN}) {
      const int64_t hidden = op == OpKind::kRNN ? 250 : 77;
      FastCase f = RecurrentCase({op, "reverse", 0, 131, 1, 263, hidden, true, true, false, op == OpKind::kLSTM}, rng);
      f.threads = 2;
      const std::string d = ExpectMatchesRef(f, 5e-5, 5e-5, fmt::format("{} split projection", OpName(op)));
      EXPECT_NE(d.find("own"), std::string::npos) << d;
    }
  });
}

// A layer of fewer multiply-adds than KernelTuning::min_parallel_macs (2^20; the API's 2^23
// with OMP_WAIT_POLICY=passive) is made for one thread when two are asked; a larger one for two.
TEST(CpuRecurrent, SmallLayersRunOnOneThread) {
  std::mt19937 rng(74);
  // 49 steps, 2 directions, hidden 64, input 64: 3.2 M MACs; 400 steps, hidden 128: 105 M.
  struct Case {
    int64_t seq, input, hidden;
    const char* want;
  };
  for (const bool passive : {false, true}) {
    for (const Case& k : {Case{4, 8, 8, "1 thread)"}, Case{49, 64, 64, passive ? "1 thread)" : "2 threads)"},
                          Case{400, 128, 128, "2 threads)"}}) {
      FastCase f = RecurrentCase({OpKind::kLSTM, "bidirectional", 0, k.seq, 1, k.input, k.hidden, true, false, false, false}, rng);
      f.threads = 2;
      f.tuning.min_parallel_macs = passive ? int64_t{1} << 23 : int64_t{1} << 20;
      const std::string d = ExpectMatchesRef(f, 5e-5, 5e-5, fmt::format("lstm seq {} hidden {}", k.seq, k.hidden));
      EXPECT_NE(d.find(k.want), std::string::npos) << d;
    }
  }
}

TEST(CpuRecurrent, RefusesClipAndRunTimeWeights) {
  std::mt19937 rng(72);
  FastCase f = RecurrentCase({OpKind::kLSTM, "forward", 0, 3, 1, 4, 5, true, false, false, false}, rng);
  f.attrs.Set("clip", 1.0f);
  EXPECT_NE(RefusalOf(f).find("clip"), std::string::npos) << RefusalOf(f);
  f.attrs.Erase("clip");
  f.constants = {2, 3};
  EXPECT_NE(RefusalOf(f).find("input 1 is not constant"), std::string::npos) << RefusalOf(f);
}

}  // namespace
}  // namespace edgec::testing_cpu
