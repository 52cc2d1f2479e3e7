// The own 3x3 stride-2 Winograd convolution (kernels/cpu/conv3x3_s2_wino.cc) against the
// reference conv over pads (none, symmetric, asymmetric), odd and even sizes (tiles cut by the
// output's edge), channel counts (output channels in chunks of 64 and a remainder), batches,
// biases, activations and threads; the same bits at 1 and 2 threads; what it refuses; and
// oneDNN's kernel under the AVX2 cap.
#include "cpu_test_util.h"
#include "kernels/cpu/context.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

struct Shape {
  int64_t n, c_in, c_out, h, w;
  std::vector<int64_t> pads;
};

FastCase MakeCase(const Shape& sh, const std::string& act, bool bias, std::mt19937& rng) {
  Attributes a = Attrs({{"pads", sh.pads}, {"strides", std::vector<int64_t>{2, 2}},
                        {"kernel_shape", std::vector<int64_t>{3, 3}}});
  if (!act.empty()) a.Set("activation", act);
  testing_mv::Inputs in = {Random({sh.n, sh.c_in, sh.h, sh.w}, rng), Random({sh.c_out, sh.c_in, 3, 3}, rng, -0.3f, 0.3f)};
  if (bias) in.push_back(Random({sh.c_out}, rng));
  FastCase c{act.empty() ? OpKind::kConv : OpKind::kFusedConv, in, a};
  c.constants = {1, 2};
  c.nhwc = true;
  return c;
}

TEST(CpuWinoS2Conv, MatchesReferenceOverGeometriesAndActivations) {
  const bool avx512 = cpu::VectorIsa() == "avx512";  // AVX-512 code: elsewhere oneDNN runs
  std::mt19937 rng(93);
  const std::vector<Shape> shapes = {
      {1, 32, 64, 64, 64, {1, 1, 1, 1}},   // detector_nms's backbone.3
      {1, 64, 128, 16, 16, {1, 1, 1, 1}},  // its backbone.9
      {2, 16, 48, 13, 11, {1, 1, 1, 1}},   {1, 32, 16, 9, 10, {0, 0, 0, 0}},
      {1, 16, 80, 12, 14, {0, 0, 1, 1}},   {1, 48, 32, 7, 27, {1, 0, 0, 1}},
      {1, 16, 16, 2, 3, {1, 1, 1, 1}},
  };
  const char* acts[] = {"", "HardSwish", "Relu", "Sigmoid"};
  int k = 0;
  for (const Shape& sh : shapes) {
    for (int variant = 0; variant < 3; ++variant, ++k) {
      const std::string act = acts[k % 4];
      FastCase c = MakeCase(sh, act, variant != 1, rng);
      c.threads = 1 + variant % 2;
      const std::string what = fmt::format("{}x{}x{}x{} -> {} channels, pads {}, variant {}, act '{}'", sh.n, sh.c_in,
                                           sh.h, sh.w, sh.c_out, fmt::join(sh.pads, ","), variant, act);
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, what);
      EXPECT_EQ(d.find("own winograd 3x3 stride 2") != std::string::npos, avx512) << what << ": " << d;
    }
  }
}

// Tile rows split between threads, and grouped differently at 1 and 2 threads (a 16x16
// input: its 4 tile rows as one group, or two of 2): every output keeps its order of sums.
TEST(CpuWinoS2Conv, SameBitsAtOneAndTwoThreads) {
  std::mt19937 rng(94);
  for (const Shape& sh : std::vector<Shape>{{2, 32, 64, 30, 34, {1, 1, 1, 1}}, {1, 64, 128, 16, 16, {1, 1, 1, 1}}}) {
    FastCase c = MakeCase(sh, "HardSwish", true, rng);
    auto one = RunFast(c);
    c.threads = 2;
    auto two = RunFast(c);
    ASSERT_TRUE(one.ok() && two.ok());
    const Tensor& a = one->outputs[0];
    const Tensor& b = two->outputs[0];
    ASSERT_EQ(a.numel(), b.numel());
    int64_t differ = 0;
    for (int64_t i = 0; i < a.numel(); ++i) differ += std::memcmp(a.data<float>() + i, b.data<float>() + i, sizeof(float)) != 0;
    EXPECT_EQ(differ, 0) << sh.h << "x" << sh.w << ": " << one->describe;
  }
}

TEST(CpuWinoS2Conv, RefusesWhatItCannotRunAndOneDnnRunsIt) {
  std::mt19937 rng(95);
  struct Case {
    Shape shape;
    std::string why;
    bool residual = false, strided1 = false, wino_off = false;
  };
  const std::vector<Case> cases = {
      {{1, 24, 32, 16, 16, {1, 1, 1, 1}}, "24 input channels"},
      {{1, 128, 128, 16, 16, {1, 1, 1, 1}}, "128 x 128 channels (weights past L2)"},
      {{1, 32, 32, 16, 16, {1, 1, 1, 1}}, "a residual", true},
      {{1, 32, 32, 16, 16, {1, 1, 1, 1}}, "stride 1", false, true},
      {{1, 32, 32, 16, 16, {1, 1, 1, 1}}, "Winograd off", false, false, true},
  };
  for (const Case& cs : cases) {
    FastCase c = MakeCase(cs.shape, "Relu", true, rng);
    if (cs.residual) {
      c.inputs.push_back(Random({1, cs.shape.c_out, 8, 8}, rng));
    }
    if (cs.strided1) c.attrs.Set("strides", std::vector<int64_t>{1, 1});
    c.tuning.winograd = !cs.wino_off;
    const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, cs.why);
    EXPECT_EQ(d.find("own winograd 3x3 stride 2"), std::string::npos) << cs.why << ": " << d;
  }
  // Capped at AVX2 the own kernel steps aside for oneDNN's.
  ForEachIsa([&] {
    FastCase c = MakeCase({1, 32, 64, 20, 20, {1, 1, 1, 1}}, "HardSwish", true, rng);
    const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, "isa");
    EXPECT_EQ(d.find("own winograd") != std::string::npos, cpu::VectorIsa() == "avx512") << d;
  });
}

}  // namespace
}  // namespace edgec::testing_cpu
