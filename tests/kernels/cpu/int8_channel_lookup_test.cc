// The per-channel QuantizedLookup (Table [C, 256], attribute axis; ops.def): shape inference
// of good and bad tables, the reference kernel against the definition Y[i] = Table[c(i),
// X[i] - lowest], and the fast CPU kernel against the reference bit for bit (u8 and i8 in and
// out, axis 1 of 4-d NCHW and NHWC and of 3-d tensors, the last axis, C = 1 and odd C, runs of
// one channel long and short, 1 and 2 threads, every vector ISA).
#include <gtest/gtest.h>

#include "cpu_test_util.h"
#include "ir/graph.h"
#include "ir/infer.h"

namespace edgec::testing_cpu {
namespace {

Tensor RandomBytes(DType dt, Dims dims, std::mt19937& rng) {
  Tensor t(dt, std::move(dims));
  auto* d = static_cast<uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = static_cast<uint8_t>(rng());
  return t;
}

// The one-node graph x -> QuantizedLookup(x, table) {axis}, shapes inferred.
Status InferLookup(DType xt, const Dims& x, DType tt, const Dims& table, std::optional<int64_t> axis) {
  Graph g;
  Value* xv = g.AddInput("x", MakeType(xt, x));
  Node* n = g.AddNode(OpKind::kQuantizedLookup, "prelu/lookup", {xv, g.AddConstant("table", Tensor(tt, table))}, 1, {"y"});
  if (axis) n->attrs.Set("axis", *axis);
  g.MarkOutput(n->output(0));
  return InferShapes(g);
}

TEST(ChannelLookup, ShapeInferenceTakesOneTablePerChannel) {
  EXPECT_TRUE(InferLookup(DType::kU8, {1, 5, 3, 3}, DType::kU8, {5, 256}, std::nullopt).ok());  // axis 1 by default
  EXPECT_TRUE(InferLookup(DType::kI8, {2, 7, 9}, DType::kI8, {7, 256}, 1).ok());
  EXPECT_TRUE(InferLookup(DType::kI8, {2, 7, 9}, DType::kU8, {9, 256}, -1).ok());
  EXPECT_TRUE(InferLookup(DType::kI16, {1, 3, 4}, DType::kI8, {3, 65536}, 1).ok());
  EXPECT_TRUE(InferLookup(DType::kU8, {1, 1, 4, 4}, DType::kU8, {1, 256}, 1).ok());
  // A table per channel of another count: the error names the node, the table and the axis.
  Status s = InferLookup(DType::kU8, {1, 5, 3, 3}, DType::kU8, {4, 256}, std::nullopt);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("prelu/lookup"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("input 1 (table)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("has 5 on axis 1"), std::string::npos) << s.message();
  s = InferLookup(DType::kI8, {2, 7, 9}, DType::kI8, {7, 256}, 2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("has 9 on axis 2"), std::string::npos) << s.message();
  // Tables of the wrong length, an axis out of range, an axis without a per-channel table.
  s = InferLookup(DType::kU8, {1, 5, 3, 3}, DType::kU8, {5, 255}, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("expected 256 values per channel"), std::string::npos) << s.message();
  s = InferLookup(DType::kU8, {1, 5, 3, 3}, DType::kU8, {5, 256}, 4);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("prelu/lookup"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("axis"), std::string::npos) << s.message();
  s = InferLookup(DType::kU8, {1, 5, 3, 3}, DType::kU8, {5, 16, 16}, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("[C, 256]"), std::string::npos) << s.message();
  s = InferLookup(DType::kU8, {1, 5, 3, 3}, DType::kU8, {256}, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("attribute axis is for a per-channel table"), std::string::npos) << s.message();
}

// The reference kernel is the definition: element i reads the table of its channel.
TEST(ChannelLookup, ReferenceReadsTheTableOfEachElementsChannel) {
  std::mt19937 rng(4101);
  for (DType xt : {DType::kU8, DType::kI8}) {
    for (int64_t axis : {0, 1, 2, -1}) {
      const Dims d = {2, 3, 5};
      const int64_t a = axis < 0 ? axis + 3 : axis;
      const Tensor x = RandomBytes(xt, d, rng), table = RandomBytes(DType::kI8, {d[a], 256}, rng);
      Attributes attrs;
      attrs.Set("axis", axis);
      auto y = testing_mv::RunOp(OpKind::kQuantizedLookup, {x, table}, attrs);
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      const auto* xb = static_cast<const uint8_t*>(x.raw());
      const auto* tb = static_cast<const int8_t*>(table.raw());
      for (int64_t i0 = 0; i0 < d[0]; ++i0)
        for (int64_t i1 = 0; i1 < d[1]; ++i1)
          for (int64_t i2 = 0; i2 < d[2]; ++i2) {
            const int64_t i = (i0 * d[1] + i1) * d[2] + i2, c = a == 0 ? i0 : a == 1 ? i1 : i2;
            const int index = xt == DType::kI8 ? static_cast<int8_t>(xb[i]) + 128 : xb[i];
            ASSERT_EQ((*y)[0].data<int8_t>()[i], tb[c * 256 + index]) << "axis " << axis << " element " << i;
          }
    }
  }
}

TEST(ChannelLookup, FastKernelEqualsReference) {
  std::mt19937 rng(4102);
  int long_runs = 0, short_runs = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const DType xt = trial % 2 ? DType::kI8 : DType::kU8, yt = trial % 3 ? DType::kU8 : DType::kI8;
    // C = 1, odd C and a wide C; 4-d (NCHW or NHWC), 3-d, the last axis.
    const int64_t c = trial % 4 == 0 ? 1 : trial % 4 == 1 ? 2 * RandInt(rng, 1, 9) + 1 : RandInt(rng, 2, 70);
    Dims dims;
    int64_t axis = 1;
    bool nhwc = false;
    if (trial % 3 == 0) {
      dims = {RandInt(rng, 1, 2), c, RandInt(rng, 1, 17), RandInt(rng, 1, 17)};
      nhwc = trial % 2 == 0;
    } else if (trial % 3 == 1) {
      dims = {RandInt(rng, 1, 2), c, RandInt(rng, 1, 200)};
    } else {
      dims = {RandInt(rng, 1, 3), RandInt(rng, 1, 40), c};
      axis = -1;
    }
    Attributes attrs;
    attrs.Set("axis", axis);
    FastCase fc{OpKind::kQuantizedLookup, {RandomBytes(xt, dims, rng), RandomBytes(yt, {c, 256}, rng)}, attrs};
    fc.constants = {1};
    fc.nhwc = nhwc;
    fc.threads = 1 + trial % 2;
    ForEachIsa([&] {
      const std::string d = ExpectMatchesRef(fc, 0, 0, fmt::format("lookup {} axis {} trial {}", DimsStr(dims), axis, trial));
      EXPECT_NE(d.find("per-channel"), std::string::npos) << d;
      long_runs += d.find("runs of") != std::string::npos && d.find("runs of 1)") == std::string::npos &&
                   d.find("runs of 1,") == std::string::npos;
      short_runs += d.find("runs of 1") != std::string::npos;
    });
  }
  EXPECT_GE(long_runs, 4);
  EXPECT_GE(short_runs, 4);
}

// An int16 index with per-channel tables runs on the reference kernel: the fast one refuses it.
TEST(ChannelLookup, FastKernelRefusesAnInt16Index) {
  std::mt19937 rng(4103);
  Attributes attrs;
  attrs.Set("axis", int64_t{1});
  FastCase fc{OpKind::kQuantizedLookup, {RandomBytes(DType::kI16, {1, 3, 4}, rng), RandomBytes(DType::kU8, {3, 65536}, rng)},
              attrs};
  fc.constants = {1};
  EXPECT_NE(RefusalOf(fc).find("per-channel table for i16 input"), std::string::npos) << RefusalOf(fc);
  auto ref = testing_mv::RunOp(OpKind::kQuantizedLookup, fc.inputs, attrs);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
}

}  // namespace
}  // namespace edgec::testing_cpu
