// The own image convolution (kernels/cpu/image_conv.cc): a planar source of at most 4
// channels into a dense NHWC output of 16..64 channels, forced (KernelTuning::image_conv),
// against the reference conv over kernel sizes, strides, asymmetric pads, widths that leave
// edge and tail pixels, batches, biases and activations; and what it refuses.
#include "cpu_test_util.h"
#include "kernels/cpu/context.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

TEST(CpuImageConv, MatchesReferenceOverGeometriesAndActivations) {
  const bool avx512 = cpu::VectorIsa() == "avx512";  // the image conv is AVX-512 code: elsewhere oneDNN runs
  std::mt19937 rng(91);
  struct Shape {
    int64_t n, c_in, c_out, h, w, kh, kw, stride;
    std::vector<int64_t> pads;
  };
  const std::vector<Shape> shapes = {
      {1, 3, 32, 128, 128, 3, 3, 2, {1, 1, 1, 1}},  // the detector's stem
      {1, 3, 16, 29, 31, 3, 3, 2, {1, 1, 1, 1}},   {2, 1, 48, 17, 23, 5, 5, 1, {2, 2, 2, 2}},
      {1, 4, 64, 19, 40, 7, 7, 2, {3, 2, 1, 3}},   {1, 2, 32, 9, 13, 3, 1, 1, {0, 0, 0, 0}},
      {1, 3, 16, 8, 70, 1, 3, 3, {0, 1, 0, 0}},
  };
  const char* acts[] = {"", "HardSwish", "Relu", "Sigmoid"};
  int k = 0;
  for (const Shape& sh : shapes) {
    for (int variant = 0; variant < 3; ++variant, ++k) {
      Attributes a = Attrs({{"pads", sh.pads}, {"strides", std::vector<int64_t>{sh.stride, sh.stride}},
                            {"kernel_shape", std::vector<int64_t>{sh.kh, sh.kw}}});
      const std::string act = acts[k % 4];
      if (!act.empty()) a.Set("activation", act);
      testing_mv::Inputs in = {Random({sh.n, sh.c_in, sh.h, sh.w}, rng),
                               Random({sh.c_out, sh.c_in, sh.kh, sh.kw}, rng, -0.3f, 0.3f)};
      if (variant != 1) in.push_back(Random({sh.c_out}, rng));
      FastCase c{act.empty() ? OpKind::kConv : OpKind::kFusedConv, in, a};
      c.constants = {1, 2};
      c.nhwc = true;
      c.row_major_inputs = {0};
      c.threads = 1 + variant % 2;
      c.tuning.image_conv = cpu::MeasuredChoice::kSecond;
      const std::string what = fmt::format("{}x{}x{}x{} -> {} channels, {}x{} kernel, stride {}, variant {}, act '{}'", sh.n,
                                           sh.c_in, sh.h, sh.w, sh.c_out, sh.kh, sh.kw, sh.stride, variant, act);
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, what);
      EXPECT_EQ(d.find("own image conv") != std::string::npos, avx512) << what << ": " << d;
    }
  }
}

TEST(CpuImageConv, TakenOverOneDnnAndRefusesWhatItCannotRead) {
  std::mt19937 rng(92);
  Attributes a = Attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}});
  auto make = [&](int64_t c_in, int64_t c_out) {
    FastCase c{OpKind::kConv, {Random({1, c_in, 64, 64}, rng), Random({c_out, c_in, 3, 3}, rng), Random({c_out}, rng)}, a};
    c.constants = {1, 2};
    c.nhwc = true;
    c.row_major_inputs = {0};
    return c;
  };
  // kMeasure takes the own one where it runs and names oneDNN's kernel it replaced (itself
  // chosen by rule, never by a timing); kFirst never takes it.
  FastCase measured = make(3, 32);
  const std::string d = ExpectMatchesRef(measured, 1e-4, 1e-5, "measured");
  EXPECT_EQ(d.find("measured faster than"), std::string::npos) << d;
  if (d.find("own image conv") != std::string::npos) EXPECT_NE(d.find("; in place of [onednn conv"), std::string::npos) << d;
  measured.tuning.image_conv = cpu::MeasuredChoice::kFirst;
  EXPECT_EQ(ExpectMatchesRef(measured, 1e-4, 1e-5, "oneDNN").find("own image conv"), std::string::npos);
  // 5 input channels, 24 output channels, a row-major output: oneDNN's kernels.
  for (auto [c_in, c_out, nhwc_out] : std::vector<std::tuple<int64_t, int64_t, bool>>{{5, 32, true}, {3, 24, true}, {3, 32, false}}) {
    FastCase c = make(c_in, c_out);
    c.nhwc_outputs = nhwc_out;
    c.tuning.image_conv = cpu::MeasuredChoice::kSecond;
    const std::string r = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("{} -> {}", c_in, c_out));
    EXPECT_EQ(r.find("own image conv"), std::string::npos) << c_in << " -> " << c_out << ": " << r;
  }
}

}  // namespace
}  // namespace edgec::testing_cpu
