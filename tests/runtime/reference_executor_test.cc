#include <gtest/gtest.h>

#include "ir/infer.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"
#include "support/npy.h"

namespace edgec {
namespace {

// x: f32[N, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [2, 2])) -> [N, 2, 2]:
// the reshape target is computed from the input's shape at run time.
Graph DynamicReshapeGraph() {
  Graph g;
  TensorType t = MakeType(DType::kF32, {kUnknownDim, 4});
  t.dim_names = {"N", ""};
  Value* x = g.AddInput("x", t);
  Node* shape = g.AddNode(OpKind::kShape, "shape", {x}, 1);
  Node* gather = g.AddNode(OpKind::kGather, "gather", {shape->output(0), g.AddConstant("zero", Tensor::ScalarI64(0))}, 1);
  Node* unsq = g.AddNode(OpKind::kUnsqueeze, "unsq", {gather->output(0), g.AddConstant("axes", Tensor::VectorI64({0}))}, 1);
  Node* concat = g.AddNode(OpKind::kConcat, "concat", {unsq->output(0), g.AddConstant("tail", Tensor::VectorI64({2, 2}))}, 1);
  concat->attrs.Set("axis", int64_t{0});
  Node* reshape = g.AddNode(OpKind::kReshape, "reshape", {x, concat->output(0)}, 1);
  g.MarkOutput(reshape->output(0));
  EXPECT_TRUE(InferShapes(g).ok());
  return g;
}

TEST(ReferenceExecutor, ValueDependentShapesFollowTheInputBetweenRuns) {
  Graph g = DynamicReshapeGraph();
  // At compile time only the rank of the reshape is known.
  EXPECT_EQ(g.outputs()[0]->type.rank(), 3);
  EXPECT_EQ(g.outputs()[0]->type.dims[0], kUnknownDim);
  ReferenceExecutor exec(g);
  for (int64_t n : {3, 5, 1}) {
    std::vector<float> v(n * 4);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    auto out = exec.Run({{"x", Tensor::FromVector<float>(DType::kF32, {n, 4}, v)}});
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ((*out)[0].dims(), (Dims{n, 2, 2}));
    EXPECT_EQ((*out)[0].data<float>()[n * 4 - 1], static_cast<float>(n * 4 - 1));
  }
}

TEST(ShapeBinding, EvaluatesShapeChainsToStaticDims) {
  Graph g = DynamicReshapeGraph();
  ASSERT_TRUE(BindInputShapes(g, {{"x", {6, 4}}}, 1).ok());
  EXPECT_EQ(g.outputs()[0]->type.dims, (Dims{6, 2, 2}));
  EXPECT_FALSE(BindInputShapes(g, {{"x", {6, 5}}}, 1).ok());  // dim 1 is 4
}

TEST(ReferenceExecutor, RejectsWrongInputs) {
  Graph g = DynamicReshapeGraph();
  ReferenceExecutor exec(g);
  auto wrong_dim = exec.Run({{"x", Tensor(DType::kF32, {2, 5})}});
  ASSERT_FALSE(wrong_dim.ok());
  EXPECT_NE(wrong_dim.status().message().find("dim 1 is 5"), std::string::npos);
  auto wrong_type = exec.Run({{"x", Tensor(DType::kI64, {2, 4})}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("i64"), std::string::npos);
  auto missing = exec.Run({});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'x'"), std::string::npos);
}

TEST(Npy, RoundTripsEveryDType) {
  std::string dir = ::testing::TempDir();
  for (DType dt : {DType::kF32, DType::kF64, DType::kF16, DType::kI8, DType::kI16, DType::kI32,
                   DType::kI64, DType::kU8, DType::kU16, DType::kU32, DType::kU64, DType::kBool}) {
    Tensor t(dt, {2, 3});
    for (int64_t i = 0; i < t.numel(); ++i) StoreFromDouble(dt, t.raw(), i, static_cast<double>(i % 2 ? i : 0));
    std::string p = dir + "/t_" + std::string(DTypeName(dt)) + ".npy";
    ASSERT_TRUE(WriteNpy(p, t).ok());
    auto r = ReadNpy(p);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->dtype(), dt);
    EXPECT_EQ(r->dims(), t.dims());
    EXPECT_EQ(0, std::memcmp(r->raw(), t.raw(), t.nbytes()));
  }
  Tensor scalar = Tensor::Scalar(2.5f);
  ASSERT_TRUE(WriteNpy(dir + "/scalar.npy", scalar).ok());
  auto s = ReadNpy(dir + "/scalar.npy");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->data<float>()[0], 2.5f);
}

TEST(Npy, RejectsTruncatedAndForeignData) {
  EXPECT_FALSE(ParseNpy("not numpy at all", "x").ok());
  std::string header = "\x93NUMPY\x01";
  header += '\0';
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  header += static_cast<char>(dict.size());
  header += '\0';
  header += dict;
  auto truncated = ParseNpy(header + std::string(8, '\0'), "t.npy");  // 8 of 16 bytes
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos);
  std::string be = header;
  be.replace(be.find("<f4"), 3, ">f4");
  EXPECT_FALSE(ParseNpy(be + std::string(16, '\0'), "be.npy").ok());
}

}  // namespace
}  // namespace edgec
