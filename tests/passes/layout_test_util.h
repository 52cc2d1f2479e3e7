// Graph building for the layout, views and horizontal-fusion tests.
#pragma once

#include <string>
#include <vector>

#include "ir/cost.h"
#include "ir/physical_layout.h"
#include "pass_test_util.h"

namespace edgec::testing_passes {

using Ints = std::vector<int64_t>;

class LayoutBuilder {
 public:
  Value* Input(const std::string& name, Dims dims, DType dt = DType::kF32) {
    return g_.AddInput(name, MakeType(dt, std::move(dims)));
  }
  Value* Const(Tensor t, const std::string& name = "c") { return g_.AddConstant(g_.FreshName(name), std::move(t)); }
  Value* Random(Dims dims, uint32_t seed) { return Const(RandomTensor(DType::kF32, std::move(dims), seed), "w"); }
  Value* Ints1(const Ints& v) { return Const(Tensor::VectorI64(v), "i"); }
  Value* Scalar(float v) { return Const(Tensor::Scalar(v), "s"); }
  Node* Node_(OpKind op, std::vector<Value*> in, Attributes a = {}, int outputs = 1, std::string name = "") {
    if (name.empty()) name = fmt::format("{}{}", OpName(op), ++count_);
    Node* n = g_.AddNode(op, name, std::move(in), outputs);
    n->attrs = std::move(a);
    return n;
  }
  Value* Op(OpKind op, std::vector<Value*> in, Attributes a = {}, std::string name = "") {
    return Node_(op, std::move(in), std::move(a), 1, std::move(name))->output(0);
  }
  Value* Transpose(Value* x, const Ints& perm, std::string name = "") {
    Attributes a;
    a.Set("perm", perm);
    return Op(OpKind::kTranspose, {x}, a, std::move(name));
  }
  Value* Conv(Value* x, int64_t in_c, int64_t out_c, int64_t k, uint32_t seed, bool bias = true,
              Ints strides = {1, 1}, std::string name = "") {
    Attributes a;
    int64_t p = k / 2;
    a.Set("pads", Ints{p, p, p, p});
    a.Set("strides", strides);
    a.Set("kernel_shape", Ints{k, k});
    std::vector<Value*> in = {x, Random({out_c, in_c, k, k}, seed)};
    if (bias) in.push_back(Random({out_c}, seed + 100));
    return Op(OpKind::kConv, in, a, std::move(name));
  }
  Value* Reshape(Value* x, const Ints& shape) { return Op(OpKind::kReshape, {x, Ints1(shape)}); }
  Graph& graph() { return g_; }
  Graph Done(std::vector<Value*> outputs) {
    for (Value* v : outputs) g_.MarkOutput(v);
    Status st = InferShapes(g_);
    EXPECT_TRUE(st.ok()) << st.message();
    return std::move(g_);
  }

 private:
  Graph g_;
  int count_ = 0;
};

inline int CountRelayouts(const Graph& g) {
  int n = 0;
  for (const Node* node : g.nodes()) n += IsRelayout(*node) ? 1 : 0;
  return n;
}

// The producer of the graph value named `name`.
inline const Node* ProducerNamed(const Graph& g, const std::string& name) {
  const Value* v = g.FindValue(name);
  EXPECT_NE(v, nullptr) << name;
  return v ? v->producer() : nullptr;
}

}  // namespace edgec::testing_passes
