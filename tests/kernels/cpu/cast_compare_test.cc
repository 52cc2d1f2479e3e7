// The fast Cast and comparisons (cast_compare.cc) against the reference kernels: every pair
// of f32, i64, i32, u8, i8 and bool with NaN, +-inf, values past int64 and negative
// fractions among the floats; the comparisons on seeded random shapes that broadcast, with
// ties, for every input dtype (bool for Equal only, as ONNX has it).
#include <limits>

#include "cpu_test_util.h"

namespace edgec::testing_cpu {
namespace {

constexpr DType kTypes[] = {DType::kF32, DType::kI64, DType::kI32, DType::kU8, DType::kI8, DType::kBool};

Tensor Values(DType dt, Dims dims, std::mt19937& rng) {
  Tensor t(dt, std::move(dims));
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 1e19f, -1e19f, -2.7f, 2.5f, -0.5f, 0.0f, 300.0f};
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::kF32) {
      t.data<float>()[i] = i < 10 ? specials[i] : static_cast<float>(RandInt(rng, -400, 400)) / 4.0f;
    } else {
      StoreFromDouble(dt, t.raw(), i, static_cast<double>(RandInt(rng, -3, 3)));
    }
  }
  return t;
}

TEST(CpuCastCompare, CastEqualsReferenceForEveryPair) {
  std::mt19937 rng(7);
  int ran = 0;
  for (DType from : kTypes) {
    for (DType to : kTypes) {
      if (from == DType::kF32 && to == DType::kF32) continue;  // the f32 unary family's
      Attributes a;
      a.Set("to", static_cast<int64_t>(to));
      FastCase c{OpKind::kCast, {Values(from, {3, 7}, rng)}, a};
      const std::string kernel = ExpectMatchesRef(c, 0, 0, fmt::format("{} -> {}", DTypeName(from), DTypeName(to)));
      EXPECT_EQ(kernel, fmt::format("own cast {} -> {}", DTypeName(from), DTypeName(to)));
      ++ran;
    }
  }
  EXPECT_EQ(ran, 35);
}

TEST(CpuCastCompare, ComparisonsEqualReferenceWithBroadcasting) {
  std::mt19937 rng(11);
  const OpKind ops[] = {OpKind::kEqual, OpKind::kLess, OpKind::kGreater, OpKind::kLessOrEqual, OpKind::kGreaterOrEqual};
  int ran = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 0, 3));
    Dims out(rank);
    for (auto& d : out) d = RandInt(rng, 1, 5);
    Dims a = out, b = out;
    for (int i = 0; i < rank; ++i) {
      if (RandInt(rng, 0, 2) == 0) a[i] = 1;
      if (RandInt(rng, 0, 2) == 0) b[i] = 1;
    }
    if (rank > 0 && RandInt(rng, 0, 1)) b.erase(b.begin());  // fewer dims: right-aligned
    const DType dt = kTypes[trial % 6];
    const OpKind op = dt == DType::kBool ? OpKind::kEqual : ops[trial % 5];  // bools: Equal only (ONNX)
    FastCase c{op, {Values(dt, a, rng), Values(dt, b, rng)}, Attributes()};
    const std::string kernel = ExpectMatchesRef(c, 0, 0, fmt::format("{} {} vs {}", DTypeName(dt), DimsStr(a), DimsStr(b)));
    EXPECT_EQ(kernel, fmt::format("own compare {} -> bool", DTypeName(dt)));
    ++ran;
  }
  EXPECT_EQ(ran, 40);
}

// int_arith.cc: integer Add/Sub/Mul with broadcasting, values large enough to wrap.
TEST(CpuIntArith, IntegerArithmeticEqualsReferenceWithBroadcasting) {
  std::mt19937 rng(13);
  const OpKind ops[] = {OpKind::kAdd, OpKind::kSub, OpKind::kMul};
  for (int trial = 0; trial < 30; ++trial) {
    const int rank = static_cast<int>(RandInt(rng, 0, 3));
    Dims out(rank);
    for (auto& d : out) d = RandInt(rng, 1, 5);
    Dims a = out, b = out;
    for (int i = 0; i < rank; ++i) {
      if (RandInt(rng, 0, 2) == 0) a[i] = 1;
      if (RandInt(rng, 0, 2) == 0) b[i] = 1;
    }
    if (rank > 0 && RandInt(rng, 0, 1)) b.erase(b.begin());
    const DType dt = trial % 2 ? DType::kI64 : DType::kI32;
    Tensor ta = Values(dt, a, rng), tb = Values(dt, b, rng);
    if (ta.numel() > 0) StoreFromDouble(dt, ta.raw(), 0, dt == DType::kI64 ? 9.0e18 : 2.0e9);  // wraps when added
    const OpKind op = ops[trial % 3];
    FastCase c{op, {ta, tb}, Attributes()};
    const std::string kernel = ExpectMatchesRef(c, 0, 0, fmt::format("{} {} {} vs {}", OpName(op), DTypeName(dt), DimsStr(a), DimsStr(b)));
    EXPECT_EQ(kernel, fmt::format("own {} {}", OpName(op), DTypeName(dt)));
  }
}

TEST(CpuIntArith, NotOfBoolsEqualsReference) {
  std::mt19937 rng(15);
  FastCase c{OpKind::kNot, {Values(DType::kBool, {3, 5}, rng)}, Attributes()};
  EXPECT_EQ(ExpectMatchesRef(c, 0, 0, "not"), "own not bool");
}

TEST(CpuIntArith, ShapeEqualsReferenceWithStartAndEnd) {
  std::mt19937 rng(14);
  for (auto [start, end] : std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {1, 3}, {-2, 4}, {-9, 9}, {2, 1}}) {
    Attributes at;
    at.Set("start", start);
    at.Set("end", end);
    FastCase c{OpKind::kShape, {Values(DType::kF32, {2, 3, 4, 5}, rng)}, at};
    EXPECT_EQ(ExpectMatchesRef(c, 0, 0, fmt::format("start {} end {}", start, end)), "own shape");
  }
}

}  // namespace
}  // namespace edgec::testing_cpu
