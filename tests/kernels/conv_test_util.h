// Test helpers for the conv, matmul, pool, norm and quant kernel tests: run one op through
// shape inference and its reference kernel the way the runtime does (every value known),
// or through inference alone with unknown values (compile time).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ref_run.h"

namespace edgec::testing_conv {

using testing_ref::Inputs;

inline const char* kLabel = "'n1'";

inline StatusOr<std::vector<Tensor>> RunOp(OpKind op, const Inputs& inputs, const Attributes& attrs = {},
                                           int num_outputs = 1) {
  return testing_ref::RunOp(op, inputs, attrs, num_outputs, kLabel);
}

inline Tensor Run1(OpKind op, const Inputs& inputs, const Attributes& attrs = {}) {
  auto r = RunOp(op, inputs, attrs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return Tensor();
  return (*r)[0];
}

// Inference only; inputs given by type (nullopt = absent).
inline StatusOr<std::vector<TensorType>> InferTypes(OpKind op, const std::vector<std::optional<TensorType>>& in,
                                                    const Attributes& attrs = {}, int num_outputs = 1) {
  return testing_ref::InferTypes(op, in, attrs, num_outputs, kLabel);
}

// The error message of running `op`, or "" when it succeeded.
inline std::string ErrorOf(OpKind op, const Inputs& inputs, const Attributes& attrs = {},
                           int num_outputs = 1) {
  auto r = RunOp(op, inputs, attrs, num_outputs);
  return r.ok() ? std::string() : r.status().message();
}

inline Tensor F32(Dims dims, std::vector<float> v) {
  return Tensor::FromVector<float>(DType::kF32, std::move(dims), v);
}
inline Tensor F64(Dims dims, std::vector<double> v) {
  return Tensor::FromVector<double>(DType::kF64, std::move(dims), v);
}
inline Tensor I32(Dims dims, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DType::kI32, std::move(dims), v);
}
inline Tensor U8(Dims dims, std::vector<uint8_t> v) {
  return Tensor::FromVector<uint8_t>(DType::kU8, std::move(dims), v);
}
inline Tensor I8(Dims dims, std::vector<int8_t> v) {
  return Tensor::FromVector<int8_t>(DType::kI8, std::move(dims), v);
}
inline Tensor F16(Dims dims, const std::vector<float>& v) {
  std::vector<uint16_t> bits;
  for (float f : v) bits.push_back(FloatToHalf(f));
  return Tensor::FromVector<uint16_t>(DType::kF16, std::move(dims), bits);
}
// 0, 1, 2, ... as f32.
inline Tensor Iota(Dims dims, float start = 0) {
  Tensor t(DType::kF32, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return t;
}
// Seeded uniform values in [-1, 1).
inline Tensor Random(DType dt, Dims dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Tensor t(dt, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) StoreFromDouble(dt, t.raw(), i, u(rng));
  return t;
}

using Ints = std::vector<int64_t>;

inline Attributes Attrs(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  Attributes a;
  for (auto& [k, v] : list) a.Set(k, v);
  return a;
}

inline void ExpectValues(const Tensor& t, DType dtype, const Dims& dims,
                         const std::vector<double>& expected, double tol = 1e-5) {
  ASSERT_EQ(t.dtype(), dtype) << t.TypeString();
  ASSERT_EQ(t.dims(), dims) << t.TypeString();
  const std::vector<double> got = t.ToDoubleVector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::fabs(expected[i]))) << "at " << i;
  }
}
inline void ExpectF32(const Tensor& t, const Dims& dims, const std::vector<double>& expected,
                      double tol = 1e-5) {
  ExpectValues(t, DType::kF32, dims, expected, tol);
}
// Elementwise closeness of two tensors of the same type.
inline void ExpectClose(const Tensor& got, const Tensor& want, double tol = 1e-4) {
  ExpectValues(got, want.dtype(), want.dims(), want.ToDoubleVector(), tol);
}

}  // namespace edgec::testing_conv
