// The folds of ops that only move or compare values (fold_qdq.h): Split, Pad (zeros, reflect,
// edge), GlobalMaxPool, ReduceMax/ReduceMin, SpaceToDepth/DepthToSpace and ArgMax/ArgMin on
// DQ(x) run on the int8 values, and give the island's outputs bit for bit on the reference
// kernels; a Pad of a value other than 0 stays float.
#include <gtest/gtest.h>

#include <functional>

#include "ir/infer.h"
#include "quant/fold_qdq.h"
#include "runtime/reference_executor.h"

#include "quant_test_util.h"

namespace edgec::quant {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Normal;

Attributes Attrs(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.Set(k, v);
  return a;
}

struct Qdq {
  Value* scale;
  Value* zero;
};

Value* QThenDq(Graph& g, Value* v, Qdq p, const std::string& name) {
  Node* q = g.AddNode(OpKind::kQuantizeLinear, name + "/q", {v, p.scale, p.zero}, 1, {name + "/q:0"});
  Node* d = g.AddNode(OpKind::kDequantizeLinear, name + "/dq", {q->output(0), p.scale, p.zero}, 1, {name + "/dq:0"});
  return d->output(0);
}

// x -> Q -> DQ -> op(inputs after the first: `extra`) -> [each float output: Q -> DQ] -> outputs.
Graph Island(DType t, OpKind op, std::vector<Value*> (*extra)(Graph&), Attributes attrs, int outputs = 1) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 8, 8, 8}));
  const int64_t zp = t == DType::kU8 ? 121 : -7;
  Qdq p{g.AddConstant("s", Tensor::Scalar(0.037f)),
        g.AddConstant("z", t == DType::kU8 ? Tensor::FromVector<uint8_t>(t, {}, {static_cast<uint8_t>(zp)})
                                           : Tensor::FromVector<int8_t>(t, {}, {static_cast<int8_t>(zp)}))};
  std::vector<Value*> in = {QThenDq(g, x, p, "in")};
  for (Value* v : extra(g)) in.push_back(v);
  Node* n = g.AddNode(op, "op", in, outputs);
  n->attrs = std::move(attrs);
  EXPECT_TRUE(InferShapes(g).ok());
  for (int k = 0; k < outputs; ++k) {
    Value* y = n->output(k);
    g.MarkOutput(y->type.dtype == DType::kF32 ? QThenDq(g, y, p, fmt::format("out{}", k)) : y);
  }
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

std::vector<Value*> None(Graph&) { return {}; }

// Folds a copy of `island`, requires `op` to read int8/u8 values afterwards (or float when
// `folds` is false), and the same outputs bit for bit on seeded inputs.
void ExpectExactFold(const Graph& island, OpKind op, bool folds = true) {
  Graph folded = island.Clone();
  auto s = FoldQdqToInteger(folded);
  ASSERT_TRUE(s.ok()) << s.status().message();
  int found = 0;
  for (const Node* n : folded.nodes()) {
    if (n->op() != op) continue;
    ++found;
    const DType t = n->input(0)->type.dtype;
    EXPECT_EQ(t == DType::kI8 || t == DType::kU8, folds) << OpName(op) << " reads " << DTypeName(t);
  }
  EXPECT_EQ(found, 1);
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto a = ReferenceExecutor(island).Run({{"x", Normal({1, 8, 8, 8}, seed, 2.0)}});
    auto b = ReferenceExecutor(folded).Run({{"x", Normal({1, 8, 8, 8}, seed, 2.0)}});
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(a->size(), b->size());
    for (size_t i = 0; i < a->size(); ++i) {
      EXPECT_EQ((*a)[i].TypeString(), (*b)[i].TypeString());
      EXPECT_EQ((*a)[i].ToDoubleVector(), (*b)[i].ToDoubleVector()) << OpName(op) << " output " << i;
    }
  }
}

std::vector<Value*> Pads(Graph& g) { return {g.AddConstant("pads", Tensor::VectorI64({0, 0, 2, 1, 0, 0, 1, 2}))}; }

class FoldMovement : public testing::TestWithParam<DType> {};

TEST_P(FoldMovement, SplitGivesEachOutputItsDequantize) {
  auto sizes = [](Graph& g) { return std::vector<Value*>{g.AddConstant("sizes", Tensor::VectorI64({2, 6}))}; };
  ExpectExactFold(Island(GetParam(), OpKind::kSplit, sizes, Attrs({{"axis", int64_t{1}}}), 2), OpKind::kSplit);
}

TEST_P(FoldMovement, PadOfZeroIsExact) {
  ExpectExactFold(Island(GetParam(), OpKind::kPad, Pads, {}), OpKind::kPad);
  auto zero = [](Graph& g) {
    return std::vector<Value*>{g.AddConstant("pads", Tensor::VectorI64({0, 0, 2, 1, 0, 0, 1, 2})),
                               g.AddConstant("value", Tensor::Scalar(0.f))};
  };
  ExpectExactFold(Island(GetParam(), OpKind::kPad, zero, {}), OpKind::kPad);
}

TEST_P(FoldMovement, ReflectAndEdgePadsAreExact) {
  ExpectExactFold(Island(GetParam(), OpKind::kPad, Pads, Attrs({{"mode", std::string("reflect")}})), OpKind::kPad);
  ExpectExactFold(Island(GetParam(), OpKind::kPad, Pads, Attrs({{"mode", std::string("edge")}})), OpKind::kPad);
}

TEST_P(FoldMovement, PadOfAnotherValueStaysFloat) {
  auto value = [](Graph& g) {
    return std::vector<Value*>{g.AddConstant("pads", Tensor::VectorI64({0, 0, 2, 1, 0, 0, 1, 2})),
                               g.AddConstant("value", Tensor::Scalar(1.5f))};
  };
  ExpectExactFold(Island(GetParam(), OpKind::kPad, value, {}), OpKind::kPad, /*folds=*/false);
}

TEST_P(FoldMovement, MaxAndMinReductionsCompareTheIntegers) {
  ExpectExactFold(Island(GetParam(), OpKind::kGlobalMaxPool, None, {}), OpKind::kGlobalMaxPool);
  auto channels = [](Graph& g) { return std::vector<Value*>{g.AddConstant("axes", Tensor::VectorI64({1}))}; };
  ExpectExactFold(Island(GetParam(), OpKind::kReduceMax, channels, {}), OpKind::kReduceMax);
  auto spatial = [](Graph& g) { return std::vector<Value*>{g.AddConstant("axes", Tensor::VectorI64({2, 3}))}; };
  ExpectExactFold(Island(GetParam(), OpKind::kReduceMin, spatial, Attrs({{"keepdims", int64_t{0}}})),
                  OpKind::kReduceMin);
}

TEST_P(FoldMovement, SpaceToDepthAndDepthToSpaceMoveTheIntegers) {
  ExpectExactFold(Island(GetParam(), OpKind::kSpaceToDepth, None, Attrs({{"blocksize", int64_t{2}}})),
                  OpKind::kSpaceToDepth);
  ExpectExactFold(Island(GetParam(), OpKind::kDepthToSpace, None, Attrs({{"blocksize", int64_t{2}}})),
                  OpKind::kDepthToSpace);
}

TEST_P(FoldMovement, ArgMaxOfDequantizeIsExact) {
  // Ties: DQ is strictly increasing, so equal integers are equal floats and the same index wins
  // (select_last_index both ways).
  for (int64_t last : {0, 1}) {
    ExpectExactFold(Island(GetParam(), OpKind::kArgMax, None, Attrs({{"axis", int64_t{1}}, {"select_last_index", last}})),
                    OpKind::kArgMax);
    ExpectExactFold(Island(GetParam(), OpKind::kArgMin, None, Attrs({{"axis", int64_t{2}}, {"select_last_index", last}})),
                    OpKind::kArgMin);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, FoldMovement, testing::Values(DType::kI8, DType::kU8),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace edgec::quant
