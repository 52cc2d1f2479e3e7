// A small int8 CNN compiled for a target, written to a temporary .edgec and loaded: the input
// of the profile, trace, diff and placement tests. Its convs are wide enough to spread over
// several NPU cores; its Softmax and float tail give CPU nodes.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "ir/infer.h"
#include "lower/npu_compile.h"
#include "quant/pipeline.h"
#include "runtime/artifact_run.h"

#include "../quant/quant_test_util.h"
#include "../quant/quantize_test_util.h"
#include "../runtime/compiled_artifact.h"

namespace edgec::testing_report {

using Ints = std::vector<int64_t>;

inline Graph IntegerCnn() {
  using testing_quant::Add;
  using testing_quant::Normal;
  Graph g;
  Value* x = g.AddInput("x", MakeType(DType::kF32, {1, 16, 24, 24}));
  Attributes pad;
  pad.Set("pads", Ints{1, 1, 1, 1});
  Value* c1 = Add(g, OpKind::kConv, {x, g.AddConstant("w1", Normal({64, 16, 3, 3}, 1, 0.1)),
                                     g.AddConstant("b1", Normal({64}, 2, 0.1))}, pad, "conv1");
  Value* r1 = Add(g, OpKind::kRelu, {c1}, {}, "relu1");
  Value* c2 = Add(g, OpKind::kConv, {r1, g.AddConstant("w2", Normal({64, 64, 3, 3}, 3, 0.05)),
                                     g.AddConstant("b2", Normal({64}, 4, 0.1))}, pad, "conv2");
  Value* sum = Add(g, OpKind::kAdd, {c2, r1}, {}, "add");
  Value* r2 = Add(g, OpKind::kRelu, {sum}, {}, "relu2");
  Value* c3 = Add(g, OpKind::kConv, {r2, g.AddConstant("w3", Normal({32, 64, 1, 1}, 5, 0.1)),
                                     g.AddConstant("b3", Normal({32}, 6, 0.1))}, {}, "conv3");
  Value* p = Add(g, OpKind::kGlobalAveragePool, {c3}, {}, "gap");
  Value* f = Add(g, OpKind::kFlatten, {p}, {}, "flatten");
  Attributes tb;
  tb.Set("transB", int64_t{1});
  Value* fc = Add(g, OpKind::kGemm, {f, g.AddConstant("wf", Normal({10, 32}, 7, 0.3)),
                                     g.AddConstant("bf", Normal({10}, 8, 0.1))}, tb, "fc");
  Value* y = Add(g, OpKind::kSoftmax, {fc}, {}, "softmax");
  g.MarkOutput(y);
  EXPECT_TRUE(InferShapes(g).ok());
  return testing_quant::QuantizeAndFold(std::move(g), "x", {1, 16, 24, 24}, 100, 4, DType::kI8);
}

// A slow CPU for the cost rule, so that these small layers go to the NPU.
inline partition::PartitionOptions SlowCpu() {
  partition::PartitionOptions o;
  o.cpu.int8_macs_per_s = 1e8;
  o.cpu.copy_bytes_per_s = 1e7;
  return o;
}

using testing_compiled::CompiledArtifact;

inline std::unique_ptr<CompiledArtifact> CompileAndLoad(const Graph& g, const npu::Target& t, const std::string& tag,
                                                        const partition::PartitionOptions& o = SlowCpu()) {
  return testing_compiled::CompileAndLoad(g, t, "report_" + tag, o);
}

}  // namespace edgec::testing_report
