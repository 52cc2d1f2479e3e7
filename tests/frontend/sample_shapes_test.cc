// Symbolic input dims bound from the calibration samples (driver/sample_shapes.h), as
// `edgec quantize` and `edgec compile` do without --shape.
#include <gtest/gtest.h>

#include "driver/sample_shapes.h"
#include "ir/infer.h"
#include "runtime/shape_binding.h"

namespace edgec {
namespace {

Graph SymbolicRelu() {
  Graph g;
  TensorType t = MakeType(DType::kF32, {kUnknownDim, 3, kUnknownDim, kUnknownDim});
  Value* x = g.AddInput("x", t);
  Node* n = g.AddNode(OpKind::kRelu, "relu", {x}, 1);
  g.MarkOutput(n->output(0));
  return g;
}

std::map<std::string, Tensor> SampleOf(Dims dims) { return {{"x", Tensor(DType::kF32, std::move(dims))}}; }

TEST(SampleShapes, SymbolicDimsTakeTheSamplesDims) {
  Graph g = SymbolicRelu();
  auto shapes = driver::ShapesFromSamples(g, {SampleOf({1, 3, 64, 80}), SampleOf({1, 3, 64, 80})}, {});
  ASSERT_TRUE(shapes.ok()) << shapes.status().message();
  EXPECT_EQ(shapes->at("x"), (Dims{1, 3, 64, 80}));
  ASSERT_TRUE(BindInputShapes(g, *shapes, 1).ok());
  EXPECT_EQ(g.outputs()[0]->type.dims, (Dims{1, 3, 64, 80}));
}

TEST(SampleShapes, DisagreeingSampleIsNamed) {
  Graph g = SymbolicRelu();
  auto shapes = driver::ShapesFromSamples(g, {SampleOf({1, 3, 64, 80}), SampleOf({1, 3, 64, 64})}, {},
                                          {"a.npy", "b.npy"});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("sample 'b.npy' has dims [1, 3, 64, 64] for input 'x'"), std::string::npos)
      << shapes.status().message();
  EXPECT_NE(shapes.status().message().find("sample 'a.npy' has [1, 3, 64, 80]"), std::string::npos);
}

TEST(SampleShapes, GivenShapeOverridesAndStaticInputsAreLeftOut) {
  Graph g = SymbolicRelu();
  g.AddInput("fixed", MakeType(DType::kF32, {2}));
  auto shapes = driver::ShapesFromSamples(g, {SampleOf({1, 3, 64, 80}), SampleOf({1, 3, 32, 32})},
                                          {{"x", {1, 3, 8, 8}}});
  ASSERT_TRUE(shapes.ok()) << shapes.status().message();
  EXPECT_EQ(shapes->at("x"), (Dims{1, 3, 8, 8}));
  EXPECT_EQ(shapes->count("fixed"), 0u);
}

TEST(SampleShapes, RankMismatchIsAnError) {
  Graph g = SymbolicRelu();
  auto shapes = driver::ShapesFromSamples(g, {SampleOf({3, 64, 80})}, {});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("the data has 3 dims"), std::string::npos) << shapes.status().message();
}

}  // namespace
}  // namespace edgec
