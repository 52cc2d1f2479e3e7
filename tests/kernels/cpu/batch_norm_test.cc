// The own BatchNormalization kernel (kernels/cpu/batch_norm.cc) against the reference over
// seeded shapes of rank 1 to 5, row-major and NHWC, constant and run-time parameters, one
// and two threads, on every vector ISA; what it refuses, with the reason.
#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

FastCase BatchNormCase(const Dims& dims, std::mt19937& rng, float epsilon) {
  const int64_t c = dims.size() == 1 ? 1 : dims[1];
  return FastCase{OpKind::kBatchNormalization,
                  {Random(dims, rng, -4, 6), Random({c}, rng, 0.5f, 2), Random({c}, rng, -1, 1),
                   Random({c}, rng, -2, 2), Random({c}, rng, 0.1f, 3)},
                  Attrs({{"epsilon", epsilon}})};
}

TEST(CpuBatchNorm, MatchesReferenceInBothLayouts) {
  std::mt19937 rng(61);
  ForEachIsa([&] {
    for (int trial = 0; trial < 40; ++trial) {
      const int rank = static_cast<int>(RandInt(rng, 1, 5));
      Dims dims;
      // Channel counts around the vector widths (8, 16) and planes with tails.
      for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, i == 1 ? 37 : 9));
      FastCase c = BatchNormCase(dims, rng, trial % 2 ? 1e-5f : 1e-2f);
      c.nhwc = rank == 4 && trial % 2 == 0;
      c.threads = trial % 3 == 0 ? 2 : 1;
      if (trial % 4 != 0) c.constants = {1, 2, 3, 4};
      const std::string d = ExpectMatchesRef(
          c, 1e-5, 1e-5, fmt::format("{} nhwc={} constants={}", DimsStr(dims), c.nhwc, !c.constants.empty()));
      EXPECT_NE(d.find("batch-norm"), std::string::npos) << d;
      EXPECT_NE(d.find(c.nhwc ? "nhwc" : "row-major"), std::string::npos) << d;
    }
  });
}

TEST(CpuBatchNorm, LongPlanesAndWideChannels) {
  std::mt19937 rng(62);
  ForEachIsa([&] {
    for (const Dims& dims : {Dims{1, 3, 64, 65}, Dims{2, 130, 5, 7}, Dims{1, 17, 1, 1}}) {
      for (bool nhwc : {false, true}) {
        FastCase c = BatchNormCase(dims, rng, 1e-5f);
        c.nhwc = nhwc;
        c.threads = 2;
        c.constants = {1, 2, 3, 4};
        ExpectMatchesRef(c, 1e-5, 1e-5, fmt::format("{} nhwc={}", DimsStr(dims), nhwc));
      }
    }
  });
}

TEST(CpuBatchNorm, RefusesTrainingMode) {
  std::mt19937 rng(63);
  FastCase c = BatchNormCase({2, 3, 4, 4}, rng, 1e-5f);
  c.attrs.Set("training_mode", int64_t{1});
  c.num_outputs = 3;
  EXPECT_NE(RefusalOf(c).find("training mode"), std::string::npos) << RefusalOf(c);
}

}  // namespace
}  // namespace edgec::testing_cpu
