// The quantization every compile/run test starts from: a float graph calibrated on seeded
// normal samples, rewritten to QDQ and folded to integer ops.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ir/graph.h"
#include "quant/pipeline.h"
#include "quant_test_util.h"

namespace edgec::testing_quant {

// `g` (shapes inferred) calibrated on `count` samples Normal(dims, seed + i) of input `input`
// with `storage` activations, rewritten to QDQ and folded to integer ops.
inline Graph QuantizeAndFold(Graph g, const std::string& input, const Dims& dims, uint32_t seed, int count = 4,
                             DType storage = DType::kI8) {
  EXPECT_TRUE(quant::PrepareForQuantization(g).ok());
  std::vector<quant::Sample> samples;
  for (int i = 0; i < count; ++i) samples.push_back({{input, Normal(dims, seed + i)}});
  quant::CalibrationOptions co;
  co.storage = storage;
  auto table = quant::Calibrate(g, samples, co, {}, false);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_TRUE(quant::RewriteToQdq(g, *table, {}).ok());
  auto folded = quant::Int8Executable(g);
  EXPECT_TRUE(folded.ok()) << folded.status().ToString();
  return std::move(*folded);
}

}  // namespace edgec::testing_quant
