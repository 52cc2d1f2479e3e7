// Fast Transpose (and the row-major <-> NHWC conversion), Concat, Split, Slice,
// ChannelShuffle, DepthToSpace, the reshape-like copies and Resize against the reference kernels. Data
// movement is exact.
#include <numeric>

#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

using testing_mv::Attrs;

// Random values of any dtype.
Tensor RandomOf(DType dt, const Dims& dims, std::mt19937& rng) {
  Tensor f = Random(dims, rng, -100, 100);
  return f.CastTo(dt);
}

TEST(CpuMovement, TransposeRandomPermsAndDTypes) {
  std::mt19937 rng(51);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 1, 5));
    Dims dims;
    for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, 9));
    if (trial % 6 == 0) dims[RandInt(rng, 0, rank - 1)] = RandInt(rng, 33, 90);  // one long axis: tiles
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const DType dt = std::vector<DType>{DType::kF32, DType::kI64, DType::kU8, DType::kF16}[trial % 4];
    FastCase c{OpKind::kTranspose, {RandomOf(dt, dims, rng)}, Attrs({{"perm", perm}})};
    c.threads = 2;
    c.nhwc = rank == 4 && trial % 2;
    ExpectMatchesRef(c, 0, 0, fmt::format("transpose {} perm {} {}", DimsStr(dims), DimsStr(perm), DTypeName(dt)));
  }
  // Default perm: reversed.
  ExpectMatchesRef(FastCase{OpKind::kTranspose, {Random({3, 4, 5}, rng)}, {}}, 0, 0, "transpose default");
}

TEST(CpuMovement, LayoutConversionBothWays) {
  std::mt19937 rng(52);
  for (Dims dims : {Dims{1, 64, 56, 56}, Dims{2, 3, 7, 5}, Dims{1, 1, 4, 4}, Dims{3, 17, 1, 9}}) {
    const Tensor x = Random(dims, rng);
    const Attributes identity = Attrs({{"perm", std::vector<int64_t>{0, 1, 2, 3}}, {"edgec_relayout", int64_t{1}}});
    FastCase to_nhwc{OpKind::kTranspose, {x}, identity};  // row-major in, NHWC out
    to_nhwc.nhwc = true;
    to_nhwc.row_major_inputs = {0};
    to_nhwc.threads = 2;
    const std::string d = ExpectMatchesRef(to_nhwc, 0, 0, "to nhwc " + DimsStr(dims));
    EXPECT_NE(d.find("relayout row-major -> nhwc"), std::string::npos) << d;
    FastCase to_rm{OpKind::kTranspose, {x}, identity};  // NHWC in, row-major out
    to_rm.nhwc = true;
    to_rm.nhwc_outputs = false;
    ExpectMatchesRef(to_rm, 0, 0, "to row-major " + DimsStr(dims));
  }
}

// ChannelShuffle against the reference (the Reshape -> Transpose -> Reshape it stands for):
// groups 1 to 4, every dtype size, NHWC (the per-pixel loop when dense, the strided copy
// when the input is row-major) and row-major, 1 and 2 threads; exact.
TEST(CpuMovement, ChannelShuffle) {
  std::mt19937 rng(57);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t g = RandInt(rng, 1, 4);
    const Dims dims = {RandInt(rng, 1, 2), g * RandInt(rng, 1, 40), RandInt(rng, 1, 9), RandInt(rng, 1, 9)};
    const DType dt = std::vector<DType>{DType::kF32, DType::kU8, DType::kF16, DType::kI64}[trial % 4];
    FastCase c{OpKind::kChannelShuffle, {RandomOf(dt, dims, rng)}, Attrs({{"group", g}})};
    c.threads = 1 + trial % 2;
    c.nhwc = trial % 3 != 0;
    if (c.nhwc && trial % 5 == 4) c.row_major_inputs = {0};
    const std::string d = ExpectMatchesRef(c, 0, 0, fmt::format("shuffle {} group {} {}", DimsStr(dims), g, DTypeName(dt)));
    const bool per_pixel = c.nhwc && c.row_major_inputs.empty();
    EXPECT_EQ(d.find("per pixel") != std::string::npos, per_pixel) << d;
  }
}

// DepthToSpace (DCR and CRD, blocksize 1-3) against the reference, NHWC and row-major,
// every dtype size, 1 and 2 threads; exact.
TEST(CpuMovement, DepthToSpace) {
  std::mt19937 rng(59);
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t b = RandInt(rng, 1, 3);
    const Dims dims = {RandInt(rng, 1, 2), b * b * RandInt(rng, 1, 9), RandInt(rng, 1, 7), RandInt(rng, 1, 7)};
    const DType dt = std::vector<DType>{DType::kF32, DType::kI8, DType::kF16, DType::kI64}[trial % 4];
    const std::string mode = trial % 3 == 2 ? "CRD" : "DCR";
    FastCase c{OpKind::kDepthToSpace, {RandomOf(dt, dims, rng)}, Attrs({{"blocksize", b}, {"mode", mode}})};
    c.threads = 1 + trial % 2;
    c.nhwc = trial % 2 == 1;
    const std::string d = ExpectMatchesRef(c, 0, 0, fmt::format("depth to space {} block {} {} {}", DimsStr(dims), b, mode, DTypeName(dt)));
    EXPECT_NE(d.find("depth to space"), std::string::npos) << d;
  }
}

TEST(CpuMovement, ConcatAndSplit) {
  std::mt19937 rng(53);
  for (int trial = 0; trial < 30; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 1, 4));
    Dims base;
    for (int i = 0; i < rank; ++i) base.push_back(RandInt(rng, 1, 8));
    const int axis = static_cast<int>(RandInt(rng, 0, rank - 1));
    const int parts = static_cast<int>(RandInt(rng, 1, 4));
    testing_mv::Inputs in;
    for (int p = 0; p < parts; ++p) {
      Dims d = base;
      d[axis] = RandInt(rng, 1, 6);
      in.push_back(RandomOf(trial % 2 ? DType::kF32 : DType::kI32, d, rng));
    }
    const bool nhwc = rank == 4 && trial % 3 == 0;
    FastCase cat{OpKind::kConcat, in, Attrs({{"axis", int64_t{trial % 2 ? axis : axis - rank}}})};
    cat.nhwc = nhwc;
    if (nhwc && parts > 1) cat.row_major_inputs = {1};  // mixed layouts
    ExpectMatchesRef(cat, 0, 0, fmt::format("concat axis {} of {}", axis, parts));

    // Split the concatenation back along the same axis.
    auto joined = testing_mv::RunOp(OpKind::kConcat, in, Attrs({{"axis", int64_t{axis}}}));
    ASSERT_TRUE(joined.ok());
    std::vector<int64_t> sizes;
    for (const auto& t : in) sizes.push_back(t->dim(axis));
    FastCase split{OpKind::kSplit, {(*joined)[0], Tensor::VectorI64(sizes)}, Attrs({{"axis", int64_t{axis}}}), parts};
    split.constants = {1};
    split.nhwc = nhwc;
    ExpectMatchesRef(split, 0, 0, fmt::format("split axis {} into {}", axis, parts));
  }
}

TEST(CpuMovement, SliceWithStepsAndNegativeBounds) {
  std::mt19937 rng(54);
  for (int trial = 0; trial < 50; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 1, 4));
    Dims dims;
    for (int i = 0; i < rank; ++i) dims.push_back(RandInt(rng, 1, 12));
    std::vector<int64_t> starts, ends, axes, steps;
    for (int a = 0; a < rank; ++a) {
      if (RandInt(rng, 0, 2) == 0) continue;
      const int64_t step = std::vector<int64_t>{1, 1, 2, 3, -1, -2}[RandInt(rng, 0, 5)];
      const int64_t d = dims[a];
      int64_t s = RandInt(rng, -d - 2, d + 2), e = RandInt(rng, -d - 2, d + 2);
      if (step < 0 && RandInt(rng, 0, 3) == 0) e = std::numeric_limits<int64_t>::min();  // "to the start"
      starts.push_back(s);
      ends.push_back(e);
      axes.push_back(trial % 2 ? a : a - rank);
      steps.push_back(step);
    }
    if (starts.empty()) continue;
    FastCase c{OpKind::kSlice,
               {Random(dims, rng), Tensor::VectorI64(starts), Tensor::VectorI64(ends), Tensor::VectorI64(axes),
                Tensor::VectorI64(steps)},
               {}};
    c.constants = {1, 2, 3, 4};
    c.nhwc = rank == 4 && trial % 3 == 0;
    ExpectMatchesRef(c, 0, 0,
                     fmt::format("slice {} starts {} ends {} axes {} steps {}", DimsStr(dims), DimsStr(starts),
                                 DimsStr(ends), DimsStr(axes), DimsStr(steps)));
  }
  // Bounds known only at run time are refused.
  FastCase dynamic{OpKind::kSlice, {Random({4}, rng), Tensor::VectorI64({1}), Tensor::VectorI64({3})}, {}};
  EXPECT_NE(RefusalOf(dynamic).find("not constant"), std::string::npos) << RefusalOf(dynamic);
}

TEST(CpuMovement, ReshapeLikesCopy) {
  std::mt19937 rng(55);
  ExpectMatchesRef(FastCase{OpKind::kReshape, {Random({2, 3, 4}, rng), Tensor::VectorI64({4, -1})}, {}}, 0, 0, "reshape");
  ExpectMatchesRef(FastCase{OpKind::kFlatten, {Random({2, 3, 4, 5}, rng)}, Attrs({{"axis", int64_t{2}}})}, 0, 0, "flatten");
  FastCase nhwc{OpKind::kFlatten, {Random({2, 3, 4, 5}, rng)}, {}};
  nhwc.nhwc = true;
  EXPECT_NE(RefusalOf(nhwc).find("non-row-major"), std::string::npos) << RefusalOf(nhwc);
}

// --- Resize ---

TEST(CpuResize, NearestAndLinearMatchReference) {
  std::mt19937 rng(56);
  const std::vector<std::string> coord = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                          "tf_half_pixel_for_nn"};
  const std::vector<std::string> nearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (int trial = 0; trial < 60; ++trial) {
    const Dims in = {RandInt(rng, 1, 2), RandInt(rng, 1, 5), RandInt(rng, 1, 9), RandInt(rng, 1, 9)};
    const bool linear = trial % 2;
    Attributes a = Attrs({{"mode", std::string(linear ? "linear" : "nearest")},
                          {"coordinate_transformation_mode", coord[trial % coord.size()]},
                          {"nearest_mode", nearest[(trial / 2) % nearest.size()]}});
    if (linear && trial % 4 == 1) a.Set("exclude_outside", int64_t{1});
    testing_mv::Inputs inputs = {Random(in, rng), std::nullopt};
    if (trial % 3 == 0) {  // by sizes
      const Dims out = {in[0], in[1], RandInt(rng, 1, 20), RandInt(rng, 1, 20)};
      inputs.push_back(std::nullopt);
      inputs.push_back(Tensor::VectorI64(out));
    } else {  // by scales
      const std::vector<float> s = {1.f, 1.f, std::vector<float>{0.5f, 2.f, 3.f, 1.5f, 0.75f}[trial % 5],
                                    std::vector<float>{2.f, 0.5f, 1.25f, 3.f}[trial % 4]};
      inputs.push_back(Tensor::FromVector<float>(DType::kF32, {4}, s));
    }
    for (bool nhwc : {false, true}) {
      FastCase c{OpKind::kResize, inputs, a};
      c.constants = {1, 2, 3};
      // The reference moves N and C too under tf_half_pixel_for_nn (ONNX's formula on a
      // unit-scale axis); the fast kernel refuses those.
      if (RefusalOf(c).find("still moves elements") != std::string::npos) {
        EXPECT_EQ(a.GetString("coordinate_transformation_mode"), "tf_half_pixel_for_nn");
        continue;
      }
      c.nhwc = nhwc;
      c.threads = 2;
      ExpectMatchesRef(c, 1e-5, 1e-6,
                       fmt::format("resize {} -> {} {} {} {} exclude_outside={} nhwc={}", DimsStr(in),
                                   DimsStr(inputs.back()->dims()), a.GetString("mode"),
                                   a.GetString("coordinate_transformation_mode"), a.GetString("nearest_mode"),
                                   a.GetInt("exclude_outside", 0), nhwc));
    }
  }
}

// Nearest upsampling large enough to be split over threads: rows gathered, repeated rows
// copied from the row above only within one thread's range.
TEST(CpuResize, NearestGatherSplitOverThreadsMatchesReference) {
  std::mt19937 rng(57);
  for (float scale : {2.f, 3.f, 0.5f}) {
    testing_mv::Inputs inputs = {Random({1, 5, 64, 64}, rng), std::nullopt,
                                 Tensor::FromVector<float>(DType::kF32, {4}, {1.f, 1.f, scale, scale})};
    FastCase c{OpKind::kResize, inputs, Attrs({{"mode", std::string("nearest")}})};
    c.constants = {1, 2};
    c.threads = 2;
    const std::string d = ExpectMatchesRef(c, 0, 0, fmt::format("nearest resize x{}", scale));
    EXPECT_NE(d.find("gather"), std::string::npos) << d;
  }
}

TEST(CpuResize, CubicFallsBack) {
  std::mt19937 rng(57);
  FastCase c{OpKind::kResize,
             {Random({1, 1, 4, 4}, rng), std::nullopt, Tensor::FromVector<float>(DType::kF32, {4}, {1, 1, 2, 2})},
             Attrs({{"mode", std::string("cubic")}})};
  c.constants = {2};
  EXPECT_NE(RefusalOf(c).find("cubic"), std::string::npos) << RefusalOf(c);
}

}  // namespace
}  // namespace edgec::testing_cpu
