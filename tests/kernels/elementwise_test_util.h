// Test helpers for the elementwise and softmax kernel tests: run one op through shape
// inference and its reference kernel, the way the runtime does (every value known).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ref_run.h"

namespace edgec::testing_ew {

using testing_ref::Inputs;  // an absent optional input is std::nullopt

// TypeOf(tensor): ir/infer.h's, the type of a value known at run time.

// Runs inference (all values known) then the kernel; returns the outputs.
inline StatusOr<std::vector<Tensor>> RunOp(OpKind op, const Inputs& inputs, const Attributes& attrs = {},
                                           int num_outputs = 1) {
  return testing_ref::RunOp(op, inputs, attrs, num_outputs, "'n1'");
}

// Runs inference only, with types whose values are unknown (compile time).
inline StatusOr<std::vector<TensorType>> InferTypes(OpKind op, const std::vector<std::optional<TensorType>>& in,
                                                    const Attributes& attrs = {}, int num_outputs = 1) {
  return testing_ref::InferTypes(op, in, attrs, num_outputs, "'n1'");
}

// Single-output convenience: runs the op and fails the test on error.
inline Tensor Run1(OpKind op, const Inputs& inputs, const Attributes& attrs = {}) {
  auto r = RunOp(op, inputs, attrs);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return Tensor();
  return (*r)[0];
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
inline Tensor I64(Dims dims, std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DType::kI64, std::move(dims), v);
}
inline Tensor U8(Dims dims, std::vector<uint8_t> v) {
  return Tensor::FromVector<uint8_t>(DType::kU8, std::move(dims), v);
}
inline Tensor I8(Dims dims, std::vector<int8_t> v) {
  return Tensor::FromVector<int8_t>(DType::kI8, std::move(dims), v);
}
inline Tensor Bool(Dims dims, std::vector<uint8_t> v) {  // 0/1 bytes
  Tensor t(DType::kBool, std::move(dims));
  EDGEC_CHECK(static_cast<int64_t>(v.size()) == t.numel());
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i] != 0;
  return t;
}
inline Tensor F16(Dims dims, const std::vector<float>& v) {
  std::vector<uint16_t> bits;
  for (float f : v) bits.push_back(FloatToHalf(f));
  return Tensor::FromVector<uint16_t>(DType::kF16, std::move(dims), bits);
}

inline Attributes Attrs(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  Attributes a;
  for (auto& [k, v] : list) a.Set(k, v);
  return a;
}

// Element values as double, whatever the dtype.
inline std::vector<double> Values(const Tensor& t) { return t.ToDoubleVector(); }

inline void ExpectValues(const Tensor& t, DType dtype, const Dims& dims,
                         const std::vector<double>& expected, double tol = 1e-6) {
  ASSERT_EQ(t.dtype(), dtype) << t.TypeString();
  ASSERT_EQ(t.dims(), dims) << t.TypeString();
  std::vector<double> got = Values(t);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << ": " << got[i];
    } else if (std::isinf(expected[i])) {
      EXPECT_EQ(got[i], expected[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::fabs(expected[i]))) << "at " << i;
    }
  }
}

}  // namespace edgec::testing_ew
