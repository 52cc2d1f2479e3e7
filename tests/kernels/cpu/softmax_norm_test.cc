// Fast Softmax/LogSoftmax, LayerNormalization, RmsNormalization against the reference
// kernels over seeded random shapes and axes, both layouts, both vector paths.
#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

TEST(CpuSoftmax, EveryAxisMatchesReference) {
  std::mt19937 rng(21);
  ForEachIsa([&] {
    for (int trial = 0; trial < 25; ++trial) {
      const int rank = static_cast<int>(RandInt(rng, 1, 4));
      Dims dims;
      for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, trial % 5 == 0 && i == rank - 1 ? 70 : 13));
      const Tensor x = Random(dims, rng, -20, 20);
      for (int axis = -rank; axis < rank; ++axis) {
        for (OpKind op : {OpKind::kSoftmax, OpKind::kLogSoftmax}) {
          for (bool nhwc : {false, true}) {
            if (nhwc && rank != 4) continue;
            FastCase c{op, {x}, Attrs({{"axis", int64_t{axis}}})};
            c.nhwc = nhwc;
            c.threads = 2;
            ExpectMatchesRef(c, 1e-5, 1e-6, fmt::format("{} {} axis {} nhwc={}", OpName(op), DimsStr(dims), axis, nhwc));
          }
        }
      }
    }
  });
}

TEST(CpuSoftmax, DefaultAxisAndLongRows) {
  std::mt19937 rng(2);
  ForEachIsa([&] {
    for (int64_t n : {1, 7, 8, 9, 128, 1000, 4097}) {
      const Tensor x = Random({3, n}, rng, -50, 50);
      ExpectMatchesRef(FastCase{OpKind::kSoftmax, {x}, {}}, 1e-5, 1e-7, fmt::format("softmax n={}", n));
      ExpectMatchesRef(FastCase{OpKind::kLogSoftmax, {x}, {}}, 1e-5, 1e-5, fmt::format("log-softmax n={}", n));
    }
  });
}

TEST(CpuLayerNorm, MatchesReference) {
  std::mt19937 rng(31);
  ForEachIsa([&] {
    for (int trial = 0; trial < 30; ++trial) {
      const int rank = static_cast<int>(RandInt(rng, 1, 4));
      Dims dims;
      for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, trial % 4 == 0 && i == rank - 1 ? 300 : 17));
      const int axis = static_cast<int>(RandInt(rng, 0, rank - 1));
      const Dims row(dims.begin() + axis, dims.end());
      const Tensor x = Random(dims, rng, -3, 5);
      const Tensor scale = Random(row, rng, 0.5f, 2);
      const bool with_bias = trial % 3 != 0;
      testing_mv::Inputs in = {x, scale};
      if (with_bias) in.push_back(Random(row, rng));
      const float eps = trial % 2 ? 1e-5f : 1e-3f;
      FastCase c{OpKind::kLayerNormalization, in, Attrs({{"axis", int64_t{axis}}, {"epsilon", eps}}), 3};
      c.constants = {1, 2};
      if (trial % 5 == 0) c.skip_outputs = {1, 2};
      ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("layernorm {} axis {}", DimsStr(dims), axis));
    }
  });
}

TEST(CpuLayerNorm, BroadcastConstantScaleIsExpanded) {
  std::mt19937 rng(4);
  const Tensor x = Random({2, 3, 10}, rng);
  FastCase c{OpKind::kLayerNormalization, {x, Random({10}, rng), Random({1}, rng)}, Attrs({{"axis", int64_t{1}}})};
  c.constants = {1, 2};
  ExpectMatchesRef(c, 1e-4, 1e-5, "layernorm broadcast scale");
  // The same scale at run time cannot be expanded: refused with the reason.
  c.constants = {2};
  EXPECT_NE(RefusalOf(c).find("not constant"), std::string::npos) << RefusalOf(c);
}

TEST(CpuRmsNorm, MatchesReference) {
  std::mt19937 rng(41);
  ForEachIsa([&] {
    for (int trial = 0; trial < 20; ++trial) {
      const int rank = static_cast<int>(RandInt(rng, 1, 3));
      Dims dims;
      for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, i == rank - 1 ? 300 : 9));
      const int axis = trial % 2 ? -1 : static_cast<int>(RandInt(rng, 0, rank - 1));
      const int a = axis < 0 ? axis + rank : axis;
      const Dims row(dims.begin() + a, dims.end());
      FastCase c{OpKind::kRmsNormalization, {Random(dims, rng, -2, 3), Random(row, rng)},
                 Attrs({{"axis", int64_t{axis}}, {"epsilon", 1e-6f}})};
      ExpectMatchesRef(c, 1e-4, 1e-5, fmt::format("rmsnorm {} axis {}", DimsStr(dims), axis));
    }
  });
}

}  // namespace
}  // namespace edgec::testing_cpu

namespace edgec::testing_cpu {
namespace {

TEST(CpuInstanceNorm, MatchesReference) {
  std::mt19937 rng(43);
  ForEachIsa([&] {
    for (Dims x : {Dims{1, 3, 5, 7}, Dims{2, 8, 33}, Dims{2, 4, 3, 2, 5}, Dims{1, 16, 64, 64}}) {
      FastCase c{OpKind::kInstanceNormalization,
                 {Random(x, rng, -2, 4), Random({x[1]}, rng, 0.5f, 2), Random({x[1]}, rng)},
                 testing_mv::Attrs({{"epsilon", 1e-4f}})};
      c.threads = 2;
      ExpectMatchesRef(c, 1e-4, 1e-5, "instance norm " + DimsStr(x));
    }
  });
}

TEST(CpuReduce, MatchesReference) {
  std::mt19937 rng(44);
  const std::vector<OpKind> ops = {OpKind::kReduceMean, OpKind::kReduceSum, OpKind::kReduceMax, OpKind::kReduceMin,
                                   OpKind::kReduceProd, OpKind::kReduceL1, OpKind::kReduceL2, OpKind::kReduceSumSquare};
  for (int trial = 0; trial < 48; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 1, 4));
    Dims dims;
    for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, 9));
    std::vector<int64_t> axes;
    for (int a = 0; a < rank; ++a) {
      if (RandInt(rng, 0, 1)) axes.push_back(trial % 2 ? a : a - rank);
    }
    const OpKind op = ops[trial % ops.size()];
    const bool keep = trial % 3 != 0;
    testing_mv::Inputs in = {Random(dims, rng, op == OpKind::kReduceProd ? 0.5f : -2.f, 2.f)};
    if (!axes.empty()) in.push_back(Tensor::VectorI64(axes));
    FastCase c{op, in, testing_mv::Attrs({{"keepdims", int64_t{keep}}})};
    c.constants = {1};
    c.nhwc = rank == 4 && keep && trial % 2;
    if (RefusalOf(c).find("only axes of size 1") != std::string::npos) continue;  // a documented fallback
    if (RefusalOf(c).find("only its reference reduction for nhwc") != std::string::npos) {
      EXPECT_TRUE(c.nhwc);  // documented: the plan stages a row-major copy for the fast kernel
      continue;
    }
    ExpectMatchesRef(c, 1e-5, 1e-6, fmt::format("{} {} axes {} keepdims {}", OpName(op), DimsStr(dims), DimsStr(axes), keep));
  }
}

}  // namespace
}  // namespace edgec::testing_cpu
