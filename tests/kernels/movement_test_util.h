// Test helpers for the reduce, movement and resize kernel tests: run one op through shape
// inference and its reference kernel the way the runtime does (every value known), or
// run inference alone with only some values known (compile time).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ref_run.h"

namespace edgec::testing_mv {

using testing_ref::Inputs;  // an absent optional input is std::nullopt

// TypeOf(tensor): ir/infer.h's, the type of a value known at run time.

inline StatusOr<std::vector<Tensor>> RunOp(OpKind op, const Inputs& inputs, const Attributes& attrs = {},
                                           int num_outputs = 1) {
  return testing_ref::RunOp(op, inputs, attrs, num_outputs, "'node7'");
}

// Runs the op and fails the test on error; returns output 0.
inline Tensor Run1(OpKind op, const Inputs& inputs, const Attributes& attrs = {}) {
  auto r = RunOp(op, inputs, attrs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return Tensor();
  return (*r)[0];
}

// The error a run gives (empty when it succeeds).
inline std::string RunError(OpKind op, const Inputs& inputs, const Attributes& attrs = {},
                            int num_outputs = 1) {
  auto r = RunOp(op, inputs, attrs, num_outputs);
  return r.ok() ? std::string() : r.status().message();
}

// One input for inference alone: a type, and a value when it is known.
struct InferArg {
  TensorType type;
  std::optional<Tensor> value;
};
inline InferArg Known(const Tensor& t) { return {TypeOf(t), t}; }
inline InferArg Unknown(TensorType t) { return {std::move(t), std::nullopt}; }

inline StatusOr<std::vector<TensorType>> Infer(OpKind op, const std::vector<std::optional<InferArg>>& args,
                                               const Attributes& attrs = {}, int num_outputs = 1) {
  std::vector<InferInput> in(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]) continue;
    in[i].type = &args[i]->type;
    if (args[i]->value) in[i].value = &*args[i]->value;
  }
  InferContext ctx(op, attrs, std::string(OpName(op)) + " 'node7'", in, num_outputs);
  RETURN_IF_ERROR(GetInferFn(op)(ctx));
  return std::move(ctx.outputs());
}

// Inference of output 0, failing the test on error.
inline TensorType Infer1(OpKind op, const std::vector<std::optional<InferArg>>& args,
                         const Attributes& attrs = {}) {
  auto r = Infer(op, args, attrs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0] : TensorType();
}

inline Tensor F32(Dims dims, std::vector<float> v) {
  return Tensor::FromVector<float>(DType::kF32, std::move(dims), v);
}
inline Tensor I32(Dims dims, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DType::kI32, std::move(dims), v);
}
inline Tensor I64(Dims dims, std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DType::kI64, std::move(dims), v);
}
inline Tensor I64s(std::vector<int64_t> v) { return Tensor::VectorI64(v); }

// f32 tensor holding 0, 1, 2, ... in row-major order.
inline Tensor Iota(Dims dims) {
  Tensor t(DType::kF32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

inline std::vector<float> Floats(const Tensor& t) {
  std::vector<float> v;
  for (double d : t.ToDoubleVector()) v.push_back(static_cast<float>(d));
  return v;
}

inline Attributes Attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

// Dims and values, with a tolerance for floats.
inline void ExpectTensor(const Tensor& got, const Dims& dims, const std::vector<double>& want,
                         double tol = 1e-6) {
  ASSERT_EQ(got.dims(), dims) << got.TypeString();
  std::vector<double> v = got.ToDoubleVector();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(v[i])) << "element " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(v[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(v[i], want[i], tol) << "element " << i;
    }
  }
}

inline TensorType Type(DType dt, Dims dims) { return MakeType(dt, std::move(dims)); }

}  // namespace edgec::testing_mv
