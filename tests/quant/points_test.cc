// The quantization points rule (quant/points.h): every op with an integer form between two
// Convs ends up integer after quantize + fold (no float value left between the input's Q and
// the output's DQ), islands in a row stay two tables, and an op between float ops only gets
// no point (it is listed as float, with why).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "ir/infer.h"
#include "quant/pipeline.h"
#include "quant/points.h"

#include "quant_test_util.h"
#include "quantize_test_util.h"

namespace edgec::quant {
namespace {

using Ints = std::vector<int64_t>;
using testing_quant::Add;
using testing_quant::Normal;

Attributes Attrs(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.Set(k, v);
  return a;
}

Value* Conv(Graph& g, Value* x, int64_t in_c, int64_t out_c, uint32_t seed, const std::string& name) {
  return Add(g, OpKind::kConv,
             {x, g.AddConstant(name + "_w", Normal({out_c, in_c, 3, 3}, seed, 0.3)),
              g.AddConstant(name + "_b", Normal({out_c}, seed + 1, 0.1))},
             Attrs({{"pads", Ints{1, 1, 1, 1}}}), name);
}

// x[1,4,8,8] -> conv_a -> body(g, a) [C channels out] -> conv_b -> y
Graph Between(const std::function<Value*(Graph&, Value*)>& body, int64_t body_out_c = 8) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* a = Conv(g, x, 4, 8, 1, "conv_a");
  Value* m = body(g, a);
  g.MarkOutput(Conv(g, m, body_out_c, 4, 3, "conv_b"));
  Status st = InferShapes(g);
  EXPECT_TRUE(st.ok()) << st.message();
  return g;
}

// The nodes of a folded graph that compute a float value (Q/DQ aside), as "Op 'name'".
std::vector<std::string> FloatNodes(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kDequantizeLinear) continue;
    for (const Value* v : n->outputs())
      if (v && v->type.dtype == DType::kF32) {
        out.push_back(n->Label());
        break;
      }
  }
  return out;
}

Graph Folded(Graph g) { return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 4, 8, 8}, 40); }

Value* Silu(Graph& g, Value* v, const std::string& name) {
  return Add(g, OpKind::kMul, {v, Add(g, OpKind::kSigmoid, {v}, {}, name + "_sigmoid")}, {}, name);
}

struct Case {
  const char* name;
  std::function<Value*(Graph&, Value*)> body;
  int64_t out_c = 8;
};

TEST(QuantPoints, EveryOpWithAnIntegerFormBetweenConvsIsInteger) {
  const std::vector<Case> cases = {
      {"SiLU into a Split and a Concat of its halves",
       [](Graph& g, Value* a) {
         Node* s = g.AddNode(OpKind::kSplit, "split", {Silu(g, a, "silu"), g.AddConstant("sizes", Tensor::VectorI64({4, 4}))},
                             2, {"split:0", "split:1"});
         s->attrs.Set("axis", int64_t{1});
         return Add(g, OpKind::kConcat, {s->output(1), Silu(g, s->output(0), "silu2")}, Attrs({{"axis", int64_t{1}}}),
                    "concat");
       }},
      {"MaxPool of a SiLU, concatenated with it (SPPF)",
       [](Graph& g, Value* a) {
         Value* s = Silu(g, a, "silu");
         Value* p = Add(g, OpKind::kMaxPool, {s},
                        Attrs({{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}, {"strides", Ints{1, 1}}}), "pool");
         return Add(g, OpKind::kConcat, {s, p}, Attrs({{"axis", int64_t{1}}}), "concat");
       },
       16},
      {"ELU then an Erf GELU: two islands in a row",
       [](Graph& g, Value* a) {
         Value* e = Add(g, OpKind::kElu, {a}, {}, "elu");
         Value* d = Add(g, OpKind::kDiv, {e, g.AddConstant("sqrt2", Tensor::Scalar(1.4142135f))}, {}, "gelu_div");
         Value* f = Add(g, OpKind::kErf, {d}, {}, "gelu_erf");
         Value* o = Add(g, OpKind::kAdd, {f, g.AddConstant("one", Tensor::Scalar(1.f))}, {}, "gelu_add");
         Value* m = Add(g, OpKind::kMul, {e, o}, {}, "gelu_mul");
         Value* h = Add(g, OpKind::kMul, {m, g.AddConstant("half", Tensor::Scalar(0.5f))}, {}, "gelu");
         return Add(g, OpKind::kAdd, {h, e}, {}, "sum");  // e read outside the GELU too
       }},
      {"Sub of two activations",
       [](Graph& g, Value* a) { return Add(g, OpKind::kSub, {a, Conv(g, a, 8, 8, 7, "conv_c")}, {}, "sub"); }},
      {"ReduceMax over channels, broadcast back by a Mul",
       [](Graph& g, Value* a) {
         Value* r = Add(g, OpKind::kReduceMax, {a, g.AddConstant("axes", Tensor::VectorI64({1}))}, {}, "rmax");
         return Add(g, OpKind::kMul, {a, r}, {}, "mul");
       }},
      {"Pad with zeros and a reflect Pad",
       [](Graph& g, Value* a) {
         Value* p = Add(g, OpKind::kPad, {a, g.AddConstant("pads", Tensor::VectorI64({0, 0, 1, 1, 0, 0, 1, 1}))}, {},
                        "pad0");
         Value* r = Add(g, OpKind::kPad, {p, g.AddConstant("pads2", Tensor::VectorI64({0, 0, 1, 1, 0, 0, 1, 1}))},
                        Attrs({{"mode", std::string("reflect")}}), "reflect");
         return Add(g, OpKind::kSlice,
                    {r, g.AddConstant("st", Tensor::VectorI64({2, 2})), g.AddConstant("en", Tensor::VectorI64({10, 10})),
                     g.AddConstant("ax", Tensor::VectorI64({2, 3}))},
                    {}, "crop");
       }},
      {"Softmax over channels (a non-last axis)",
       [](Graph& g, Value* a) { return Add(g, OpKind::kSoftmax, {a}, Attrs({{"axis", int64_t{1}}}), "softmax"); }},
      {"SpaceToDepth then DepthToSpace",
       [](Graph& g, Value* a) {
         Value* s = Add(g, OpKind::kSpaceToDepth, {a}, Attrs({{"blocksize", int64_t{2}}}), "s2d");
         return Add(g, OpKind::kDepthToSpace, {s}, Attrs({{"blocksize", int64_t{2}}}), "d2s");
       }},
      {"Div by a constant, GlobalMaxPool gate",
       [](Graph& g, Value* a) {
         Value* d = Add(g, OpKind::kDiv, {a, g.AddConstant("c", Tensor::Scalar(3.f))}, {}, "div");
         Value* m = Add(g, OpKind::kGlobalMaxPool, {a}, {}, "gmp");
         return Add(g, OpKind::kMul, {Add(g, OpKind::kSigmoid, {m}, {}, "gate"), Add(g, OpKind::kTanh, {d}, {}, "t")},
                    {}, "gated");
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Graph folded = Folded(Between(c.body, c.out_c));
    EXPECT_EQ(FloatNodes(folded), std::vector<std::string>{});
    int q = 0;
    for (const Node* n : folded.nodes()) q += n->op() == OpKind::kQuantizeLinear;
    EXPECT_EQ(q, 1);  // the input's only
  }
}

TEST(QuantPoints, ArgMaxReadsTheInt8Values) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* a = Conv(g, x, 4, 8, 1, "conv_a");
  g.MarkOutput(Add(g, OpKind::kArgMax, {a}, Attrs({{"axis", int64_t{1}}}), "argmax"));
  ASSERT_TRUE(InferShapes(g).ok());
  Graph folded = Folded(std::move(g));
  const Node* arg = folded.outputs()[0]->producer();
  EXPECT_EQ(arg->op(), OpKind::kArgMax);
  EXPECT_EQ(arg->input(0)->type.dtype, DType::kI8);
  EXPECT_EQ(FloatNodes(folded), std::vector<std::string>{});
}

TEST(QuantPoints, OpsBetweenFloatOpsGetNoPoint) {
  // conv -> Log (no integer form) -> Transpose -> Log: the Transpose reads and feeds float ops
  // only, so a point there would add a Q/DQ pair for nothing.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* a = Conv(g, x, 4, 8, 1, "conv_a");
  Value* l = Add(g, OpKind::kLog, {a}, {}, "log");
  Value* t = Add(g, OpKind::kTranspose, {l}, Attrs({{"perm", Ints{0, 1, 3, 2}}}), "transpose");
  g.MarkOutput(Add(g, OpKind::kLog, {t}, {}, "log2"));
  ASSERT_TRUE(InferShapes(g).ok());
  const PointPlan p = PlanPoints(g, {});
  EXPECT_EQ(p.points, (std::vector<std::string>{"x", "conv_a:0"}));
  std::vector<std::string> why;
  for (const FloatNode& f : p.float_nodes) why.push_back(f.node->Label() + ": " + f.why);
  EXPECT_EQ(why, (std::vector<std::string>{
                     "Log 'log': no integer form",
                     "Transpose 'transpose': between float ops only (a point would add a Q/DQ pair and save nothing)",
                     "Log 'log2': no integer form"}));
  EXPECT_EQ(SummarizeFloatNodes(p.float_nodes),
            (std::vector<std::string>{
                "2 Log: no integer form",
                "1 Transpose: between float ops only (a point would add a Q/DQ pair and save nothing)"}));
}

TEST(QuantPoints, AConcatOfAPointAndAFloatStateStaysFloat) {
  // An RNN's state: h (a conv's output here, read by an int8 conv) and c (a float op's) are
  // concatenated into a graph output that comes back as the next call's state. The Concat
  // shares h with integer units, but making it integer would quantize c for nothing.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* h = Conv(g, x, 4, 8, 1, "conv_h");
  Value* c = Add(g, OpKind::kLog, {h}, {}, "cell");
  g.MarkOutput(Conv(g, h, 8, 4, 3, "decoder"));
  g.MarkOutput(Add(g, OpKind::kConcat, {h, c}, Attrs({{"axis", int64_t{1}}}), "state"));
  ASSERT_TRUE(InferShapes(g).ok());
  const PointPlan p = PlanPoints(g, {});
  EXPECT_EQ(p.points, (std::vector<std::string>{"x", "conv_h:0", "decoder:0"}));
  std::vector<std::string> why;
  for (const FloatNode& f : p.float_nodes) why.push_back(f.node->Label() + ": " + f.why);
  EXPECT_EQ(why, (std::vector<std::string>{
                     "Log 'cell': no integer form",
                     "Concat 'state': feeds float ops only and reads 'cell:0' from a float op (a point would "
                     "quantize it for nothing)"}));
  // Both state halves concatenated from int8 values: the Concat is integer.
  Graph g2;
  Value* x2 = g2.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* h2 = Conv(g2, x2, 4, 8, 1, "conv_h");
  Value* c2 = Conv(g2, x2, 4, 8, 5, "conv_c");
  g2.MarkOutput(Add(g2, OpKind::kConcat, {h2, c2}, Attrs({{"axis", int64_t{1}}}), "state"));
  ASSERT_TRUE(InferShapes(g2).ok());
  EXPECT_EQ(PlanPoints(g2, {}).points, (std::vector<std::string>{"x", "conv_h:0", "conv_c:0", "state:0"}));
}

TEST(QuantPoints, KeepFloatAndNonScalarConstantsSayWhy) {
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* a = Conv(g, x, 4, 8, 1, "conv_a");
  Value* m = Add(g, OpKind::kMul, {a, g.AddConstant("per_channel_row", Normal({8, 8, 1}, 5))}, {}, "scale");
  Value* s = Add(g, OpKind::kSigmoid, {m}, {}, "sig");
  g.MarkOutput(s);
  ASSERT_TRUE(InferShapes(g).ok());
  QuantizeOptions o;
  o.keep_float = {"sig"};
  const PointPlan p = PlanPoints(g, o);
  std::vector<std::string> why;
  for (const FloatNode& f : p.float_nodes) why.push_back(f.node->Label() + ": " + f.why);
  EXPECT_EQ(why, (std::vector<std::string>{"Mul 'scale': a constant operand of 64 values, not one per channel",
                                           "Sigmoid 'sig': kept in float"}));
}

TEST(QuantPoints, AnIslandMatcherPlugsIn) {
  // A matcher that takes Sqrt(x) (no kTabulable: NaN below 0) as an island of x.
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 4, 8, 8}));
  Value* a = Conv(g, x, 4, 8, 1, "conv_a");
  Value* r = Add(g, OpKind::kSqrt, {Add(g, OpKind::kRelu, {a}, {}, "relu")}, {}, "sqrt");
  g.MarkOutput(Conv(g, r, 8, 4, 3, "conv_b"));
  ASSERT_TRUE(InferShapes(g).ok());
  auto has = [](const PointPlan& p, const std::string& v) {
    return std::find(p.points.begin(), p.points.end(), v) != p.points.end();
  };
  const PointPlan without = PlanPoints(g, {});
  ASSERT_EQ(without.float_nodes.size(), 1u);
  EXPECT_EQ(without.float_nodes[0].node->name(), "sqrt");
  QuantizeOptions o;
  o.island_matchers = {[](const Node* last) -> std::optional<IslandMatch> {
    if (last->op() != OpKind::kSqrt) return std::nullopt;
    return IslandMatch{last->input(0), {last}};
  }};
  const PointPlan p = PlanPoints(g, o);
  EXPECT_TRUE(has(p, "relu:0"));
  EXPECT_TRUE(has(p, "sqrt:0"));
  EXPECT_TRUE(p.float_nodes.empty());
}

}  // namespace
}  // namespace edgec::quant
