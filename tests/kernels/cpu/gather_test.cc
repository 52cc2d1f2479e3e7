// The fast Gather (gather.cc) against the reference kernel on seeded random shapes: ranks 1
// to 4, every axis, int32 and int64 indices of rank 0 to 2 with negative entries, f32, i64 and
// u8 data; and the error of an index out of range, named as the reference names it.
#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

Tensor RandomData(DType dt, Dims dims, std::mt19937& rng) {
  Tensor t(dt, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) StoreFromDouble(dt, t.raw(), i, static_cast<double>(RandInt(rng, 0, 200)));
  return t;
}

TEST(CpuGather, EqualsReferenceOnRandomShapes) {
  std::mt19937 rng(4242);
  int ran = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 1, 4));
    Dims dims(rank);
    for (auto& d : dims) d = RandInt(rng, 1, 6);
    const int64_t axis = RandInt(rng, -rank, rank - 1);
    const int64_t len = dims[axis < 0 ? axis + rank : axis];
    const int irank = static_cast<int>(RandInt(rng, 0, 2));
    Dims idims(irank);
    for (auto& d : idims) d = RandInt(rng, 1, 4);
    const DType it = trial % 2 ? DType::kI32 : DType::kI64;
    Tensor idx(it, idims);
    for (int64_t i = 0; i < idx.numel(); ++i) StoreFromDouble(it, idx.raw(), i, static_cast<double>(RandInt(rng, -len, len - 1)));
    const DType dt = trial % 3 == 0 ? DType::kF32 : trial % 3 == 1 ? DType::kI64 : DType::kU8;
    Attributes a;
    a.Set("axis", axis);
    FastCase c{OpKind::kGather, {RandomData(dt, dims, rng), idx}, a};
    c.constants = trial % 4 == 0 ? std::set<int>{1} : std::set<int>{};
    const std::string kernel = ExpectMatchesRef(c, 0, 0, fmt::format("data {} axis {} indices {}", DimsStr(dims), axis, DimsStr(idims)));
    EXPECT_EQ(kernel, "own gather");
    ++ran;
  }
  EXPECT_EQ(ran, 60);
}

TEST(CpuGather, IndexOutOfRangeIsAnError) {
  std::mt19937 rng(1);
  Attributes a;
  a.Set("axis", int64_t{1});
  FastCase c{OpKind::kGather, {RandomData(DType::kF32, {2, 3}, rng), Tensor::VectorI64({0, 3})}, a};
  auto fast = RunFast(c);
  ASSERT_FALSE(fast.ok());
  EXPECT_NE(fast.status().message().find("indices element 1 = 3 is out of range for axis 1 of size 3"), std::string::npos)
      << fast.status().message();
}

}  // namespace
}  // namespace edgec::testing_cpu
