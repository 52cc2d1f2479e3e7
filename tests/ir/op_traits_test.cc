// The op traits of ops.def against what the shape functions and the reference kernels do:
// every op that claims a trait is run, so a trait written on the wrong op fails here.
#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "../kernels/elementwise_test_util.h"
#include "ir/op.h"

namespace edgec {
namespace {

using namespace testing_ew;
using namespace op_trait;

std::vector<OpKind> OpsWith(OpTrait t) {
  std::vector<OpKind> ops;
  for (int i = 0; i < kNumOpKinds; ++i) {
    if (HasTrait(static_cast<OpKind>(i), t)) ops.push_back(static_cast<OpKind>(i));
  }
  return ops;
}

// Distinct values in (0.1, 0.9): inside every elementwise op's domain but Acosh's (NaN there,
// which the comparisons below treat as a value).
Tensor Distinct(const Dims& dims, uint32_t seed) {
  Tensor t(DType::kF32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.1f, 0.9f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng) + 1e-6f * static_cast<float>(i);
  return t;
}

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The data inputs and attributes an elementwise op needs besides its one f32 tensor.
Inputs UnaryInputs(OpKind op, const Tensor& x, Attributes& a) {
  switch (op) {
    case OpKind::kNot: {
      Tensor b(DType::kBool, x.dims());
      for (int64_t i = 0; i < b.numel(); ++i) b.data<bool>()[i] = x.data<float>()[i] > 0.5f;
      return {b};
    }
    case OpKind::kCast: a.Set("to", int64_t{11}); return {x};  // to f64
    case OpKind::kCastLike: return {x, F64({}, {0})};
    default: return {x};
  }
}

TEST(OpTraits, ImpliedTraitsHold) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    const OpKind op = static_cast<OpKind>(i);
    const std::string name(OpName(op));
    EXPECT_FALSE(HasTrait(op, kUnary) && HasTrait(op, kBroadcast)) << name;
    if (HasTrait(op, kAnyLayout)) EXPECT_TRUE(HasTrait(op, kUnary) || HasTrait(op, kBroadcast)) << name;
    if (HasTrait(op, kTabulable)) EXPECT_TRUE(HasTrait(op, kUnary)) << name;
    if (HasTrait(op, kKeepsValues)) EXPECT_TRUE(HasTrait(op, kMovesValues)) << name;
    if (HasTrait(op, kViewOfInput)) EXPECT_TRUE(HasTrait(op, kKeepsValues)) << name;
  }
  // The lists the passes kept before the traits, as a floor: the traits must not lose one.
  EXPECT_GE(OpsWith(kAnyLayout).size(), 38u);
  EXPECT_GE(OpsWith(kTabulable).size(), 13u);
  EXPECT_EQ(OpsWith(kMovesValues).size(), OpsWith(kKeepsValues).size() + 1);  // Concat
}

// kUnary: output i is f(input i): the output has the input's shape, and shuffling the input's
// elements shuffles the output the same way (an op that mixes elements, such as a softmax
// over rows, fails this).
TEST(OpTraits, UnaryOpsAreElementwise) {
  for (OpKind op : OpsWith(kUnary)) {
    const std::string name(OpName(op));
    Tensor x = Distinct({2, 3, 4}, 11);
    std::vector<int64_t> perm(x.numel());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(12));
    Tensor r(DType::kF32, x.dims());
    for (int64_t i = 0; i < x.numel(); ++i) r.data<float>()[i] = x.data<float>()[perm[i]];
    Attributes a;
    Inputs in = UnaryInputs(op, x, a);
    Attributes ar;
    Inputs rin = UnaryInputs(op, r, ar);
    auto y = RunOp(op, in, a);
    auto yr = RunOp(op, rin, ar);
    ASSERT_TRUE(y.ok()) << name << ": " << y.status().message();
    ASSERT_TRUE(yr.ok()) << name << ": " << yr.status().message();
    ASSERT_EQ((*y)[0].dims(), x.dims()) << name;
    const std::vector<double> v = Values((*y)[0]), vr = Values((*yr)[0]);
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_TRUE(SameValue(vr[i], v[perm[i]])) << name << " at " << i;
    }
  }
}

// kBroadcast: numpy broadcasting of [2, 1, 4] with [3, 1] gives [2, 3, 4], and each output
// element is the op of the two elements broadcasting picks.
TEST(OpTraits, BroadcastOpsBroadcastElementwise) {
  for (OpKind op : OpsWith(kBroadcast)) {
    const std::string name(OpName(op));
    Tensor a = Distinct({2, 1, 4}, 3), b = Distinct({3, 1}, 4);
    Attributes attrs;
    Inputs in = {a, b};
    if (op == OpKind::kAnd || op == OpKind::kOr || op == OpKind::kXor) {
      in = {Bool({2, 1, 4}, {1, 0, 1, 0, 0, 0, 1, 1}), Bool({3, 1}, {1, 0, 1})};
    } else if (op == OpKind::kWhere) {
      in = {Bool({2, 1, 4}, {1, 0, 1, 0, 0, 0, 1, 1}), a, b};
    } else if (op == OpKind::kMod) {
      attrs.Set("fmod", int64_t{1});
    } else if (op == OpKind::kPRelu) {
      in = {Distinct({2, 3, 4}, 3), Distinct({4}, 4)};  // the slope broadcasts to X only
    }
    auto y = RunOp(op, in, attrs);
    ASSERT_TRUE(y.ok()) << name << ": " << y.status().message();
    EXPECT_EQ((*y)[0].dims(), (Dims{2, 3, 4})) << name;
    if (op == OpKind::kPRelu || op == OpKind::kWhere) continue;
    // Element (i, j, k) is the op of a[i, 0, k] and b[j, 0]: run the op on those two scalars.
    const std::vector<double> got = Values((*y)[0]);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 4; ++k) {
          Inputs one;
          for (const auto& t : in) {
            const bool first = t->dims().size() == 3;
            const int64_t at = first ? i * 4 + k : j;
            Tensor s(t->dtype(), {});
            std::memcpy(s.raw(), static_cast<const std::byte*>(t->raw()) + at * DTypeSize(t->dtype()), DTypeSize(t->dtype()));
            one.push_back(s);
          }
          auto e = RunOp(op, one, attrs);
          ASSERT_TRUE(e.ok()) << name;
          EXPECT_TRUE(SameValue(got[(i * 3 + j) * 4 + k], Values((*e)[0])[0])) << name << " at " << i << j << k;
        }
      }
    }
  }
}

// kMovesValues: every output value is one of the input values (no arithmetic), and with
// kKeepsValues the op reads one data input. Each op with the trait needs a case here.
TEST(OpTraits, MovingOpsOnlyMoveValues) {
  const Tensor x = Distinct({1, 4, 4, 6}, 7);
  std::map<OpKind, std::pair<Inputs, Attributes>> cases = {
      {OpKind::kMaxPool, {{x}, Attrs({{"kernel_shape", std::vector<int64_t>{2, 2}}})}},
      {OpKind::kGlobalMaxPool, {{x}, {}}},
      {OpKind::kConcat, {{x, Distinct({1, 2, 4, 6}, 8)}, Attrs({{"axis", int64_t{1}}})}},
      {OpKind::kReshape, {{x, I64({2}, {8, 12})}, {}}},
      {OpKind::kFlatten, {{x}, {}}},
      {OpKind::kSqueeze, {{x, I64({1}, {0})}, {}}},
      {OpKind::kUnsqueeze, {{x, I64({1}, {0})}, {}}},
      {OpKind::kTranspose, {{x}, Attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}})}},
      {OpKind::kReverseSequence, {{x, I64({1}, {3})}, Attrs({{"time_axis", int64_t{1}}, {"batch_axis", int64_t{0}}})}},
      {OpKind::kSlice, {{x, I64({1}, {1}), I64({1}, {3}), I64({1}, {2})}, {}}},
      {OpKind::kGather, {{x, I64({3}, {2, 0, 2})}, Attrs({{"axis", int64_t{3}}})}},
      {OpKind::kIdentity, {{x}, {}}},
      {OpKind::kChannelShuffle, {{x}, Attrs({{"group", int64_t{2}}})}},
      {OpKind::kDepthToSpace, {{x}, Attrs({{"blocksize", int64_t{2}}})}},
      {OpKind::kSpaceToDepth, {{x}, Attrs({{"blocksize", int64_t{2}}})}},
      {OpKind::kSplit, {{x}, Attrs({{"axis", int64_t{1}}})}},  // one output: the op runs with one
      {OpKind::kReduceMax, {{x, I64({1}, {1})}, {}}},
      {OpKind::kReduceMin, {{x, I64({2}, {2, 3})}, Attrs({{"keepdims", int64_t{0}}})}},
  };
  for (OpKind op : OpsWith(kMovesValues)) {
    const std::string name(OpName(op));
    auto it = cases.find(op);
    ASSERT_NE(it, cases.end()) << name << " claims kMovesValues: add a case to this test";
    auto& [in, attrs] = it->second;
    std::set<double> seen;
    int data_inputs = 0;
    for (const auto& t : in) {
      if (t->dtype() != DType::kF32) continue;
      ++data_inputs;
      for (double v : Values(*t)) seen.insert(v);
    }
    if (HasTrait(op, kKeepsValues)) EXPECT_EQ(data_inputs, 1) << name;
    auto y = RunOp(op, in, attrs);
    ASSERT_TRUE(y.ok()) << name << ": " << y.status().message();
    for (double v : Values((*y)[0])) EXPECT_TRUE(seen.count(v)) << name << " made " << v;
    if (HasTrait(op, kViewOfInput)) {
      const std::vector<double> vin = Values(*in[0]), vout = Values((*y)[0]);
      EXPECT_EQ(vin, vout) << name << ": a view keeps the row-major order";
    }
  }
}

}  // namespace
}  // namespace edgec
