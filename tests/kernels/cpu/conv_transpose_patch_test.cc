// The own ConvTranspose for kernels that equal their strides (kernels/cpu/
// conv_transpose_patch.cc) against the reference kernel.
#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

// ConvTransposes whose kernel equals their strides (NHWC, no pads) run on the own patch
// kernel (conv_transpose_patch.cc): every ISA, 1 and 2 threads, with and without bias,
// channel counts off the vector widths (1 output channel, as a segmentation head's last
// upsampler), pixel counts off its blocks of 64; with pads it is refused for oneDNN.
TEST(CpuConv, ConvTransposePatchesMatchReference) {
  std::mt19937 rng(65);
  ForEachIsa([&] {
    for (int trial = 0; trial < 12; ++trial) {
      const int64_t kh = 1 + trial % 3, kw = trial % 4 == 3 ? 1 : kh;
      const int64_t cin = RandInt(rng, 1, 40), cout = trial % 3 == 0 ? 1 : RandInt(rng, 2, 40);
      const Dims x = {RandInt(rng, 1, 2), cin, RandInt(rng, 1, 13), RandInt(rng, 1, 13)};
      Attributes a;
      a.Set("kernel_shape", std::vector<int64_t>{kh, kw});
      a.Set("strides", std::vector<int64_t>{kh, kw});
      testing_mv::Inputs in = {Random(x, rng), Random({cin, cout, kh, kw}, rng)};
      if (trial % 2) in.push_back(Random({cout}, rng));
      FastCase c{OpKind::kConvTranspose, in, a};
      c.constants = {1, 2};
      c.nhwc = true;
      c.threads = 1 + trial % 2;
      const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("deconv x {} k {}x{} -> {}", DimsStr(x), kh, kw, cout));
      EXPECT_NE(d.find("own conv-transpose"), std::string::npos) << d;
    }
  });
  Attributes padded;
  padded.Set("kernel_shape", std::vector<int64_t>{2, 2});
  padded.Set("strides", std::vector<int64_t>{2, 2});
  padded.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  FastCase c{OpKind::kConvTranspose, {Random({1, 8, 6, 6}, rng), Random({8, 4, 2, 2}, rng)}, padded};
  c.constants = {1};
  c.nhwc = true;
  const std::string d = ExpectMatchesRef(c, 1e-4, 1e-5, "padded deconv");
  EXPECT_EQ(d.find("own conv-transpose"), std::string::npos) << d;
}

}  // namespace
}  // namespace edgec::testing_cpu
